"""A command's whole output kept, and printed again while nothing it read has changed.

Imports: the standard library and ``frames.tablecache`` (its folder, bound, listing and stat
rules: no Polars). ``sessions`` and ``usage`` (but ``--by block``, whose active block follows the
wall clock) print the same bytes for the same sources, options and environment; a second run
over a history that did not change need not import Polars at all (a quarter of a second by
itself). So, unless ``--no-cache`` or ``--parquet``, a command first asks :meth:`Memo.of` for
its entry and, when :meth:`Memo.replay` finds it valid, is done; else it runs as always and
:meth:`Memo.recording` keeps what it prints (stdout and its notes on stderr, not the progress bar).

An entry is named by a digest of the command, its options, the current folder, the environment
(but the variables a shell changes between two identical runs), how stdout and stderr are
(terminal or not, encoding), the local timezone's files, and the package's fingerprint (its
files, Python, Polars, orjson and genai-prices: :func:`tablecache.fingerprint`, in whose folder
the entries live). It holds a digest of the sources as they were stat'ed before the run read
them: the listing (folders walked, globs expanded, as the plan lists them) with each file's
size, modification and change times (ns) and inode, and each folder's modification time. It is
replayed only when the sources now have the same digest; a file grown, added, removed, touched
or replaced, a folder changed, is another digest: the command runs again and its entry is
replaced. An entry is kept only when every file and folder was last modified more than
:data:`tablecache.RACY_NS` before the stats (a write within a timestamp's granularity could keep
them), written beside its name and renamed, with a checksum of what it holds: one that cannot
be read whole, of another layout or another checksum, is no entry.

Examples:
    >>> import argparse, os, tempfile
    >>> os.environ["CC_ANALYTICS_CACHE_DIR"] = tempfile.mkdtemp()
    >>> args = argparse.Namespace(sources=[tempfile.mkdtemp()], cache=True, parquet=None)
    >>> memo = Memo.of(args, "sessions")
    >>> memo.replay()  # nothing kept yet
    False
    >>> del os.environ["CC_ANALYTICS_CACHE_DIR"]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import argparse

    from cc_analytics.frames.tablecache import Survey

LAYOUT = 1  # bump when an entry's content, or how it is named, changes
SUFFIX = ".out"
MAX_ENTRIES = 64  # the least recently written go first
# Variables a shell or a terminal sets differently for two runs of the same command.
VOLATILE_ENV = frozenset(
    {
        "_",
        "OLDPWD",
        "PWD",
        "SHLVL",
        "TERM_SESSION_ID",
        "WINDOWID",
        "TMUX_PANE",
        "ITERM_SESSION_ID",
        "KITTY_WINDOW_ID",
        "WEZTERM_PANE",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
    }
)
ZONE_FILES = ("/etc/localtime", "/etc/timezone")


class Memo:
    """One command's entry: where it is, what names it, and the sources' digest of this run."""

    def __init__(self, path: Path, key: str, digest: str, *, settled: bool, surveyed: Survey) -> None:
        self.path = path
        self.key = key
        self.digest = digest
        self.surveyed = surveyed  # the sources as stat'ed, for the plan of a run that is not replayed
        self.settled = settled  # every file and folder older than the racy window: may be kept

    @classmethod
    def of(cls, args: argparse.Namespace, command: str) -> Memo | None:
        """The entry of ``command`` run with ``args`` (its ``sources``, ``cache``, ``parquet``),
        the sources stat'ed now; None when outputs are not kept for it (``--no-cache``,
        ``--parquet``, a bound of 0, an archive, a source that cannot be listed: the command
        says why when it runs)."""
        from cc_analytics.errors import CCAnalyticsError
        from cc_analytics.frames import tablecache

        if not getattr(args, "cache", True) or getattr(args, "parquet", None) is not None or not tablecache.max_bytes():
            return None
        source = list(args.sources) if getattr(args, "sources", None) else None
        if source is not None and any("://" in str(item) for item in source):
            return None  # object storage: an archive, never listed here
        from cc_analytics.frames.sources import table_source_of

        try:
            if table_source_of(source) is not None:
                return None  # an archive: its files (raw copies among them) are not surveyed
            roots = tablecache._roots(source)
            found = tablecache.survey(source)
            digest, newest = _sources_digest(roots, found)
            key = _key(args, command, roots)
            folder = tablecache.root() / tablecache.OUTPUTS
        except (CCAnalyticsError, OSError, ValueError):
            return None
        name = hashlib.sha1(key.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()[:24]
        settled = newest is not None and newest < found.started[1] - tablecache.RACY_NS
        return cls(folder / f"{name}{SUFFIX}", key, digest, settled=settled, surveyed=found)

    def replay(self) -> bool:
        """Print the kept output (stdout, then stderr) when the entry is whole and made from
        sources with this run's digest; else print nothing."""
        found = _read_entry(self.path)
        if found is None:
            return False
        header, out, err = found
        if header.get("key") != self.key or header.get("digest") != self.digest:
            return False
        sys.stdout.write(out)
        sys.stdout.flush()
        if err:
            sys.stderr.write(err)
            sys.stderr.flush()
        return True

    @contextmanager
    def recording(self) -> Iterator[None]:
        """What the block prints on stdout and stderr, kept as this entry when it ends without
        an exception and the sources were settled when stat'ed."""
        out, err = _Tee(sys.stdout), _Tee(sys.stderr)
        sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
        try:
            yield
        finally:
            sys.stdout, sys.stderr = out.stream, err.stream
        if self.settled:
            self._write("".join(out.parts), "".join(err.parts))

    def _write(self, out: str, err: str) -> None:
        payload = out.encode("utf-8", "surrogatepass"), err.encode("utf-8", "surrogatepass")
        header = {
            "layout": LAYOUT,
            "key": self.key,
            "digest": self.digest,
            "lengths": [len(part) for part in payload],
            "sum": _checksum(*payload),
        }
        data = json.dumps(header, separators=(",", ":")).encode() + b"\n" + b"".join(payload)
        from cc_analytics.frames.tablecache import _write_beside

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _write_beside(self.path, data)
        except OSError:
            return
        _prune(self.path.parent)


