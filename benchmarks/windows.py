"""Benchmark: capture 10 windows per session + ``to_json``, ours against the reference library.

Usage:
    python benchmarks/windows.py [--corpus DIR | --smoke] [--anchors 10] [--ref-python PATH]

Without ``--corpus`` a 100 MB corpus is generated under the temp folder with
``benchmarks/corpus.py`` (200 sessions, seed 7; reused while the generator and parameters
are the same). ``--smoke`` runs the same on a fresh 1 MB corpus in a few seconds. Each side runs in
its own fresh process (ours with this interpreter, the reference with the oracle venv's
python), reads each main session file once, captures windows for 10 evenly spaced
main-chain anchors and serialises them. The script prints wall time, CPU time, peak RSS
and the ratio, and checks that both sides produced identical bytes (SHA-256 over all
windows). Exit code 1 when the bytes differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import cached, generate

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REF_VENVS = (os.environ.get("CC_ORACLE_VENV", ""), str(REPO / ".oracle-venv"))


def list_files(corpus: str) -> list[str]:
    out = []
    for folder, _, names in os.walk(os.path.join(corpus, "projects")):
        out.extend(os.path.join(folder, n) for n in names if n.endswith(".jsonl"))
    out.sort()
    return [f for f in out if f"{os.sep}subagents{os.sep}" not in f]


def pick_anchors(raw: bytes, k: int) -> list[tuple[str, str, str | None]]:
    """k evenly spaced main-chain prompts and tool-calling assistant lines (untimed)."""
    found = []
    for line in raw.split(b"\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        kind = obj.get("type")
        if kind not in ("user", "assistant") or obj.get("isSidechain") or obj.get("isCompactSummary"):
            continue
        if obj.get("isMeta"):
            continue
        message = obj.get("message") or {}
        tool_id = None
        if kind == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tool_id = block.get("id")
            if tool_id is None:
                continue
        elif not isinstance(message.get("content"), str):
            continue
        found.append((obj["sessionId"], obj["uuid"], tool_id))
    step = max(1, len(found) // k)
    return found[::step][:k]


def worker(side: str, corpus: str, k: int) -> None:
    """Run one side in this process and print one JSON line of figures."""
    if side == "ours":
        sys.path.insert(0, str(REPO))
        from cc_analytics.core import EventRef, capture_windows
    else:
        from cc_transcript.context import capture_windows
        from cc_transcript.ids import EventRef
    files = list_files(corpus)
    jobs = []
    for path in files:
        with open(path, "rb") as handle:
            raw = handle.read()
        jobs.append((path, pick_anchors(raw, k)))
    digest = hashlib.sha256()
    windows = nbytes = 0
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    for path, anchors in jobs:
        if not anchors:
            continue
        with open(path, "rb") as handle:
            raw = handle.read()
        nbytes += len(raw)
        for window in capture_windows(raw, [EventRef(*a) for a in anchors]):
            digest.update(window.to_json().encode("utf-8"))
            digest.update(b"\n")
            windows += 1
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "side": side,
                "sessions": len(files),
                "windows": windows,
                "bytes": nbytes,
                "wall_s": wall,
                "cpu_s": cpu,
                "peak_rss_mb": rss_kb / 1024,
                "sha256": digest.hexdigest(),
            }
        )
    )


def reference_python(explicit: str | None) -> str | None:
    for venv in ([explicit] if explicit else []) + [v for v in DEFAULT_REF_VENVS if v]:
        path = venv if venv.endswith("python") else os.path.join(venv, "bin", "python")
        if os.path.exists(path):
            return path
    return None


def run_side(python: str, side: str, corpus: str, k: int) -> dict:
    proc = subprocess.run(
        [python, __file__, "--worker", side, "--corpus", corpus, "--anchors", str(k)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"windows.py: the {side} side failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="a corpus.py output folder (holding projects/)")
    parser.add_argument("--smoke", action="store_true", help="a tiny corpus, a few seconds")
    parser.add_argument("--anchors", type=int, default=10)
    parser.add_argument("--ref-python", help="python or venv with cc-transcript (default: the oracle venv)")
    parser.add_argument("--worker", choices=("ours", "reference"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.corpus, args.anchors)
        return 0
    corpus = args.corpus
    scratch = None
    if corpus is None and args.smoke:
        scratch = tempfile.TemporaryDirectory(prefix="cc-analytics-smoke-")
        generate(scratch.name, size_mb=1, sessions=4, seed=7)
        corpus = scratch.name
    elif corpus is None:
        corpus = str(Path(tempfile.gettempdir()) / "cc-analytics-windows-corpus-100mb")
        cached(corpus, size_mb=100, sessions=200, seed=7, jobs=min(2, os.cpu_count() or 1))
    ours = run_side(sys.executable, "ours", corpus, args.anchors)
    ref_py = reference_python(args.ref_python)
    print(f"corpus {corpus}: {ours['sessions']} sessions, {ours['bytes'] / 1e6:.1f} MB, {ours['windows']} windows")
    row = "{:<10} wall {:7.3f} s   cpu {:7.3f} s   peak RSS {:7.1f} MB"
    print(row.format("ours", ours["wall_s"], ours["cpu_s"], ours["peak_rss_mb"]))
    if ref_py is None:
        print("reference: skipped (no oracle venv; make oracle builds it when ../shared is beside the repo)")
        return 0
    ref = run_side(ref_py, "reference", corpus, args.anchors)
    print(row.format("reference", ref["wall_s"], ref["cpu_s"], ref["peak_rss_mb"]))
    print(
        f"ratio (reference / ours): wall {ref['wall_s'] / ours['wall_s']:.2f}x, cpu {ref['cpu_s'] / ours['cpu_s']:.2f}x"
    )
    same = ours["sha256"] == ref["sha256"] and ours["windows"] == ref["windows"]
    print(f"output bytes identical: {'yes' if same else 'NO'} (sha256 {ours['sha256'][:16]}…)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
