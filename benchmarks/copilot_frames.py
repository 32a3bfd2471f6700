"""Benchmark: ``cc-analytics sessions`` and ``usage`` on a generated GitHub Copilot CLI home, against ccusage.

Imports: the standard library, ``measure`` beside it and the corpus generator
``tests/fixtures/copilot/make_corpus.py`` (every measured task is a fresh process).

    python benchmarks/copilot_frames.py --smoke                  # a ~2 MB home, one round, seconds
    python benchmarks/copilot_frames.py --make 100 --make 1000   # generate under $TMPDIR, measure
    python benchmarks/copilot_frames.py --corpus c1000=/tmp/home --rounds 5

Corpora come from ``make_corpus.py`` (``--make SIZE_MB``: seed 1, kept under ``--tmp`` and
reused while present; ``--smoke`` generates 2 MB afresh). ccusage (``copilot session --json
--offline``, the per-session totals ``sessions`` gives too; it reads
``$HOME/.copilot/session-state/<id>/events.jsonl``, the layout the generator writes) runs
beside us when found: ``$CCUSAGE``, then ``/tmp/ccu/node_modules/.bin/ccusage``, then
``ccusage`` on PATH; without it a note says so and the ratios are left out. The table shows
medians of wall time, CPU seconds (user + system, worker processes included), the largest
process's peak RSS and the whole process tree's peak RSS (sampled), and the ratios to ccusage.
On a shared machine compare CPU seconds; walls move with the load.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from measure import OURS, USAGE, Plan, find_ccusage, jsonl_bytes, options, ours, side_by_side

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "copilot"))
from make_corpus import generate  # noqa: E402

CCUSAGE = "ccusage copilot session --json"


def store_of(home: Path) -> Path:
    return home / ".copilot" / "session-state"


def tasks(home: Path, workers: str | None, scratch: Path, ccusage: str | None) -> Plan:
    """The measured commands on one Copilot CLI home, each with its environment."""
    parquet = scratch / f"{home.name}-sessions.parquet"
    store = str(store_of(home))
    out: Plan = {
        OURS: (ours("sessions", store, "--parquet", str(parquet), "--force", "--quiet", workers=workers), {}),
        USAGE: (ours("usage", store, "--by", "day", "--json", "--quiet", workers=workers), {}),
    }
    if ccusage:
        # HOME at the corpus: ccusage finds its session-state there and no other agent's data.
        out[CCUSAGE] = ([ccusage, "copilot", "session", "--json", "--offline"], {"HOME": str(home), "TZ": "UTC"})
    return out


def make_home(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-copilot-corpus-{size_mb}mb"
    if not store_of(target).is_dir():
        generate(target, size_mb, seed=1)
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
        size=lambda home: jsonl_bytes(store_of(home)),
        baselines=[("ccusage", CCUSAGE)],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
