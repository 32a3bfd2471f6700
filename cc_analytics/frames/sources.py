"""Transcript files as every loader sees them, whatever their format, and telling formats apart.

Imports: the standard library, ``cc_analytics.errors`` and ``cc_analytics.jsonline`` (orjson and the format registry,
``frames.registry``, when files are told apart or a plan is made). A source is a file, a folder
(searched recursively for ``*.jsonl``), a glob, or a list of these; which format a file holds
is read from its first lines, never from where it lies: each registered format's plugin is
asked whether they are its own. A source may also hold the tables already (an archive): each
registered table source is asked whether it is its own (:func:`table_source_of`).
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import io
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from cc_analytics.errors import InputError
from cc_analytics.jsonline import may_be_object, safe_loads

if TYPE_CHECKING:
    from cc_analytics.frames.plugin import Engine, StoredTables, TableSource

SUFFIX = ".jsonl"
GLOB_CHARS = frozenset("*?[")
SNIFF_LINES = 8
SNIFF_BYTES = 1 << 16
SNIFF_FIRST_READ = 1 << 12
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))
# Loaders read a transcript in line-aligned pieces of about this many bytes (read_pieces): their
# memory does not grow with one file's size (a single 1 GB transcript, issue 26).
PIECE_BYTES = 16 * 1024 * 1024


class TranscriptFile(NamedTuple):
    """One transcript file and the session it belongs to.

    ``session_id`` is the main session the file counts towards (the parent's id for a
    Claude Code subagent file; the file stem of a ChainlessChain transcript); ``agent_id``
    is set for subagent files; ``layout`` is ``"main"``, ``"subagents-dir"`` or
    ``"agent-file"``; ``size`` is in bytes, as the batch engine weighs files.

    A named tuple rather than a dataclass: ``dataclasses`` imports ``inspect``, about 8 ms of
    the status line's start.
    """

    path: Path
    session_id: str
    agent_id: str | None
    layout: str
    project_dir: str
    size: int

    @property
    def is_subagent(self) -> bool:
        return self.layout != "main"

    @property
    def source_file(self) -> str:
        """The path as a frame's ``source_file`` column holds it (see :func:`shown`)."""
        return shown(str(self.path))


def shown(name: str) -> str:
    """A path or file name as the operating system gave it, as text a frame can hold.

    Python decodes the bytes of a name that are not UTF-8 to lone surrogates, which Polars
    strings cannot hold: each such byte is written ``\\xNN`` instead. Valid names are kept.

    Examples:
        >>> shown("caf\\udce9.jsonl"), shown("café.jsonl")
        ('caf\\\\xe9.jsonl', 'café.jsonl')
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[TranscriptFile] | None
Format = str
"""``"auto"`` (each file's format read from its first lines) or a registered format's name."""
Plan = Mapping[str, Sequence[TranscriptFile]]


def sniff_format(path: Path) -> str:
    """The name of the format whose plugin recognises one of the file's first object lines (see
    :func:`cc_analytics.frames.registry.recognize`); a file that cannot be opened goes to the
    registry's fallback format, whose loader reports it.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.registry import fallback, recognize
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        >>> _ = path.write_text('{"type":"session_start","timestamp":1,"data":{}}\\n')
        >>> sniff_format(path) == recognize({"type": "session_start", "timestamp": 1, "data": {}}, b"")
        True
        >>> _ = path.write_text("not JSON\\n")
        >>> sniff_format(path) == fallback()
        True
    """
    try:
        with open_transcript(path) as handle:
            return _sniff(handle, os.fspath(path))
    except OSError:
        from cc_analytics.frames.registry import recognize

        return recognize(None, b"")


def sniff_head(head: bytes) -> str:
    """:func:`sniff_format` of a file's first bytes (``SNIFF_BYTES`` are enough)."""
    return _sniff(io.BytesIO(head[:SNIFF_BYTES]))


class _FirstLines(threading.local):
    """The first lines the plan under way read (:func:`first_line_read`), by path; None outside one."""

    kept: dict[str, bytes] | None = None


_FIRST_LINES = _FirstLines()


@contextmanager
def _first_lines_kept() -> Iterator[None]:
    """Keep, while the block runs (in this thread), the first line of each file sniffed."""
    previous, _FIRST_LINES.kept = _FIRST_LINES.kept, {}
    try:
        yield
    finally:
        _FIRST_LINES.kept = previous


