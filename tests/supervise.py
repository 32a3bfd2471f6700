"""Run a command in its own process group, signal it mid-run, and report what it left behind.

``python tests/supervise.py [--signal SIGINT|SIGTERM|none] [--to group|leader] [--when workers|child:TEXT]
[--delay S] -- COMMAND...`` prints one JSON object: the exit status, the seconds from the
signal to the exit, stderr, the processes of the group seen before the signal, and every
process left afterwards (alive or defunct) in the group, started by the command in a session
of its own, or adopted by this supervisor.

The supervisor makes itself a child subreaper (Linux ``prctl``), so whatever the command
leaves behind, even a process that exits after it, is re-parented here and seen; it reaps
those before it exits. A signal to the group is what Ctrl-C in a terminal sends; ``--when
workers`` waits for a spawned worker process, ``--when child:TEXT`` for a child whose
command line holds TEXT, ``--when thread:NAME`` for a thread of that name (Linux's), then
``--delay`` more seconds.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time

from cc_analytics.frames.workers import WORKER_MARK

PR_SET_CHILD_SUBREAPER = 36
SETTLE_SECONDS = 3.0
WAIT_SECONDS = 300.0
EXIT_SECONDS = 120.0  # how long the command may take to exit after the signal before it is killed


def processes() -> dict[int, dict]:
    """Every process: its state, parent, process group and command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode("utf-8", "replace")
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        found[int(entry)] = {"state": fields[0], "ppid": int(fields[1]), "pgid": int(fields[2]), "cmd": cmdline[:160]}
    return found


def related(group: int, *, exclude: int) -> dict[int, dict]:
    me = os.getpid()
    return {
        pid: info
        for pid, info in processes().items()
        if pid not in (exclude, me) and (info["pgid"] == group or info["ppid"] in (me, group))
    }


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _drain(fd: int, chunks: list[bytes]) -> None:
    while fd >= 0:
        data = os.read(fd, 65536)
        if not data:
            return
        chunks.append(data)


def threads(pids: list[int]) -> list[str]:
    """The names of the threads of ``pids`` (Linux: ``/proc/PID/task/TID/comm``)."""
    names = []
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        names += [_read(f"/proc/{pid}/task/{task}/comm").strip() for task in tasks]
    return names


def ready(group: int, when: str) -> bool:
    children = related(group, exclude=-1)
    if when == "workers":
        return any(WORKER_MARK in info["cmd"] for info in children.values())
    if when.startswith("thread:"):
        return when.removeprefix("thread:") in threads(list(children))
    text = when.removeprefix("child:")
    return any(text in info["cmd"] for info in children.values())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", default="SIGINT")
    parser.add_argument("--to", choices=("group", "leader"), default="group")
    parser.add_argument("--when", default="workers")
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(json.dumps({"error": "prctl(PR_SET_CHILD_SUBREAPER) failed"}))
        return 1
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # SIGABRT to a hung process prints its Python stacks
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, env=env
    )
    group = child.pid
    before: dict[int, dict] = {}
    named: list[str] = []
    sent = None
    if args.signal != "none":
        deadline = time.monotonic() + WAIT_SECONDS
        while child.poll() is None and not ready(group, args.when) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(args.delay)
        before = related(group, exclude=-1)
        named = sorted(set(threads(list(before))))
        if child.poll() is None:
            signum = getattr(signal, args.signal)
            sent = time.monotonic()
            if args.to == "group":
                os.killpg(group, signum)
            else:
                os.kill(child.pid, signum)
    # stderr is read on a thread: a process left behind may hold the pipe open long after the
    # command exits, and that is to be reported, not waited for.
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(child.stderr.fileno() if child.stderr else -1, chunks), daemon=True)
    reader.start()
    try:
        status = child.wait(timeout=EXIT_SECONDS if sent is not None else None)
    except subprocess.TimeoutExpired:
        # Every process of the group dumps its threads' Python stacks (PYTHONFAULTHANDLER), then dies.
        hung = related(group, exclude=-1)
        for pid, info in hung.items():
            info["wchan"] = _read(f"/proc/{pid}/wchan")
        os.killpg(group, signal.SIGABRT)
        time.sleep(2.0)
        os.killpg(group, signal.SIGKILL)
        child.wait()
        reader.join(SETTLE_SECONDS)
        stderr = b"".join(chunks).decode("utf-8", "replace")
        print(json.dumps({"error": "the command did not exit", "processes": hung, "stderr": stderr}))
        return 1
    ended = time.monotonic()
    settle = time.monotonic() + SETTLE_SECONDS
    left = related(group, exclude=child.pid)
    while left and time.monotonic() < settle:  # a helper may take a moment to notice its parent is gone
        time.sleep(0.05)
        left = related(group, exclude=child.pid)
    for pid, info in left.items():  # what a process left behind is doing, for the report
        info["wchan"] = _read(f"/proc/{pid}/wchan")
        info["stack"] = _read(f"/proc/{pid}/stack")[-600:]
    report = {
        "status": status,
        "signalled": sent is not None,
        "seconds": None if sent is None else round(ended - sent, 3),
        "stderr": "",
        "before": {str(pid): info["cmd"] for pid, info in before.items()},
        "threads": named,
        "left": {str(pid): info for pid, info in left.items()},
    }
    for pid in left:  # leave nothing behind ourselves
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    reap_until = time.monotonic() + SETTLE_SECONDS
    while True:  # adopted processes too; one that will not go is killed
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > reap_until:
                for pid in related(group, exclude=-1):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.05)
    reader.join(SETTLE_SECONDS)
    report["stderr"] = b"".join(chunks).decode("utf-8", "replace")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
