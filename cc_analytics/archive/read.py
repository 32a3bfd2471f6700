"""Reading an archive: its tables as frames in the pipeline's schemas, and its raw copies.

Imports: polars, the standard library, the other ``archive`` modules and ``frames.plugin``
(the archive is a table source, :data:`ARCHIVE`, which ``frames.registry`` lists by name: so
``frames.read_sessions(DIR)`` and the other readers take an archive without ``frames``
importing this package). Our readers go through the manifest (the parts it names, nothing
else), so they see the state of the last completed run even while a run is writing or after
one was killed. The ``format`` column comes back from the Hive partition; the ``month``
partition is left out; every table has the archive's ``machine`` last. Several archives (a list
of them, or a folder or URL prefix with one per sub-folder) are read as one by
:class:`Archives`, which counts what two of them hold once.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, ClassVar

from cc_analytics.archive import layout as L
from cc_analytics.archive.manifest import NAME, FileRecord, Manifest, unreadable_manifest
from cc_analytics.archive.storage import LocalStorage, Storage, filesystem, is_storage_failure, is_url, normalize
from cc_analytics.frames.plugin import TableSource

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.sources import TranscriptFile

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

    def scan(self, table: str, *, format: str = "auto") -> pl.LazyFrame:
        """One table (``sessions``, ``turns``, ``problems``, ``requests``) in its schema, every format unless
        ``format`` names one.

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

        schema = table_schema(table)
        frames = []
        for name, paths in self._parts(table).items():
            if format not in ("auto", name):
                continue
            frame = self._scan_parts(paths, schema)
            if L.FORMAT in schema:
                frame = frame.with_columns(pl.lit(name, pl.String).alias(L.FORMAT))
            # parts written before machines were named: the manifest's (null until the next run names it)
            frame = frame.with_columns(pl.col(L.MACHINE).fill_null(pl.lit(self.manifest.machine, pl.String)))
            frames.append(frame.select(list(schema)))
        if not frames:
            return pl.LazyFrame(schema=schema)
        return in_order(pl.concat(frames, how="vertical"), table)

    @property
    def machine(self) -> str | None:
        """The machine whose history the archive holds (None: written before machines were named)."""
        return self.manifest.machine

    def _parts(self, table: str) -> dict[str, list[str]]:
        """The table's parts by format (from their partition folder)."""
        out: dict[str, list[str]] = {}
        for part in sorted(self.manifest.parts.values(), key=lambda p: p.path):
            if part.table == table and part.rows:
                format = part.path.split("/")[1].removeprefix(f"{L.FORMAT}=")
                out.setdefault(format, []).append(f"{self.root}/{part.path}")
        return out

    def _scan_parts(self, paths: list[str], schema: pl.Schema) -> pl.LazyFrame:
        import polars as pl

        columns = {name: dtype for name, dtype in schema.items() if name != L.FORMAT}
        if isinstance(self.storage, LocalStorage):
            for path in paths:
                _check_part(path)
            # A part written before a column was added (requests' reasoning_tokens) reads it as null.
            frame = pl.scan_parquet(paths, hive_partitioning=False, schema=columns, missing_columns="insert")
        else:  # fetched together (concurrent requests), then one scan of them all
            frame = pl.scan_parquet(
                self._fetched(paths), hive_partitioning=False, schema=columns, missing_columns="insert"
            )
        return frame.cast(columns)  # type: ignore[arg-type]

    def _fetched(self, paths: list[str]) -> list[IO[bytes]]:
        """The parts on object storage, read in one round of requests; a missing or damaged one is named."""
        found = self.storage.read_many(paths)
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

    def __new__(cls, roots: Sequence[str]) -> ArchiveSet:
        made = super().__new__(cls, " + ".join(roots))
        made.roots = tuple(roots)
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
    path = Path(text).expanduser()
    if (path / NAME).is_file():
        return [normalize(text)]
    try:
        children = sorted(child for child in path.iterdir() if (child / NAME).is_file())
    except OSError:  # not a folder, or one that cannot be listed: the loaders say so
        return []
    return [normalize(child) for child in children]


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
    from cc_analytics.archive.writer import read_manifest
    from cc_analytics.errors import InputError

    root = normalize(location)
    storage = filesystem(root)
    try:
        manifest = read_manifest(storage, root)
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


