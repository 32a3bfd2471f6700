"""Codex requests against ccusage (``ccusage codex session --json --offline``), the oracle.

Runs where the ccusage binary is: ``$CCUSAGE``, else ``/tmp/ccu/node_modules/.bin/ccusage``.
Per rollout (ccusage's session is a file), its uncached input, cache read, output and
reasoning tokens must equal the sums of our requests of that rollout, and its cost ours
within 0.5 % where both price every request. The differences on purpose (``docs/codex.md``)
are asserted as such.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.codex import read_requests, resolve
from tests.conftest import ROOT, shared_path
from tests.fixtures.codex import make_corpus

HOME = ROOT / "tests" / "fixtures" / "codex" / "home"
PREFIX = "0199a000-0000-7000-8000-0000000000"
DEFAULT_BINARY = "/tmp/ccu/node_modules/.bin/ccusage"
FIELDS = {
    "inputTokens": "input_tokens",
    "cacheReadTokens": "cache_read_tokens",
    "outputTokens": "output_tokens",
    "reasoningOutputTokens": "reasoning_tokens",
}


def ccusage_binary() -> str:
    binary = os.environ.get("CCUSAGE") or DEFAULT_BINARY
    if not (shutil.which(binary) or Path(binary).is_file()):
        pytest.skip(f"ccusage is not installed ({binary!r}; set CCUSAGE to its path)")
    return binary


def ccusage_sessions(home: Path, scratch: Path) -> dict[str, dict]:
    """ccusage's sessions of a Codex home, by file name (without ``.jsonl``)."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "CODEX_HOME": str(home), "TZ": "UTC"}
    done = subprocess.run(
        [ccusage_binary(), "codex", "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {session["sessionFile"].split("/")[-1]: session for session in json.loads(done.stdout)["sessions"]}


def ours(home: Path) -> dict[str, dict]:
    """Our sums per rollout, by file name, with whether every request is priced."""
    files = resolve(home)
    requests = read_requests(files)
    out = {}
    for file in files:
        mine = requests.filter(
            (pl.col("session_id") == file.session_id) & pl.col("agent_id").eq_missing(pl.lit(file.agent_id, pl.String))
        )
        sums = {key: int(mine[name].sum()) for key, name in FIELDS.items()}
        sums["costUSD"] = mine["cost_usd"].sum() if mine["cost_usd"].null_count() == 0 else None
        out[file.path.name[: -len(".jsonl")]] = sums
    return out


def compare(home: Path, scratch: Path) -> dict[str, tuple[dict, dict]]:
    """The rollouts where ccusage and we differ: name → (theirs, ours). Costs must agree."""
    theirs, mine = ccusage_sessions(home, scratch), ours(home)
    assert set(theirs) <= set(mine)
    differ = {}
    for name, sums in mine.items():
        other = theirs.get(name, dict.fromkeys([*FIELDS, "costUSD"], 0))  # no usage: not listed
        if any(other[key] != sums[key] for key in FIELDS):
            differ[name] = (other, sums)
        elif sums["costUSD"] is not None and other["costUSD"]:
            assert sums["costUSD"] == pytest.approx(other["costUSD"], rel=0.005), name
    return differ


def test_the_fixture_home(tmp_path: Path) -> None:
    differ = compare(HOME, tmp_path)
    assert {name[-2:] for name in differ} == {"04", "08"}
    orphan = next(pair for name, pair in differ.items() if name.endswith("04"))
    # A fork whose parent is absent, with one replayed request: ccusage counts it again.
    assert orphan[0]["inputTokens"] - orphan[1]["inputTokens"] == 4000
    hostile = next(pair for name, pair in differ.items() if name.endswith("08"))
    # A usage count written as a string ("12"): ccusage reads it, we report it as a problem.
    assert hostile[0]["inputTokens"] - hostile[1]["inputTokens"] == 12


def test_the_shared_examples(tmp_path: Path) -> None:
    source = shared_path("data", "agents", "codex")
    home = tmp_path / "home"
    places = {
        "large.jsonl": "2025/12/18/rollout-2025-12-18T10-00-00-019b2ea4-aaaa-bbbb-cccc-58208e1f0000.jsonl",
        "small.jsonl": "2026/08/03/rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl",
        "schema_drift.jsonl": "2025/09/10/rollout-2025-09-10T12-00-00-schema-drift.jsonl",
    }
    for name, place in places.items():
        target = home / "sessions" / place
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target)
    assert compare(home, tmp_path) == {}


def test_a_generated_corpus(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_corpus.main(home, 8)
    assert any(b"forked_from_id" in path.read_bytes()[:200] for path in home.rglob("*.jsonl"))
    differ = compare(home, tmp_path)
    # ccusage looks for a replayed history in a subagent's rollout too (``thread_spawn``
    # without ``forked_from_id``: Codex copies none there), and its one-second burst rule then
    # drops the subagent's first request, whose token count Codex wrote twice in a row.
    subagents = {f.path.name[: -len(".jsonl")]: f for f in resolve(home) if f.is_subagent}
    assert set(differ) == set(subagents)
    requests = read_requests(home)
    for name, (theirs, mine) in differ.items():
        first = requests.filter(pl.col("agent_id") == subagents[name].agent_id).row(0, named=True)
        assert {key: mine[key] - theirs[key] for key in FIELDS} == {key: first[field] for key, field in FIELDS.items()}
