"""Shared by the benchmark scripts: peak resident memory of a whole process tree (Linux /proc),
processes that start as an installed package does, and the side-by-side loop of the format
benchmarks (:func:`side_by_side`: fresh processes, interleaved rounds, medians, one table).

``ru_maxrss`` of a waited child is the largest single process; a run that spreads work over
worker processes needs the summed figure too, sampled while it runs.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cc_analytics"
VENV_BIN = Path(sys.executable).parent
OURS = "cc-analytics sessions"
USAGE = "cc-analytics usage --by day"
FIRST = "cc-analytics sessions, a first run (cache)"
METRICS = ("wall", "cpu", "rss", "tree")
# Where the developers' notes install ccusage (npm install ccusage@20.0.24 in /tmp/ccu).
DEFAULT_CCUSAGE = Path("/tmp/ccu/node_modules/.bin/ccusage")

Plan = dict[str, tuple[list[str], dict[str, str]]]
"""The measured commands on one corpus: task name → (argv, extra environment)."""


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


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command``; wall seconds, CPU seconds and peak RSS (MB) of it and its children
    (``rss``: the largest process; ``tree``: the whole tree, summed, sampled)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    sampler = PeakTreeRss(process.pid)
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    tree = sampler.stop()
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        msg = f"{command[0]} failed: {stderr.strip()[:300]}"
        raise RuntimeError(msg)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024, "tree": tree}


def find_ccusage(*candidates: Path) -> str | None:
    """ccusage: ``$CCUSAGE``, then ``candidates``, then :data:`DEFAULT_CCUSAGE`, then PATH."""
    for candidate in (os.environ.get("CCUSAGE"), *map(str, candidates), str(DEFAULT_CCUSAGE), "ccusage"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def ours(*args: str, workers: str | None, cache: bool = False) -> list[str]:
    """The ``cc-analytics`` command of this venv with ``args`` (and ``--workers`` when given),
    reading every transcript (``--no-cache``) unless ``cache``: the format benchmarks measure
    decoding; ``cache_frames.py`` measures the cache."""
    extra = [*(["--workers", workers] if workers else []), *([] if cache else ["--no-cache"])]
    return [str(VENV_BIN / "cc-analytics"), *args, *extra]


def options(parser: argparse.ArgumentParser) -> None:
    """The options every format benchmark takes."""
    parser.add_argument("--smoke", action="store_true", help="one round on a ~2 MB corpus")
    parser.add_argument("--make", type=int, action="append", default=[], metavar="SIZE_MB")
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default=None, help="pass --workers N to cc-analytics")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json-out", type=Path, default=None, help="also write the medians as JSON")


def side_by_side(
    args: argparse.Namespace,
    *,
    make: Callable[[int, Path], Path],
    smoke: Callable[[Path], Path],
    plan: Callable[[Path, Path], Plan],
    size: Callable[[Path], int],
    baselines: Sequence[tuple[str, str]],
) -> dict[tuple[str, str], dict[str, float]]:
    """Measure every task of ``plan(corpus, scratch)`` on every corpus the options name
    (``make(size_mb, tmp)``, ``smoke(folder)`` for ``--smoke``, ``--corpus NAME=DIR``), each a
    fresh process, for ``--rounds`` rounds alternating the order; print the medians as a
    markdown table with each task's ratios to the ``baselines`` (``(label, task)``, skipped
    where that task did not run) and write them to ``--json-out``. Returns the medians by
    (corpus, task)."""
    as_installed(os.environ)  # each command (and worker) starts as from an installed package
    corpora: dict[str, Path] = {}
    scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-bench-")
    if args.smoke:
        corpora["smoke"] = smoke(Path(scratch.name) / "smoke")
        args.rounds = 1
    for size_mb in args.make:
        corpora[f"{size_mb}MB"] = make(size_mb, args.tmp)
    for spec in args.corpus:
        name, _, folder = spec.partition("=")
        corpora[name] = Path(folder)
    if not corpora:
        raise SystemExit("give --smoke, --make SIZE_MB or --corpus NAME=DIR")
    outputs = Path(scratch.name) / "outputs"
    outputs.mkdir()

    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_index in range(args.rounds):
        order = list(corpora.items())
        if round_index % 2:
            order.reverse()
        for name, corpus in order:
            tasks = list(plan(corpus, outputs).items())
            if round_index % 2:
                tasks.reverse()
            for task, (command, env) in tasks:
                samples.setdefault((name, task), []).append(measure(command, env))
    medians = {key: {m: statistics.median(run[m] for run in runs) for m in METRICS} for key, runs in samples.items()}

    header = "| corpus | MB | task | wall s | CPU s | peak RSS MB | tree RSS MB |"
    header += "".join(f" wall / {label} | CPU / {label} |" for label, _ in baselines)
    print(header)
    print("|---|---:|---|---:|---:|---:|---:|" + "---:|---:|" * len(baselines))
    for name, corpus in corpora.items():
        megabytes = size(corpus) / 1e6
        for (corpus_name, task), m in medians.items():
            if corpus_name != name:
                continue
            row = f"| {name} | {megabytes:,.0f} | {task} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {m['tree']:.0f} |"
            for _label, base_task in baselines:
                base = medians.get((name, base_task))
                row += f" {m['wall'] / base['wall']:.2f}× | {m['cpu'] / base['cpu']:.2f}× |" if base else " - | - |"
            print(row)
    names = list(corpora)
    if len(names) >= 2 and (names[0], OURS) in medians:
        small, large = medians[(names[0], OURS)], medians[(names[-1], OURS)]
        print(
            f"\nscaling {names[0]} → {names[-1]}: wall ×{large['wall'] / small['wall']:.1f}, "
            f"CPU ×{large['cpu'] / small['cpu']:.1f}, tree RSS {small['tree']:.0f} → {large['tree']:.0f} MB"
        )
    if args.json_out:
        rows = [{"corpus": c, "task": t, **m} for (c, t), m in medians.items()]
        args.json_out.write_text(json.dumps(rows, indent=2))
    return medians


def ccusage_session(agent: str) -> str:
    """The task name of ``ccusage AGENT session --json`` in a :data:`Plan` (and a baseline's)."""
    return f"ccusage {agent} session --json"


def session_plan(
    agent: str, source: Path, parquet: Path, *, workers: str | None, ccusage: str | None, env: dict[str, str]
) -> Plan:
    """Our ``sessions`` (to ``parquet``) and ``usage --by day`` of ``source``; ``sessions`` as a
    first run reads it, through the table cache (which keeps nothing here:
    ``CC_ANALYTICS_CACHE_MAX_MB=0``, so every round is a first run, its batches and the tables it
    holds as a first run's, without writing them: a real first run's pack adds its writing, some
    40 MB more on a 1 GB chat-log home); and, when ``ccusage`` was found, ``ccusage AGENT session
    --json --offline`` with ``env`` (where it finds that agent's data and no other)."""
    sessions = ("sessions", str(source), "--parquet", str(parquet), "--force", "--quiet")
    out: Plan = {
        OURS: (ours(*sessions, workers=workers), {}),
        FIRST: (
            ours(*sessions, workers=workers, cache=True),
            {"CC_ANALYTICS_CACHE_MAX_MB": "0", "CC_ANALYTICS_CACHE_DIR": str(parquet.parent / "cache")},
        ),
        USAGE: (ours("usage", str(source), "--by", "day", "--json", "--quiet", workers=workers), {}),
    }
    if ccusage:
        out[ccusage_session(agent)] = ([ccusage, agent, "session", "--json", "--offline"], env)
    return out


def against_ccusage(
    description: str,
    agent: str,
    argv: list[str] | None,
    *,
    make: Callable[[int, Path], Path],
    smoke: Callable[[Path], Path],
    plan: Callable[[Path, Path, str | None, str | None], Plan],
    size: Callable[[Path], int],
) -> int:
    """A format benchmark's ``main``: its options, ccusage found (or a note that it was not),
    and :func:`side_by_side` of ``plan(corpus, scratch, workers, ccusage)`` with ccusage's
    ``AGENT session`` as the baseline."""
    parser = argparse.ArgumentParser(description=description)
    options(parser)
    args = parser.parse_args(argv)
    ccusage = find_ccusage()
    if not ccusage:
        print("ccusage: not found (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    side_by_side(
        args,
        make=make,
        smoke=smoke,
        plan=lambda corpus, scratch: plan(corpus, scratch, args.workers, ccusage),
        size=size,
        baselines=[("ccusage", ccusage_session(agent))],
    )
    return 0


def jsonl_bytes(folder: Path) -> int:
    """The bytes of the ``.jsonl`` files under ``folder``."""
    return sum(path.stat().st_size for path in folder.rglob("*.jsonl") if path.is_file())