def first_line_read(path: Path) -> bytes | None:
    """A file's first line (without its line feed; its first ``SNIFF_BYTES`` when it is longer),
    as the plan under way (:func:`plan`) read it to tell the file's format, else None: a
    format's ``resolve`` that needs no more of a file than its first line takes it from here
    rather than reading the file again (a Copilot CLI store holds thousands of small files).

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        >>> _ = path.write_text('{"a":1}\\n{"b":2}\\n')
        >>> with _first_lines_kept():
        ...     _ = sniff_format(path)
        ...     first_line_read(path)
        b'{"a":1}'
        >>> first_line_read(path) is None
        True
    """
    kept = _FIRST_LINES.kept
    return None if kept is None else kept.get(os.fspath(path))


def _sniff(handle: BinaryIO, path: str | None = None) -> str:
    """The format of the file read from ``handle``: its object lines are parsed one at a time
    and offered to the registry until one is recognised (most files: the first). ``path``: the
    file's, under which its first line is kept while a plan runs (:func:`first_line_read`)."""
    lines = _HeadLines(handle)
    try:
        return _recognize(lines)
    finally:
        kept = _FIRST_LINES.kept
        if kept is not None and path is not None:
            first = lines.first_line()
            if first is not None:
                kept[path] = first


def _recognize(lines: _HeadLines) -> str:
    from cc_analytics.frames.registry import UNRECOGNIZED, recognized

    seen = False
    for value in lines.objects():
        seen = True
        name = recognized(value, lines.head)
        if name is not None:
            return name
    if seen:
        return UNRECOGNIZED
    from cc_analytics.frames.registry import recognize

    return recognize(None, lines.head)


def _first_object(handle: BinaryIO) -> tuple[bytes, dict[str, object] | None]:
    """(the bytes read, the first JSON object line among the first ones): see :class:`_HeadLines`."""
    lines = _HeadLines(handle)
    first = next(lines.objects(), None)
    return lines.head, first


def _objects(handle: BinaryIO) -> tuple[bytes, list[dict[str, object]]]:
    """(the bytes read, every JSON object line among the first ``SNIFF_LINES``)."""
    lines = _HeadLines(handle)
    found = list(lines.objects())
    return lines.head, found


class _HeadLines:
    """The first ``SNIFF_LINES`` lines of the first ``SNIFF_BYTES`` of a file (the last of them
    possibly cut there), read no further than the lines looked at; :meth:`objects` parses them
    one at a time. A line is parsed with orjson, and by the JSON line policy
    (:func:`cc_analytics.jsonline.safe_loads`) only when orjson refuses it: a broken line or one
    nested too deep is no object (its loader reports it)."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.head = b""
        self.ended = False  # the head is the whole file

    def first_line(self) -> bytes | None:
        """The file's first line, without its line feed (its first ``SNIFF_BYTES`` when longer),
        when the head holds it, else None."""
        end = self.head.find(b"\n")
        if end >= 0:
            return self.head[:end]
        return self.head if self.ended or len(self.head) >= SNIFF_BYTES else None

    def objects(self) -> Iterator[dict[str, object]]:
        import orjson

        start = 0
        for _ in range(SNIFF_LINES):
            end = self.head.find(b"\n", start)
            while end < 0 and len(self.head) < SNIFF_BYTES:
                more = self.handle.read(min(max(len(self.head), SNIFF_FIRST_READ), SNIFF_BYTES - len(self.head)))
                if not more:
                    self.ended = True
                    break
                self.head += more
                end = self.head.find(b"\n", start)
            last = end < 0
            line = self.head[start:] if last else self.head[start:end]
            if may_be_object(line):  # a pretty-printed document's lines (Gemini CLI's) are not parsed
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    value = safe_loads(line)  # None for a broken line, whatever its bytes
                if isinstance(value, dict):
                    yield value
            if last:
                return
            start = end + 1


def open_transcript(path: Path) -> BinaryIO:
    """A transcript opened for reading, unbuffered, if it is a regular file.

    A FIFO, socket, device or folder raises :class:`OSError` at once (the file is opened
    without waiting for a writer), and so do a broken symbolic link and a symbolic link loop,
    with a ``strerror`` that says which: what the loaders put in the problem row.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> (folder / "gone.jsonl").symlink_to(folder / "absent.jsonl")
        >>> open_transcript(folder / "gone.jsonl")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] broken symbolic link: '...gone.jsonl'
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as exc:
        raise explained(exc, path) from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in FILE_KINDS if test(mode)), "a device")
        raise OSError(errno.EINVAL, f"not a regular file ({kind})", str(path))
    return open(fd, "rb", buffering=0)


