"""Benchmark: ``cc-analytics sessions`` and ``usage`` on a generated Codex home, against ccusage.

Imports: the standard library, ``measure`` beside it and the corpus generator
``tests/fixtures/codex/make_corpus.py`` (every measured task is a fresh process).

    python benchmarks/codex_frames.py --smoke                  # a ~2 MB home, one round, seconds
    python benchmarks/codex_frames.py --make 100 --make 1000   # generate under $TMPDIR, measure
    python benchmarks/codex_frames.py --corpus c1000=/tmp/home --rounds 5

Corpora come from ``make_corpus.py`` (``--make SIZE_MB``: seed 1, kept under ``--tmp`` and
reused while the generator and parameters are the same; ``--smoke`` generates 2 MB afresh).
ccusage (``codex session --json --offline``, the per-session totals ``sessions`` gives too)
runs beside us when found: ``$CCUSAGE``, then ``/tmp/ccu/node_modules/.bin/ccusage``, then
``ccusage`` on PATH; without it a note says so and the ratios are left out. Each round runs
every task on every corpus, alternating the order; the table shows medians of wall time,
CPU seconds (user + system, worker processes included), the largest process's peak RSS and the
whole process tree's peak RSS (sampled), and the ratios to ccusage. On a shared machine
compare CPU seconds; walls move with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import PeakTreeRss, as_installed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "codex"))
from make_corpus import cached, generate  # noqa: E402

VENV_BIN = Path(sys.executable).parent
DEFAULT_CCUSAGE = Path("/tmp/ccu/node_modules/.bin/ccusage")
OURS = "cc-analytics sessions"
USAGE = "cc-analytics usage --by day"
CCUSAGE = "ccusage codex session --json"


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command``; wall seconds, CPU seconds and peak RSS (MB) of it and its children."""
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


def tasks(
    home: Path, workers: str | None, scratch: Path, ccusage: str | None
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The measured commands on one Codex home, each with its environment."""
    parquet = scratch / f"{home.name}-sessions.parquet"
    ours = [
        str(VENV_BIN / "cc-analytics"),
        "sessions",
        str(home),
        "--parquet",
        str(parquet),
        "--force",
        "--quiet",
        "--no-cache",
    ]
    usage = [str(VENV_BIN / "cc-analytics"), "usage", str(home), "--by", "day", "--json", "--quiet", "--no-cache"]
    if workers:
        ours += ["--workers", workers]
        usage += ["--workers", workers]
    out: dict[str, tuple[list[str], dict[str, str]]] = {OURS: (ours, {}), USAGE: (usage, {})}
    if ccusage:
        # Its own HOME, so that it finds no Claude Code or other data of this machine's.
        env = {"CODEX_HOME": str(home), "HOME": str(scratch), "TZ": "UTC"}
        out[CCUSAGE] = ([ccusage, "codex", "session", "--json", "--offline"], env)
    return out


def ccusage_command() -> str | None:
    """ccusage: ``$CCUSAGE``, ``/tmp/ccu/node_modules/.bin/ccusage``, or PATH (None: none runs here)."""
    for candidate in (os.environ.get("CCUSAGE"), str(DEFAULT_CCUSAGE), "ccusage"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def make_home(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-codex-corpus-{size_mb}mb"
    cached(target, size_mb, seed=1, jobs=min(2, os.cpu_count() or 1))
    return target


def home_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.rglob("*.jsonl") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one round on a ~2 MB home")
    parser.add_argument("--make", type=int, action="append", default=[], metavar="SIZE_MB")
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default=None, help="pass --workers N to cc-analytics")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json-out", type=Path, default=None, help="also write the medians as JSON")
    args = parser.parse_args(argv)
    as_installed(os.environ)  # each command (and worker) starts as from an installed package

    homes: dict[str, Path] = {}
    if args.smoke:
        scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-codex-smoke-")
        homes["smoke"] = Path(scratch.name) / "home"
        generate(homes["smoke"], 2, seed=1)
        args.rounds = 1
    for size in args.make:
        homes[f"{size}MB"] = make_home(size, args.tmp)
    for spec in args.corpus:
        name, _, folder = spec.partition("=")
        homes[name] = Path(folder)
    if not homes:
        parser.error("give --smoke, --make SIZE_MB or --corpus NAME=DIR")
    ccusage = ccusage_command()
    if not ccusage:
        print("ccusage: not found (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    outputs = tempfile.TemporaryDirectory(prefix="cc-analytics-codex-bench-")

    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_index in range(args.rounds):
        order = list(homes.items())
        if round_index % 2:
            order.reverse()
        for name, home in order:
            plan = list(tasks(home, args.workers, Path(outputs.name), ccusage).items())
            if round_index % 2:
                plan.reverse()
            for task, (command, env) in plan:
                samples.setdefault((name, task), []).append(measure(command, env))

    medians = {
        key: {metric: statistics.median(run[metric] for run in runs) for metric in ("wall", "cpu", "rss", "tree")}
        for key, runs in samples.items()
    }
    print("| corpus | MB | task | wall s | CPU s | peak RSS MB | tree RSS MB | wall / ccusage | CPU / ccusage |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, home in homes.items():
        other = medians.get((name, CCUSAGE))
        size = home_bytes(home) / 1e6
        for (home_name, task), m in medians.items():
            if home_name != name:
                continue
            figures = f"{m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {m['tree']:.0f}"
            ratios = f"{m['wall'] / other['wall']:.2f}× | {m['cpu'] / other['cpu']:.2f}×" if other else "- | -"
            print(f"| {name} | {size:,.0f} | {task} | {figures} | {ratios} |")
    names = list(homes)
    if len(names) >= 2:
        small, large = medians[(names[0], OURS)], medians[(names[-1], OURS)]
        print(
            f"\nscaling {names[0]} → {names[-1]}: wall ×{large['wall'] / small['wall']:.1f}, "
            f"CPU ×{large['cpu'] / small['cpu']:.1f}, tree RSS {small['tree']:.0f} → {large['tree']:.0f} MB"
        )
    if args.json_out:
        rows = [{"corpus": c, "task": t, **m} for (c, t), m in medians.items()]
        args.json_out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
