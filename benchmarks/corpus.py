"""Realistic, deterministic Claude Code corpora for the benchmarks and the tests.

Imports: the standard library, ``corpus_session`` and ``corpus_text`` beside it (orjson when
installed, for speed: the same bytes); never ``cc_analytics``, whose input this is.

    python benchmarks/corpus.py OUT --size-mb 100 [--sessions 200] [--seed 1] [--no-malformed]

Writes ``OUT/projects/<project-dir>/<session-uuid>.jsonl``, subagent transcripts in
``OUT/projects/<project-dir>/<session-uuid>/subagents/agent-<id>.jsonl`` and ``OUT/corpus.json``:
the parameters and what was written, per session (subagent files, compactions, deduplicated
token totals, peak and last main-chain occupancy, malformed lines), so a test can hold a
loader to it. :func:`generate` does the same from Python; :func:`cached` reuses an earlier
output with the same parameters.

What the lines look like (Claude Code 2.1.x, shaped after ``spec/claude-code-jsonl.md``):
user prompts (some CJK, some pasted logs), slash commands with their meta caveat, assistant
responses split one content block per line (thinking with signature, text, tool_use) sharing
``message.id``, ``requestId`` and a ``usage`` with cache writes and reads that follow the
5-minute prompt cache, tool results with ``toolUseResult`` payloads (Read, Bash, Edit, Write,
Grep, Glob, TodoWrite, WebFetch, WebSearch, MCP, Task → a subagent file), occupancy that grows
call by call up to auto-compaction (``compact_boundary`` + ``isCompactSummary``), manual
``/compact``, ``summary`` lines atop resumed sessions, ``file-history-snapshot`` and
``system/turn_duration`` lines, rare ``<synthetic>`` API errors, tool errors and rejections,
and (unless ``malformed=False``) an occasional torn last line or garbled tool result line.
Session sizes are lognormal (σ 1.3) and the total hits ``--size-mb`` within a few percent.
The same parameters give the same bytes on every run and machine.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import random
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

from corpus_session import Plan, SessionFacts, SessionWriter
from corpus_text import NOUNS, VERBS, Pools

GENERATOR = "cc_analytics benchmarks/corpus.py 1"  # bump when the output bytes change
MANIFEST = "corpus.json"
SESSIONS_PER_MB = 2
OVERSHOOT = 20_000


def plan_sessions(size_mb: float, sessions: int, seed: int) -> list[Plan]:
    """Projects, session ids, start times and byte budgets (lognormal, σ 1.3, summing to the size)."""
    rng = random.Random(f"{seed}:corpus")
    count = max(2, min(40, round(1.5 * math.sqrt(sessions))))
    names = [f"{rng.choice(NOUNS)}-{rng.choice(NOUNS)}" for _ in range(count)]
    names[0] = "翻译工具"  # a non-ASCII folder: its project dir is all dashes
    if count > 2:
        names[1] = "my.app"
    projects = []
    for name in names:
        cwd = f"/home/dev/{name}"
        files = []
        for _ in range(rng.randint(25, 80)):
            ext = rng.choice((".py", ".py", ".ts", ".rs"))
            folder = rng.choice(("src", "tests", "src/" + rng.choice(NOUNS), "lib"))
            size = min(300_000, int(rng.lognormvariate(8.4, 1.0)))
            files.append((f"{cwd}/{folder}/{rng.choice(VERBS)}_{rng.choice(NOUNS)}{ext}", size))
        projects.append((cwd, files))
    weights = [rng.lognormvariate(0.0, 1.3) for _ in range(sessions)]
    # Every session ends its last turn past its budget: about OVERSHOOT bytes on average.
    scale = max(size_mb * 1e6 / 2, size_mb * 1e6 - sessions * OVERSHOOT) / sum(weights)
    plans = []
    for index, weight in enumerate(weights):
        h = f"{rng.getrandbits(128):032x}"
        session_id = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"
        cwd, files = projects[min(int(rng.paretovariate(1.2)) - 1, count - 1)]
        start_ms = rng.randint(0, 27 * 86_400_000)
        plans.append(Plan(index, session_id, cwd, start_ms, max(4_000, int(weight * scale)), files))
    return plans


@functools.lru_cache(maxsize=2)
def pools_for(seed: int) -> Pools:
    return Pools(seed)


def _write_batch(job: tuple[Path, int, bool, list[Plan]]) -> list[SessionFacts]:
    out, seed, malformed, plans = job
    pools = pools_for(seed)
    return [SessionWriter(plan, pools, seed, malformed=malformed).write(out / "projects") for plan in plans]


def generate(
    out: Path | str,
    *,
    size_mb: float,
    sessions: int | None = None,
    seed: int = 1,
    malformed: bool = True,
    jobs: int = 1,
) -> dict:
    """Write a corpus into ``out`` (new or empty) and return its manifest (also in ``out/corpus.json``).

    ``jobs`` worker processes share the sessions; the bytes do not depend on it.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     manifest = generate(tmp, size_mb=0.2, sessions=3, seed=5)
        >>> len(manifest["by_session"]), manifest["seed"]
        (3, 5)
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        msg = f"{str(out)!r} is not empty\nHint: pick a new folder, or use cached() to reuse a corpus"
        raise FileExistsError(msg)
    sessions = sessions or max(4, round(size_mb * SESSIONS_PER_MB))
    params = {"generator": GENERATOR, "size_mb": size_mb, "sessions": sessions, "seed": seed, "malformed": malformed}
    plans = plan_sessions(size_mb, sessions, seed)
    if jobs > 1 and len(plans) > 1:
        batches = [(out, seed, malformed, plans[i :: jobs * 4]) for i in range(min(len(plans), jobs * 4))]
        with ProcessPoolExecutor(jobs) as pool:
            facts = [f for batch in pool.map(_write_batch, batches) for f in batch]
        order = {plan.session_id: plan.index for plan in plans}
        facts.sort(key=lambda f: order[f.session_id])
    else:
        facts = _write_batch((out, seed, malformed, plans))
    manifest = {
        **params,
        "bytes": sum(f.bytes for f in facts),
        "lines": sum(f.lines for f in facts),
        "subagent_files": sum(f.subagent_files for f in facts),
        "malformed_lines": sum(f.malformed_lines for f in facts),
        "by_session": {f.session_id: asdict(f) for f in facts},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def cached(
    out: Path | str,
    *,
    size_mb: float,
    sessions: int | None = None,
    seed: int = 1,
    malformed: bool = True,
    jobs: int = 1,
) -> dict:
    """The manifest of ``out`` when it holds this generator's corpus for these parameters, else generate it.

    A folder holding an older or different corpus of ours is replaced; any other folder is refused.
    """
    out = Path(out)
    sessions = sessions or max(4, round(size_mb * SESSIONS_PER_MB))
    wanted = {"generator": GENERATOR, "size_mb": size_mb, "sessions": sessions, "seed": seed, "malformed": malformed}
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if manifest is not None:
        if {key: manifest.get(key) for key in wanted} == wanted:
            return manifest
        shutil.rmtree(out)
    return generate(out, size_mb=size_mb, sessions=sessions, seed=seed, malformed=malformed, jobs=jobs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, metavar="OUT", help="a new or empty folder")
    parser.add_argument("--size-mb", type=float, required=True, help="total size in MB (10^6 bytes)")
    parser.add_argument("--sessions", type=int, default=None, help=f"main sessions (default {SESSIONS_PER_MB} per MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-malformed", dest="malformed", action="store_false", help="no torn or garbled lines")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="worker processes")
    args = parser.parse_args(argv)
    if args.size_mb <= 0 or (args.sessions is not None and args.sessions < 1):
        parser.error("--size-mb and --sessions must be positive")
    start = time.perf_counter()
    try:
        manifest = generate(
            args.out,
            size_mb=args.size_mb,
            sessions=args.sessions,
            seed=args.seed,
            malformed=args.malformed,
            jobs=args.jobs,
        )
    except FileExistsError as exc:
        print(f"corpus.py: error: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    megabytes = manifest["bytes"] / 1e6
    print(
        f"wrote {manifest['sessions']} sessions, {manifest['subagent_files']} subagent files, "
        f"{manifest['lines']:,} lines ({manifest['malformed_lines']} malformed), {megabytes:,.1f} MB "
        f"in {seconds:.1f} s ({megabytes / seconds:,.0f} MB/s) under {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
