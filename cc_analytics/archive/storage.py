"""Where an archive and its sources live: a local folder, or an fsspec URL (``s3://…``).

Imports: the standard library and ``errors``; fsspec only for URLs (the ``cloud`` extra), so
the base install archives local folders without it. Paths are plain strings joined with
``/``; a ``file://`` URL is a local path. Every write is atomic for a reader: locally the
bytes go to a hidden file beside the final name, which is renamed into place; on object
storage one PUT is already all-or-nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from stat import S_ISREG
from typing import Any

import orjson

from cc_analytics.atomic import open_pieces, write_file
from cc_analytics.errors import CCAnalyticsError, InputError

GLOB_CHARS = frozenset("*?[")
HEAD_BYTES = 1 << 16
LOCK = ".lock"


class ArchiveLockedError(CCAnalyticsError, RuntimeError):
    """Another run is writing to the archive."""


@dataclass(frozen=True, slots=True)
class Listed:
    """One file found under a source: where it is, its size and modification time, and the
    object's version tag where the storage has one (an S3 ETag: mtimes there are in seconds)."""

    path: str
    size: int
    mtime_ns: int
    tag: str = ""


def is_url(text: str) -> bool:
    """Whether ``text`` names a location through fsspec (``scheme://…``, but not ``file://``).

    Examples:
        >>> is_url("s3://bucket/prefix"), is_url("file:///tmp/a"), is_url("/tmp/a")
        (True, False, False)
    """
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme != "file" and scheme.isidentifier()


def local_path(text: str) -> str:
    """A local location without its ``file://`` prefix, ``~`` expanded, absolute.

    Examples:
        >>> local_path("file:///tmp/x/../y")
        '/tmp/y'
    """
    if text.startswith("file://"):
        text = text[len("file://") :]
    return os.path.abspath(os.path.expanduser(text))


def filesystem(location: str) -> Storage:
    """The storage that holds ``location`` (a local path or an fsspec URL)."""
    if is_url(location):
        return _remote(location.partition("://")[0])
    return LocalStorage()


@functools.cache
def _remote(protocol: str) -> RemoteStorage:
    return RemoteStorage.for_url(f"{protocol}://")


def normalize(location: str | os.PathLike[str]) -> str:
    """How a location is written in a manifest: a URL as given (no trailing ``/``), a local
    path absolute."""
    text = os.fspath(location)
    return text.rstrip("/") if is_url(text) else local_path(text)


# The libraries behind fsspec's object stores, whose own exceptions (no credentials, an
# endpoint that does not answer) are not OSErrors.
REMOTE_LIBRARIES = frozenset({"botocore", "aiobotocore", "s3fs", "gcsfs", "google", "adlfs", "azure", "aiohttp"})
REMOTE_HINT = (
    "check the URL (the bucket must exist), the credentials and the endpoint: s3fs reads AWS_* "
    "and FSSPEC_S3_ENDPOINT_URL"
)


def is_storage_failure(error: BaseException) -> bool:
    """Whether ``error`` is the file system or object store failing (an :class:`OSError`, or
    an exception of an object store's client library), not a bug of ours.

    Examples:
        >>> is_storage_failure(OSError(28, "No space left on device")), is_storage_failure(KeyError("x"))
        (True, False)
    """
    if isinstance(error, CCAnalyticsError):
        return False
    return isinstance(error, OSError) or type(error).__module__.partition(".")[0] in REMOTE_LIBRARIES


def storage_failure_text(error: BaseException) -> str:
    """``error`` in a line: its type when it is not a plain OSError, and its message."""
    name = type(error).__name__
    text = str(error) or name
    return text if type(error).__module__ == "builtins" else f"{name}: {text}"


class Storage:
    """What the archive needs of a file system: list, stat, read, write atomically, rename, remove."""

    def join(self, *parts: str) -> str:
        return posixpath.join(*parts)

    def find(self, source: str, wanted: Callable[[str], bool], unreadable: list[str] | None = None) -> list[Listed]:
        """The files of ``source`` whose names ``wanted`` takes (``frames.sources.name_filter``); what looks like one but cannot be stat'ed
        (a broken link, a folder that cannot be listed) goes to ``unreadable`` as ``path: why``."""
        raise NotImplementedError

    def read(self, path: str) -> bytes:
        raise NotImplementedError

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The bytes of each path that could be read."""
        out: dict[str, bytes] = {}
        for path in paths:
            try:
                out[path] = self.read(path)
            except OSError:
                continue
        return out

    def heads(self, paths: Sequence[str], size: int = HEAD_BYTES) -> list[bytes]:
        return [self.read_range(path, size) for path in paths]

    def read_range(self, path: str, size: int) -> bytes:
        raise NotImplementedError

    def write(self, path: str, data: bytes) -> None:
        raise NotImplementedError

    def write_many(self, files: dict[str, bytes]) -> None:
        """Write files that nothing names yet (raw copies, staged parts): a crash may leave one
        cut short, which only the next run's cleanup ever sees, so no rename is needed."""
        for path, data in files.items():
            self.write(path, data)

    def rename(self, source: str, target: str) -> None:
        raise NotImplementedError

    def rename_many(self, pairs: Sequence[tuple[str, str]]) -> None:
        for source, target in pairs:
            self.rename(source, target)

    def remove(self, path: str) -> None:
        raise NotImplementedError

    def remove_many(self, paths: Sequence[str]) -> None:
        for path in paths:
            self.remove(path)

    def remove_tree(self, path: str) -> None:
        raise NotImplementedError

    def exists(self, path: str) -> bool:
        raise NotImplementedError

    def files_under(self, path: str) -> list[str]:
        """Every file under ``path`` (recursively); none when it does not exist."""
        raise NotImplementedError

    def names(self, path: str) -> list[str]:
        """The names in folder ``path``; none when it does not exist."""
        raise NotImplementedError

    def lock(self, root: str) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError


