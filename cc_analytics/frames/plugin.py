"""What a plug-in provides: the interface every format package implements, and the one of a
source that already holds the tables (an archive).

Imports: the standard library only (a format's plugin module is imported to tell files apart,
by processes that never load Polars). A format is a package (one under ``frames/``, or one of
another distribution) with two parts:

* a **plugin object**, an instance of a :class:`FormatPlugin` subclass, cheap to import: its
  name, how to recognise its files by content, its default stores, how files group into
  sessions, what the ``context`` command and the archive need of it;
* its **verbs module** (:attr:`FormatPlugin.package`), which the plugin names and which is
  imported on first use. It exposes, each with the signature
  ``(source=None, *, workers=1, on_progress=None)``, the verbs of :data:`VERBS`
  (``scan_/read_`` events, turns, sessions, problems, requests), ``iter_requests`` (batches of
  ``(priced requests, problems)``) and ``iter_tables(source, *, turns=True, workers=1,
  on_progress=None)`` (batches with ``sessions``, ``turns``, ``problems`` and ``requests``
  frames), plus ``tables_batch(files, *, turns=True, contents=None)``, the pure decode of one
  batch (bytes in) that the archive runs. Sessions, turns, problems and requests are in the
  shared schemas of ``frames.schema``; each format has its own events schema.

The registry (``frames.registry``) lists the built-in formats and those other distributions
declare under the entry-point group ``cc_analytics.formats``; every caller loops over it.
A new format passes the shared conformance suite (``tests/formats``) by adding its package and
one registry line.

A **table source** (:class:`TableSource`) is a kind of source that holds the tables already,
in the shared schemas: the archive (``cc_analytics.archive``). The front API reads them from it
instead of decoding transcripts. The registry lists table sources by name too
(``frames.registry.TABLE_SOURCES``), so the layer that implements one plugs in from above and
no module of ``frames`` imports it.

Examples:
    >>> from cc_analytics.frames.registry import formats
    >>> all(isinstance(plugin, FormatPlugin) for plugin in formats())
    True
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.sources import Source, TranscriptFile

VERBS: tuple[str, ...] = (
    "scan_events",
    "read_events",
    "scan_turns",
    "read_turns",
    "scan_sessions",
    "read_sessions",
    "scan_problems",
    "read_problems",
    "scan_requests",
    "read_requests",
)
"""The verbs every format's verbs module exposes with the same signature, and the front API too."""

LIMIT_VERBS: tuple[str, ...] = ("scan_limits", "read_limits")
"""The verbs of a format whose agent reports its plan's rate limits (:attr:`FormatPlugin.has_limits`):
``(source=None, *, history=None, workers=1, on_progress=None)``, rows in ``frames.schema.LIMITS_SCHEMA``.
``history`` is the file an agent's limits were kept in outside its transcripts (None: the
format's default place, False: none), for a format that keeps one; others ignore it."""

COMPOSITION_VERBS: tuple[str, ...] = ("scan_composition", "read_composition")
"""The verbs of a format whose transcripts say what filled the window turn by turn
(:attr:`FormatPlugin.has_composition`): the signature of :data:`VERBS`, rows in
``frames.schema.COMPOSITION_SCHEMA``."""

FINDINGS_VERBS: tuple[str, ...] = ("scan_findings", "read_findings")
"""The verbs of a format whose transcripts let it point at what filled the window (the largest
items, repeated reads, jumps, tool definitions, cache rebuilds; :attr:`FormatPlugin.has_findings`):
the signature of :data:`VERBS`, rows in ``frames.schema.FINDINGS_SCHEMA``. Such a format's
``tables_batch`` and ``iter_tables`` also take ``findings=True``: the same rows, in
``Tables.findings``, from the tables' own decode (what the report and the table cache read)."""

BATCH_VERBS: tuple[str, ...] = ("iter_requests", "iter_tables", "tables_batch", "requests_batch")
"""The batch functions every format's verbs module exposes besides :data:`VERBS`: ``iter_requests``
and ``iter_tables`` as the front's; ``tables_batch(files, *, turns=True, contents=None)``, one
batch's :class:`~cc_analytics.frames.tables.Tables`; ``requests_batch(files)``, one batch's
(priced requests, problems), as ``iter_requests`` makes them (module-level functions, or partials
of them: worker processes are handed them)."""

FRONT: tuple[str, ...] = (
    *VERBS,
    *LIMIT_VERBS,
    *COMPOSITION_VERBS,
    *FINDINGS_VERBS,
    "iter_requests",
    "iter_tables",
    "read_usage",
    "read_tables",
    "Tables",
)
"""What the front API (``frames.api``) offers for every format at once, and the package's top level too."""


