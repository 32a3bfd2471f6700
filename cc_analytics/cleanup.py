"""What must still run when a command is interrupted: cleanups registered from below, run from above.

Imports: the standard library only. A leaf between the layers that start work and the CLI's
signal handling: the batch engine (``frames.engine``) registers the cleanup of its worker
pools with :func:`on_interrupt`, and the CLI runs them (``interrupts.clean_up``) on Ctrl-C and
SIGTERM, so no lower layer imports the CLI's signal module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_cleanups: list[Callable[[], None]] = []
_lock = threading.Lock()


def on_interrupt(cleanup: Callable[[], None]) -> Callable[[], None]:
    """Have ``cleanup`` run when a command is interrupted, before it exits (returns it, so it
    can decorate a function).

    For what the unwinding stack may not reach: a generator suspended in a frame that the
    interrupt left (its ``finally`` would only run when it is collected, and the process
    exits before that). Cleanups run once per interrupt, in the main thread, newest first;
    one that fails does not stop the others.

    Examples:
        >>> ended = []
        >>> _ = on_interrupt(lambda: ended.append("pool"))
        >>> run_cleanups()
        >>> ended
        ['pool']
        >>> _ = _cleanups.pop()
    """
    with _lock:
        _cleanups.append(cleanup)
    return cleanup


def run_cleanups() -> None:
    """Run the cleanups :func:`on_interrupt` registered, newest first; one that fails does not
    stop the others.

    Examples:
        >>> def broken() -> None:
        ...     raise RuntimeError("gone")
        >>> ran = []
        >>> _ = on_interrupt(lambda: ran.append("first"))
        >>> _ = on_interrupt(broken)
        >>> run_cleanups()
        >>> ran
        ['first']
        >>> del _cleanups[-2:]
    """
    with _lock:
        cleanups = list(reversed(_cleanups))
    for cleanup in cleanups:
        try:
            cleanup()
        except Exception:  # noqa: BLE001 - an exit is under way; the others must still run
            continue