class LocalStorage(Storage):
    """A local file system (POSIX renames; ``flock`` for the writer's lock)."""

    def find(self, source: str, wanted: Callable[[str], bool], unreadable: list[str] | None = None) -> list[Listed]:
        failed = [] if unreadable is None else unreadable
        if os.path.isdir(source):
            return sorted(_walk(os.path.abspath(source), wanted, failed), key=lambda listed: listed.path)
        from cc_analytics.frames.sources import expand

        out: list[Listed] = []
        for path in expand(source):
            try:
                stat = path.stat()
            except OSError as error:
                failed.append(_unreadable(str(path), error))
                continue
            if S_ISREG(stat.st_mode):  # a FIFO or a device is never read (it could block)
                out.append(Listed(os.path.abspath(path), stat.st_size, stat.st_mtime_ns))
        return out

    def read(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    def read_range(self, path: str, size: int) -> bytes:
        with open(path, "rb") as handle:
            return handle.read(size)

    def write(self, path: str, data: bytes) -> None:
        folder, name = os.path.split(path)
        os.makedirs(folder, exist_ok=True)
        temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
        write_file(temporary, data)
        os.replace(temporary, path)

    def write_many(self, files: dict[str, bytes]) -> None:
        made: set[str] = set()
        for path, data in files.items():
            folder = os.path.dirname(path)
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            write_file(path, data)

    def write_durably(self, path: str, data: bytes) -> None:
        """:meth:`write`, flushed to the disk before and after the rename (the manifest)."""
        folder, name = os.path.split(path)
        temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
        with open_pieces(temporary) as handle:
            handle.write(data)
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def rename(self, source: str, target: str) -> None:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.replace(source, target)

    def rename_many(self, pairs: Sequence[tuple[str, str]]) -> None:
        made: set[str] = set()
        for source, target in pairs:
            folder = os.path.dirname(target)
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            os.replace(source, target)

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def remove_tree(self, path: str) -> None:
        import shutil

        shutil.rmtree(path, ignore_errors=True)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def files_under(self, path: str) -> list[str]:
        out: list[str] = []
        for folder, _dirs, names in os.walk(path):
            out.extend(os.path.join(folder, name) for name in names)
        return out

    def names(self, path: str) -> list[str]:
        try:
            return os.listdir(path)
        except (FileNotFoundError, NotADirectoryError):
            return []

    @contextlib.contextmanager
    def lock(self, root: str) -> Iterator[None]:
        import fcntl

        os.makedirs(root, exist_ok=True)
        path = os.path.join(root, LOCK)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ArchiveLockedError(_locked_message(root, os.pread(descriptor, 4096, 0))) from None
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, _holder(), 0)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock, as the end of the process does