class ArchiveSource(TableSource):
    """The archive as a table source: a folder or URL holding an archive manifest is read
    from its tables (``frames.registry.TABLE_SOURCES`` names :data:`ARCHIVE`).

    Examples:
        >>> ARCHIVE.root_of("/nonexistent") is None, ARCHIVE
        (True, <table source 'archive'>)
    """

    name: ClassVar[str] = "archive"
    no_events: ClassVar[str] = (
        "an archive keeps sessions, turns and problems as tables, not the events frame\n"
        "Hint: read the events of its raw copies (cc_analytics.archive.Archive.transcripts)."
    )

    def root_of(self, source: object) -> str | None:
        """:func:`archive_root`."""
        return archive_root(source)

    def open(self, root: str) -> Archive | Archives:
        """:func:`open_archive`, or :func:`open_archives` for an :class:`ArchiveSet`."""
        if isinstance(root, ArchiveSet):
            return open_archives(root.roots)
        return open_archive(root)


def open_archives(locations: Sequence[str | os.PathLike[str]]) -> Archives:
    """Several archives (one per machine, say) read as one: :class:`Archives`.

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
    """
    return Archives(tuple(open_archive(location) for location in locations))


# The columns that say a request, or a problem, is the same one in two archives.
SAME_REQUEST = ("format", "message_id", "request_id")
SAME_PROBLEM = ("source_file", "line", "reason")
_INDEX = "__archive"


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
    """

    archives: tuple[Archive, ...]
    _copies: dict[str, pl.DataFrame] = field(default_factory=dict, compare=False, repr=False)

    @property
    def root(self) -> str:
        """The archives' roots, joined by `` + ``."""
        return ArchiveSet([archive.root for archive in self.archives])

    @property
    def file_count(self) -> int:
        """How many source files the archives hold together."""
        return sum(archive.file_count for archive in self.archives)

    @property
    def machines(self) -> tuple[str, ...]:
        """The machine of each archive, in order."""
        return tuple(_machine_of(archive) for archive in self.archives)

    def scan(self, table: str, *, format: str = "auto") -> pl.LazyFrame:
        """One table of every archive, each row once (see the class), in the loaders' order."""
        import polars as pl

        frame = self._indexed(table, format)
        copies = self._copies_of(format) if table in ("sessions", "turns", "requests") else None
        if copies is not None and copies.height:  # rows of the sessions another archive gives
            frame = frame.join(copies.lazy(), on=["format", "session_id", _INDEX], how="anti")
        same = {"requests": SAME_REQUEST, "problems": SAME_PROBLEM}.get(table)
        if same is not None:  # rows of several archives under the same ids: the first archive's
            known = pl.all_horizontal(pl.col(c).is_not_null() for c in same)
            frame = frame.filter(~known | (pl.col(_INDEX) == pl.col(_INDEX).min().over(same)))
        return in_order(frame, table).drop(_INDEX)

    def _indexed(self, table: str, format: str) -> pl.LazyFrame:
        import polars as pl

        frames = [
            archive.scan(table, format=format).with_columns(
                pl.col(L.MACHINE).fill_null(pl.lit(machine, pl.String)), pl.lit(index, pl.Int32).alias(_INDEX)
            )
            for index, (archive, machine) in enumerate(zip(self.archives, self.machines, strict=True))
        ]
        return pl.concat(frames, how="vertical")

    def _copies_of(self, format: str) -> pl.DataFrame:
        """The sessions in more than one archive, in each archive but the one that gives them (the
        one where the session has the most events, the first of a tie): (format, session, archive).
        Found once per reader (a few rows, none when no two archives share a session)."""
        import polars as pl

        if format not in self._copies:
            sessions = self._indexed("sessions", format).select("format", "session_id", "events", _INDEX)
            ranked = sessions.filter(pl.len().over("format", "session_id") > 1).sort(
                ["format", "session_id", pl.col("events").fill_null(0), _INDEX], descending=[False, False, True, False]
            )
            first = pl.int_range(pl.len()).over("format", "session_id") == 0
            self._copies[format] = ranked.filter(~first).select("format", "session_id", _INDEX).collect()
        return self._copies[format]


def _machine_of(archive: Archive) -> str:
    """An archive's machine: its manifest's, else (written before machines were named) its folder's name."""
    return archive.machine or archive.root.rstrip("/").rpartition("/")[2] or archive.root


ARCHIVE = ArchiveSource()
"""The table source ``frames.registry`` lists."""
