"""Benchmark: the cache of decoded sessions, cold against warm, beside ccusage.

Imports: the standard library, ``corpus``, ``measure`` and ``archive`` (its ``measure`` and
``grow``; every measured task is a fresh process).

    python benchmarks/cache_frames.py --smoke                      # a 3 MB corpus, a few seconds
    python benchmarks/cache_frames.py --make 1000 --rounds 3       # generate (or reuse) under $TMPDIR
    python benchmarks/cache_frames.py --corpus /tmp/cc-analytics-claude-corpus-1000mb

On a copy of the corpus, with a cache folder of its own: ``sessions``, ``usage --by day`` and
``report`` without the cache (``--no-cache``), cold (cache emptied first) and warm (nothing
changed: ``sessions`` and ``usage`` print their kept output, ``commands.memo``), warm with their
kept outputs removed (the kept tables read, the output made again: the path of a run where a
file changed, without the decoding), then ``sessions`` and ``usage`` after 1 % of the sessions
grew by 20 kB each (whole lines of their own appended, dated a minute back), and ccusage's
``session --json --offline`` when found (``$CCUSAGE``, else ``node_modules/.bin/ccusage`` under the project or ``--tmp``).
Rows show the median wall and CPU seconds (worker processes included) and the peak RSS of the
process tree, the wall time against ccusage's; then the cache's size on disk. Warm rounds
follow a cold one; the grown step runs once per round on freshly grown files. On a shared
machine compare CPU seconds; walls move with the load.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from archive import grow, measure, median_of
from corpus import cached, generate
from measure import as_installed

VENV_BIN = Path(sys.executable).parent
CLI = str(VENV_BIN / "cc-analytics")
GROWN_SHARE, GROWN_BYTES = 0.01, 20_000


def ccusage_command(tmp: Path) -> str | None:
    for candidate in (
        os.environ.get("CCUSAGE"),
        Path(__file__).resolve().parents[1] / "node_modules/.bin/ccusage",
        tmp / "ccu/node_modules/.bin/ccusage",
    ):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return shutil.which("ccusage")


def commands(projects: Path, scratch: Path) -> dict[str, list[str]]:
    return {
        "sessions": [CLI, "sessions", str(projects), "--json", "--quiet"],
        "usage --by day": [CLI, "usage", str(projects), "--by", "day", "--json", "--quiet"],
        "report": [CLI, "report", str(projects), "--out", str(scratch / "report"), "--quiet"],
    }


def mains(projects: Path) -> list[Path]:
    return sorted(p for p in projects.glob("*/*.jsonl") if p.is_file())


def clear_cache() -> None:
    subprocess.run([CLI, "cache", "clear"], check=True, capture_output=True)


def steps(projects: Path, scratch: Path, rounds: int, ccusage: str | None) -> list[tuple[str, dict[str, float]]]:
    rng = random.Random(26)
    rows: dict[str, list[dict[str, float]]] = {}
    tasks = commands(projects, scratch)

    def add(name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        rows.setdefault(name, []).append(measure(command) if env is None else measure_env(command, env))

    sessions = mains(projects)
    for _ in range(rounds):
        if ccusage:
            add(
                "ccusage session --json",
                [ccusage, "session", "--json", "--offline"],
                {"CLAUDE_CONFIG_DIR": str(projects.parent)},
            )
        for name, command in tasks.items():
            add(f"{name} --no-cache", [*command, "--no-cache"])
        for name, command in tasks.items():
            clear_cache()
            add(f"{name}: cold", command)
            add(f"{name}: warm", command)  # the cold run kept every session (and its output)
            add(f"{name}: warm", command)
            if name != "report":  # its output is files, not kept
                forget_outputs(scratch / "cache")
                add(f"{name}: warm, tables only", command)  # kept tables read, output made again
        for name in ("sessions", "usage --by day"):
            moment = time.time() - 60
            for path in rng.sample(sessions, max(1, round(len(sessions) * GROWN_SHARE))):
                grow(path, GROWN_BYTES)
                os.utime(path, (moment, moment))
            add(f"{name}: 1% of sessions grown by 20 kB", tasks[name])
    return [(name, median_of(found)) for name, found in rows.items()]


def forget_outputs(cache: Path) -> None:
    """Remove the kept outputs of the commands (``commands.memo``), not the kept tables."""
    for folder in cache.glob("tables/*/outputs"):
        shutil.rmtree(folder)


def measure_env(command: list[str], env: dict[str, str]) -> dict[str, float]:
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        return measure(command)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def show(title: str, rows: list[tuple[str, dict[str, float]]], cache_bytes: int, corpus_bytes: int) -> None:
    print(f"\n{title}")
    reference = dict(rows).get("ccusage session --json")
    print(f"{'task':44} {'wall s':>8} {'CPU s':>8} {'tree RSS MB':>12} {'× ccusage wall':>15}")
    for name, row in rows:
        ratio = f"{row['wall'] / reference['wall']:15.2f}" if reference else f"{'-':>15}"
        print(f"{name:44} {row['wall']:8.2f} {row['cpu']:8.2f} {row['tree']:12.0f} {ratio}")
    share = cache_bytes / corpus_bytes if corpus_bytes else 0
    print(f"cache on disk: {cache_bytes / 1e6:.1f} MB ({share:.1%} of the transcripts)")


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a 3 MB corpus, generated afresh, one round")
    parser.add_argument("--corpus", type=Path, help="a corpus folder of benchmarks/corpus.py (holds projects/)")
    parser.add_argument("--make", type=int, metavar="SIZE_MB", help="generate (or reuse) a corpus under --tmp")
    parser.add_argument("--rounds", type=int, default=1, help="rounds (medians)")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()), help="where corpora are kept")
    args = parser.parse_args(argv)
    as_installed(os.environ)
    with tempfile.TemporaryDirectory(prefix="cc-analytics-cache-bench-", dir=args.tmp) as scratch_name:
        scratch = Path(scratch_name)
        os.environ["CC_ANALYTICS_CACHE_DIR"] = str(scratch / "cache")  # never the user's cache
        if args.smoke:
            generate(scratch / "corpus", size_mb=3, seed=1)
            source = scratch / "corpus"
        else:
            source = args.corpus or args.tmp / f"cc-analytics-claude-corpus-{args.make or 1000}mb"
            if args.make:
                cached(source, size_mb=args.make, seed=1, jobs=min(2, os.cpu_count() or 1))
        projects = scratch / "copy" / "projects"
        shutil.copytree(source / "projects", projects)  # the grown step appends to its files
        hour_ago = time.time() - 3600
        for path in projects.rglob("*"):
            os.utime(path, (hour_ago, hour_ago))  # as a history is: written before this run
        size = sum(p.stat().st_size for p in projects.rglob("*.jsonl"))
        count = sum(1 for _ in projects.rglob("*.jsonl"))
        ccusage = None if args.smoke else ccusage_command(args.tmp)
        rows = steps(projects, scratch, 1 if args.smoke else args.rounds, ccusage)
        title = f"{size / 1e6:.0f} MB, {count} files, {len(mains(projects))} sessions"
        show(title, rows, folder_bytes(scratch / "cache" / "tables"), size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
