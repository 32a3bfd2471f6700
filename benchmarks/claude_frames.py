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
import sys
from pathlib import Path

from corpus import cached, generate
from measure import OURS, USAGE, Plan, find_ccusage, jsonl_bytes, options, ours, side_by_side

ROOT = Path(__file__).resolve().parents[1]

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


ORJSON = "orjson parse (bare)"
CCUSAGE = "ccusage session --json"
REPORT = "cc-analytics report"


def tasks(corpus: Path, workers: str | None, scratch: Path, ccusage: str | None, *, report: bool) -> Plan:
    projects = str(corpus / "projects")
    parquet = scratch / f"{corpus.name}-sessions.parquet"
    out: Plan = {
        OURS: (ours("sessions", projects, "--parquet", str(parquet), "--force", "--quiet", workers=workers), {}),
        USAGE: (ours("usage", projects, "--by", "day", "--json", "--quiet", workers=workers), {}),
        ORJSON: ([sys.executable, "-c", ORJSON_PARSE, projects], {}),
    }
    if ccusage:
        out[CCUSAGE] = ([ccusage, "session", "--json", "--offline"], {"CLAUDE_CONFIG_DIR": str(corpus)})
    if report:
        folder = scratch / f"{corpus.name}-report"
        out[REPORT] = (ours("report", projects, "--out", str(folder), "--quiet", workers=None), {})
    return out


def make_corpus(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-claude-corpus-{size_mb}mb"
    cached(target, size_mb=size_mb, seed=1, jobs=2)
    return target


def smoke_corpus(folder: Path) -> Path:
    generate(folder, size_mb=2, seed=1)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options(parser)
    parser.add_argument("--report", action="store_true", help="also time `cc-analytics report` (one decode)")
    args = parser.parse_args(argv)
    ccusage = find_ccusage(
        ROOT / "node_modules" / ".bin" / "ccusage", args.tmp / "bench" / "node_modules" / ".bin" / "ccusage"
    )
    if not ccusage:
        print("ccusage: not installed (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    medians = side_by_side(
        args,
        make=make_corpus,
        smoke=smoke_corpus,
        plan=lambda corpus, scratch: tasks(corpus, args.workers, scratch, ccusage, report=args.report),
        size=lambda corpus: jsonl_bytes(corpus / "projects"),
        baselines=[("orjson", ORJSON), ("ccusage", CCUSAGE)],
    )
    for name in dict.fromkeys(corpus for corpus, _task in medians):
        by_day, sessions = medians[(name, USAGE)], medians[(name, OURS)]
        print(
            f"{name}: usage --by day / sessions: wall ×{by_day['wall'] / sessions['wall']:.2f}, "
            f"CPU ×{by_day['cpu'] / sessions['cpu']:.2f}, tree RSS {by_day['tree']:.0f} / {sessions['tree']:.0f} MB"
        )
        if args.report:
            ratio = medians[(name, REPORT)]["cpu"] / sessions["cpu"]
            print(f"{name}: report / sessions CPU ×{ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
