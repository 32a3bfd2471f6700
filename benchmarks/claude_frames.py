"""Benchmark: ``cc-analytics sessions`` against a bare orjson parse (and ccusage when installed).

Imports: the standard library and ``corpus`` (every measured task is a fresh process).

    python benchmarks/claude_frames.py --smoke                  # tiny corpus, a few seconds
    python benchmarks/claude_frames.py --make 100 --make 1000   # generate under $TMPDIR, measure
    python benchmarks/claude_frames.py --corpus c1000=/tmp/c1000 --rounds 3

Corpora come from ``benchmarks/corpus.py`` (``--make SIZE_MB``: 2 sessions per MB, seed 1,
kept under ``--tmp`` and reused while the generator and parameters are the same; ``--smoke``
generates 2 MB afresh). ccusage runs beside us when ``node_modules/.bin/ccusage`` or
``ccusage`` on PATH exists. Each round runs every task on every corpus, alternating the
order; the table shows medians of wall time, CPU seconds (user + system, worker processes
included) and peak RSS, and the ratios to the bare orjson parse.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import cached, generate
from measure import PeakTreeRss

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent

ORJSON_PARSE = """
import os, sys, orjson
loads, error = orjson.loads, orjson.JSONDecodeError
lines = bad = 0
for dirpath, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".jsonl"):
            with open(os.path.join(dirpath, name), "rb") as handle:
                for line in handle:
                    try:
                        loads(line)
                    except error:  # the corpora hold a few torn lines, as real ones do
                        bad += 1
                    lines += 1
print(lines, bad)
"""


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command``; wall seconds, CPU seconds and peak RSS (MB) of it and its children."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
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


def tasks(corpus: Path, workers: str | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    projects = str(corpus / "projects")
    ours = [str(VENV_BIN / "cc-analytics"), "sessions", projects, "--json", "--quiet"]
    if workers:
        ours += ["--workers", workers]
    out: dict[str, tuple[list[str], dict[str, str]]] = {
        "cc-analytics sessions": (ours, {}),
        "orjson parse (bare)": ([sys.executable, "-c", ORJSON_PARSE, projects], {}),
    }
    ccusage = ccusage_command()
    if ccusage:
        out["ccusage daily --json"] = (
            [ccusage, "daily", "--json"],
            {"CLAUDE_CONFIG_DIR": str(corpus)},
        )
    return out


def ccusage_command() -> str | None:
    local = ROOT / "node_modules" / ".bin" / "ccusage"
    return str(local) if local.exists() else shutil.which("ccusage")


def make_corpus(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-claude-corpus-{size_mb}mb"
    cached(target, size_mb=size_mb, seed=1, jobs=min(2, os.cpu_count() or 1))
    return target


def corpus_bytes(corpus: Path) -> int:
    return sum(p.stat().st_size for p in (corpus / "projects").rglob("*.jsonl") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one round on a ~2 MB corpus")
    parser.add_argument("--make", type=int, action="append", default=[], metavar="SIZE_MB")
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default=None, help="pass --workers N to cc-analytics")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json-out", type=Path, default=None, help="also write the medians as JSON")
    args = parser.parse_args(argv)

    corpora: dict[str, Path] = {}
    if args.smoke:
        scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-smoke-")
        corpora["smoke"] = Path(scratch.name)
        generate(corpora["smoke"], size_mb=2, seed=1)
        args.rounds = 1
    for size in args.make:
        corpora[f"{size}MB"] = make_corpus(size, args.tmp)
    for spec in args.corpus:
        name, _, folder = spec.partition("=")
        corpora[name] = Path(folder)
    if not corpora:
        parser.error("give --smoke, --make SIZE_MB or --corpus NAME=DIR")
    if not ccusage_command():
        print("ccusage: not installed (npx ccusage would need a download); skipped", file=sys.stderr)

    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_index in range(args.rounds):
        order = list(corpora.items())
        if round_index % 2:
            order.reverse()
        for name, corpus in order:
            plan = list(tasks(corpus, args.workers).items())
            if round_index % 2:
                plan.reverse()
            for task, (command, env) in plan:
                samples.setdefault((name, task), []).append(measure(command, env))

    medians = {
        key: {metric: statistics.median(run[metric] for run in runs) for metric in ("wall", "cpu", "rss", "tree")}
        for key, runs in samples.items()
    }
    header = "| corpus | MB | task | wall s | CPU s | peak RSS MB | tree RSS MB | wall / orjson | CPU / orjson |"
    print(header)
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, corpus in corpora.items():
        base = medians[(name, "orjson parse (bare)")]
        size = corpus_bytes(corpus) / 1e6
        for (corpus_name, task), m in medians.items():
            if corpus_name != name:
                continue
            figures = f"{m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {m['tree']:.0f}"
            ratios = f"{m['wall'] / base['wall']:.2f}× | {m['cpu'] / base['cpu']:.2f}×"
            print(f"| {name} | {size:,.0f} | {task} | {figures} | {ratios} |")
    names = list(corpora)
    if len(names) >= 2:
        small, large = names[0], names[-1]
        ours_small = medians[(small, "cc-analytics sessions")]
        ours_large = medians[(large, "cc-analytics sessions")]
        print(
            f"\nscaling {small} → {large}: wall ×{ours_large['wall'] / ours_small['wall']:.1f}, "
            f"CPU ×{ours_large['cpu'] / ours_small['cpu']:.1f}, "
            f"RSS {ours_small['rss']:.0f} → {ours_large['rss']:.0f} MB"
        )
    if args.json_out:
        rows = [{"corpus": c, "task": t, **m} for (c, t), m in medians.items()]
        args.json_out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
