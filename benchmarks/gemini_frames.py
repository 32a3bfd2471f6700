"""Benchmark: ``cc-analytics sessions`` and ``usage`` on a generated Gemini CLI or Qwen Code home, against ccusage.

Imports: the standard library, ``measure`` beside it and the corpus generator
``tests/fixtures/gemini/make_corpus.py`` (every measured task is a fresh process).

    python benchmarks/gemini_frames.py --smoke                        # ~2 MB of each agent, one round
    python benchmarks/gemini_frames.py --agent gemini --make 100 --make 1000
    python benchmarks/gemini_frames.py --agent qwen --make 1000 --rounds 3

Corpora come from ``make_corpus.py`` (``--make SIZE_MB``: seed 1, kept under ``--tmp`` and
reused while present). ccusage (``gemini|qwen session --json --offline``, the per-session
totals ``sessions`` gives too) runs beside us with ``HOME`` at the corpus when found:
``$CCUSAGE``, then ``/tmp/ccu/node_modules/.bin/ccusage``, then ``ccusage`` on PATH. The table
shows medians of wall time, CPU seconds (user + system, workers included), the largest
process's peak RSS and the whole process tree's (sampled), and the ratios to ccusage.
``sessions`` runs twice: decoding every file (``--no-cache``, what the format's reading costs)
and as a first run makes it, through the table cache (keeping nothing, so that every round is a
first run). On a shared machine compare CPU seconds; walls move with the load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import FIRST, PeakTreeRss, as_installed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "gemini"))
from make_corpus import generate  # noqa: E402

VENV_BIN = Path(sys.executable).parent
DEFAULT_CCUSAGE = Path("/tmp/ccu/node_modules/.bin/ccusage")
STORES = {"gemini": (".gemini", "tmp"), "qwen": (".qwen", "projects")}


def measure(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``command``; wall seconds, CPU seconds and peak RSS (MB) of it and its children."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **env})
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


def tasks(
    agent: str, home: Path, scratch: Path, ccusage: str | None, workers: str | None
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The measured commands on one home, each with its environment."""
    store = home.joinpath(*STORES[agent])
    parquet = scratch / f"{agent}-{home.name}-sessions.parquet"
    # --no-cache: the format benchmarks measure decoding (the table cache would answer every round
    # after the first); benchmarks/cache_frames.py measures the cache.
    ours = [
        str(VENV_BIN / "cc-analytics"),
        "sessions",
        str(store),
        "--parquet",
        str(parquet),
        "--force",
        "--quiet",
        "--no-cache",
    ]
    usage = [str(VENV_BIN / "cc-analytics"), "usage", str(store), "--by", "day", "--json", "--quiet", "--no-cache"]
    if workers:
        ours += ["--workers", workers]
        usage += ["--workers", workers]
    # A first run as users make it, through the table cache, which keeps nothing here (each round
    # is a first run; measure.session_plan says why).
    first = [arg for arg in ours if arg != "--no-cache"]
    first_env = {"CC_ANALYTICS_CACHE_MAX_MB": "0", "CC_ANALYTICS_CACHE_DIR": str(scratch / "cache")}
    out = {
        "cc-analytics sessions": (ours, {}),
        FIRST: (first, first_env),
        "cc-analytics usage --by day": (usage, {}),
    }
    if ccusage:
        out[f"ccusage {agent} session --json"] = (
            [ccusage, agent, "session", "--json", "--offline"],
            {"HOME": str(home), "TZ": "UTC"},
        )
    return out


def ccusage_command() -> str | None:
    for candidate in (os.environ.get("CCUSAGE"), str(DEFAULT_CCUSAGE), "ccusage"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def corpus_bytes(agent: str, home: Path) -> int:
    return sum(p.stat().st_size for p in home.joinpath(*STORES[agent]).rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", choices=sorted(STORES), action="append", default=[])
    parser.add_argument("--smoke", action="store_true", help="one round on ~2 MB of each agent")
    parser.add_argument("--make", type=int, action="append", default=[], metavar="SIZE_MB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default=None, help="pass --workers N to cc-analytics")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args(argv)
    as_installed(os.environ)
    agents = args.agent or sorted(STORES)
    sizes = [2] if args.smoke else args.make
    if not sizes:
        parser.error("give --smoke or --make SIZE_MB")
    rounds = 1 if args.smoke else args.rounds
    scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-gemini-bench-")
    homes: dict[tuple[str, int], Path] = {}
    for agent in agents:
        for size in sizes:
            parent = Path(scratch.name) if args.smoke else args.tmp
            home = parent / f"cc-analytics-{agent}-corpus-{size}mb"
            if not home.joinpath(*STORES[agent]).is_dir():
                generate(agent, home, size, seed=1)
            homes[(agent, size)] = home
    ccusage = ccusage_command()
    if not ccusage:
        print("ccusage: not found (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    samples: dict[tuple[str, int, str], list[dict[str, float]]] = {}
    for round_index in range(rounds):
        for (agent, size), home in homes.items():
            plan = list(tasks(agent, home, Path(scratch.name), ccusage, args.workers).items())
            if round_index % 2:
                plan.reverse()
            for task, (command, env) in plan:
                samples.setdefault((agent, size, task), []).append(measure(command, env))
    medians = {
        key: {m: statistics.median(run[m] for run in runs) for m in ("wall", "cpu", "rss", "tree")}
        for key, runs in samples.items()
    }
    print("| agent | MB | files | task | wall s | CPU s | peak RSS MB | tree RSS MB | wall / ccusage | CPU / ccusage |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for (agent, size), home in homes.items():
        other = medians.get((agent, size, f"ccusage {agent} session --json"))
        files = sum(1 for p in home.joinpath(*STORES[agent]).rglob("*") if p.is_file())
        for (a, s, task), m in medians.items():
            if (a, s) != (agent, size):
                continue
            figures = f"{m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {m['tree']:.0f}"
            ratios = f"{m['wall'] / other['wall']:.2f}× | {m['cpu'] / other['cpu']:.2f}×" if other else "- | -"
            print(f"| {agent} | {corpus_bytes(agent, home) / 1e6:,.0f} | {files} | {task} | {figures} | {ratios} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
