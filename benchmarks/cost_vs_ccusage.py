"""Compare our per-session tokens and cost with ccusage's, on the real transcripts of ../shared.

Imports: the standard library, polars and ``cc_analytics.frames`` (ccusage runs as a process).

    python benchmarks/cost_vs_ccusage.py                  # ../shared/data/claude/real, ccusage if found
    python benchmarks/cost_vs_ccusage.py --real DIR --ccusage PATH --check

ccusage (npm ``ccusage@20.0.24``, ``session --json --offline``) is looked up as
``$CCUSAGE``, ``node_modules/.bin/ccusage`` in the repository or in ``$TMPDIR/bench``, then
``ccusage`` on PATH. It reads a Claude config folder, so the transcripts are copied into a
temporary ``projects/real/`` and it is pointed there with ``CLAUDE_CONFIG_DIR``. ccusage names
a session by its file, so each file is read on its own here too (our sessions frame groups
files by session id, which several of these files share). Printed per file: requests, the
four token kinds (ours; ``=`` where ccusage's are the same), both costs and their relative
difference (``*``: leaving out requests without a price), and what kind of difference it is
(README, "Cost compared with ccusage").
Without ../shared or ccusage the script says why and exits 0; ``--check`` exits 1 when a
token total differs, or a cost differs by more than 0.5 % where both price every request.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CC_SHARED_DIR") or ROOT.parent / "shared")
TOLERANCE = 0.005
KINDS = (
    ("input_tokens", "inputTokens"),
    ("output_tokens", "outputTokens"),
    ("cache_creation_tokens", "cacheCreationTokens"),
    ("cache_read_tokens", "cacheReadTokens"),
)


def ccusage_command() -> str | None:
    """ccusage to run: ``$CCUSAGE``, a local ``node_modules`` (the project's or ``$TMPDIR/bench``'s), else PATH."""
    local = "node_modules/.bin/ccusage"
    for candidate in (os.environ.get("CCUSAGE"), ROOT / local, Path(tempfile.gettempdir()) / "bench" / local):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return shutil.which("ccusage")


def run_ccusage(command: str, files: list[Path]) -> dict[str, dict]:
    """ccusage's sessions (by file stem) over a temporary config folder holding ``files``."""
    with tempfile.TemporaryDirectory(prefix="cc-analytics-ccusage-") as config:
        folder = Path(config) / "projects" / "real"
        folder.mkdir(parents=True)
        for path in files:
            shutil.copy(path, folder / path.name)  # ccusage does not follow symbolic links
        env = {**os.environ, "CLAUDE_CONFIG_DIR": config}
        done = subprocess.run(
            [command, "session", "--json", "--offline"], env=env, capture_output=True, check=True, timeout=600
        )
    return {row["period"]: row for row in json.loads(done.stdout)["session"]}


def ours(path: Path) -> dict:
    """Our requests of one file, summed: tokens, cost, requests, unpriced, 1-hour writes, web searches."""
    import polars as pl

    from cc_analytics.frames import read_requests

    requests = read_requests(path, format="claude-code", cache=False)
    sums = requests.select(
        pl.len().alias("requests"),
        pl.col("input_tokens").sum(),
        pl.col("output_tokens").sum(),
        (pl.col("cache_creation_5m_tokens") + pl.col("cache_creation_1h_tokens")).sum().alias("cache_creation_tokens"),
        pl.col("cache_creation_1h_tokens").sum(),
        pl.col("cache_read_tokens").sum(),
        pl.col("cost_usd").sum(),
        pl.col("cost_usd").null_count().alias("unpriced"),
        pl.col("web_search_requests").sum(),
    ).row(0, named=True)
    return sums


def difference(mine: dict, theirs: dict | None) -> str:
    """What kind of difference a session shows (see the README for each)."""
    if theirs is None:
        return "no requests: ccusage lists no session" if mine["requests"] == 0 else "missing from ccusage"
    if any(mine[a] != theirs[b] for a, b in KINDS):
        return "tokens differ"
    if mine["unpriced"]:
        return "requests without a price here (unknown model or mode)"
    relative = _relative(mine["cost_usd"], theirs["totalCost"])
    if abs(relative) <= 1e-9:
        return "same"
    notes = []
    if mine["web_search_requests"]:
        notes.append("web searches")
    if mine["cache_creation_1h_tokens"]:
        notes.append("1-hour cache writes")
    return "cost: " + (", ".join(notes) if notes else "prices at the request's date, or another price list")


def _relative(mine: float, theirs: float) -> float:
    return (mine - theirs) / theirs if theirs else (0.0 if mine == theirs else float("inf"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, default=SHARED / "data" / "claude" / "real", help="transcripts folder")
    parser.add_argument("--ccusage", default=None, help="the ccusage executable")
    parser.add_argument("--check", action="store_true", help="exit 1 on a token or >0.5%% cost difference")
    parser.add_argument("--smoke", action="store_true", help="the same (kept for make test's loop)")
    args = parser.parse_args(argv)
    files = sorted(args.real.glob("*.jsonl")) if args.real.is_dir() else []
    if not files:
        print(f"skipped: no transcripts at {args.real} (they come from ../shared, not from a clone)")
        return 0
    command = args.ccusage or ccusage_command()
    if command is None:
        print("skipped: ccusage not found (npm install ccusage@20.0.24, or set CCUSAGE=path)")
        return 0
    theirs = run_ccusage(command, files)
    print("| session (file) | requests | input | output | cache write | cache read | ours $ | ccusage $ | Δ | kind |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    kinds: dict[str, int] = {}
    failed = False
    for path in files:
        mine = ours(path)
        other = theirs.get(path.stem)
        kind = difference(mine, other)
        kinds[kind] = kinds.get(kind, 0) + 1
        cells = [
            f"{mine[a]:,}" + ("" if other is None or mine[a] == other[b] else f" ≠ {other[b]:,}") for a, b in KINDS
        ]
        cost = "-" if other is None else f"{other['totalCost']:.6f}"
        delta = "-" if other is None else f"{_relative(mine['cost_usd'], other['totalCost']):+.4%}"
        priced = mine["requests"] - mine["unpriced"]
        own = "-" if mine["requests"] and not priced else f"{mine['cost_usd']:.6f}" + "*" * bool(mine["unpriced"])
        print(f"| {path.stem} | {mine['requests']} | {' | '.join(cells)} | {own} | {cost} | {delta} | {kind} |")
        priced_alike = other is not None and not mine["unpriced"]
        if kind == "tokens differ" or priced_alike and abs(_relative(mine["cost_usd"], other["totalCost"])) > TOLERANCE:
            failed = True
    summary = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items(), key=lambda item: -item[1]))
    print(f"\n{len(files)} files: {summary}")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