class Piece(NamedTuple):
    """A piece of a transcript read in pieces: ``data[:size]``, whole lines each ending with a line
    feed (the last piece: the rest of the file, ``last``). ``data`` may go on past ``size``: the
    start of the next piece, read again with it (cutting the piece out would copy it)."""

    data: bytes
    size: int
    last: bool


def read_pieces(path: Path, piece_bytes: int | None = None) -> Iterator[Piece]:
    """The bytes of a transcript in line-aligned pieces of about ``piece_bytes`` (default
    :data:`PIECE_BYTES`), so that a loader walking one piece at a time holds one piece, however
    big the file: one piece for a file smaller than that. A line longer than a piece makes its
    piece longer. Opened as :func:`open_transcript` opens it.

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
        >>> _ = path.write_bytes(b"one\\ntwo\\nthree-long\\nfour")
        >>> [(p.data[: p.size], p.last) for p in read_pieces(path, 6)]
        [(b'one\\n', False), (b'two\\n', False), (b'three-long\\n', False), (b'four', True)]
    """
    want = piece_bytes or PIECE_BYTES
    with open_transcript(path) as handle:
        if os.fstat(handle.fileno()).st_size <= want:  # the common case: one read (as it grows, to its end)
            data = handle.read()
            yield Piece(data, len(data), True)
            return
        offset = 0
        size = want
        while True:
            data = handle.read(size)
            while len(data) < size:  # the end of the file, or (rarely) a short read
                more = handle.read(size - len(data))
                if not more:
                    yield Piece(data, len(data), True)
                    return
                data += more
            cut = data.rfind(b"\n") + 1
            if not cut:  # not one whole line: a longer piece
                size *= 2
                handle.seek(offset)
                continue
            yield Piece(data, cut, False)
            offset += cut
            size = want
            handle.seek(offset)


def read_transcript(path: Path, limit: int = -1) -> bytes:
    """The bytes of a transcript (its first ``limit`` bytes when ``limit`` ≥ 0); see :func:`open_transcript`."""
    with open_transcript(path) as handle:
        return handle.read() if limit < 0 else handle.read(limit)


def explained(exc: OSError, path: Path) -> OSError:
    """``exc`` (raised opening or stat'ing ``path``) with a ``strerror`` saying when the path is a
    broken symbolic link or a link loop."""
    if exc.errno == errno.ENOENT and os.path.islink(path):
        return OSError(exc.errno, "broken symbolic link", str(path))
    if exc.errno == errno.ELOOP:
        return OSError(exc.errno, "symbolic link loop", str(path))
    return exc


def refuse_empty(text: str) -> str:
    """``text``, or an :class:`InputError` when it is empty or blank (``Path("")`` is the
    current folder: an unset shell variable would otherwise read it silently)."""
    if not text.strip():
        msg = f"an empty source ({text!r})\nHint: pass transcript files, folders or globs; '.' for the current folder."
        raise InputError(msg)
    return text


def expand(source: str | os.PathLike[str]) -> list[Path]:
    """The transcripts of one source (file, folder searched recursively, or glob).

    A source that matches nothing raises :class:`InputError`. A source that names something
    other than a folder or a regular file (a broken link, a FIFO) is kept, so that the loader
    reports it as a file it cannot read.
    """
    text = refuse_empty(os.fspath(source))
    if os.path.isfile(text):  # the common case first: a transcript (or a link to one), one stat
        return [source if isinstance(source, Path) else Path(text)]
    path = Path(text).expanduser()
    if path.is_dir():
        return walk([path])
    if os.path.lexists(path):
        return [path]
    if GLOB_CHARS.intersection(text):
        out: list[Path] = []
        for match in sorted(Path(p) for p in glob.glob(os.path.expanduser(text), recursive=True)):
            out.extend(walk([match]) if match.is_dir() else [match])
        return out
    msg = f"no such file or folder: {text!r}\nHint: pass transcript files, folders or globs."
    raise InputError(msg)


