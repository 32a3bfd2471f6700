"""Benchmark: bucketing many ChainlessChain sessions in one pass, against a bare orjson parse.

Generates a synthetic store (default 10,000 sessions, about 1 GB) under $TMPDIR, then runs, each
in its own process so peak RSS is its own: (1) a bare parse of every line with orjson, (2) our
`context_frame` over the whole store. Prints wall and CPU seconds, sessions/s, MB/s, peak RSS and
the ratio to the bare parse. `--smoke` uses 40 small sessions (seconds). `--repeat N` runs both
tasks N times, alternating, and keeps each one's fastest run (the wall clock of a shared machine is noisy).

    python benchmarks/chainless_context.py [--sessions N] [--kb-per-session X] [--smoke] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import PeakTreeRss

WORDS = "context window token compaction session parser reader header row module test cache budget".split()
CJK = "上下文窗口压缩令牌会话解析测试"


def generate(root: Path, sessions: int, target_bytes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    models = [
        ("ollama", "qwen2.5:7b"),
        ("openai", "gpt-4o"),
        ("anthropic", "claude-sonnet-4-6"),
        ("deepseek", "deepseek-chat"),
        ("dashscope", "qwen-plus"),
    ]
    for n in range(sessions):
        provider, model = models[n % len(models)]
        ts = 1_780_000_000_000 + n * 60_000
        lines = [
            json.dumps(
                {
                    "type": "session_start",
                    "timestamp": ts,
                    "data": {"title": f"s{n}", "provider": provider, "model": model},
                }
            )
        ]
        size = 0
        turn = 0
        while size < target_bytes:
            turn += 1
            ts += 1000
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 400)))
            if turn % 7 == 0:
                words += CJK * rng.randint(1, 20)
            lines.append(
                json.dumps(
                    {"type": "user_message", "timestamp": ts, "data": {"role": "user", "content": words}},
                    ensure_ascii=False,
                )
            )
            calls = (
                [
                    {
                        "id": f"c{turn}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{turn}.py"})},
                    }
                ]
                if turn % 3 == 0
                else None
            )
            data = {"role": "assistant", "content": words[::-1][: rng.randint(50, 2000)]}
            if calls:
                data["tool_calls"] = calls
            lines.append(
                json.dumps({"type": "assistant_message", "timestamp": ts + 1, "data": data}, ensure_ascii=False)
            )
            lines.append(
                json.dumps(
                    {"type": "tool_result", "timestamp": ts + 2, "data": {"tool": "read_file", "result": words[:300]}}
                )
            )
            lines.append(
                json.dumps(
                    {
                        "type": "token_usage",
                        "timestamp": ts + 3,
                        "data": {
                            "provider": provider,
                            "model": model,
                            "usage": {"input_tokens": 100 * turn, "output_tokens": 50},
                            "source": "model",
                            "contextWindow": 128000,
                        },
                    }
                )
            )
            if turn % 40 == 0:
                lines.append(
                    json.dumps(
                        {
                            "type": "compact",
                            "timestamp": ts + 4,
                            "data": {
                                "strategy": "summarize",
                                "messages": [{"role": "system", "content": "summary " + words[:500]}],
                            },
                        }
                    )
                )
            size += sum(len(x) for x in lines[-4:])
        (root / f"session-{n:05d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


BARE = """
import sys, orjson
from pathlib import Path
n = 0
for p in sorted(Path(sys.argv[1]).glob('*.jsonl')):
    for line in p.read_bytes().split(b'\\n'):
        if line:
            orjson.loads(line); n += 1
print(n)
"""
OURS = """
import sys
from pathlib import Path
from cc_analytics.frames.chainless import context_frame
frame = context_frame(Path(sys.argv[1]), workers=None)
print(frame.height, int(frame['context_estimate'].sum()))
"""


def measure(code: str, root: Path) -> dict[str, float | str]:
    """Run ``code`` in a child; wall and CPU seconds (child and its workers), the largest single
    process's peak RSS, and the peak of the whole process tree's summed RSS (sampled every 20 ms)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, text=True)
    sampler = PeakTreeRss(proc.pid)
    out = proc.stdout.read().strip() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    peak_tree = sampler.stop()
    if status != 0:
        raise SystemExit(f"benchmark child failed with status {status}")
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024, "tree_mb": peak_tree, "out": out}


def fastest(runs: list[dict[str, float | str]]) -> dict[str, float | str]:
    """Best wall and best CPU seconds of several runs (each is the least disturbed estimate)."""
    best = dict(min(runs, key=lambda run: run["wall"]))
    best["cpu"] = min(float(run["cpu"]) for run in runs)
    best["rss_mb"] = max(float(run["rss_mb"]) for run in runs)
    best["tree_mb"] = max(float(run["tree_mb"]) for run in runs)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--kb-per-session", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="40 sessions of 20 kB: a few seconds")
    parser.add_argument("--corpus", type=Path, default=None, help="reuse or create the corpus here")
    parser.add_argument("--repeat", type=int, default=1, help="run each task N times, keep the fastest")
    args = parser.parse_args()
    if args.smoke:
        args.sessions, args.kb_per_session = 40, 20
    root = args.corpus or Path(tempfile.gettempdir()) / f"cc-chainless-bench-{args.sessions}x{args.kb_per_session}k"
    if not (root / ".complete").exists():
        print(f"generating {args.sessions} sessions of ~{args.kb_per_session} kB in {root} ...", file=sys.stderr)
        generate(root, args.sessions, args.kb_per_session * 1024)
        (root / ".complete").write_text("ok")
    total_mb = sum(p.stat().st_size for p in root.glob("*.jsonl")) / 1e6
    bare_runs, our_runs = [], []
    for _ in range(max(1, args.repeat)):
        bare_runs.append(measure(BARE, root))
        our_runs.append(measure(OURS, root))
    bare = fastest(bare_runs)
    ours = fastest(our_runs)
    sessions = int(str(ours["out"]).split()[0])
    if sessions != args.sessions:
        raise SystemExit(f"expected {args.sessions} session rows, got {ours['out']}")
    print(f"corpus: {args.sessions} sessions, {total_mb:.1f} MB, {bare['out']} lines ({root})")
    print(f"{'task':<28}{'wall s':>9}{'cpu s':>9}{'RSS MB':>9}{'tree MB':>9}{'sess/s':>10}{'MB/s':>9}")
    for name, row in (("orjson bare parse", bare), ("cc_analytics context_frame", ours)):
        print(
            f"{name:<28}{row['wall']:>9.2f}{row['cpu']:>9.2f}{row['rss_mb']:>9.0f}{row['tree_mb']:>9.0f}{args.sessions / row['wall']:>10.0f}{total_mb / row['wall']:>9.1f}"
        )
    print(
        f"ratio ours/bare: wall {ours['wall'] / bare['wall']:.2f}x, cpu {ours['cpu'] / bare['cpu']:.2f}x  (target: wall <= 2x, RSS < 500 MB)\n"
        "RSS MB: peak of the largest single process; tree MB: peak summed RSS of the process and its workers"
    )


if __name__ == "__main__":
    main()
