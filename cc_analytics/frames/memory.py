"""Memory a long read hands back: the C heap's free pages after a batch, the cyclic collector
paused while decoded JSON is built, the frames a run keeps packed between batches, and those it
spills to a temporary file while its workers run.

Imports: the standard library only (ctypes when first trimming; polars inside
:class:`KeptFrames`' methods), so the status line's decode can use it without the batch
engine's multiprocessing imports.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeAlias

    import polars as pl

    Held: TypeAlias = pl.DataFrame | bytes | tuple[int, int]
    """What :meth:`Spill.keep` gives for a frame: the frame, its IPC bytes, or its place in the file."""

# A kept frame larger than this is kept as it is: its buffers are mostly its own pages, and
# packing it costs more than it spares (Polars' IPC writer grows a BytesIO to about 1.25 times the
# frame, then reading it back is a copy: a first `usage` through the table cache, whose frames
# come one per format, held Gemini CLI's 35 MB of requests four times, a 340 MB process).
PACK_MAX_BYTES = 8 * 2**20


def release_memory() -> None:
    """Hand the C heap's free pages back to the system, where the C library can (glibc).

    A batch's lines, texts and lists are freed when it is done, but glibc keeps the pages of
    its heap for reuse, and the holes between what is still alive keep growing: reading 10 GB
    in one process, resident memory grew by 0.5 MB a batch (150 to 250 MB); with this after
    each batch it stays flat. It takes a few milliseconds.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # another C library (musl has no malloc_trim)
        return None


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while decoded JSON is built.

    Decoded JSON holds no reference cycles, so the collector would only rescan the growing
    lists of what was read, again and again (about 8% of the line walker's time, and of a
    transcript's parse for a preview); reference counting frees the rest.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class KeptFrames:
    """Frames kept from batch to batch (a run's rows) in a :class:`Spill` of the system's
    temporary folder, until :meth:`concat` builds the one frame they make.

    A kept frame is small, but Polars allocates it among the batch's short-lived buffers, and
    those pages stay in use as long as it does: reading 5 GB, the process that kept every
    batch's sessions frame grew by 7 MB a gigabyte, and half of that went with the frames
    packed as IPC bytes (one allocation each, outside Polars' heap). Written out, they leave the
    process: ``usage`` of a 1 GB Qwen Code home kept its 79 MB of requests in memory while the
    workers ran. A frame of more than :data:`PACK_MAX_BYTES` is kept as it is (one a caller
    still holds: writing it out would spare nothing).

    Examples:
        >>> import polars as pl
        >>> kept = KeptFrames()
        >>> kept.append(pl.DataFrame({"a": [1, 2]}))
        >>> kept.append(pl.DataFrame({"a": [3]}))
        >>> len(kept), kept.concat(pl.Schema({"a": pl.Int64()}))["a"].to_list()
        (2, [1, 2, 3])
        >>> KeptFrames().concat(pl.Schema({"a": pl.Int64()})).schema
        Schema([('a', Int64)])
    """

    def __init__(self) -> None:
        self._held: list[Held] = []
        self._spill = Spill(None, min_bytes=0)

    def append(self, frame: pl.DataFrame) -> None:
        """Keep ``frame`` (written out now, the frame itself can go, unless it is large)."""
        self._held.append(frame if frame.estimated_size() > PACK_MAX_BYTES else self._spill.keep(frame))

    def __len__(self) -> int:
        return len(self._held)

    def concat(self, schema: pl.Schema) -> pl.DataFrame:
        """The kept frames, one after the other (an empty frame of ``schema`` when none was kept)."""
        import polars as pl

        held, self._held = self._held, []
        try:
            if not held:
                return pl.DataFrame(schema=schema)
            return pl.concat([self._spill.take(one) for one in held], how="vertical")
        finally:
            self._spill.close()


SPILL_MIN_BYTES = 256 * 2**10
"""A frame smaller than this is held as it is by :class:`Spill` (a batch's sessions, its problems)."""


class Spill:
    """Frames held in a temporary file of ``folder`` (None: the system's temporary folder)
    until they are taken back: what a run gathers while its worker processes run is then out of
    its memory (the system's page cache holds it), and the file has no name (the system frees
    it however the run ends).

    The table cache's first run over a 1 GB Qwen Code home held its 79 MB of requests in the
    process while the workers ran: a process tree of 346-373 MB, 271 MB with the batches spilled.
    A frame of less than ``min_bytes`` (default :data:`SPILL_MIN_BYTES`) is held as it is; when
    the file cannot be written (a full disk, a folder that refuses it), the frames are held as
    IPC bytes (outside Polars' heap; as they are when larger than :data:`PACK_MAX_BYTES`).

    Examples:
        >>> import polars as pl
        >>> spill = Spill(None)
        >>> big = pl.DataFrame({"a": range(100_000)})
        >>> held = [spill.keep(big), spill.keep(pl.DataFrame({"a": [1]}))]
        >>> [spill.take(h).height for h in held], isinstance(held[0], tuple)
        ([100000, 1], True)
        >>> spill.close()
    """

    def __init__(self, folder: Path | None, *, min_bytes: int | None = None) -> None:
        self._folder = folder
        self._min_bytes = SPILL_MIN_BYTES if min_bytes is None else min_bytes
        self._file: IO[bytes] | None = None
        self._failed = False

    def keep(self, frame: pl.DataFrame) -> Held:
        """Write ``frame`` to the file (its place there), or hold it (see the class)."""
        if frame.estimated_size() < self._min_bytes:
            return frame
        if not self._failed:
            try:
                if self._file is None:
                    import tempfile

                    if self._folder is not None:
                        self._folder.mkdir(parents=True, exist_ok=True)
                    self._file = tempfile.TemporaryFile(dir=self._folder)
                start = self._file.seek(0, os.SEEK_END)
                frame.write_ipc(self._file, compression="uncompressed")
                return start, self._file.tell() - start
            except OSError:
                self._failed = True  # what was written stays readable
        return _packed(frame)

    def take(self, held: Held) -> pl.DataFrame:
        """The frame :meth:`keep` held."""
        import polars as pl

        if isinstance(held, tuple):
            assert self._file is not None  # a place is only given once the file is open
            start, length = held
            self._file.seek(start)
            held = self._file.read(length)
        return pl.read_ipc(held) if isinstance(held, bytes) else held

    def close(self) -> None:
        """Let the file go (its frames taken back or no longer wanted)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _packed(frame: pl.DataFrame) -> pl.DataFrame | bytes:
    """``frame`` as Arrow IPC bytes, or as it is when larger than :data:`PACK_MAX_BYTES`."""
    import io

    if frame.estimated_size() > PACK_MAX_BYTES:
        return frame
    buffer = io.BytesIO()
    frame.write_ipc(buffer, compression="uncompressed")
    return buffer.getvalue()