def name_filter(patterns: Iterable[str] | None = None) -> Callable[[str], bool]:
    """Whether a file name is a transcript's: it matches one of ``patterns`` (shell patterns;
    None: every registered format's ``file_names``). Patterns that only fix a suffix
    (``*.jsonl``) are tested with ``str.endswith``, the others with one regular expression.

    Examples:
        >>> wanted = name_filter(["*.jsonl", "session-*.json"])
        >>> [wanted(name) for name in ("a.jsonl", "session-1.json", "logs.json", "a.jsonl.bak")]
        [True, True, False, False]
    """
    if patterns is None:
        from cc_analytics.frames.registry import formats

        patterns = [pattern for plugin in formats() for pattern in plugin.file_names] or ["*" + SUFFIX]
    suffixes: list[str] = []
    others: list[str] = []
    for pattern in dict.fromkeys(patterns):
        rest = pattern[1:]
        if pattern.startswith("*") and not GLOB_CHARS.intersection(rest):
            suffixes.append(rest)
        else:
            others.append(fnmatch.translate(pattern))
    ends = tuple(suffixes)
    if not others:
        return lambda name: name.endswith(ends)
    match = re.compile("|".join(others)).match
    return lambda name: name.endswith(ends) or match(name) is not None


def walk(roots: Iterable[Path]) -> list[Path]:
    """Every transcript entry (see :func:`name_filter`) under ``roots`` that is not a folder,
    sorted; symlinked folders are not followed.

    Besides regular files this keeps what only looks like a transcript (a broken symbolic
    link, a link loop, a FIFO) and every folder that cannot be listed: the loaders report
    each as a file they cannot read (a problems row with a null line) and read the rest.
    """
    return [Path(text) for text in sorted(_listed(roots), key=_parts)]


def listed_size(source: Source, *, skip: Callable[[str], bool] | None = None) -> int:
    """About how many bytes the transcripts of ``source`` hold (None: every format's default
    stores), from one listing of its folders: enough to decide, before the files are planned,
    whether worker processes are worth starting. ``skip``: names of files left out.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.jsonl").write_text("{}\\n")
        >>> listed_size(folder), listed_size([folder / "a.jsonl", folder])
        (3, 6)
    """
    return sum(_listed_sizes(source, skip))


def _listed_sizes(source: Source, skip: Callable[[str], bool] | None = None) -> list[int]:
    sizes: list[int] = []
    if source is None:
        _listed(default_stores(), sizes, skip)  # absent stores hold nothing
        return sizes
    for item in source_list(source):
        if isinstance(item, TranscriptFile):
            if skip is None or not skip(item.path.name):
                sizes.append(item.size)
            continue
        text = os.path.expanduser(os.fspath(item))
        if os.path.isdir(text):
            _listed([Path(text)], sizes, skip)
        else:
            sizes.extend(file_size(path) for path in expand(item) if skip is None or not skip(path.name))
    return sizes


def threaded_names() -> Callable[[str], bool] | None:
    """Whether a file name is one the formats that read ``sessions`` and ``usage`` in threads
    (``FormatPlugin.batching(…, turns=False)``) give their files, from their patterns that name
    more than a suffix; None when no format does.

    Examples:
        >>> wanted = threaded_names()
        >>> wanted is None or wanted("rollout-2025-10-01T10-00-00-a.jsonl")
        True
    """
    from cc_analytics.frames.registry import formats

    patterns = [
        pattern
        for plugin in formats()
        if plugin.batching(0, turns=False)[1]
        for pattern in plugin.file_names
        if not (pattern.startswith("*") and not GLOB_CHARS.intersection(pattern[1:]))
    ]
    return name_filter(patterns) if patterns else None


# What a worker started ahead imports while this process plans (:func:`import_ahead` adds the
# planned formats' modules).
AHEAD_IMPORTS: tuple[str, ...] = ("polars", "cc_analytics.frames.schema")