class RemoteStorage(Storage):
    """An fsspec file system (object storage: a PUT is atomic, a rename is copy then delete)."""

    def __init__(self, fs: Any, protocol: str) -> None:
        self.fs = fs
        self.protocol = protocol

    @classmethod
    def for_url(cls, url: str) -> RemoteStorage:
        try:
            import fsspec
        except ImportError:
            msg = f"{url!r} is a URL, which needs fsspec\nHint: pip install 'cc_analytics[cloud]'."
            raise InputError(msg) from None
        protocol = url.partition("://")[0]
        return cls(fsspec.filesystem(protocol), protocol)

    def url(self, path: str) -> str:
        path = self.fs._strip_protocol(path)
        return f"{self.protocol}://{path}"

    def find(self, source: str, wanted: Callable[[str], bool], unreadable: list[str] | None = None) -> list[Listed]:
        fs = self.fs
        fs.invalidate_cache()
        if GLOB_CHARS.intersection(source):
            matches = fs.glob(source, detail=True)
        elif fs.isdir(source):
            matches = fs.find(source, detail=True)
        elif fs.isfile(source):
            matches = {source: fs.info(source)}
        else:
            msg = f"no such file or folder: {source!r}\nHint: pass transcript files, folders or globs."
            raise InputError(msg)
        out: list[Listed | None] = []
        for path, info in sorted(matches.items()):
            if info.get("type") == "directory":
                nested = fs.find(path, detail=True)
                out.extend(self._listed(p, i, wanted) for p, i in sorted(nested.items()))
            else:
                out.append(self._listed(path, info, wanted))
        return [item for item in out if item is not None]

    def _listed(self, path: str, info: dict[str, Any], wanted: Callable[[str], bool]) -> Listed | None:
        if not wanted(posixpath.basename(path)) or info.get("type") == "directory":
            return None
        tag = str(info.get("ETag") or info.get("etag") or info.get("generation") or "")
        return Listed(self.url(path), int(info.get("size") or 0), _mtime_ns(info), tag)

    def read(self, path: str) -> bytes:
        return bytes(self.fs.cat_file(path))

    def read_range(self, path: str, size: int) -> bytes:
        return bytes(self.fs.cat_file(path, start=0, end=size))

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes]:
        if not paths:
            return {}
        found = self.fs.cat(list(paths), on_error="return")
        urls = {self.fs._strip_protocol(path): path for path in paths}
        return {
            urls.get(key, key): bytes(value) for key, value in found.items() if isinstance(value, bytes | bytearray)
        }

    def heads(self, paths: Sequence[str], size: int = HEAD_BYTES) -> list[bytes]:
        if not paths:
            return []
        found = self.fs.cat_ranges(list(paths), [0] * len(paths), [size] * len(paths), on_error="return")
        return [b"" if isinstance(item, BaseException) else bytes(item) for item in found]

    def write(self, path: str, data: bytes) -> None:
        self.fs.pipe_file(path, data)

    def write_many(self, files: dict[str, bytes]) -> None:
        if files:
            self.fs.pipe(files)  # concurrent requests where the file system is asynchronous (s3fs)

    def rename(self, source: str, target: str) -> None:
        self.fs.mv(source, target)

    def rename_many(self, pairs: Sequence[tuple[str, str]]) -> None:
        if pairs:
            self.fs.copy([s for s, _ in pairs], [t for _, t in pairs])
            self.fs.rm([s for s, _ in pairs])

    def remove_many(self, paths: Sequence[str]) -> None:
        if paths:
            with contextlib.suppress(FileNotFoundError):
                self.fs.rm(list(paths))

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(path)

    def remove_tree(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            if self.fs.exists(path):
                self.fs.rm(path, recursive=True)

    def exists(self, path: str) -> bool:
        self.fs.invalidate_cache()  # other processes (Dask workers, another run) write here too
        return bool(self.fs.exists(path))

    def files_under(self, path: str) -> list[str]:
        self.fs.invalidate_cache()
        try:
            return [self.url(p) for p in self.fs.find(path)]
        except FileNotFoundError:
            return []

    def names(self, path: str) -> list[str]:
        self.fs.invalidate_cache()
        try:
            return [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(path, detail=False)]
        except FileNotFoundError:
            return []

    @contextlib.contextmanager
    def lock(self, root: str) -> Iterator[None]:
        # Object storage has no advisory locks: the lock is an object created only if absent.
        path = self.join(root, LOCK)
        try:
            self.fs.pipe_file(path, _holder(), mode="create")
        except FileExistsError:
            try:
                holder = self.read(path)
            except FileNotFoundError:
                holder = b""
            msg = _locked_message(root, holder) + f"\nHint: if no run is active, delete {path!r} and retry."
            raise ArchiveLockedError(msg) from None
        try:
            yield
        finally:
            self.remove(path)


def _walk(folder: str, wanted: Callable[[str], bool], unreadable: list[str]) -> Iterator[Listed]:
    """``frames.sources.walk`` with one stat a file: regular files (links followed) whose names
    ``wanted`` takes, folders not followed through symbolic links; what cannot be listed or
    stat'ed goes to ``unreadable``."""
    try:
        entries = list(os.scandir(folder))
    except OSError as error:
        unreadable.append(_unreadable(folder, error))
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path, wanted, unreadable)
        elif wanted(entry.name):
            try:
                stat = entry.stat()
            except OSError as error:
                unreadable.append(_unreadable(entry.path, error))
                continue
            if S_ISREG(stat.st_mode):
                yield Listed(entry.path, stat.st_size, stat.st_mtime_ns)


def _unreadable(path: str, error: OSError) -> str:
    from pathlib import Path

    from cc_analytics.frames.sources import explained

    return f"{path}: {explained(error, Path(path)).strerror or error}"


def _holder() -> bytes:
    return orjson.dumps({"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()})


def _locked_message(root: str, holder: bytes) -> str:
    try:
        who = orjson.loads(holder)
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(who["since"])))
        by = f" (pid {who['pid']} on {who['host']}, since {since})"
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        by = ""
    return f"another archive run is writing to {root!r}{by}; try again when it has finished"


def _mtime_ns(info: dict[str, Any]) -> int:
    value = info.get("mtime", info.get("LastModified", info.get("last_modified", info.get("created"))))
    if value is None:
        return 0
    if hasattr(value, "timestamp"):
        return int(value.timestamp() * 1_000_000_000)
    return int(float(value) * 1_000_000_000)