class FormatPlugin:
    """One transcript format, as every caller outside its package sees it.

    Subclasses set the class attributes and implement :meth:`recognizes`, and either name a
    :attr:`store_module` or implement :meth:`default_stores`, :meth:`resolve` and
    :meth:`classify`; the other methods have defaults that fit a format without deletion marks,
    lean batches in threads or a ``context`` report of its own.
    """

    name: ClassVar[str]
    """The value of the frames' ``format`` column (``"myagent"``)."""
    label: ClassVar[str]
    """What people call the agent (``"My Agent"``)."""
    package: ClassVar[str]
    """The module of the verbs (``"myagent_cc.frames"``)."""
    worker_module: ClassVar[str]
    """What a worker process imports to build this format's batches: a worker started ahead of a run
    imports it once the run's files are planned and hold some of this format's (``frames.sources.import_ahead``)."""
    store_hint: ClassVar[str]
    """Where the agent writes, for help texts and errors (``"$MYAGENT_HOME/sessions, default ~/.myagent"``)."""
    sniff_order: ClassVar[int] = 100
    """Formats are asked in this order whether a file is theirs (lower first)."""
    store_option: ClassVar[str | None] = None
    """The ``context`` command's option naming this format's store (``"--myagent-home"``), if any."""
    native_module: ClassVar[str | None] = None
    """The optional C extension the format reads faster with (``frames.extension`` loads it)."""
    previews_windows: ClassVar[bool] = False
    """Whether its turns' ``event_uuids`` anchor a ContextWindow preview (``core.capture``) in its
    transcripts; the explorer shows a turn's prompt otherwise."""
    context_order: ClassVar[int] = 100
    """``context`` without an id shows the latest session of the formats asked first (lower first)
    that have one."""
    file_names: ClassVar[tuple[str, ...]] = ("*.jsonl",)
    """Shell patterns (``fnmatch``, case-sensitive) of the names its transcript files have: a
    folder's walk collects the files any registered format's patterns match (an agent that
    writes whole JSON documents names them, ``"session-*.json"``, without taking every
    ``*.json`` of a folder)."""
    store_module: ClassVar[str | None] = None
    """The module that finds its files, imported on first use: its functions ``default_stores()``,
    ``resolve(source, *, planned)`` and ``classify(path, *, size, head)`` are what
    :meth:`default_stores`, :meth:`resolve` and :meth:`classify` return unless a subclass
    overrides them (``"myagent_cc.store"``)."""
    has_limits: ClassVar[bool] = False
    """Whether the verbs module has the :data:`LIMIT_VERBS` (the agent reports rate limits)."""
    has_composition: ClassVar[bool] = False
    """Whether the verbs module has the :data:`COMPOSITION_VERBS` (the window's parts per turn)."""
    has_findings: ClassVar[bool] = False
    """Whether the verbs module has the :data:`FINDINGS_VERBS` (what is worth a look in its windows)."""
    batch_bytes: ClassVar[int | None] = None
    """Bytes of its transcripts per batch (:meth:`batching`, for every reader, the table cache's
    included); None: the batch engine's ``BATCH_BYTES``. A format whose batches hold their rows
    as Python values until their frames are made sets fewer, so that two workers' tree stays
    within 300 MB."""
    lean_requests: ClassVar[bool] = False
    """Whether its ``requests_batch`` costs much less than its ``tables_batch`` (it skips what
    only sessions and turns need: texts, estimates): a ``usage`` run through the table cache
    then decodes and keeps its requests alone, and a later ``sessions`` decodes those sessions
    whole. False: the cache decodes the tables for ``usage`` too (one decode serves both)."""
    requests_batch_bytes: ClassVar[int | None] = None
    """Bytes per batch of its requests-only read (:meth:`requests_batching`); None: as
    :meth:`batching` without turns."""
    files_hold_sessions: ClassVar[bool] = True
    """Whether what is read of a session is in its planned files alone, so that their size, times
    and inode stand for it: a command's output kept whole (``commands.memo``) is printed again
    only over such files. False for a format that reads beside them (a database's write-ahead
    log, messages stored in other files: what :meth:`unit_bytes` gathers)."""

    def __repr__(self) -> str:
        return f"<format {self.name!r} ({self.label})>"

    # -- telling files apart ------------------------------------------------------------------

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        """Whether a file is this format's, from ``first`` (its first JSON object line among the
        first few, None when none parsed: a first line longer than ``head`` is cut there, and a
        JSON document written over many lines has no object line) and ``head`` (its first
        bytes, up to 64 KiB: at least its first 4 KiB or the whole file)."""
        raise NotImplementedError

    # -- where the agent writes ---------------------------------------------------------------

    def default_stores(self) -> list[Path]:
        """The folders the agent writes its transcripts to, from its own environment variables
        (existing or not; absent stores hold nothing)."""
        return self._store().default_stores()

    def protected_roots(self) -> list[Path]:
        """Folders nothing may be written in (an archive or a Parquet file): the agent's own."""
        return self.default_stores()

    # -- files and sessions -------------------------------------------------------------------

    def resolve(self, source: Source, *, planned: bool = False) -> list[TranscriptFile]:
        """The transcripts of ``source`` (None: the default stores) with their sessions.

        ``planned``: the paths were already expanded and told apart by content.
        """
        return self._store().resolve(source, planned=planned)

    def classify(self, path: Path, *, size: int, head: bytes) -> TranscriptFile:
        """One file's :class:`TranscriptFile` from its path and first bytes (the archive's plan)."""
        return self._store().classify(path, size=size, head=head)

    def _store(self) -> ModuleType:
        if self.store_module is None:
            raise NotImplementedError(f"{type(self).__name__} names no store_module and does not override this method")
        return importlib.import_module(self.store_module)

    def deleted(self, source: str, exists: Callable[[str], bool], read: Callable[[str], bytes]) -> bool:
        """Whether the agent marked the transcript at ``source`` deleted (no loader reads it);
        ``exists`` and ``read`` look at files beside it, wherever it is stored."""
        return False

    def batching(self, total: int, *, turns: bool) -> tuple[int, bool]:
        """How the batch engine runs ``total`` bytes of its files for ``iter_tables`` (and the
        table cache, which decodes through ``tables_batch``; ``turns``: with the turns), and for
        ``iter_requests`` (``turns=False``): the batch size, and whether the batches go to threads
        of this process rather than to worker processes. The one owner of that choice: the
        processes started ahead of a run (``frames.sources.workers_ahead``) leave out the files
        of the formats that answer threads for ``turns=False`` (by their ``file_names`` patterns
        that name more than a suffix). The default: :attr:`batch_bytes` (else the engine's batch
        size), in processes.

        A format whose lean read (``sessions``, ``usage``) is a C loop that releases the GIL
        answers threads for ``turns=False`` when its :attr:`native_module` loaded (in pure
        Python the threads would take turns on the GIL).

        Examples:
            >>> from cc_analytics.frames.registry import formats
            >>> any(plugin.batching(0, turns=True)[1] for plugin in formats())  # turns: in processes
            False
        """
        from cc_analytics.frames.engine import BATCH_BYTES

        return self.batch_bytes or BATCH_BYTES, False

    def requests_batching(self, total: int) -> tuple[int, bool]:
        """:meth:`batching` of its requests-only read (``requests_batch``, what ``usage`` reads
        through the table cache when :attr:`lean_requests`): :attr:`requests_batch_bytes` when
        set, else as :meth:`batching` without turns.

        Examples:
            >>> from cc_analytics.frames.registry import formats
            >>> all(plugin.requests_batching(0)[0] > 0 for plugin in formats())
            True
        """
        size, threads = self.batching(total, turns=False)
        return self.requests_batch_bytes or size, threads

    def unit_bytes(self, path: Path) -> bytes | None:
        """What the archive keeps of the local file ``path`` and decodes (the ``contents`` of
        ``tables_batch``); None: its bytes as they are. A format whose sessions span several
        files gives a self-contained copy of the session; one that reads a database, a
        consistent snapshot of it."""
        return None

    def watched(self, path: str) -> list[str]:
        """Every file whose size, modification time and inode stand for what is read of the
        planned file ``path`` (it first): the table cache keeps a session's rows while none of
        them changed. By default the file alone; a format that reads beside it names the rest
        (a database's write-ahead log, a session's message files), existing or not.

        Examples:
            >>> from cc_analytics.frames.registry import formats
            >>> all(plugin.watched("/h/a.jsonl")[0] == "/h/a.jsonl" for plugin in formats())
            True
        """
        return [path]

    # -- the ``context`` command --------------------------------------------------------------

    def find_session(self, session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
        """The files of session ``session_id`` in ``stores`` (None: the default stores)."""
        if not is_safe_id(session_id):
            return []
        return [
            file for file in self.resolve(_existing(stores or self.default_stores())) if file.session_id == session_id
        ]

    def latest_session(self, stores: Sequence[Path] | None = None) -> tuple[float, str] | None:
        """(modification time, id) of the session whose main file was written last, if any."""
        newest: tuple[float, str] | None = None
        for file in self.resolve(_existing(stores or self.default_stores())):
            if file.is_subagent:
                continue
            try:
                stamp = (file.path.stat().st_mtime, file.session_id)
            except OSError:
                continue
            newest = stamp if newest is None or stamp > newest else newest
        return newest

    def context_report(
        self,
        session_id: str,
        files: Sequence[TranscriptFile],
        *,
        contents: Sequence[bytes] | None = None,
        model: str | None = None,
        provider: str | None = None,
    ) -> dict[str, Any] | None:
        """The ``cc-transcript.context/2`` ContextWindow report of one session's files (None:
        nothing to report). The default reports from the verbs module's ``context_report``."""
        report = getattr(self.module(), "context_report", None)
        if report is None:
            return None
        return report(session_id, files, contents=contents, model=model, provider=provider)

    # -- the verbs ----------------------------------------------------------------------------

    def module(self) -> ModuleType:
        """The verbs module, imported on first use."""
        return importlib.import_module(self.package)


Engine = Literal["local", "dask"]
"""Where a table source's tables are read: in this process, or as tasks on a Dask cluster."""
ENGINES: tuple[Engine, ...] = ("local", "dask")


def check_engine(engine: str) -> None:
    """A :class:`~cc_analytics.errors.InputError` for an engine not in :data:`ENGINES`.

    Examples:
        >>> check_engine("dask")
        >>> check_engine("spark")
        Traceback (most recent call last):
        ...
        cc_analytics.errors.InputError: unknown engine 'spark'
        Hint: use 'local' or 'dask'.
    """
    if engine not in ENGINES:
        from cc_analytics.errors import InputError

        msg = f"unknown engine {engine!r}\nHint: use 'local' or 'dask'."
        raise InputError(msg)


class StoredTables(Protocol):
    """An opened table source (:meth:`TableSource.open`): what the readers take from it."""

    @property
    def root(self) -> str:
        """Where it is (a folder or URL, normalised)."""
        ...

    @property
    def file_count(self) -> int:
        """How many transcript files its tables came from."""
        ...

    def scan(self, table: str, *, format: str = "auto", where: pl.Expr | None = None) -> pl.LazyFrame:
        """One table (``sessions``, ``turns``, ``problems``, ``requests``) in its shared schema,
        every format unless ``format`` names one, in the order the loaders give; with ``where``
        only its rows for which ``where`` holds (the same rows as filtering the whole table,
        which the source may find without reading the others)."""
        ...

    def close(self) -> None:
        """End what opening it started (a Dask cluster for ``engine="dask"``); nothing else."""
        ...


class TableSource:
    """A kind of source that already holds the tables (an archive), as the readers see it.

    Subclasses set :attr:`name` and :attr:`no_events` and implement :meth:`root_of` and
    :meth:`open`. The registry lists them (``frames.registry.table_sources``); the front API
    (``frames.api``) and ``frames.sources.workers_ahead`` ask each, in order, whether a source
    is one of theirs (``frames.sources.table_source_of``).
    """

    name: ClassVar[str]
    """What the kind is called (``"archive"``)."""
    no_events: ClassVar[str]
    """The error when the events frame is asked of one (it keeps tables, not events)."""

    def __repr__(self) -> str:
        return f"<table source {self.name!r}>"

    def root_of(self, source: object) -> str | None:
        """The root of the source of this kind that ``source`` names (a path, URL, or a one-item
        list of one), else None. One among other sources raises an
        :class:`~cc_analytics.errors.InputError` that says it is read on its own."""
        raise NotImplementedError

    def open(
        self, root: str, *, engine: Engine = "local", scheduler: str | None = None, workers: int | None = None
    ) -> StoredTables:
        """The tables at ``root`` (what :meth:`root_of` gave), read here or (``engine="dask"``) as
        tasks on the Dask cluster at ``scheduler``, else on a local one of ``workers`` processes
        started on the first read and ended by :meth:`StoredTables.close`."""
        raise NotImplementedError


def is_safe_id(session_id: str) -> bool:
    """A session id that can name a file: no separators, no parent references, printable.

    Examples:
        >>> is_safe_id("019fc8be-3658-7ca3"), is_safe_id("../x"), is_safe_id("")
        (True, False, False)
    """
    return (
        0 < len(session_id) <= 200
        and session_id not in (".", "..")
        and not any(sep in session_id for sep in ("/", "\\", os.sep))
        and session_id.isprintable()
    )


def _existing(stores: Sequence[Path]) -> list[Path]:
    return [store for store in stores if store.is_dir()]
