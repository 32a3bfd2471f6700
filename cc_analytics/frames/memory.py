"""Memory a long read hands back: the C heap's free pages after a batch, and the cyclic
collector paused while decoded JSON is built.

Imports: the standard library only (ctypes when first trimming), so the status line's decode
can use it without the batch engine's multiprocessing imports.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache


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