@contextmanager
def workers_ahead(
    source: Source, workers: int | None, *, start: bool = True, lean: bool = False
) -> Iterator[str | None]:
    """Start the worker processes that reading ``source`` will use (None: every format's
    default stores) before its files are planned, from the size of one listing of its
    folders (:func:`listed_size`), which a plan in the block takes rather than listing them
    again (:func:`_listings_kept`). They import Polars while this process plans, then the
    planned formats' modules (:func:`import_ahead`); the next run that asks for as many takes
    them, and the ones nobody took end with the block. Yields the root of the table source
    ``source`` names (an archive, see :func:`table_source_of`: it holds no transcripts to
    decode, so no worker is started), else None, so that the caller need not look for one
    again (on object storage, a request).
    ``start=False`` starts none (a run that expects to find its tables kept, ``frames.tablecache``).
    ``lean``: the run reads what ``sessions`` and ``usage`` read, so the files of formats that
    read those in threads (:func:`threaded_names`) need no process.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> with workers_ahead(folder, None) as root:  # an empty folder: nothing is started
        ...     root is None
        True
    """
    found = table_source_of(source)
    if found is not None:  # not even when asked for (--workers N): they would end unused
        yield found[1]
        return
    if not start:
        yield None
        return
    from cc_analytics.frames.engine import workers_started

    with _listings_kept():  # the plan in the block takes its folders' listings from here
        sizes = _listed_sizes(source, threaded_names() if lean else None)
        # One file is one batch, read by this process: a worker started for it would read nothing
        # and only hold memory (a single 1 GB transcript).
        with workers_started(sum(sizes) if len(sizes) > 1 else 0, workers, imports=AHEAD_IMPORTS):
            yield None


def import_ahead(by_format: Mapping[str, Sequence[TranscriptFile]]) -> None:
    """Have the worker processes started ahead (:func:`workers_ahead`) import the worker
    modules of the formats ``by_format`` plans files of, once the caller has planned them.

    Before the plan, a worker imports Polars alone (:data:`AHEAD_IMPORTS`): importing every
    format's worker module took each worker 7 MB and 28 ms, the one of a home of Claude Code
    transcripts 3.6 MB and 15 ms.

    Examples:
        >>> import_ahead({})  # nothing planned, or no worker started: nothing to do
    """
    from cc_analytics.frames.engine import import_ahead as ahead
    from cc_analytics.frames.registry import formats

    planned = {name for name, files in by_format.items() if files}
    ahead([plugin.worker_module for plugin in formats() if plugin.name in planned])


def table_source_of(source: object) -> tuple[TableSource, str] | None:
    """The registered table source (``frames.registry.table_sources``) that ``source`` names,
    with its root, else None: asked in order, each raises when one of its kind is among other
    sources (read as transcripts it would give nothing).

    Examples:
        >>> import tempfile
        >>> table_source_of(None), table_source_of(tempfile.mkdtemp())
        (None, None)
    """
    if source is None:
        return None
    from cc_analytics.frames.registry import table_sources

    for kind in table_sources():
        root = kind.root_of(source)
        if root is not None:
            return kind, root
    return None


def open_stored(
    source: object, *, engine: Engine = "local", scheduler: str | None = None, workers: int | None = None
) -> StoredTables | None:
    """The tables ``source`` holds when a registered table source names it (an archive), else
    None (see :func:`table_source_of`); ``engine``, ``scheduler`` and ``workers`` as
    :meth:`~cc_analytics.frames.plugin.TableSource.open` takes them.

    Examples:
        >>> open_stored(["a.jsonl", "b.jsonl"]) is None
        True
    """
    found = table_source_of(source)
    if found is None:
        return None
    kind, root = found
    if engine == "local":  # as a table source written before engines were asked for takes it
        return kind.open(root)
    return kind.open(root, engine=engine, scheduler=scheduler, workers=workers)


def default_stores() -> list[Path]:
    """The folders of every registered format's default stores, existing or not."""
    from cc_analytics.frames.registry import formats

    return [store for plugin in formats() for store in plugin.default_stores()]


def protected_roots() -> list[Path]:
    """Folders nothing is ever written in (archives, Parquet files): every agent's own."""
    from cc_analytics.frames.registry import formats

    return [root for plugin in formats() for root in plugin.protected_roots()]


