"""Benchmark: the composition frame against the sessions frame, on the same generated corpus.

Imports: the standard library and ``corpus`` (each measured task is a fresh process). Issue 23
asks the composition (and findings) of a corpus to cost at most 1.5× ``sessions``; this
measures where the composition stands. Each round runs ``read_sessions`` and
``read_composition`` (``workers=None``, as the command line chooses) on the corpus,
alternating the order; the table shows the medians of wall time and CPU seconds (user +
system, worker processes included) and the ratio of the composition's to the sessions'.

    python benchmarks/composition.py --smoke            # 2 MB, 1 round
    python benchmarks/composition.py --size-mb 100      # generated under $TMPDIR, reused
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
import sys
import cc_analytics.frames as ccf
if __name__ == "__main__":
    frame = getattr(ccf, sys.argv[1])(sys.argv[2], workers=None)
    print(frame.height)
"""


def run(verb: str, corpus: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of one fresh process running ``verb`` on ``corpus``, and its output."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", TASK, verb, str(corpus)],
        capture_output=True,
        check=True,
        env=as_installed(dict(os.environ)),
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime, done.stdout.decode().strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.smoke:
            corpus, rounds = Path(tmp) / "corpus", 1
            generate(corpus, size_mb=2, seed=1)
        else:
            corpus, rounds = Path(tempfile.gettempdir()) / f"cc-composition-{args.size_mb:g}", args.rounds
            cached(corpus, size_mb=args.size_mb, seed=1)
        times: dict[str, list[tuple[float, float]]] = {"read_sessions": [], "read_composition": []}
        rows: dict[str, str] = {}
        for number in range(rounds):
            order = list(times) if number % 2 == 0 else list(reversed(times))
            for verb in order:
                wall, cpu, out = run(verb, corpus)
                times[verb].append((wall, cpu))
                rows[verb] = out
    size = "2 MB" if args.smoke else f"{args.size_mb:g} MB"
    print(f"corpus {size}, {rounds} round(s); rows: {rows}")
    base_wall = statistics.median(wall for wall, _ in times["read_sessions"])
    base_cpu = statistics.median(cpu for _, cpu in times["read_sessions"])
    for verb, measured in times.items():
        wall = statistics.median(w for w, _ in measured)
        cpu = statistics.median(c for _, c in measured)
        print(
            f"{verb:18} wall {wall:7.2f} s ({wall / base_wall:4.2f}x)   CPU {cpu:7.2f} s ({cpu / base_cpu:4.2f}x sessions)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
