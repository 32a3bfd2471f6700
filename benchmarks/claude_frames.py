"""Benchmark: ``cc-analytics sessions``, ``usage`` (and ``report``) against a bare orjson parse and ccusage.

Imports: the standard library and ``corpus`` (every measured task is a fresh process).

    python benchmarks/claude_frames.py --smoke                  # tiny corpus, a few seconds
    python benchmarks/claude_frames.py --make 100 --make 1000   # generate under $TMPDIR, measure
    python benchmarks/claude_frames.py --corpus c1000=/tmp/c1000 --rounds 3 --report

Corpora come from ``benchmarks/corpus.py`` (``--make SIZE_MB``: 2 sessions per MB, seed 1,
kept under ``--tmp`` and reused while the generator and parameters are the same; ``--smoke``
generates 2 MB afresh). ccusage (``session --json --offline``, the same per-session totals)
runs beside us when found: ``$CCUSAGE``, then ``node_modules/.bin/ccusage`` in the project or
in ``--tmp``/bench, then ``ccusage`` on PATH. Each round runs every task on every corpus,
alternating the order; the table shows medians of wall time, CPU seconds (user + system,
worker processes included), the largest process's peak RSS and the whole process tree's
peak RSS (sampled), and the ratios to the bare orjson parse and to ccusage. On a shared
machine compare CPU seconds; walls move with the load.
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

from corpus import cached, generate
from measure import PeakTreeRss, as_installed

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent

ORJSON_PARSE = """
import os, sys, orjson
loads, error = orjson.loads, orjson.JSONDecodeError
lines = bad = 0
for dirpath, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".jsonl"):
            with open(os.path.join(dirpath, name), "rb") as handle:
                for line in handle:
                    try:
                        loads(line)
                    except error:  # the corpora hold a few torn lines, as real ones do
                        bad += 1
                    lines += 1
