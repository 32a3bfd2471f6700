"""Codex sessions, turns and the ``context`` report, on the fixture home and small builders."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cc_analytics.format import context_gauge
from cc_analytics.frames.codex import (
    context_report,
    iter_tables,
    read_requests,
    read_sessions,
    read_turns,
    resolve,
    tables_batch,
)
from cc_analytics.frames.codex.plugin import PLUGIN
from cc_analytics.frames.schema import REQUESTS_SCHEMA, SESSIONS_SCHEMA, TURNS_SCHEMA
from tests.conftest import ROOT, shared_path
from tests.fixtures.codex.builders import message, meta, prompt, tokens, turn_context, usage, write

HOME = ROOT / "tests" / "fixtures" / "codex" / "home"
PREFIX = "0199a000-0000-7000-8000-0000000000"
MAIN = PREFIX + "01"


@pytest.fixture(scope="module")
def sessions() -> pl.DataFrame:
    return read_sessions(HOME)


def test_schemas_and_the_tables_agree_with_the_verbs(sessions: pl.DataFrame) -> None:
    batches = list(iter_tables(HOME))
    assert batches[0].sessions.schema == SESSIONS_SCHEMA
    assert batches[0].turns.schema == TURNS_SCHEMA
    assert batches[0].requests.schema == REQUESTS_SCHEMA
    assert pl.concat([b.sessions for b in batches]).sort("session_id").equals(sessions)
    assert pl.concat([b.requests for b in batches]).equals(read_requests(HOME))
    assert pl.concat([b.turns for b in batches]).equals(read_turns(HOME))
    assert all(b.turns.is_empty() for b in iter_tables(HOME, turns=False))


def test_tables_batch_reads_bytes_given_to_it() -> None:
    files = resolve(HOME)
    contents = [f.path.read_bytes() for f in files]
    moved = [f._replace(path=Path("/nowhere") / f.path.name) for f in files]
    assert tables_batch(moved, contents=contents).requests.equals(tables_batch(files).requests)


def test_a_session_with_its_subagent(sessions: pl.DataFrame) -> None:
    row = sessions.filter(pl.col("session_id") == MAIN).row(0, named=True)
    assert (row["format"], row["project"], row["project_dir"], row["provider"]) == (
        "codex",
        "/work/app",
        "2025/11/03",
        "openai",
    )
    assert (row["files"], row["subagent_files"], row["turns"], row["requests"]) == (2, 1, 3, 6)
    assert (row["input_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (41224 + 3556, 30976 + 2944, 1010)
    assert row["cost_usd"] == pytest.approx(0.063002 + 0.007313, rel=1e-9)
    assert row["models"] == ["gpt-5-codex", "gpt-5.1-codex-max"]
    assert row["last_model"] == "gpt-5.1-codex-max"
    # Occupancy as recorded by the main rollout: the last request's total_tokens.
    assert (row["occupancy_source"], row["last_occupancy"], row["peak_occupancy"]) == ("recorded", 13190, 28020)
    assert (row["window"], row["effective_window"], row["autocompact_threshold"]) == (258400, 246400, None)
    assert row["used_fraction"] == pytest.approx((13190 - 12000) / 246400)
    assert row["headroom"] == 258400 - 13190
    assert (row["compactions"], row["compaction_pre_tokens"], row["compaction_post_tokens"]) == (1, [28020], [13190])
    assert row["compaction_triggers"] == [None]
    # Instructions (117) and what is left after the compaction: two user messages, one answer.
    assert (row["context_estimate"], row["messages"]) == (140, 4)
    assert row["calibration"] == pytest.approx(13190 / 140)


def test_a_fork_and_an_archived_session(sessions: pl.DataFrame) -> None:
    fork = sessions.filter(pl.col("session_id") == PREFIX + "03").row(0, named=True)
    assert (fork["requests"], fork["input_tokens"], fork["turns"], fork["compactions"]) == (1, 544, 2, 0)
    assert (fork["last_occupancy"], fork["peak_occupancy"]) == (13660, 13660)
    assert fork["context_estimate"] == 140 + 11  # the replayed context, and its own prompt and answer
    old = sessions.filter(pl.col("session_id") == PREFIX + "09").row(0, named=True)
    assert (old["project_dir"], old["requests"]) == ("archived_sessions", 1)
    legacy = sessions.filter(pl.col("session_id") == PREFIX + "0a").row(0, named=True)
    assert (legacy["requests"], legacy["last_occupancy"], legacy["occupancy_source"], legacy["turns"]) == (
        0,
        None,
        None,
        2,
    )


def test_turns_of_the_main_rollout() -> None:
    turns = read_turns(HOME).filter(pl.col("source_file").str.ends_with("01.jsonl"))
    assert turns.select(
        "turn_index", "role", "prompt", "tool_calls", "tool_errors", "model", "occupancy", "compacted"
    ).rows() == [
        (0, "assistant", None, 0, 0, None, None, False),
        (1, "user", "Add a health check endpoint", 2, 1, "gpt-5-codex", 16550, False),
        (2, "user", "Fix the fixture, then compact", 0, 0, "gpt-5.1-codex-max", 13190, True),
    ]
    assert turns["tool_names"].to_list() == [[], ["shell", "shell"], []]
    assert turns["cost_usd"][0] is None
    assert turns["cost_usd"].sum() == pytest.approx(0.063002, rel=1e-9)
    # What the turns add sums to the session's buckets (the main rollout's own lines).
    assert turns["estimated_tokens"].sum() == 133 + 77 + 31


def test_a_turn_starts_at_the_turn_context_before_its_prompt(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s",
        [
            meta(),
            message("user", "<environment_context>x</environment_context>"),
            turn_context("gpt-5"),
            prompt("first"),
            message("assistant", "a"),
            turn_context("gpt-5.1"),
            prompt("second"),
            message("assistant", "b"),
        ],
    )
    turns = read_turns(tmp_path)
    assert turns.select("turn_index", "prompt", "model").rows() == [
        (0, None, None),
        (1, "first", "gpt-5"),
        (2, "second", "gpt-5.1"),
    ]


def test_the_context_report_leads_with_the_recorded_occupancy() -> None:
    files = PLUGIN.find_session(MAIN, [HOME])
    report = PLUGIN.context_report(MAIN, files)
    assert report is not None
    assert list(report)[:11] == [
        "sessionId", "model", "provider", "contextWindow", "totalTokens", "usedFraction",
        "remainingTokens", "messageCount", "breakdown", "counts", "overflows",
    ]  # fmt: skip
    assert (report["totalTokens"], report["contextWindow"], report["remainingTokens"]) == (13190, 258400, 245210)
    assert report["usedFraction"] == 0.051  # of the whole window, as the gauge draws it
    assert report["contextLeftPercent"] == 100  # what Codex shows: the 12,000-token baseline taken off
    assert report["breakdown"] == {"system": 117, "user": 16, "assistant": 7, "tool": 0, "toolCalls": 0}
    assert (report["estimatedTokens"], report["messageCount"], report["files"], report["subagentFiles"]) == (
        140,
        4,
        2,
        1,
    )
    assert report["compactionHistory"] == [{"trigger": None, "preTokens": 28020, "postTokens": 13190}]
    assert report["reasoningTokens"] == 224 + 40
    assert [limit["usedPercent"] for limit in report["rateLimits"]] == [7.0, 13.0]
    assert "13190" in context_gauge(report)
    assert context_report("no-such-session", files) is None
    assert context_report(MAIN, []) is None
    assert PLUGIN.context_report(MAIN, files, model="o3", provider="azure")["contextWindow"] == 190000


def test_a_session_without_usage_is_reported_on_the_estimate(tmp_path: Path) -> None:
    write(tmp_path, "s", [meta("s", base_instructions={"text": "abcd" * 10}), prompt("hi"), message("user", "hi")])
    report = context_report("s", resolve(tmp_path))
    assert report is not None
    assert (report["occupancySource"], report["totalTokens"], report["contextWindow"]) == ("estimated", 11, 258400)


def test_subagent_rollouts_without_their_parent_form_a_session(tmp_path: Path) -> None:
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "gone"}}}
    one = usage(1000, 0, 10)
    write(tmp_path, "child", [meta("child", source=spawn), turn_context("gpt-5"), prompt("go"), tokens(one, one)])
    row = read_sessions(tmp_path).row(0, named=True)
    assert (row["session_id"], row["files"], row["subagent_files"], row["last_occupancy"], row["turns"]) == (
        "gone",
        1,
        1,
        1010,
        2,
    )


def test_the_shared_examples() -> None:
    folder = shared_path("data", "agents", "codex")
    sessions = read_sessions(folder)
    large = sessions.filter(pl.col("project") == "/tmp/large").row(0, named=True)
    assert (large["requests"], large["input_tokens"], large["cache_read_tokens"], large["output_tokens"]) == (
        1,
        1211,
        10880,
        182,
    )
    assert (large["last_occupancy"], large["window"], large["turns"]) == (12273, 258400, 2)
    small = sessions.filter(pl.col("project") == "/tmp/repo").row(0, named=True)
    assert (small["requests"], small["input_tokens"], small["cache_read_tokens"]) == (1, 12757, 3584)
    assert small["compactions"] == 7  # six compacted lines and one lone context_compacted event


def test_sessions_and_usage_over_rollouts_start_no_worker_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Their batches go to threads (the lean scan's C loop releases the GIL): processes started
    # ahead would end unused. A run that needs the turns (the walker) still starts them.
    from cc_analytics.frames import engine
    from cc_analytics.frames.sources import workers_ahead
    from tests.fixtures.codex import make_corpus

    make_corpus.generate(tmp_path / "home", 1, seed=3)
    with workers_ahead(tmp_path / "home", 2, lean=True):
        # In pure Python (CC_ANALYTICS_PURE_PYTHON) they are processes, started ahead as ever.
        assert bool(engine._started) == (not PLUGIN.batching(0, turns=False)[1])
    with workers_ahead(tmp_path / "home", 2):
        assert engine._started
    monkeypatch.setattr("cc_analytics.frames.codex.plugin.LEAN_BATCH_MIN", 2**16)  # batches of 64 KiB: several
    threaded = read_sessions(tmp_path / "home", workers=2)
    assert threaded.height > 4
    assert threaded.equals(read_sessions(tmp_path / "home", workers=1))
