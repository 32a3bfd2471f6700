"""Shared by the benchmark scripts: peak resident memory of a whole process tree (Linux /proc),
and processes that start as an installed package does.

``ru_maxrss`` of a waited child is the largest single process; a run that spreads work over
worker processes needs the summed figure too, sampled while it runs.
"""

from __future__ import annotations

import compileall
import os
import threading
from collections.abc import MutableMapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cc_analytics"


def as_installed(env: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """``env`` (changed in place, and returned) for measured processes that start as they would
    from an installed package: the package's bytecode compiled (pip compiles at install; an
    editable checkout is compiled here) and used. Under ``PYTHONDONTWRITEBYTECODE`` every start
    would compile each module it imports again (about 40 ms for the status line).
    """
    compileall.compile_dir(PACKAGE, quiet=1)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def tree_rss_mb(pid: int) -> float:
    """Summed resident memory of ``pid`` and all its descendants, in MB."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
        except (OSError, ValueError):
            continue
    return total / 2**20


class PeakTreeRss:
    """Samples :func:`tree_rss_mb` of a running process every ``interval`` seconds until stopped."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid, self.interval, self.peak = pid, interval, 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if Path("/proc").is_dir():
            self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            self.peak = max(self.peak, tree_rss_mb(self.pid))

    def stop(self) -> float:
        """Stop sampling; the peak summed RSS seen, in MB (0 where /proc is absent)."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.peak