print(lines, bad)
"""


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command``; wall seconds, CPU seconds and peak RSS (MB) of it and its children."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
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


OURS = "cc-analytics sessions"
ORJSON = "orjson parse (bare)"
CCUSAGE = "ccusage session --json"
REPORT = "cc-analytics report"
USAGE = "cc-analytics usage --by day"


def tasks(
    corpus: Path, workers: str | None, scratch: Path, ccusage: str | None, *, report: bool
) -> dict[str, tuple[list[str], dict[str, str]]]:
    projects = str(corpus / "projects")
    parquet = scratch / f"{corpus.name}-sessions.parquet"
    ours = [
        str(VENV_BIN / "cc-analytics"),
        "sessions",
        projects,
        "--parquet",
        str(parquet),
        "--force",
        "--quiet",
        "--no-cache",
    ]
    if workers:
        ours += ["--workers", workers]
    usage = [str(VENV_BIN / "cc-analytics"), "usage", projects, "--by", "day", "--json", "--quiet", "--no-cache"]
    if workers:
        usage += ["--workers", workers]
    out: dict[str, tuple[list[str], dict[str, str]]] = {
        OURS: (ours, {}),
        USAGE: (usage, {}),
        ORJSON: ([sys.executable, "-c", ORJSON_PARSE, projects], {}),
    }
    if ccusage:
        out[CCUSAGE] = ([ccusage, "session", "--json", "--offline"], {"CLAUDE_CONFIG_DIR": str(corpus)})
    if report:
        folder = scratch / f"{corpus.name}-report"
        out[REPORT] = (
            [str(VENV_BIN / "cc-analytics"), "report", projects, "--out", str(folder), "--quiet", "--no-cache"],
            {},
        )
    return out


def ccusage_command(tmp: Path) -> str | None:
    """ccusage: ``$CCUSAGE``, a local ``node_modules`` (the project's or ``tmp/bench``'s), or PATH."""
    if os.environ.get("CCUSAGE"):
        return os.environ["CCUSAGE"]
    for local in (ROOT / "node_modules" / ".bin" / "ccusage", tmp / "bench" / "node_modules" / ".bin" / "ccusage"):
        if local.exists():
            return str(local)
    return shutil.which("ccusage")


def make_corpus(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-claude-corpus-{size_mb}mb"
    cached(target, size_mb=size_mb, seed=1, jobs=min(2, os.cpu_count() or 1))
    return target


def corpus_bytes(corpus: Path) -> int:
    return sum(p.stat().st_size for p in (corpus / "projects").rglob("*.jsonl") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one round on a ~2 MB corpus")
    parser.add_argument("--make", type=int, action="append", default=[], metavar="SIZE_MB")
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default=None, help="pass --workers N to cc-analytics")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--report", action="store_true", help="also time `cc-analytics report` (one decode)")
    parser.add_argument("--json-out", type=Path, default=None, help="also write the medians as JSON")
    args = parser.parse_args(argv)
    as_installed(os.environ)  # each command (and worker) starts as from an installed package

    corpora: dict[str, Path] = {}
    if args.smoke:
        scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-smoke-")
        corpora["smoke"] = Path(scratch.name)
        generate(corpora["smoke"], size_mb=2, seed=1)
        args.rounds = 1
    for size in args.make:
        corpora[f"{size}MB"] = make_corpus(size, args.tmp)
    for spec in args.corpus:
        name, _, folder = spec.partition("=")
        corpora[name] = Path(folder)
    if not corpora:
        parser.error("give --smoke, --make SIZE_MB or --corpus NAME=DIR")
    ccusage = ccusage_command(args.tmp)
    if not ccusage:
        print("ccusage: not installed (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    outputs = tempfile.TemporaryDirectory(prefix="cc-analytics-bench-")

    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_index in range(args.rounds):
        order = list(corpora.items())
        if round_index % 2:
            order.reverse()
        for name, corpus in order:
            plan = list(tasks(corpus, args.workers, Path(outputs.name), ccusage, report=args.report).items())
            if round_index % 2:
                plan.reverse()
            for task, (command, env) in plan:
                samples.setdefault((name, task), []).append(measure(command, env))

    medians = {
        key: {metric: statistics.median(run[metric] for run in runs) for metric in ("wall", "cpu", "rss", "tree")}
        for key, runs in samples.items()
    }
    header = "| corpus | MB | task | wall s | CPU s | peak RSS MB | tree RSS MB | wall / orjson | CPU / orjson |"
    header += " wall / ccusage | CPU / ccusage |"
    print(header)
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, corpus in corpora.items():
        base = medians[(name, ORJSON)]
        other = medians.get((name, CCUSAGE))
        size = corpus_bytes(corpus) / 1e6
        for (corpus_name, task), m in medians.items():
            if corpus_name != name:
                continue
            figures = f"{m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {m['tree']:.0f}"
            ratios = f"{m['wall'] / base['wall']:.2f}× | {m['cpu'] / base['cpu']:.2f}×"
            ratios += f" | {m['wall'] / other['wall']:.2f}× | {m['cpu'] / other['cpu']:.2f}×" if other else " | - | -"
            print(f"| {name} | {size:,.0f} | {task} | {figures} | {ratios} |")
    names = list(corpora)
    if len(names) >= 2:
        small, large = names[0], names[-1]
        ours_small = medians[(small, OURS)]
        ours_large = medians[(large, OURS)]
        print(
            f"\nscaling {small} → {large}: wall ×{ours_large['wall'] / ours_small['wall']:.1f}, "
            f"CPU ×{ours_large['cpu'] / ours_small['cpu']:.1f}, "
            f"tree RSS {ours_small['tree']:.0f} → {ours_large['tree']:.0f} MB"
        )
    for name in names:
        by_day, ours = medians[(name, USAGE)], medians[(name, OURS)]
        print(
            f"{name}: usage --by day / sessions: wall ×{by_day['wall'] / ours['wall']:.2f}, "
            f"CPU ×{by_day['cpu'] / ours['cpu']:.2f}, tree RSS {by_day['tree']:.0f} / {ours['tree']:.0f} MB"
        )
        if args.report:
            ratio = medians[(name, REPORT)]["cpu"] / medians[(name, OURS)]["cpu"]
            print(f"{name}: report / sessions CPU ×{ratio:.2f}")
    if args.json_out:
        rows = [{"corpus": c, "task": t, **m} for (c, t), m in medians.items()]
        args.json_out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
