"""Ctrl-C and SIGTERM on the command line: end within a second and leave nothing behind.

The CLI runs every command inside :func:`exit_promptly`: SIGINT raises ``KeyboardInterrupt``
and SIGTERM :class:`Terminated` in the main thread, so ``finally`` blocks run and the batch engine kills its worker processes as the stack unwinds
(exit 130 or 143). Where the main thread waits long (a worker's batch, a child process) it
waits in short slices, since the signal may reach another thread and Polars' SIGINT handler
restarts interrupted system calls; Polars, noticing a Ctrl-C first, may raise its own
``KeyboardInterrupt`` out of a query, and the handler here then raises no second one into
the cleanup; and while the main thread runs Python code that Polars called from its native
code (where an exception becomes a Rust panic), or a generator's cleanup as it is closed,
the signal is put off for a moment and delivered again. Should the main thread still not be done within
``GRACE_SECONDS`` (stuck in native code, say), a watchdog thread ends it all itself: it kills
the child processes, removes the outputs being written (``atomic.remove_unfinished``) and
exits with the same code.

Imports: the standard library and two leaves: ``atomic`` (output files written beside their
name, then renamed) and ``cleanup`` (what lower layers registered to run on an interrupt:
:func:`clean_up` runs it). Nothing below the CLI imports this module.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

from cc_analytics.atomic import remove_unfinished
from cc_analytics.cleanup import run_cleanups

GRACE_SECONDS = 0.8
REDELIVER_SECONDS = 0.02
# Libraries whose native code calls Python code of theirs (and ours) back: no exception may be
# raised in it (see _raise).
NATIVE_CALLERS = frozenset({"polars"})
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}

_lock = threading.Lock()
_announced = threading.Event()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C raises ``KeyboardInterrupt`` (exit code 143)."""


def clean_up() -> None:
    """Run what lower layers registered with ``cleanup.on_interrupt`` (the worker pools of
    generators an interrupt left suspended): the CLI calls it on Ctrl-C and SIGTERM."""
    run_cleanups()


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM; says which on stderr, once whoever says it first."""
    signum = signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT
    _announce(signum)
    return EXIT_CODES[signum]


@contextmanager
def exit_promptly(*, restore: bool = True) -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM raising in the main thread and a watchdog behind them.

    On leaving, the previous handlers are restored; with ``restore=False`` (for a process that
    only exits afterwards) both signals get their default action instead, so that one that
    comes during the interpreter's last cleanup ends the process at once (the shell still
    sees 130 or 143) rather than raising inside that cleanup. Outside the main thread (where
    signal handlers cannot be set) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous = {signum: signal.signal(signum, _raise) for signum in EXIT_CODES}
    previous_wakeup = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    _announced.clear()
    threading.Thread(target=_watch, args=(read_end,), name="cc-analytics-watchdog", daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler if restore else signal.SIG_DFL)
        os.close(write_end)  # the watchdog reads end-of-file and returns, unless a signal came first


def leave(code: int) -> NoReturn:
    """Exit now with ``code``, once the cleanup is done: flush the output and skip the
    interpreter's own teardown (it can take longer than a second)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said there
            continue
    os._exit(code)


def _raise(signum: int, frame: FrameType | None) -> None:
    handled = sys.exc_info()[1]
    if isinstance(handled, KeyboardInterrupt):
        # The stack is already unwinding from this Ctrl-C: Polars notices it first (its own
        # handler runs before this one) and raises KeyboardInterrupt out of a query. A second
        # one raised here, in an ``except`` or ``finally`` block, would cut the cleanup short.
        hold_signals()
        return
    if isinstance(handled, GeneratorExit) or _called_by_native_code(frame):
        # Not here, but in a moment, when the thread is back in plain code: a generator being
        # closed is running its cleanup (an exception raised in it is printed and lost), and
        # Python code that Polars runs from its native code (it builds its data-type objects
        # so) turns an exception into a Rust panic.
        _deliver_again(signum)
        return
    hold_signals()
    if signum == signal.SIGTERM:
        raise Terminated
    raise KeyboardInterrupt


def _ignore(_signum: int, _frame: FrameType | None) -> None:
    return None


def hold_signals() -> None:
    """Ignore SIGINT and SIGTERM from here on: the exit one of them asked for is under way, and
    a second Ctrl-C (or one delivered again) must not interrupt its cleanup. Main thread only."""
    for signum in EXIT_CODES:
        signal.signal(signum, _ignore)


def _called_by_native_code(frame: FrameType | None) -> bool:
    """Whether the interrupted code runs inside a call into a library that may have called it
    from native code (a frame of that library's Python code is on the stack)."""
    while frame is not None:
        if frame.f_globals.get("__name__", "").partition(".")[0] in NATIVE_CALLERS:
            return True
        frame = frame.f_back
    return False


def _deliver_again(signum: int) -> None:
    def deliver() -> None:
        if signal.getsignal(signum) is not _raise:  # handled meanwhile, or the command is over
            return
        if hasattr(signal, "pthread_kill"):  # to the main thread: a system call it waits in ends too
            signal.pthread_kill(threading.main_thread().ident or 0, signum)
        else:  # Windows: to the process; the handler still runs in the main thread
            signal.raise_signal(signum)

    timer = threading.Timer(REDELIVER_SECONDS, deliver)
    timer.daemon = True
    timer.start()


def _watch(read_end: int) -> None:
    while True:
        data = os.read(read_end, 64)
        if not data:  # the block ended without a signal
            os.close(read_end)
            return
        signum = next((s for s in data if s in EXIT_CODES), None)
        if signum is not None:
            break
    # The read end stays open from here on: later signals still write to it.
    time.sleep(GRACE_SECONDS)
    _force_exit(signum)


def _force_exit(signum: int) -> None:
    """The main thread did not finish in time: end the children, remove partial outputs, exit."""
    for pid in _child_pids(exclude=_tracker_pid()):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:  # gone already, or reaped by its owner meanwhile
            continue
    remove_unfinished()
    _announce(signum)
    os._exit(EXIT_CODES[signal.Signals(signum)])


def _announce(signum: int) -> None:
    with _lock:
        if _announced.is_set():
            return
        _announced.set()
    try:
        os.write(2, f"{MESSAGES[signal.Signals(signum)]}\n".encode())
    except OSError:
        return


def _child_pids(*, exclude: int | None) -> list[int]:
    """This process's children (from ``/proc``; where there is none, multiprocessing's own)."""
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        import multiprocessing

        return [p.pid for p in multiprocessing.active_children() if p.pid is not None and p.pid != exclude]
    found = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == exclude:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(entry))
    return found


def _tracker_pid() -> int | None:
    tracker = getattr(sys.modules.get("multiprocessing.resource_tracker"), "_resource_tracker", None)
    return getattr(tracker, "_pid", None)