def file_size(path: str | os.PathLike[str]) -> int:
    """The size of the file at ``path`` in bytes, 0 when it cannot be stat'ed (gone, unreadable):
    a size only orders and batches the work, and the read that follows reports the failure.

    Examples:
        >>> file_size("/no/such/file.jsonl")
        0
    """
    sizes = _LISTINGS.sizes
    if sizes:  # a listing of the run under way stat'ed it (a Copilot CLI store: 4,215 calls spared)
        known = sizes.get(os.fspath(path))
        if known is not None:
            return known
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def source_list(source: Source) -> list[str | os.PathLike[str] | TranscriptFile]:
    """``source`` (one path, several, or None for none) as a list of its items.

    Examples:
        >>> source_list("a.jsonl"), source_list(["a", "b"]), source_list(None)
        (['a.jsonl'], ['a', 'b'], [])
    """
    if isinstance(source, str | os.PathLike):
        return [source]
    return list(source or [])


def _parts(text: str) -> list[str]:
    # The order of Path objects (by their parts), without making them: sorting 2,700 Paths took
    # a fifth of a second.
    return text.split(os.sep)


class _Listings(threading.local):
    """The folders listed while :func:`_listings_kept` runs (in this thread): by root, each
    entry :func:`_listed` kept as (path, name, size or None when not stat'ed); and the paths of
    the files and folders listed that are not symbolic links (their listing said so)."""

    kept: dict[str, list[tuple[str, str, int | None]]] | None = None
    plain: set[str] | None = None
    sizes: dict[str, int] | None = None  # the sizes of the files stat'ed while listing


_LISTINGS = _Listings()


@contextmanager
def _listings_kept() -> Iterator[None]:
    """Keep the listings of folders made while the block runs: the quick listing that decides
    the workers (:func:`workers_ahead`) is the plan's too (a Copilot CLI store of 4,215 session
    folders: 70 ms a listing, and as many ``lstat`` calls again to tell their real paths)."""
    previous = _LISTINGS.kept, _LISTINGS.plain, _LISTINGS.sizes
    _LISTINGS.kept, _LISTINGS.plain, _LISTINGS.sizes = {}, set(), {}
    try:
        yield
    finally:
        _LISTINGS.kept, _LISTINGS.plain, _LISTINGS.sizes = previous


def is_plain(path: str) -> bool:
    """Whether a listing kept by the run under way showed ``path`` is not a symbolic link.

    Examples:
        >>> is_plain("/")  # outside a run's listings nothing is known
        False
    """
    plain = _LISTINGS.plain
    return plain is not None and path in plain


def _listed(
    roots: Iterable[Path], sizes: list[int] | None = None, skip: Callable[[str], bool] | None = None
) -> list[str]:
    """What :func:`walk` keeps, as text, unsorted; with ``sizes``, each regular file's size is
    appended to it (but those of the files whose names ``skip`` takes). A root listed before
    while :func:`_listings_kept` runs is not listed again."""
    out: list[str] = []
    kept = _LISTINGS.kept
    for root in roots:
        key = os.fspath(root)
        found = None if kept is None else kept.get(key)
        if found is None:
            if not root.is_dir():
                continue
            found = _entries(key, stat=sizes is not None, plain=_LISTINGS.plain, sizes=_LISTINGS.sizes)
            if kept is not None:
                kept[key] = found
        for path, name, size in found:
            out.append(path)
            if sizes is not None and size != NO_SIZE and (skip is None or not skip(name)):
                if size is None:  # listed without sizes before
                    try:
                        size = os.stat(path).st_size
                    except OSError:
                        continue
                sizes.append(size)
    return out


NO_SIZE = -1
"""The size :func:`_entries` gives a folder it could not list, or a file it could not stat."""


def _entries(
    root: str, *, stat: bool, plain: set[str] | None, sizes: dict[str, int] | None = None
) -> list[tuple[str, str, int | None]]:
    """What :func:`_listed` keeps under the folder ``root``: every entry :func:`name_filter`
    takes that is not a folder, and every folder that cannot be listed, as (path, name, size:
    None unless ``stat``); symbolic links to folders are not followed. ``plain``: where the
    paths of the files and folders listed that are not symbolic links are added; ``sizes``:
    where each file stat'ed is given its size."""
    wanted = name_filter()
    out: list[tuple[str, str, int | None]] = []
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            out.append((folder, os.path.basename(folder), NO_SIZE))
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                is_link = entry.is_symlink()  # from the listing: no system call
            except OSError:
                is_dir, is_link = False, True
            if is_dir:
                if not is_link:
                    folders.append(entry.path)
                    if plain is not None:
                        plain.add(entry.path)
            elif wanted(entry.name):
                size: int | None = None
                if stat:
                    try:
                        size = entry.stat().st_size
                    except OSError:
                        size = NO_SIZE
                    else:
                        if sizes is not None:
                            sizes[entry.path] = size
                out.append((entry.path, entry.name, size))
                if plain is not None and not is_link:
                    plain.add(entry.path)
    return out


