"""Output files that are either absent or complete: written beside their name, then renamed.

Imports: the standard library only. A leaf: the report and the commands write through
:func:`beside`; the CLI's signal handling (``interrupts``), when it must end a run itself,
removes what is still half-written with :func:`remove_unfinished`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
