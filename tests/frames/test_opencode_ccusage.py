"""OpenCode requests against ccusage (``ccusage opencode session --json --offline``), the oracle.

Runs where the ccusage binary is: ``$CCUSAGE``, else ``/tmp/ccu/node_modules/.bin/ccusage``
(it reads ``$XDG_DATA_HOME/opencode``: its database and its JSON storage). Per session
(ccusage's session is one OpenCode session, a sub-task's apart), the input, cache read, cache
write and output tokens must equal the sums of our requests of that session, where our output
counts the reasoning OpenCode records apart (``docs/opencode.md``); the cost must equal ours
within 0.5 % where ccusage prices (OpenCode recorded no cost) and we price every request, and
equal OpenCode's own recorded cost (our ``recorded_cost_usd``) where it recorded one, as
ccusage shows that instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.opencode import read_events, read_requests
from tests.conftest import shared_path
from tests.fixtures.opencode import make_fixtures as F

DEFAULT_BINARY = "/tmp/ccu/node_modules/.bin/ccusage"
FIELDS = {
    "inputTokens": "input_tokens",
    "cacheReadTokens": "cache_read_tokens",
    "cacheCreationTokens": "cache_creation_5m_tokens",
    "outputTokens": "_output",
}


def ccusage_sessions(data: Path, scratch: Path) -> dict[str, dict]:
    """ccusage's sessions of an OpenCode data folder (``data/opencode``), by session id."""
    binary = os.environ.get("CCUSAGE") or DEFAULT_BINARY
    if not (shutil.which(binary) or Path(binary).is_file()):
        pytest.skip(f"ccusage is not installed ({binary!r}; set CCUSAGE to its path)")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "XDG_DATA_HOME": str(data), "TZ": "UTC"}
    done = subprocess.run(
        [binary, "opencode", "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {session["sessionId"]: session for session in json.loads(done.stdout)["sessions"]}


def ours(home: Path) -> dict[str, dict]:
    """Our sums per OpenCode session (a sub-task's own), with whether every request is priced."""
    requests = read_requests(home).with_columns(
        pl.coalesce("agent_id", "session_id").alias("_own"),
        (pl.col("output_tokens") - pl.col("reasoning_tokens")).alias("_output"),
    )
    recorded = (
        read_events(home)
        .filter(pl.col("kind") == "message")
        .group_by(pl.coalesce("agent_id", "session_id").alias("_own"))
        .agg(pl.col("recorded_cost_usd").sum())
    )
    out = {}
    for own, mine in requests.partition_by("_own", as_dict=True).items():
        sums = {key: int(mine[name].sum()) for key, name in FIELDS.items()}
        sums["cost"] = mine["cost_usd"].sum() if mine["cost_usd"].null_count() == 0 else None
        sums["recorded"] = recorded.filter(pl.col("_own") == own[0])["recorded_cost_usd"].sum()
        out[own[0]] = sums
    return out


def compare(data: Path, scratch: Path) -> None:
    theirs, mine = ccusage_sessions(data, scratch), ours(data / "opencode")
    assert set(theirs) == set(mine)
    for own, sums in mine.items():
        other = theirs[own]
        assert {key: other[key] for key in FIELDS} == {key: sums[key] for key in FIELDS}, own
        if sums["recorded"]:
            assert other["totalCost"] == pytest.approx(sums["recorded"], rel=1e-9), own
        elif sums["cost"] is not None and other["totalCost"]:
            assert sums["cost"] == pytest.approx(other["totalCost"], rel=0.005), own


def test_the_sample_database(tmp_path: Path) -> None:
    F.write_database(tmp_path / "data" / "opencode" / "opencode.db", F.sample_sessions())
    compare(tmp_path / "data", tmp_path)


def test_a_generated_database_and_the_same_sessions_as_json_storage(tmp_path: Path) -> None:
    sessions = F.corpus_sessions(30)
    assert any(session["parent"] for session in sessions)
    F.write_database(tmp_path / "db" / "opencode" / "opencode.db", sessions)
    compare(tmp_path / "db", tmp_path)
    F.write_storage(tmp_path / "json" / "opencode" / "storage", sessions)
    compare(tmp_path / "json", tmp_path)
    keys = ["session_id", "agent_id", "message_id"]
    from_db = read_requests(tmp_path / "db" / "opencode").sort(keys)
    from_json = read_requests(tmp_path / "json" / "opencode").sort(keys)
    assert from_db.drop("project").equals(from_json.drop("project"))


def test_opencode_own_recorded_cost_is_what_ccusage_shows(tmp_path: Path) -> None:
    F.write_database(tmp_path / "data" / "opencode" / "opencode.db", F.corpus_sessions(6, recorded_cost=True))
    compare(tmp_path / "data", tmp_path)


def test_the_shared_json_storage_examples(tmp_path: Path) -> None:
    for name in ("storage_v2", "storage_legacy"):
        target = tmp_path / name / "opencode" / "storage"
        shutil.copytree(shared_path("data", "agents", "opencode", name), target)
        compare(tmp_path / name, tmp_path)
