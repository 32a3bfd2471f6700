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
whole process tree's peak RSS (sampled), and the ratios to ccusage. ``sessions`` runs twice:
decoding every file (``--no-cache``, what the format's reading costs) and as a first run makes
it, through the table cache (keeping nothing, so that every round is a first run). On a shared
machine compare CPU seconds; walls move with the load.
"""

from __future__ import annotations

import sys
from pathlib import Path

from measure import Plan, against_ccusage, jsonl_bytes, session_plan

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "codex"))
from make_corpus import cached, generate  # noqa: E402


def tasks(home: Path, scratch: Path, workers: str | None, ccusage: str | None) -> Plan:
    """The measured commands on one Codex home, each with its environment (ccusage's own HOME,
    so that it finds no Claude Code or other data of this machine's)."""
    parquet = scratch / f"{home.name}-sessions.parquet"
    env = {"CODEX_HOME": str(home), "HOME": str(scratch), "TZ": "UTC"}
    return session_plan("codex", home, parquet, workers=workers, ccusage=ccusage, env=env)


def make_home(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-codex-corpus-{size_mb}mb"
    cached(target, size_mb, seed=1, jobs=2)
    return target


def smoke_home(folder: Path) -> Path:
    generate(folder, 2, seed=1)
    return folder


def main(argv: list[str] | None = None) -> int:
    description = __doc__.splitlines()[0]
    return against_ccusage(description, "codex", argv, make=make_home, smoke=smoke_home, plan=tasks, size=jsonl_bytes)


if __name__ == "__main__":
    raise SystemExit(main())
