"""Reading an archive: its tables as frames in the pipeline's schemas, and its raw copies.

Imports: polars, the standard library, the other ``archive`` modules and ``frames.plugin``
(the archive is a table source, ``archive.source.ARCHIVE``, which ``frames.registry`` lists by
name and which imports this module when a source may be an archive: so
``frames.read_sessions(DIR)`` and the other readers take an archive without ``frames``
importing this package). Our readers go through the manifest (the parts it names, nothing
else), so they see the state of the last completed run even while a run is writing or after
one was killed. The ``format`` column comes back from the Hive partition; the ``month``
partition is left out; every table has the archive's ``machine`` last. Several archives (a list
of them, or a folder or URL prefix with one per sub-folder) are read as one by
:class:`Archives`, which counts what two of them hold once, here or (``engine="dask"``) as
Dask tasks (:func:`read_parts`, on the ``archive.cluster`` engine's :class:`Cluster`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeAlias

from cc_analytics.archive import layout as L
from cc_analytics.archive.manifest import NAME, FileRecord, Manifest, unreadable_manifest
from cc_analytics.archive.storage import LocalStorage, Storage, filesystem, is_storage_failure, is_url, normalize
from cc_analytics.frames.plugin import Engine, check_engine

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.archive.cluster import Cluster
    from cc_analytics.frames.sources import TranscriptFile

Fetched: TypeAlias = "dict[str, bytes] | None"  # parts on object storage read already, by path

# How each table is ordered when read: what the loaders give for the same sources.
ORDER = {
    "sessions": ("format", "session_id"),
    "turns": ("format", "session_id", "is_subagent_file", "source_file", "turn_index"),
    "problems": ("source_file", "line", "reason"),
    "requests": ("format", "session_id", "agent_id", "time", "message_id", "request_id"),
}


@dataclass(frozen=True, slots=True)
class Archive:
    """An archive at ``root`` (a local folder or a URL) as of its manifest."""

    root: str
    storage: Storage
    manifest: Manifest

    @property
    def file_count(self) -> int:
        """How many source files the archive holds (its tables came from them)."""
        return len(self.manifest.files)

    def scan(self, table: str, *, format: str = "auto", where: pl.Expr | None = None) -> pl.LazyFrame:
        """One table (``sessions``, ``turns``, ``problems``, ``requests``) in its schema, every format unless
        ``format`` names one; with ``where``, its rows for which ``where`` holds.

        Examples:
            >>> import tempfile, pathlib
            >>> from cc_analytics.archive import update
            >>> from cc_analytics.report import SAMPLES_DIR
            >>> to = pathlib.Path(tempfile.mkdtemp()) / "a"
            >>> _ = update(SAMPLES_DIR, to)
            >>> from cc_analytics.frames.registry import names
            >>> sessions = open_archive(to).scan("sessions").collect()
            >>> set(sessions["format"]) == set(names()), sessions.columns == [*L.table("sessions").schema, "machine"]
            (True, True)
        """
        import polars as pl

        frames = [self.frame(table, name, paths) for name, paths in self.parts(table, format=format).items()]
        if not frames:
            return pl.LazyFrame(schema=table_schema(table))
        every = pl.concat(frames, how="vertical")
        return in_order(every if where is None else every.filter(where), table)

    def frame(
        self, table: str, format: str, paths: Sequence[str], *, machine: str | None = None, fetched: Fetched = None
    ) -> pl.LazyFrame:
        """The rows of ``paths`` (parts of ``table`` of one ``format``) in the table's schema, as
        they are stored (not sorted), ``machine`` filling a part written before machines were
        named (default: the manifest's); ``fetched``: parts on object storage read already."""
        import polars as pl

        schema = table_schema(table)
        frame = self._scan_parts(paths, schema, fetched)
        if L.FORMAT in schema:
            frame = frame.with_columns(pl.lit(format, pl.String).alias(L.FORMAT))
        # parts written before machines were named: the manifest's (null until the next run names it)
        frame = frame.with_columns(pl.col(L.MACHINE).fill_null(pl.lit(machine or self.manifest.machine, pl.String)))
        return frame.select(list(schema))

    @property
    def machine(self) -> str | None:
        """The machine whose history the archive holds (None: written before machines were named)."""
        return self.manifest.machine

    def parts(self, table: str, *, format: str = "auto") -> dict[str, list[str]]:
        """The paths of the table's parts by format (from their partition folder), of one
        ``format`` or every one."""
        out: dict[str, list[str]] = {}
        for part in sorted(self.manifest.parts.values(), key=lambda p: p.path):
            if part.table == table and part.rows:
                name = part.path.split("/")[1].removeprefix(f"{L.FORMAT}=")
                if format in ("auto", name):
                    out.setdefault(name, []).append(f"{self.root}/{part.path}")
        return out

    def _scan_parts(self, paths: Sequence[str], schema: pl.Schema, fetched: Fetched = None) -> pl.LazyFrame:
        import polars as pl

        columns = {name: dtype for name, dtype in schema.items() if name != L.FORMAT}
        sources: list[str] | list[IO[bytes]]
        if isinstance(self.storage, LocalStorage):
            for path in paths:
                _check_part(path)
            sources = list(paths)
        else:  # fetched together (concurrent requests), then one scan of them all
            sources = self._fetched(paths, fetched)
        # A part written before a column was added (requests' reasoning_tokens) reads it as null.
        frame = pl.scan_parquet(sources, hive_partitioning=False, schema=columns, missing_columns="insert")
        return frame.cast(columns)  # type: ignore[arg-type]

    def close(self) -> None:
        """Nothing to end (one archive is read in this process; see :meth:`Archives.close`)."""

    def fetch(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The bytes of the parts at ``paths`` that one round of concurrent requests could read
        (none for a local archive: its parts are scanned where they are)."""
        if isinstance(self.storage, LocalStorage):
            return {}
        return self.storage.read_many(paths)

    def _fetched(self, paths: Sequence[str], fetched: Fetched = None) -> list[IO[bytes]]:
        """The parts on object storage, read in one round of requests (unless ``fetched`` has
        them already); a missing or damaged one is named."""
        found = self.fetch(paths) if fetched is None else fetched
        out: list[IO[bytes]] = []
        for path in paths:
            data = found.get(path)
            if data is None:  # missing, or its request failed: read alone, it is named if it fails again
                read_part(self.storage, path)
                data = self.storage.read(path)
            if len(data) < 3 * len(MAGIC) or data[: len(MAGIC)] != MAGIC or data[-len(MAGIC) :] != MAGIC:
                raise damaged_part(path, f"is not a whole Parquet file ({len(data):,} bytes)")
            out.append(io.BytesIO(data))
        return out

    def raw_bytes(self, source: str) -> bytes:
        """The bytes of a source file as last archived (by its path or URL as the manifest has it)."""
        from cc_analytics.archive.work import read_raw
        from cc_analytics.errors import InputError

        record = self.record(source)
        if self.manifest.shared:
            msg = (
                f"the archive at {self.root!r} is a shared one (archive --share): it keeps no copy of {source!r}\n"
                "Hint: read the session from its machine's own archive or transcripts."
            )
            raise InputError(msg)
        try:
            return read_raw(self.storage, self.root, record)
        except OSError as error:
            msg = (
                f"cannot read the archive's copy of {record.source!r}: {error}\n"
                "Hint: the archive is damaged; restore its raw/ folder from a backup, or archive the "
                "source again if it still exists."
            )
            raise InputError(msg) from None

    def record(self, source: str) -> FileRecord:
        """The manifest's record of a source (given as archived, or relative to nothing: a path
        is made absolute), or of a raw copy's path inside the archive."""
        from cc_analytics.errors import InputError

        files = self.manifest.files
        for key in (source, normalize(source)):
            if key in files:
                return files[key]
        for record in files.values():
            copy = record.copy
            if source in (copy, f"{self.root}/{copy}") or normalize(source) == normalize(f"{self.root}/{copy}"):
                return record
        msg = f"{source!r} is not in the archive at {self.root!r}\nHint: give a source_file value of its turns."
        raise InputError(msg)

    def session_files(self, session_id: str, *, format: str | None = None) -> list[FileRecord]:
        """The archived files of a session (main file first), of one format or any."""
        found = [r for r in self.manifest.files.values() if r.session_id == session_id and format in (None, r.format)]
        return sorted(found, key=lambda r: (r.format, r.layout != "main", r.source))

    def transcripts(self, records: Sequence[FileRecord]) -> tuple[list[TranscriptFile], list[bytes]]:
        """What the loaders take for ``records``: their files and bytes (from the raw copies)."""
        from cc_analytics.archive.work import transcript_file

        return [transcript_file(r) for r in records], [self.raw_bytes(r.source) for r in records]


MAGIC = b"PAR1"


def table_schema(table: str) -> pl.Schema:
    """A table's schema as read from an archive: the pipeline's, and the ``machine`` column last.

    Examples:
        >>> list(table_schema("problems"))
        ['source_file', 'line', 'reason', 'machine']
    """
    import polars as pl

    return pl.Schema({**L.table(table).schema, L.MACHINE: pl.String()})


def in_order(frame: pl.LazyFrame, table: str) -> pl.LazyFrame:
    """``frame`` (a table) in the order the loaders give its rows (:data:`ORDER`)."""
    import polars as pl

    order = ORDER.get(table, ())
    if not order:
        return frame
    return frame.sort(
        [_registry_order(c) if c == L.FORMAT else pl.col(c) for c in order], nulls_last=False, maintain_order=True
    )


def _check_part(path: str) -> None:
    """A local part exists and starts and ends as a Parquet file does (four bytes each end: a
    part cut short or overwritten is named here, not deep inside a query)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(MAGIC))
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - len(MAGIC)))
            tail = handle.read()
    except FileNotFoundError:
        raise damaged_part(path, "is missing") from None
    except OSError as error:
        raise damaged_part(path, f"cannot be read ({error.strerror or error})") from None
    if size < 3 * len(MAGIC) or head != MAGIC or tail != MAGIC:
        raise damaged_part(path, f"is not a whole Parquet file ({size:,} bytes)")


def read_part(storage: Storage, path: str) -> pl.DataFrame:
    """One Parquet part, or an :class:`~cc_analytics.errors.InputError` naming it when it is
    missing or damaged."""
    import io

    import polars as pl

    try:
        return pl.read_parquet(io.BytesIO(storage.read(path)))
    except FileNotFoundError:
        raise damaged_part(path, "is missing") from None
    except (OSError, pl.exceptions.ComputeError) as error:
        raise damaged_part(path, f"cannot be read ({error})") from None


def damaged_part(path: str, what: str) -> Exception:
    from cc_analytics.errors import InputError

    msg = (
        f"the archive's Parquet part {path!r} {what}\n"
        "Hint: the archive is damaged; restore it from a backup (its manifest names every part it needs)."
    )
    return InputError(msg)


def _registry_order(column: str) -> pl.Expr:
    """The formats in the registry's order (unknown ones last), as the loaders yield them."""
    import polars as pl

    from cc_analytics.frames.registry import names

    known = names()
    return pl.col(column).replace_strict(known, list(range(len(known))), default=len(known), return_dtype=pl.Int64)


class ArchiveSet(str):
    """Several archives read as one: a ``str`` (their roots joined by `` + ``) that carries them,
    so that it passes wherever a source's root does and names the same archives when given again.

    Examples:
        >>> both = ArchiveSet(["/a/anna", "/a/ben"])
        >>> both, both.roots, archive_root(both) is both
        ('/a/anna + /a/ben', ('/a/anna', '/a/ben'), True)
    """

    roots: tuple[str, ...]
    opened: Archives | None  # the archives opened already (with the engine they were opened with)

    def __new__(cls, roots: Sequence[str], *, opened: Archives | None = None) -> ArchiveSet:
        made = super().__new__(cls, " + ".join(roots))
        made.roots = tuple(roots)
        made.opened = opened
        return made


def archive_root(source: object) -> str | None:
    """The root of the archive ``source`` names (a path, URL, or a list of them), else None.

    Several archives, given as a list or as a folder or URL prefix whose sub-folders are
    archives (``s3://team-archive/`` holding ``anna/``, ``ben/`` …), give an
    :class:`ArchiveSet`. An archive among transcripts is an
    :class:`~cc_analytics.errors.InputError`: read as a folder of transcripts it would give
    nothing.
    """
    if isinstance(source, ArchiveSet):
        return source
    if isinstance(source, Archives):  # opened already: read as opened (on a Dask cluster, say)
        return source.root
    if isinstance(source, Sequence) and not isinstance(source, str) and len(source) == 1:
        source = source[0]
    elif isinstance(source, Sequence) and not isinstance(source, str):
        return _roots_among(source)
    if not isinstance(source, str | os.PathLike):
        return None
    roots = _roots_of(os.fspath(source))
    if len(roots) > 1:
        return ArchiveSet(roots)
    return roots[0] if roots else None


def _roots_of(text: str) -> list[str]:
    """The archives ``text`` names: itself, or the archives one level under it, or none."""
    if is_url(text):
        root = normalize(text)
        try:
            storage = filesystem(root)
            if storage.exists(f"{root}/{NAME}"):
                return [root]
            return _archives_under(storage, root)
        except ImportError:
            return []
        except Exception as error:
            if not is_storage_failure(error):
                raise
            raise _unreachable(root, error) from error
    from cc_analytics.archive.source import manifest_folders

    found = manifest_folders(text)
    if found == [Path(text).expanduser()]:
        return [normalize(text)]
    return [normalize(folder) for folder in found]


def _archives_under(storage: Storage, root: str) -> list[str]:
    """The archives in the sub-folders of ``root`` on object storage (one listing)."""
    from cc_analytics.archive.storage import RemoteStorage

    if not isinstance(storage, RemoteStorage):
        return []
    storage.fs.invalidate_cache()
    found = storage.fs.glob(f"{root}/*/{NAME}")
    return sorted(storage.url(path.rpartition("/")[0]) for path in found)


def _roots_among(sources: Sequence[object]) -> str | None:
    """The archives of several sources: all archives (or prefixes of them), or none of them."""
    found: list[str] = []
    others: list[str] = []
    for item in sources:
        if not isinstance(item, str | os.PathLike):
            return None
        text = os.fspath(item)
        roots = _roots_of(text)
        found.extend(roots)
        if not roots:
            others.append(text)
    if not found:
        return None
    if others:
        from cc_analytics.errors import InputError

        msg = (
            f"{found[0]!r} is an archive: archives are read on their own or with other archives, not beside "
            f"transcripts ({others[0]!r})\nHint: give only archives (bring one up to date first with "
            "`cc-analytics archive SOURCES --to ARCHIVE`), or only transcripts."
        )
        raise InputError(msg)
    unique = list(dict.fromkeys(found))
    return ArchiveSet(unique) if len(unique) > 1 else unique[0]


def _unreachable(root: str, error: BaseException) -> Exception:
    from cc_analytics.archive.storage import REMOTE_HINT, storage_failure_text
    from cc_analytics.errors import InputError

    return InputError(f"cannot reach {root!r}: {storage_failure_text(error)}\nHint: {REMOTE_HINT}.")


def is_archive(source: object) -> bool:
    """Whether ``source`` is an archive (a folder or URL with an archive manifest).

    Examples:
        >>> is_archive("/nonexistent"), is_archive(["a", "b"])
        (False, False)
    """
    root = archive_root(source)
    if root is None:
        return False
    if isinstance(root, ArchiveSet):
        return True
    from cc_analytics.archive.writer import read_manifest
    from cc_analytics.errors import InputError

    try:
        return read_manifest(filesystem(root), root) is not None
    except InputError:  # one of a newer version: opening it says so
        return True
    except ValueError:
        return False


def open_archive(location: str | os.PathLike[str]) -> Archive:
    """The archive at ``location`` as of its manifest (an empty one when none was written yet)."""
    from cc_analytics.errors import InputError

    root = normalize(location)
    storage = filesystem(root)
    try:
        manifest = _read_manifest(storage, root)
    except ValueError as error:
        raise unreadable_manifest(root, error, "an archive's folder") from None
    except Exception as error:
        if not is_storage_failure(error):
            raise
        if is_url(root):
            raise _unreachable(root, error) from error
        msg = f"cannot read the archive at {root!r}: {error}\nHint: check the path and its permissions."
        raise InputError(msg) from None
    if manifest is None:
        msg = f"{root!r} is not an archive (no {NAME})\nHint: create one with `cc-analytics archive SOURCES --to DIR`."
        raise InputError(msg)
    return Archive(root, storage, manifest)


def _read_manifest(storage: Storage, root: str) -> Manifest | None:
    """The manifest at ``root``; a local one read before and not replaced since (same inode, size
    and time: a run writes a new file and renames it into place) is not parsed again."""
    from cc_analytics.archive.writer import read_manifest

    if not isinstance(storage, LocalStorage):
        return read_manifest(storage, root)
    try:
        stat = os.stat(f"{root}/{NAME}")
    except FileNotFoundError:
        return None
    key = (root, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    manifest = _MANIFESTS.get(key)
    if manifest is None:
        manifest = read_manifest(storage, root)
        if manifest is not None:
            if len(_MANIFESTS) >= 64:
                _MANIFESTS.clear()
            _MANIFESTS[key] = manifest
    return manifest


_MANIFESTS: dict[tuple[str, int, int, int], Manifest] = {}  # a command reads an archive's sources more than once


def open_source(
    root: str, *, engine: Engine = "local", scheduler: str | None = None, workers: int | None = None
) -> Archive | Archives:
    """:func:`open_archive`, or :func:`open_archives` for an :class:`ArchiveSet` (the table
    source's ``open``, ``archive.source``); archives opened already are read as they were
    opened, unless ``engine="dask"`` asks for a cluster: then they are read on one of their own
    (its :meth:`Archives.close` ends it)."""
    opened = root.opened if isinstance(root, ArchiveSet) else None
    if engine == "local":
        if opened is not None:
            return opened
        return open_archives(root.roots) if isinstance(root, ArchiveSet) else open_archive(root)
    check_engine(engine)
    if opened is not None:  # their manifests read already
        from cc_analytics.archive.cluster import Cluster

        return Archives(opened.archives, Cluster(scheduler=scheduler, workers=workers))
    roots = root.roots if isinstance(root, ArchiveSet) else (root,)
    return open_archives(roots, engine=engine, scheduler=scheduler, workers=workers)


def open_archives(
    locations: Sequence[str | os.PathLike[str]],
    *,
    engine: Engine = "local",
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
) -> Archives:
    """Several archives (one per machine, say), or prefixes holding them, read as one: :class:`Archives`.

    ``engine="dask"`` reads their Parquet parts as tasks on a Dask cluster (the ``dask`` extra):
    ``client``, else one connected to ``scheduler``, else a ``LocalCluster`` of ``workers``
    processes started on the first read and closed by :meth:`Archives.close` (or at the end of a
    ``with`` block). The frames are the same as the local engine's.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.archive import update
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> team = pathlib.Path(tempfile.mkdtemp())
        >>> _ = update(SAMPLES_DIR, team / "anna", machine="anna")
        >>> _ = update(SAMPLES_DIR, team / "ben", machine="ben")  # the same sessions, from another machine
        >>> both = open_archives([team / "anna", team / "ben"])
        >>> sessions = both.scan("sessions").collect()
        >>> both.machines, sessions.height == open_archive(team / "anna").scan("sessions").collect().height
        (('anna', 'ben'), True)
        >>> sorted(set(sessions["machine"]))  # each counted once, from the first archive of a tie
        ['anna']
        >>> open_archives([team]).machines  # the folder that holds them
        ('anna', 'ben')
    """
    check_engine(engine)
    roots: list[str] = []
    for location in locations:
        roots.extend(_roots_of(os.fspath(location)) or [normalize(location)])  # none: opening it says why
    roots = list(dict.fromkeys(roots))
    if sum(is_url(root) for root in roots) > 1:  # their manifests read at once (a request each)
        with ThreadPoolExecutor(min(16, len(roots)), thread_name_prefix="cc-archive-open") as pool:
            opened = tuple(pool.map(open_archive, roots))
    else:
        opened = tuple(open_archive(root) for root in roots)
    if engine == "dask":
        from cc_analytics.archive.cluster import Cluster

        return Archives(opened, Cluster(client=client, scheduler=scheduler, workers=workers))
    return Archives(opened)


# The columns that say a request, or a problem, is the same one in two archives.
SAME_REQUEST = ("format", "message_id", "request_id")
SAME_PROBLEM = ("source_file", "line", "reason")
# Per table: those columns, and the one whose hash finds the rows that may be the same (a
# message id is nearly unique alone: hashing it is a third of the cost of hashing all three).
SAME = {"requests": (SAME_REQUEST, "message_id"), "problems": (SAME_PROBLEM, "source_file")}
_INDEX = "__archive"
_SHARED = "__shared"
_ROW = "__row"
TASK_ROWS = 1_000_000  # a Dask task reads parts of one archive and format up to about this many rows


@dataclass(frozen=True, slots=True)
class Archives:
    """Archives read as one (``frames.read_sessions(["s3://team/anna", "s3://team/ben"])`` or the
    prefix that holds them), each row with the ``machine`` of its archive.

    A session present in several archives (the same transcripts archived from two machines: a
    synced home folder, a copied project) is taken once, from the archive where it has the most
    events (the first given of those that tie): its session row, turns and requests. A request
    present in several archives under the same ids (format, message id and request id: a
    session resumed on another machine copies its history) counts once, from the first archive
    given; so does a problem (file, line and reason). An archive written before machines were
    named gets its folder's name as machine.

    Each table is read with one scan per format of every local archive's parts (one per archive
    on object storage, all fetched in one round), sorted once; the rows of sessions another
    archive gives are left out by an anti-join only when the manifests say there are such
    sessions; requests are compared only for the formats more than one archive holds, and their
    ids only among the rows whose message id's hash is not unique.
    ``cluster`` (:func:`open_archives` with ``engine="dask"``) reads the parts as Dask tasks.
    """

    archives: tuple[Archive, ...]
    cluster: Cluster | None = field(default=None, compare=False)
    _kept: dict[tuple[str, str], pl.DataFrame] = field(default_factory=dict, compare=False, repr=False)
    _places: dict[tuple[str, str], dict[str, list[tuple[int, str]]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def root(self) -> str:
        """The archives' roots, joined by `` + `` (an :class:`ArchiveSet` that names these archives,
        read the way they were opened, when given to a reader)."""
        return ArchiveSet([archive.root for archive in self.archives], opened=self)

    @property
    def file_count(self) -> int:
        """How many source files the archives hold together."""
        return sum(archive.file_count for archive in self.archives)

    @property
    def machines(self) -> tuple[str, ...]:
        """The machine of each archive, in order."""
        return tuple(_machine_of(archive) for archive in self.archives)

    def scan(self, table: str, *, format: str = "auto", where: pl.Expr | None = None) -> pl.LazyFrame:
        """One table of every archive, each row once (see the class), in the loaders' order; with
        ``where``, its rows for which ``where`` holds: found among the rows where it holds and
        those that may be the same as one of them (the same ``SAME`` column), so that a few rows
        of a large table cost a read of two columns, not of the table."""
        import polars as pl

        if not self._placed(table, format):
            return pl.LazyFrame(schema=table_schema(table))
        frame = self._indexed(table, format)
        several = self._in_several(table, format) if table in SAME else []
        if where is not None and several:
            telling = SAME[table][1]
            found = frame.filter(where).select(pl.col(telling).unique()).collect().to_series()
            if not found.len():  # no row at all
                return pl.LazyFrame(schema=table_schema(table))
            frame = frame.filter(where | pl.col(telling).is_in(found.drop_nulls().implode()))
        copies = self._copies_of(format) if table in ("sessions", "turns", "requests") else None
        if copies is not None and copies.height:  # rows of the sessions another archive gives
            frame = frame.join(copies.lazy(), on=["format", "session_id", _INDEX], how="anti")
        if several:  # rows of several archives under the same ids: the first archive's
            frame = _first_archive_of(frame, *SAME[table], formats=several)
        # (no two archives hold rows of one format: none can be the same)
        if where is not None:
            frame = frame.filter(where)
        return in_order(frame.drop(_INDEX), table)

    def close(self) -> None:
        """End the Dask cluster started for the reads, if one was (a client given is left open)."""
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> Archives:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _indexed(self, table: str, format: str) -> pl.LazyFrame:
        """Every archive's rows of ``table`` as stored, each with its archive's index."""
        if table == "sessions" and self._shared_sessions():  # read once: the copies are found from it too
            return self._sessions(format).lazy()
        return self._read(table, format)

    def _sessions(self, format: str) -> pl.DataFrame:
        import polars as pl

        key = ("sessions", format)
        if key not in self._kept:
            every = self._kept.get(("sessions", "auto"))
            if every is not None:
                self._kept[key] = every.filter(pl.col(L.FORMAT) == format)
            else:
                self._kept[key] = self._read("sessions", format).collect()
        return self._kept[key]

    def _read(self, table: str, format: str) -> pl.LazyFrame:
        import polars as pl

        if self.cluster is not None:
            frames = [frame.lazy() for frame in self.cluster.map(read_parts, self.tasks(table, format=format))]
        else:
            fetched = self._fetch(table, format)
            frames = []
            for name, placed in self._placed(table, format).items():
                local = [(index, path) for index, path in placed if self._is_local(index)]
                if local:  # every local archive's parts of the format in one scan
                    frames.append(self._scan_local(table, name, local))
                for index, archive in enumerate(self.archives):
                    paths = [path for i, path in placed if i == index and not self._is_local(i)]
                    if paths:
                        frame = archive.frame(table, name, paths, machine=self.machines[index], fetched=fetched)
                        frames.append(frame.with_columns(pl.lit(index, pl.Int32).alias(_INDEX)))
        if not frames:
            return pl.LazyFrame(schema={**table_schema(table), _INDEX: pl.Int32()})
        return pl.concat(frames, how="vertical")

    def _in_several(self, table: str, format: str) -> list[str]:
        """The formats of which more than one archive holds rows of ``table`` (from the manifests)."""
        placed = self._placed(table, format)
        return [name for name, parts in placed.items() if len({index for index, _path in parts}) > 1]

    def _is_local(self, index: int) -> bool:
        return isinstance(self.archives[index].storage, LocalStorage)

    def _placed(self, table: str, format: str) -> dict[str, list[tuple[int, str]]]:
        """The parts of ``table`` by format (in name order), each with its archive's index, in
        the archives' order."""
        key = (table, format)
        if key not in self._places:  # the manifests do not change while they are read
            out: dict[str, list[tuple[int, str]]] = {}
            for index, archive in enumerate(self.archives):
                for name, paths in archive.parts(table, format=format).items():
                    out.setdefault(name, []).extend((index, path) for path in paths)
            self._places[key] = dict(sorted(out.items()))
        return self._places[key]

    def _scan_local(self, table: str, format: str, placed: list[tuple[int, str]]) -> pl.LazyFrame:
        """Local archives' parts of one format in one scan, each row with its archive's index
        and machine. The index is told by the row's place in the scan: the parts are read in
        the order given, each of the rows its manifest records (a part is never rewritten: a
        run writes new ones under new names). Both are row-wise expressions, which lets a
        filter of the rows reach the scan."""
        import polars as pl

        schema = table_schema(table)
        columns = {name: dtype for name, dtype in schema.items() if name != L.FORMAT}
        paths = [path for _index, path in placed]
        for path in paths:
            _check_part(path)
        frame = pl.scan_parquet(
            paths, hive_partitioning=False, schema=columns, missing_columns="insert", row_index_name=_ROW
        ).cast(columns)  # type: ignore[arg-type]
        index: Any = pl.lit(None, pl.Int32)
        end = 0
        ends: list[tuple[int, int]] = []  # (rows before the archive's last part ends, archive)
        for archive_index, path in placed:
            archive = self.archives[archive_index]
            end += archive.manifest.parts[path[len(archive.root) + 1 :]].rows
            if ends and ends[-1][1] == archive_index:
                ends[-1] = (end, archive_index)
            else:
                ends.append((end, archive_index))
        for end, archive_index in reversed(ends):
            index = pl.when(pl.col(_ROW) < end).then(pl.lit(archive_index, pl.Int32)).otherwise(index)
        frame = frame.with_columns(pl.lit(format, pl.String).alias(L.FORMAT), index.alias(_INDEX))
        # parts written before machines were named: their archive's machine
        machines = pl.col(_INDEX).replace_strict(range(len(self.machines)), self.machines, return_dtype=pl.String)
        frame = frame.with_columns(pl.col(L.MACHINE).fill_null(machines))
        return frame.select([*schema, _INDEX])

    def _fetch(self, table: str, format: str) -> dict[str, bytes]:
        """The parts of the archives on object storage, all read in one round of concurrent requests."""
        by_storage: dict[int, tuple[Archive, list[str]]] = {}
        for archive in self.archives:
            if not isinstance(archive.storage, LocalStorage):
                paths = [path for found in archive.parts(table, format=format).values() for path in found]
                by_storage.setdefault(id(archive.storage), (archive, []))[1].extend(paths)
        fetched: dict[str, bytes] = {}
        for archive, paths in by_storage.values():
            fetched.update(archive.fetch(paths))
        return fetched

    def tasks(self, table: str, *, format: str = "auto") -> list[PartsTask]:
        """The reading of ``table`` cut into tasks: parts of one archive and format, about
        :data:`TASK_ROWS` rows each, in the order the local engine reads them."""
        out: list[PartsTask] = []
        for name, placed in self._placed(table, format).items():
            for index, archive in enumerate(self.archives):
                chunk: list[str] = []
                rows = 0
                for path in (path for i, path in placed if i == index):
                    size = archive.manifest.parts[path[len(archive.root) + 1 :]].rows
                    if chunk and rows + size > TASK_ROWS:
                        out.append(PartsTask(archive.root, table, name, tuple(chunk), self.machines[index], index))
                        chunk, rows = [], 0
                    chunk.append(path)
                    rows += size
                if chunk:
                    out.append(PartsTask(archive.root, table, name, tuple(chunk), self.machines[index], index))
        return out

    def _copies_of(self, format: str) -> pl.DataFrame:
        """The sessions in more than one archive, in each archive but the one that gives them (the
        one where the session has the most events, the first of a tie): (format, session, archive).
        Found once per reader (a few rows); none, and no table read, when the manifests say that
        no two archives share a session."""
        import polars as pl

        key = ("copies", format)
        if key in self._kept:
            return self._kept[key]
        shared = self._shared_sessions()
        if format != "auto":
            shared = {unit for unit in shared if unit[0] == format}
        if not shared:
            self._kept[key] = pl.DataFrame(schema={"format": pl.String, "session_id": pl.String, _INDEX: pl.Int32})
            return self._kept[key]
        kept = self._kept.get(("sessions", format))
        found = self._read("sessions", format) if kept is None else kept.lazy()  # three columns read
        sessions = found.select("format", "session_id", "events", _INDEX).filter(
            pl.col("session_id").is_in(sorted({session for _format, session in shared}))
        )
        ranked = sessions.filter(pl.len().over("format", "session_id") > 1).sort(
            ["format", "session_id", pl.col("events").fill_null(0), _INDEX], descending=[False, False, True, False]
        )
        first = pl.int_range(pl.len()).over("format", "session_id") == 0
        self._kept[key] = ranked.filter(~first).select("format", "session_id", _INDEX).collect()
        return self._kept[key]

    def _shared_sessions(self) -> set[tuple[str, str]]:
        """The (format, session) units whose session rows are in more than one archive, from the
        manifests (each part names the sessions its rows belong to)."""
        seen: dict[tuple[str, str], int] = {}
        shared: set[tuple[str, str]] = set()
        for index, archive in enumerate(self.archives):
            for part in archive.manifest.parts.values():
                if part.table == "sessions" and part.rows:
                    for unit in part.units:
                        if seen.setdefault(unit, index) != index:
                            shared.add(unit)
        return shared


def _first_archive_of(
    frame: pl.LazyFrame, same: Sequence[str], telling: str, *, formats: Sequence[str]
) -> pl.LazyFrame:
    """``frame`` without the rows whose ``same`` columns (none null) are those of a row of an
    earlier archive, among the rows of ``formats`` (those more than one archive holds) when
    ``format`` is one of the ``same`` columns. The exact comparison runs only on the rows whose
    ``telling`` column's hash is not unique (a few: those of several archives, and the rare ones
    repeated within one archive)."""
    import polars as pl

    known = pl.all_horizontal(pl.col(column).is_not_null() for column in same)
    if L.FORMAT in same:
        known = known & pl.col(L.FORMAT).is_in(list(formats))
    marked = frame.with_columns((known & pl.col(telling).hash().is_duplicated()).alias(_SHARED))
    alone = marked.filter(~pl.col(_SHARED))
    shared = marked.filter(pl.col(_SHARED)).filter(pl.col(_INDEX) == pl.col(_INDEX).min().over(list(same)))
    return pl.concat([alone, shared], how="vertical").drop(_SHARED)


@dataclass(frozen=True, slots=True)
class PartsTask:
    """A Dask task of a read (:func:`read_parts`): parts of one archive's table and format."""

    root: str
    table: str
    format: str
    paths: tuple[str, ...]
    machine: str
    index: int


def read_parts(task: PartsTask) -> pl.DataFrame:
    """The rows of a task's parts, as :meth:`Archive.frame` gives them, with the archive's index
    (run on a Dask worker: it reads the parts from where they are, a URL every worker reaches).

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.archive import update
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> to = pathlib.Path(tempfile.mkdtemp()) / "a"
        >>> _ = update(SAMPLES_DIR, to, machine="anna")
        >>> team = open_archives([to])
        >>> rows = [read_parts(task) for task in team.tasks("sessions")]
        >>> sum(frame.height for frame in rows) == team.scan("sessions").collect().height
        True
    """
    import polars as pl

    archive = Archive(task.root, filesystem(task.root), Manifest(machine=task.machine))
    frame = archive.frame(task.table, task.format, task.paths)
    return frame.with_columns(pl.lit(task.index, pl.Int32).alias(_INDEX)).collect()


def _machine_of(archive: Archive) -> str:
    """An archive's machine: its manifest's, else (written before machines were named) its folder's name."""
    return archive.machine or archive.root.rstrip("/").rpartition("/")[2] or archive.root
