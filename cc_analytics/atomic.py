"""Output files that are either absent or complete: written beside their name, then renamed;
and written in pieces.

Imports: the standard library only. A leaf: the report and the commands write through
:func:`beside`; the CLI's signal handling (``interrupts``), when it must end a run itself,
removes what is still half-written with :func:`remove_unfinished`. Whatever writes megabytes
(the table cache's packs, the archive's files, Parquet outputs) writes them
:data:`PIECE_BYTES` at a time (:func:`write_pieces`, :func:`open_pieces`).
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, cast

Data = bytes | bytearray | memoryview
PIECE_BYTES = 64 * 1024
"""Bytes per ``write()`` of a large output. One ``write()`` of megabytes can cost the kernel far
more than the same bytes in pieces: measured on this project's hosts (Linux 6.18, ext4), 64 MB
written 64 KB at a time took 16 ms, 128 KB or more at a time 55-480 ms; Polars writes an Arrow
file a buffer (megabytes) at a time, and a 22 MB pack took 120-150 ms instead of 20. Pieces of
this size are what buffered writers use anyway: no slower where the kernel is not."""

_unfinished: set[Path] = set()
_lock = threading.Lock()


@contextmanager
def beside(target: Path) -> Iterator[Path]:
    """A temporary name beside ``target`` to write to; whatever is still there on leaving is removed.

    The caller writes the file, then renames it into place (``os.replace`` or ``os.link``)
    inside the ``with`` block. Until then the file is known here, so an exit forced by a
    signal removes it too (:func:`remove_unfinished`).

    Examples:
        >>> import tempfile, pathlib, os
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with beside(target) as temporary:
        ...     _ = temporary.write_text("done")
        ...     os.replace(temporary, target)
        >>> sorted(p.name for p in target.parent.iterdir())
        ['out.txt']
    """
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with _lock:
        _unfinished.add(temporary)
    try:
        yield temporary
    finally:
        try:
            temporary.unlink(missing_ok=True)
        finally:
            with _lock:
                _unfinished.discard(temporary)


def remove_unfinished() -> None:
    """Remove every file a :func:`beside` block is still writing (for an exit that cannot wait
    for the blocks to end: their ``finally`` would never run).

    Examples:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with beside(target) as temporary:
        ...     _ = temporary.write_text("half")
        ...     remove_unfinished()
        ...     temporary.exists()
        False
    """
    with _lock:
        unfinished = list(_unfinished)
    for path in unfinished:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            continue


def write_pieces(descriptor: int, data: Data) -> int:
    """Write all of ``data`` to an open file descriptor, :data:`PIECE_BYTES` at a time; its length.

    Examples:
        >>> import tempfile, os
        >>> descriptor, name = tempfile.mkstemp()
        >>> write_pieces(descriptor, b"x" * 100_000), os.close(descriptor), os.path.getsize(name)
        (100000, None, 100000)
    """
    view = memoryview(data).cast("B")
    done = 0
    while done < len(view):
        done += os.write(descriptor, view[done : done + PIECE_BYTES])
    return done


class PieceWriter(io.RawIOBase):
    """A binary file, open for writing, that writes what it is given in pieces
    (:func:`write_pieces`): what Polars' writers are handed (:func:`open_pieces`)."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self._descriptor = descriptor

    def writable(self) -> bool:
        return True

    def write(self, data: Data) -> int:  # type: ignore[override]
        return write_pieces(self._descriptor, data)

    def fileno(self) -> int:
        return self._descriptor


@contextmanager
def open_pieces(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """``path`` created (or emptied) and open for writing in pieces; closed on leaving.

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "f.bin"
        >>> with open_pieces(path) as out:
        ...     _ = out.write(b"ab" * 70_000)
        >>> path.stat().st_size
        140000
    """
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666)
    writer = PieceWriter(descriptor)
    try:
        yield cast(BinaryIO, writer)  # a raw binary file: what Polars' writers and ``write()`` callers take
    finally:
        writer.close()
        os.close(descriptor)


def write_file(path: str | os.PathLike[str], data: Data) -> None:
    """``path`` holding ``data``, written in pieces (``Path.write_bytes`` in one ``write()``)."""
    with open_pieces(path) as out:
        out.write(data)
