"""Benchmark: ``cc-analytics statusline`` on a 10 MB transcript (Claude Code runs it after every message).

Imports: the standard library and ``corpus`` (our generator). Prints the median and p90 wall time
over N runs of: a bare ``python -c pass`` (the interpreter's own start); a *cold* call (no kept
cost state: the whole session is read and priced; the price book is warm, as after any earlier
run); a *warm* call after a 10 kB append to the transcript (what Claude Code sees after each
message: only the appended bytes are read); a warm call with nothing appended; warm calls whose
document carries ``rate_limits`` and ``context_window`` (as Claude Code passes them to
subscribers), the limits unchanged since the last call (the history's tail is read, nothing
written) or changed at every call (a line appended); and, for what the cost part adds, the
same command with the cost part switched off (occupancy only).

    python benchmarks/statusline.py            # 10 MB transcript, 20 runs
    python benchmarks/statusline.py --smoke    # 1 MB, 5 runs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from corpus import generate
from measure import as_installed

SCRIPT = Path(sys.executable).with_name("cc-analytics")
APPEND_BYTES = 10_000
# The console script's work with the cost part replaced by nothing: the line as it was before.
WITHOUT_COST = (
    "import sys\nfrom cc_analytics.commands import statusline\nstatusline._cost = lambda main: None\n"
    "from cc_analytics.cli import main\nsys.argv = ['cc-analytics', 'statusline']\nsys.exit(main())"
)


def timed(
    command: list[str],
    stdin: bytes | Callable[[], bytes],
    runs: int,
    env: dict[str, str],
    before: Callable[[], None],
) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of each run: on a busy machine the CPU time says
    more about the work, the wall time about what the user waits. ``stdin`` may be made anew
    for each run."""
    walls, cpus = [], []
    for _ in range(runs):
        before()
        given = stdin() if callable(stdin) else stdin
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, input=given, capture_output=True, check=True, env=env)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime)
    return walls, cpus


def appended_lines(transcript: Path, size: int) -> bytes:
    """Whole lines from the transcript's middle, about ``size`` bytes (requests among them)."""
    data = transcript.read_bytes()
    start = data.index(b"\n", len(data) // 2) + 1
    end = data.rfind(b"\n", start, start + size) + 1 or data.index(b"\n", start) + 1
    return data[start:end]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    size, runs = (1.0, 5) if args.smoke else (args.size_mb, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "corpus", size_mb=size, sessions=1, seed=3, malformed=False)
        transcript = max(Path(tmp).rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        session_bytes = sum(p.stat().st_size for p in Path(tmp).rglob("*.jsonl"))
        cache = Path(tmp) / "cache"
        env = as_installed({**os.environ, "CC_ANALYTICS_CACHE_DIR": str(cache), "NO_COLOR": "1"})
        base_document = {
            "session_id": transcript.stem,
            "transcript_path": str(transcript),
            "model": {"display_name": "Opus"},
        }
        stdin = json.dumps(base_document).encode()
        now = int(time.time())
        calls = iter(range(1_000_000))

        def with_limits(used: float) -> bytes:
            return json.dumps(
                {
                    **base_document,
                    "context_window": {"context_window_size": 200_000},
                    "rate_limits": {
                        "five_hour": {"used_percentage": used, "resets_at": now + 9000},
                        "seven_day": {"used_percentage": 41.2, "resets_at": now + 300_000},
                    },
                }
            ).encode()

        command = [str(SCRIPT), "statusline"]
        subprocess.run(command, input=stdin, capture_output=True, check=True, env=env)  # fills the price book
        extra = appended_lines(transcript, APPEND_BYTES)

        def forget_state() -> None:
            shutil.rmtree(cache / "statusline", ignore_errors=True)

        def append() -> None:
            with transcript.open("ab") as handle:
                handle.write(extra)

        bare = timed([sys.executable, "-c", "pass"], b"", runs, env, lambda: None)
        cold = timed(command, stdin, runs, env, forget_state)
        warm = timed(command, stdin, runs, env, append)
        idle = timed(command, stdin, runs, env, lambda: None)
        same_limits = with_limits(23.5)
        subprocess.run(command, input=same_limits, capture_output=True, check=True, env=env)  # kept once
        limits_same = timed(command, same_limits, runs, env, lambda: None)
        limits_new = timed(command, lambda: with_limits(next(calls) / 100), runs, env, lambda: None)
        occupancy = timed([sys.executable, "-c", WITHOUT_COST], stdin, runs, env, lambda: None)
        line = subprocess.run(command, input=stdin, capture_output=True, check=True, env=env).stdout
        limits_line = subprocess.run(command, input=same_limits, capture_output=True, check=True, env=env).stdout
        mb = transcript.stat().st_size / 1e6
    print(
        f"main transcript {mb:.1f} MB at the end ({session_bytes / 1e6:.1f} MB with its subagent files at the start); "
        f"each warm call follows a {len(extra) / 1e3:.1f} kB append"
    )
    print(f"output: {line.decode().strip()}")
    print(f"with rate_limits: {limits_line.decode().strip()}")
    base = statistics.median(bare[0])
    for name, (walls, cpus) in (
        ("python -c pass", bare),
        ("statusline, cold", cold),
        ("statusline, warm +10 kB", warm),
        ("statusline, warm, no append", idle),
        ("  + rate_limits, unchanged", limits_same),
        ("  + rate_limits, changed", limits_new),
        ("statusline without cost", occupancy),
    ):
        p90 = statistics.quantiles(walls, n=10)[-1] if len(walls) >= 2 else walls[0]
        median = statistics.median(walls)
        print(
            f"{name:28} wall median {median * 1000:6.1f} ms   p90 {p90 * 1000:6.1f} ms   "
            f"({median / base:4.1f}x python -c pass)   CPU median {statistics.median(cpus) * 1000:6.1f} ms"
            f"   ({len(walls)} runs)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
