"""Benchmark: one very large transcript (a single session in a single file), against ccusage.

Imports: the standard library, ``measure`` beside it and the corpus generators (``corpus`` and
``tests/fixtures/codex/make_corpus.py``); every measured task is a fresh process.

    python benchmarks/bigfile.py --smoke                 # a ~3 MB file per format, one round
    python benchmarks/bigfile.py --size-mb 1000          # generated under $TMPDIR, reused
    python benchmarks/bigfile.py --size-mb 1000 --format claude-code --rounds 1

Issue 26 asks the whole process tree to stay within 300 MB whatever one file's size. Each
format gets one transcript of about ``--size-mb``: one Claude Code session (its main file only:
the subagents' lines the generator writes are dropped), or one Codex rollout, written turn by
turn so that the generator itself stays small. ``sessions`` and ``usage --by day`` (``--no-cache``:
the file is decoded every time) run beside ccusage's ``session --json --offline`` (``codex
session`` for Codex) when ccusage is found (``$CCUSAGE``, ``/tmp/ccu/node_modules/.bin/ccusage``,
then PATH). The table shows medians of wall time, CPU seconds (user + system, children
included), the largest process's peak RSS and the whole tree's peak RSS (sampled); on a shared
machine compare CPU seconds and the tree.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from corpus import pools_for
from corpus_session import Plan, SessionWriter
from measure import METRICS, OURS, USAGE, as_installed, find_ccusage, measure, ours

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "codex"))
import make_corpus as codex_corpus  # noqa: E402

GENERATOR = "cc_analytics benchmarks/bigfile.py 1"  # bump when the output bytes change
MANIFEST = "bigfile.json"
SMOKE_MB = 3
FORMATS = ("claude-code", "codex")
CLAUDE_SESSION = "5f1c2a7e-0b3d-4e61-9a2f-7c4d8e9b1a30"
CLAUDE_PROJECT = "/home/dev/big-project"
CODEX_START = "2025-11-02T09:00:00+00:00"
CCUSAGE_CLAUDE = "ccusage session --json"
CCUSAGE_CODEX = "ccusage codex session --json"


def write_claude(folder: Path, size_mb: float, *, seed: int = 1) -> Path:
    """A Claude Code config folder under ``folder`` holding one session of about ``size_mb`` MB in
    one file (``projects/<project>/<session>.jsonl``); returns the file."""
    pools = pools_for(seed)
    rng = random.Random(f"{seed}:bigfile")
    files = [(f"{CLAUDE_PROJECT}/src/{name}.py", rng.randint(2_000, 60_000)) for name in ("app", "db", "cli", "io")]
    plan = Plan(0, CLAUDE_SESSION, CLAUDE_PROJECT, 0, int(size_mb * 1e6), files)
    writer = SessionWriter(plan, pools, seed, malformed=True)
    path = folder / "projects" / writer.facts.project_dir / f"{CLAUDE_SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("wb") as out:
        while written < plan.budget:
            writer.turn()
            for line in writer.main.lines:
                out.write(line + b"\n")
                written += len(line) + 1
            writer.main.lines.clear()
            for agent in writer.agents:  # a single file: the subagents' lines are not kept
                agent.lines.clear()
    return path


def write_codex(folder: Path, size_mb: float, *, seed: int = 1) -> Path:
    """A Codex home under ``folder`` holding one rollout of about ``size_mb`` MB; returns the file."""
    from datetime import datetime

    rng = random.Random(f"{seed}:bigfile")
    pools = codex_corpus._pools(seed)
    start = datetime.fromisoformat(CODEX_START)
    own = codex_corpus.uuid_of(rng, start)
    roll = codex_corpus.Rollout(own, start, codex_corpus.VERSIONS[-1], codex_corpus.MODELS[0])
    cwd = CLAUDE_PROJECT
    codex_corpus.header(rng, pools, roll, cwd, "cli")
    codex_corpus.opening(rng, pools, roll, cwd)
    path = folder / codex_corpus.place(own, start, archived=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    budget = int(size_mb * 1e6)
    written = index = 0
    with path.open("wb") as out:
        while written < budget:
            codex_corpus.turn(rng, pools, roll, cwd, index)
            index += 1
            for line in roll.rows:
                out.write(line + b"\n")
                written += len(line) + 1
            roll.rows.clear()
    return path


WRITERS = {"claude-code": write_claude, "codex": write_codex}


def cached(kind: str, size_mb: float, parent: Path) -> Path:
    """The folder holding ``kind``'s big file of ``size_mb`` under ``parent``, written unless an
    earlier run left the same one there."""
    folder = parent / f"cc-analytics-bigfile-{kind}-{size_mb:g}mb"
    wanted = {"generator": GENERATOR, "format": kind, "size_mb": size_mb}
    try:
        if json.loads((folder / MANIFEST).read_text()) == wanted:
            return folder
    except (OSError, ValueError):
        pass
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    WRITERS[kind](folder, size_mb)
    (folder / MANIFEST).write_text(json.dumps(wanted))
    return folder


def the_file(folder: Path) -> Path:
    (path,) = (p for p in folder.rglob("*.jsonl") if p.is_file())
    return path


def tasks(kind: str, folder: Path, scratch: Path, ccusage: str | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The measured commands on one big file, each with its environment."""
    path = str(the_file(folder))
    out = {
        OURS: (ours("sessions", path, "--json", "--quiet", workers=None), {}),
        USAGE: (ours("usage", path, "--by", "day", "--json", "--quiet", workers=None), {}),
    }
    if ccusage:
        # Its own HOME, so that it finds no other data of this machine's.
        if kind == "codex":
            out[CCUSAGE_CODEX] = (
                [ccusage, "codex", "session", "--json", "--offline"],
                {"CODEX_HOME": str(folder), "HOME": str(scratch), "TZ": "UTC"},
            )
        else:
            out[CCUSAGE_CLAUDE] = (
                [ccusage, "session", "--json", "--offline"],
                {"CLAUDE_CONFIG_DIR": str(folder), "HOME": str(scratch), "TZ": "UTC"},
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"one round on a ~{SMOKE_MB} MB file per format")
    parser.add_argument("--size-mb", type=float, default=1000.0, help="the file's size in MB (10^6 bytes)")
    parser.add_argument("--format", choices=FORMATS, action="append", default=[], help="default: both")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--keep", action="store_true", help="keep the generated files (else removed at the end)")
    args = parser.parse_args(argv)
    if args.size_mb <= 0 or args.rounds < 1:
        parser.error("--size-mb and --rounds must be positive")
    kinds = args.format or list(FORMATS)
    ccusage = find_ccusage()
    if not ccusage:
        print("ccusage: not installed (set CCUSAGE, or npm install ccusage); skipped", file=sys.stderr)
    as_installed(__import__("os").environ)
    scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-bigfile-")
    parent = Path(scratch.name) if args.smoke else args.tmp
    size_mb = SMOKE_MB if args.smoke else args.size_mb
    rounds = 1 if args.smoke else args.rounds
    print("| format | MB | task | wall s | CPU s | peak RSS MB | tree RSS MB |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for kind in kinds:
        folder = cached(kind, size_mb, parent)
        megabytes = the_file(folder).stat().st_size / 1e6
        plan = tasks(kind, folder, Path(scratch.name), ccusage)
        samples: dict[str, list[dict[str, float]]] = {task: [] for task in plan}
        for number in range(rounds):
            order = list(plan.items()) if number % 2 == 0 else list(reversed(plan.items()))
            for task, (command, env) in order:
                samples[task].append(measure(command, env))
        for task, runs in samples.items():
            m = {metric: statistics.median(run[metric] for run in runs) for metric in METRICS}
            print(
                f"| {kind} | {megabytes:,.0f} | {task} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {m['tree']:.0f} |"
            )
        if not args.keep and not args.smoke:
            shutil.rmtree(folder)
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
