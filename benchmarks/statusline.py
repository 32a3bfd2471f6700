"""Benchmark: ``cc-analytics statusline`` on a 10 MB transcript (Claude Code runs it after every message).

Imports: the standard library and ``corpus`` (our generator). Prints the median and p90 wall time
of the command over N runs, next to a bare ``python -c pass`` (the interpreter's own start).

    python benchmarks/statusline.py            # 10 MB transcript, 20 runs
    python benchmarks/statusline.py --smoke    # 1 MB, 5 runs
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import generate

SCRIPT = Path(sys.executable).with_name("cc-analytics")


def timed(command: list[str], stdin: bytes, runs: int) -> list[float]:
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, input=stdin, capture_output=True, check=True)
        walls.append(time.perf_counter() - start)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    size, runs = (1.0, 5) if args.smoke else (args.size_mb, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, size_mb=size, sessions=1, seed=3, malformed=False)
        transcript = max(Path(tmp).rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        stdin = json.dumps(
            {"session_id": transcript.stem, "transcript_path": str(transcript), "model": {"display_name": "Opus"}}
        ).encode()
        line = subprocess.run([str(SCRIPT), "statusline"], input=stdin, capture_output=True, check=True).stdout
        bare = timed([sys.executable, "-c", "pass"], b"", runs)
        ours = timed([str(SCRIPT), "statusline"], stdin, runs)
    mb = transcript.stat().st_size / 1e6 if transcript.exists() else size
    print(f"transcript {mb:.1f} MB; output: {line.decode().strip()}")
    for name, walls in (("python -c pass", bare), ("cc-analytics statusline", ours)):
        p90 = statistics.quantiles(walls, n=10)[-1] if len(walls) >= 2 else walls[0]
        print(
            f"{name:26} median {statistics.median(walls) * 1000:6.1f} ms   p90 {p90 * 1000:6.1f} ms   ({len(walls)} runs)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
