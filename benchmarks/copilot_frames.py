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
``sessions`` runs twice: decoding every file (``--no-cache``, what the format's reading costs) and
as a first run makes it, through the table cache (keeping nothing, so that every round is a
first run). On a shared machine compare CPU seconds; walls move with the load.
"""

from __future__ import annotations

import sys
from pathlib import Path

from measure import Plan, against_ccusage, jsonl_bytes, session_plan

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "copilot"))
from make_corpus import generate  # noqa: E402


def store_of(home: Path) -> Path:
    return home / ".copilot" / "session-state"


def tasks(home: Path, scratch: Path, workers: str | None, ccusage: str | None) -> Plan:
    """The measured commands on one Copilot CLI home, each with its environment (ccusage's
    HOME at the corpus: it finds its session-state there and no other agent's data)."""
    parquet = scratch / f"{home.name}-sessions.parquet"
    env = {"HOME": str(home), "TZ": "UTC"}
    return session_plan("copilot", store_of(home), parquet, workers=workers, ccusage=ccusage, env=env)


def store_bytes(home: Path) -> int:
    return jsonl_bytes(store_of(home))


def make_home(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-copilot-corpus-{size_mb}mb"
    if not store_of(target).is_dir():
        generate(target, size_mb, seed=1)
    return target


def smoke_home(folder: Path) -> Path:
    generate(folder, 2, seed=1)
    return folder


def main(argv: list[str] | None = None) -> int:
    description = __doc__.splitlines()[0]
    return against_ccusage(description, "copilot", argv, make=make_home, smoke=smoke_home, plan=tasks, size=store_bytes)


if __name__ == "__main__":
    raise SystemExit(main())
