"""Benchmark: the composition and findings frames against the sessions frame, on the same corpus.

Imports: the standard library and ``corpus`` (each measured task is a fresh process). Issue 23
asks the composition and findings of a corpus to cost at most 1.5× ``sessions``; this
measures where they stand. Each round runs ``read_sessions``, ``read_composition`` and
``read_findings`` (``workers=None``, as the command line chooses; the sessions without the
cache, as the other two read) on the corpus, rotating the order; the table shows the medians of
wall time, CPU seconds (user + system, worker processes included) and peak RSS, and the ratio
of each to the sessions'. ``read_findings`` computes the composition too, from the same decode.

    python benchmarks/composition.py --smoke            # 2 MB, 1 round
    python benchmarks/composition.py --size-mb 100      # generated under $TMPDIR, reused
    python benchmarks/composition.py --corpus /tmp/cc-analytics-claude-corpus-1000mb --rounds 1 --workers 1
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import cached, generate
from measure import as_installed

TASK = """
import resource, sys
import cc_analytics.frames as ccf
if __name__ == "__main__":
    options = {"cache": False} if sys.argv[1] == "read_sessions" else {}
    workers = None if sys.argv[3] == "auto" else int(sys.argv[3])
    frame = getattr(ccf, sys.argv[1])(sys.argv[2], workers=workers, **options)
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(frame.height, peak)
"""
VERBS = ("read_sessions", "read_composition", "read_findings")


def run(verb: str, corpus: Path, workers: str = "auto") -> tuple[float, float, float, str]:
    """Wall and CPU seconds and peak RSS (MiB, the largest process) of one fresh process running
    ``verb`` on ``corpus``, and its output."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", TASK, verb, str(corpus), workers],
        capture_output=True,
        check=True,
        env=as_installed(dict(os.environ)),
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
    rows, peak = done.stdout.decode().split()
    return wall, cpu, int(peak) / 1024, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--corpus", type=Path, default=None, help="an existing corpus folder (not generated)")
    parser.add_argument("--workers", default="auto", help="processes that decode: a number, or auto (the default)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.corpus is not None:
            corpus, rounds = args.corpus, args.rounds
        elif args.smoke:
            corpus, rounds = Path(tmp) / "corpus", 1
            generate(corpus, size_mb=2, seed=1)
        else:
            corpus, rounds = Path(tempfile.gettempdir()) / f"cc-composition-{args.size_mb:g}", args.rounds
            cached(corpus, size_mb=args.size_mb, seed=1)
        times: dict[str, list[tuple[float, float, float]]] = {verb: [] for verb in VERBS}
        rows: dict[str, str] = {}
        for number in range(rounds):
            order = VERBS[number % len(VERBS) :] + VERBS[: number % len(VERBS)]
            for verb in order:
                wall, cpu, rss, out = run(verb, corpus, args.workers)
                times[verb].append((wall, cpu, rss))
                rows[verb] = out
    size = str(args.corpus) if args.corpus is not None else "2 MB" if args.smoke else f"{args.size_mb:g} MB"
    print(f"corpus {size}, {rounds} round(s), workers {args.workers}; rows: {rows}")
    base_wall = statistics.median(wall for wall, _, _ in times["read_sessions"])
    base_cpu = statistics.median(cpu for _, cpu, _ in times["read_sessions"])
    for verb, measured in times.items():
        wall = statistics.median(w for w, _, _ in measured)
        cpu = statistics.median(c for _, c, _ in measured)
        rss = statistics.median(r for _, _, r in measured)
        print(
            f"{verb:18} wall {wall:7.2f} s ({wall / base_wall:4.2f}x)   CPU {cpu:7.2f} s ({cpu / base_cpu:4.2f}x sessions)"
            f"   peak RSS {rss:6.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
