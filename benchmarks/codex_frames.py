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
import sys
from pathlib import Path

from measure import OURS, USAGE, Plan, find_ccusage, jsonl_bytes, options, ours, side_by_side

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "codex"))
from make_corpus import cached, generate  # noqa: E402

CCUSAGE = "ccusage codex session --json"


def tasks(home: Path, workers: str | None, scratch: Path, ccusage: str | None) -> Plan:
    """The measured commands on one Codex home, each with its environment."""
    parquet = scratch / f"{home.name}-sessions.parquet"
    out: Plan = {
        OURS: (ours("sessions", str(home), "--parquet", str(parquet), "--force", "--quiet", workers=workers), {}),
        USAGE: (ours("usage", str(home), "--by", "day", "--json", "--quiet", workers=workers), {}),
    }
    if ccusage:
        # Its own HOME, so that it finds no Claude Code or other data of this machine's.
        env = {"CODEX_HOME": str(home), "HOME": str(scratch), "TZ": "UTC"}
        out[CCUSAGE] = ([ccusage, "codex", "session", "--json", "--offline"], env)
    return out


def make_home(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-codex-corpus-{size_mb}mb"
    cached(target, size_mb, seed=1, jobs=2)
    return target


def smoke_home(folder: Path) -> Path:
    generate(folder, 2, seed=1)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options(parser)
    args = parser.parse_args(argv)
    ccusage = find_ccusage()
    if not ccusage:
        print("ccusage: not found (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    side_by_side(
        args,
        make=make_home,
        smoke=smoke_home,
        plan=lambda home, scratch: tasks(home, args.workers, scratch, ccusage),
        size=jsonl_bytes,
        baselines=[("ccusage", CCUSAGE)],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