@contextmanager
def recorded(memo: Memo | None) -> Iterator[None]:
    """:meth:`Memo.recording` when there is an entry to keep, else nothing."""
    if memo is None:
        yield
        return
    with memo.recording():
        yield


class _Tee:
    """A text stream that writes through to ``stream`` and keeps what was written."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _key(args: argparse.Namespace, command: str, roots: list[str]) -> str:
    """What the output depends on besides the sources' content, as text."""
    options = {
        name: os.fspath(value) if isinstance(value, os.PathLike) else value
        for name, value in sorted(vars(args).items())
        if value is None or isinstance(value, str | int | float | bool | list | tuple | os.PathLike)
    }
    environment = {name: value for name, value in sorted(os.environ.items()) if name not in VOLATILE_ENV}
    streams = [_stream_facts(sys.stdout), _stream_facts(sys.stderr)]
    zone = [[name, os.path.realpath(name), _stat_facts(name)] for name in ZONE_FILES]
    return json.dumps(
        [LAYOUT, command, options, roots, os.getcwd(), environment, streams, zone],
        default=str,
        separators=(",", ":"),
    )


def _stream_facts(stream: Any) -> list[Any]:
    isatty = getattr(stream, "isatty", None)
    return [bool(isatty and isatty()), getattr(stream, "encoding", None), getattr(stream, "errors", None)]


def _stat_facts(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ino, found.st_ctime_ns]


def _sources_digest(roots: list[str], found: Survey) -> tuple[str, int | None]:
    """A digest of every listed file's stamp, every folder's times and the sources' own (an
    archive made in a folder, or beside those of a folder of archives, changes them); the newest
    modification time of the files and folders (None when one could not be stat'ed: then nothing
    is kept). Change times are in the digest (a file made readable changes its own), not in the
    newest time: as the table cache, the racy window guards against writes, which change both."""
    lines = [f"{root}\0{facts[1:] if (facts := _stat_facts(root)) else '-'}" for root in roots]
    newest = 0
    failed = False
    for path, stat in (*zip(found.listing, found.files, strict=True), *found.folders):
        if stat is None:
            failed = True
            lines.append(f"{path}\0-")
            continue
        newest = max(newest, stat.st_mtime_ns)
        lines.append(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ctime_ns}\0{stat.st_ino}")
    text = "\n".join(lines).encode("utf-8", "surrogateescape")
    return hashlib.sha1(text, usedforsecurity=False).hexdigest(), None if failed else newest


def _checksum(*parts: bytes) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def _read_entry(path: Path) -> tuple[dict[str, Any], str, str] | None:
    """An entry's header, stdout and stderr; None when it is absent, of another layout, or not
    whole (its lengths or checksum do not match)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, newline, body = data.partition(b"\n")
    try:
        header = json.loads(head)
        if not newline or not isinstance(header, dict) or header.get("layout") != LAYOUT:
            return None
        lengths = header["lengths"]
        if not (isinstance(lengths, list) and len(lengths) == 2 and all(type(n) is int and n >= 0 for n in lengths)):
            return None
        if sum(lengths) != len(body) or header.get("sum") != _checksum(body):
            return None
        out, err = body[: lengths[0]], body[lengths[0] :]
        return header, out.decode("utf-8", "surrogatepass"), err.decode("utf-8", "surrogatepass")
    except (ValueError, KeyError, TypeError):
        return None


def _prune(folder: Path) -> None:
    """Keep the :data:`MAX_ENTRIES` entries written last; remove what a killed run left half-written."""
    from cc_analytics.frames.tablecache import ORPHAN_SECONDS

    try:
        entries = [(entry.stat().st_mtime, entry) for entry in os.scandir(folder)]
    except OSError:
        return
    entries.sort(key=lambda found: found[0], reverse=True)
    outputs = [entry for _when, entry in entries if entry.name.endswith(SUFFIX)]
    left = [entry for when, entry in entries if entry.name.endswith(".tmp") and when < time.time() - ORPHAN_SECONDS]
    for entry in outputs[MAX_ENTRIES:] + left:
        with suppress(OSError):
            os.unlink(entry.path)