class RealPaths:
    """The real path of many files, as text (a key to tell files apart), resolving each folder
    once: a file that is not a symlink resolves to its resolved folder joined with its name.

    Strings and ``os.path``, not ``Path``: on a corpus of 2,700 files this is a third of the
    time it took with ``Path`` objects.
    """

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def __call__(self, path: Path) -> str:
        """The real path of ``path``, as text.

        Examples:
            >>> import tempfile
            >>> root = Path(tempfile.mkdtemp())
            >>> (root / "a" / "b").mkdir(parents=True)
            >>> (root / "link").symlink_to(root / "a")
            >>> real = RealPaths()
            >>> [real(p) == os.path.realpath(p) for p in (root / "link" / "b" / "f", root / "a" / ".." / "a" / "f")]
            [True, True]
        """
        text = os.fspath(path)
        # os.path.realpath, not Path.resolve: on Python < 3.13 that raises on a link loop.
        if not is_plain(text) and os.path.islink(text):
            return os.path.realpath(text)
        folder, name = os.path.split(text)
        return os.path.join(self._folder(folder), name)

    def _folder(self, folder: str) -> str:
        """A folder's real path: its parent's joined with its name unless it is a symbolic link
        (one lstat for each folder not seen yet; os.path.realpath takes one for each part of the
        path, and a store of Copilot CLI's holds a folder for each session)."""
        real = self._folders.get(folder)
        if real is None:
            parent, name = os.path.split(folder)
            if name in ("", ".", "..") or parent == folder or (not is_plain(folder) and os.path.islink(folder)):
                real = os.path.realpath(folder or os.curdir)
            else:
                real = os.path.join(self._folder(parent) if parent else os.path.realpath(os.curdir), name)
            self._folders[folder] = real
        return real


def split_by_format(source: Source, *, sniff: Callable[[Path], str] | None = None) -> dict[str, list[Path]]:
    """The files of ``source`` grouped by the format their content shows (``sniff``, default
    :func:`sniff_format`: a caller that remembers the formats of unchanged files passes its own)."""
    from cc_analytics.frames.registry import UNRECOGNIZED, names

    out: dict[str, list[Path]] = {name: [] for name in (*names(), UNRECOGNIZED)}
    seen: set[str] = set()
    real = RealPaths()
    for item in source_list(source):
        paths = [item.path] if isinstance(item, TranscriptFile) else expand(item)
        for path in paths:
            key = real(path)
            if key not in seen:
                seen.add(key)
                out[(sniff or sniff_format)(path)].append(path)
    return out


def package(format: str) -> ModuleType:
    """The verbs module of a registered format (see ``frames.plugin``)."""
    from cc_analytics.frames.registry import get

    return get(format).module()


def plan(
    source: Source | Plan = None, *, format: Format = "auto", sniff: Callable[[Path], str] | None = None
) -> dict[str, list[TranscriptFile]]:
    """The transcript files of ``source`` by format (formats without files are left out).

    ``source`` is a file, folder, glob, a list of these, or None for every registered format's
    default stores. With ``format="auto"`` each file's format is read from its first lines (by
    ``sniff``, see :func:`split_by_format`). A plan (what this returns) is taken as it is, so a
    caller that planned does not plan twice.
    """
    from cc_analytics.frames.registry import formats, get

    if isinstance(source, Mapping):
        return {name: list(files) for name, files in source.items() if files}
    if format != "auto":
        return {format: get(format).resolve(source)}
    if source is None:
        found = {plugin.name: plugin.resolve(None) for plugin in formats()}
    else:
        with _first_lines_kept():
            found = {
                name: get(name).resolve(paths, planned=True)
                for name, paths in split_by_format(source, sniff=sniff).items()
            }
    return {name: files for name, files in found.items() if files}
