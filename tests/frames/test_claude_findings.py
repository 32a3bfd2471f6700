"""The findings frame (issue 23, point 3): what is worth a look in a window.

A session built for the purpose (``tests/fixtures/findings_transcript.py``, whose docstring
lists every line and figure) gives exactly the expected findings, each computed below by hand;
on the real Claude Code sessions of ``../shared`` every finding names an existing session and
turn, and its figures are consistent.

Prices (claude-opus-4-5, per token): input $5/M, 5-minute cache write $6.25/M, 1-hour cache
write $10/M, cache read $0.50/M, output $25/M.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import cc_analytics.frames as ccf
from cc_analytics.frames.schema import FINDINGS_SCHEMA
from tests.conftest import shared_path
from tests.fixtures.findings_transcript import SESSION, write_session, write_subagent

M = 1e-6  # a dollar per million tokens, per token


def kind(frame: pl.DataFrame, name: str, *columns: str) -> list[tuple]:
    return frame.filter(pl.col("kind") == name).select("turn_index", "uuid", "rank", *columns).rows()


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    return ccf.read_findings(write_session(tmp_path_factory.mktemp("findings")))


def test_every_finding_names_the_session_and_its_line(findings: pl.DataFrame) -> None:
    assert findings.schema == FINDINGS_SCHEMA
    assert set(findings["session_id"]) == {SESSION} and set(findings["format"]) == {"claude-code"}
    assert set(findings["project"]) == {"/work/demo"}
    assert findings["uuid"].null_count() == 0 and findings["line"].null_count() == 0


def test_the_largest_items_are_the_largest_blocks(findings: pl.DataFrame) -> None:
    # Two 2,000-character results of Read (500 each), the MCP result (800 characters: 200), the
    # first prompt and the summary (400: 100), four 40-character prompts (10), then the MCP call
    # ("mcp__github__get_file" and {"path":"x"}: 21 + 12 characters, 9), ahead of the Read calls (7).
    assert kind(findings, "largest_item", "category", "item", "target", "tokens") == [
        (0, "r1", 1, "tool_result", "Read", "/w/a.py", 500),
        (1, "r3", 2, "tool_result", "Read", "/w/a.py", 500),
        (1, "r4", 3, "tool_result", "mcp__github", "x", 200),
        (0, "p0", 4, "user", None, None, 100),
        (3, "s7", 5, "summary", None, None, 100),
        (1, "p1", 6, "user", None, None, 10),
        (2, "p2", 7, "user", None, None, 10),
        (3, "p3", 8, "user", None, None, 10),
        (4, "p4", 9, "user", None, None, 10),
        (1, "a4", 10, "tool_call", "mcp__github", "x", 9),
    ]


def test_a_file_read_twice_costs_its_second_read(findings: pl.DataFrame) -> None:
    # /w/a.py was read at r1 and again at r3: two reads, the second's 500 tokens spent again.
    assert kind(findings, "repeated_read", "target", "count", "tokens") == [(1, "r3", 1, "/w/a.py", 2, 500)]


def test_the_window_jumps_and_what_entered(findings: pl.DataFrame) -> None:
    # Recorded occupancy per turn (last request): 10,607, 11,334, 12,690, 12,712, then 10,110
    # after the compaction (another segment: no jump). Jumps: turn 2 +1,356, turn 1 +727, turn 3 +22.
    # Turn 1 (calibration (11,334 − 10,000) / 1,334 = 1): the Read result 500, the MCP result 200,
    # the prompt 10 (then the MCP call 9, the Read call 7, the text "ok" 1: 727 in all).
    # Turns 2 and 3 (calibration 2: the image is not measured): the prompt 10 → 20, a text 1 → 2.
    assert kind(findings, "window_jump", "category", "item", "tokens", "part_tokens") == [
        (2, "a6", 1, "user", None, 1356, 20),
        (2, "a6", 1, "assistant", None, 1356, 2),
        (1, "a5", 2, "tool_result", "Read", 727, 500),
        (1, "a5", 2, "tool_result", "mcp__github", 727, 200),
        (1, "a5", 2, "user", None, 727, 10),
        (3, "a7", 3, "user", None, 22, 20),
        (3, "a7", 3, "assistant", None, 22, 2),
    ]


def test_what_filled_the_window_at_its_fullest(findings: pl.DataFrame) -> None:
    # The fullest turn is turn 3 (12,712 recorded), calibration 2: the baseline kept, the rest doubled.
    # Held then: the four prompts 100 + 10 + 10 + 10, the texts "ok", "done", "fine" (1 each), two
    # Read calls (7 each) and results (500 each), the MCP call (9) and result (200).
    rows = kind(findings, "peak_window", "category", "item", "tokens")
    assert rows == [
        (3, "a7", 1, "baseline", None, 10_000),
        (3, "a7", 2, "tool_result", "Read", 2 * 1000),
        (3, "a7", 3, "tool_result", "mcp__github", 2 * 200),
        (3, "a7", 4, "user", None, 2 * 130),
        (3, "a7", 5, "tool_call", "Read", 2 * 14),
        (3, "a7", 6, "tool_call", "mcp__github", 2 * 9),
        (3, "a7", 7, "assistant", None, 2 * 3),
    ]
    assert sum(row[-1] for row in rows) == 12_712


def test_the_tool_definitions_and_the_mcp_server(findings: pl.DataFrame) -> None:
    # The baseline: the first request's 10,100 less the 100-token prompt it read.
    assert kind(findings, "tool_definitions", "category", "tokens") == [(0, "a1", 1, "baseline", 10_000)]
    # The MCP server's call and result, 9 + 200, held twice that from turn 2 on (calibration 2).
    assert kind(findings, "mcp_server", "item", "tokens", "count") == [(1, "a4", 1, "mcp__github", 418, 1)]


def test_the_cache_rebuilt_after_an_idle_gap(findings: pl.DataFrame) -> None:
    rows = kind(findings, "cache_rebuild", "item", "seconds", "tokens", "cost_usd")
    # m6, 605 s after m5 (whose 5-minute cache held 11,125 read + 200 written = 11,325), wrote
    # 12,686 at 1 hour: 11,325 of them rewrote the cache, at $10/M. m7, 1,800 s after m6's
    # 1-hour write, is no rebuild. m8, 7,220 s after m7 (12,690 + 22 = 12,712 held), wrote 10,100
    # at 1 hour: all of them a rewrite.
    assert [row[:-1] for row in rows] == [(2, "a6", 1, "5m", 605.0, 11_325), (4, "a8", 2, "1h", 7220.0, 10_100)]
    assert [row[-1] for row in rows] == pytest.approx([11_325 * 10 * M, 10_100 * 10 * M])


def test_a_subagent_rebuilds_its_own_cache(tmp_path: Path) -> None:
    write_subagent(tmp_path)
    findings = ccf.read_findings(write_session(tmp_path))
    rebuilds = findings.filter(pl.col("kind") == "cache_rebuild")
    # sa2, 400 s after sa1 (whose 5-minute write left 2,000 tokens in the subagent's cache), wrote
    # 2,100 at 5 minutes: 2,000 of them a rewrite, at $6.25/M. A subagent's file is one turn (its
    # prompts are sidechain lines), and its findings are ranked apart from the main file's.
    sub = rebuilds.filter(pl.col("source_file").str.contains("/subagents/")).select(
        "session_id", "turn_index", "uuid", "rank", "item", "seconds", "tokens", "cost_usd"
    )
    assert sub.rows() == [(SESSION, 0, "sa2", 1, "5m", 400.0, 2_000, pytest.approx(2_000 * 6.25 * M))]
    # The subagent's requests are not the main chain's turns: its cache hits and window are its own.
    assert (
        findings.filter(pl.col("source_file").str.contains("/subagents/"), pl.col("kind") != "cache_rebuild").height
        == 0
    )
    assert findings.filter(pl.col("kind") == "cache_hit").height == 5 and rebuilds.height == 3


def test_the_cache_hit_ratio_per_turn(findings: pl.DataFrame) -> None:
    rows = kind(findings, "cache_hit", "count", "tokens", "ratio", "cost_usd")
    # Lowest ratio first (ties: the earlier turn). Per turn: read tokens / prompt tokens, and the cost:
    expected = [
        # m6: 4 input, 12,686 written at 1 hour, 10 output.
        (2, "a6", 1, 1, 0, 0.0, (4 * 5 + 12_686 * 10 + 10 * 25) * M),
        # m8: 10 input, 10,100 written at 1 hour.
        (4, "a8", 2, 1, 0, 0.0, (10 * 5 + 10_100 * 10 + 10 * 25) * M),
        # m1 (100 input, 10,000 written at 5 minutes) and m2 (7, 600 written, 10,000 read).
        (
            0,
            "a1",
            3,
            2,
            10_000,
            10_000 / (10_100 + 10_607),
            (100 * 5 + 10_000 * 6.25 + 7 * 5 + 600 * 6.25 + 10_000 * 0.5 + 20 * 25) * M,
        ),
        # m3, m4, m5: read 10,607 + 10,607 + 11,125 of 10,618 + 11,125 + 11,334.
        (
            1,
            "a3",
            4,
            3,
            32_339,
            32_339 / 33_077,
            ((11 + 18 + 9) * 5 + (500 + 200) * 6.25 + 32_339 * 0.5 + 30 * 25) * M,
        ),
        # m7: 22 written at 1 hour, 12,690 read.
        (3, "a7", 5, 1, 12_690, 12_690 / 12_712, (22 * 10 + 12_690 * 0.5 + 10 * 25) * M),
    ]
    assert [row[:5] for row in rows] == [row[:5] for row in expected]
    assert [row[5:] for row in rows] == [pytest.approx(row[5:]) for row in expected]


def test_the_findings_follow_the_composition(tmp_path: Path) -> None:
    # The jumps' causes are the composition's entered parts, calibrated as its parts are.
    folder = write_session(tmp_path)
    parts = ccf.read_composition(folder).filter(pl.col("turn_index") == 1, pl.col("entered_tokens") > 0)
    jump = ccf.read_findings(folder).filter(pl.col("kind") == "window_jump", pl.col("turn_index") == 1)
    assert parts["tokens"].sum() - parts.filter(pl.col("category") == "baseline")["tokens"].sum() > 0
    assert parts["entered_tokens"].sum() == jump["tokens"][0]  # calibration 1 at turn 1
    assert set(jump["part_tokens"]) <= set(parts["entered_tokens"])


def test_real_sessions_give_consistent_findings() -> None:
    real = shared_path("data", "claude", "real")
    findings = ccf.read_findings(real)
    turns = ccf.read_turns(real, cache=False).select("source_file", "turn_index")
    sessions = ccf.read_sessions(real, cache=False).select("session_id")
    assert findings.height > 0 and set(findings["kind"]) >= {"largest_item", "tool_definitions", "cache_hit"}
    # Every finding names a session (as the sessions frame names it: a file's first session id),
    # a turn of its file, and a line.
    assert findings.join(sessions, on="session_id", how="anti").height == 0
    named = findings.join(turns, on=["source_file", "turn_index"], how="anti")
    assert named.height == 0, named.select("source_file", "turn_index", "kind")
    assert findings["uuid"].null_count() == 0 and (findings["line"] >= 1).all()
    for column in ("tokens", "part_tokens", "cost_usd", "count", "seconds"):
        assert (findings[column].drop_nulls() >= 0).all(), column
    assert findings["ratio"].drop_nulls().is_between(0, 1).all()
    reads = findings.filter(pl.col("kind") == "repeated_read")
    assert (reads["count"] >= 2).all()
    # The reads counted again from the events frame: each Read call of a main chain whose result
    # came back, by file path; the repeated ones are exactly the findings, with their counts.
    events = ccf.read_events(real, format="claude-code").filter(~pl.col("is_subagent_file"), ~pl.col("is_sidechain"))
    calls = (
        events.select("source_file", "tool_use_names", "tool_use_ids", "tool_use_inputs")
        .explode("tool_use_names", "tool_use_ids", "tool_use_inputs")
        .filter(pl.col("tool_use_names") == "Read")
        .select(
            "source_file", "tool_use_ids", pl.col("tool_use_inputs").str.json_path_match("$.file_path").alias("target")
        )
        .unique(["source_file", "tool_use_ids"], keep="first")
    )
    results = events.select("source_file", "tool_result_ids").explode("tool_result_ids")
    counted = (
        results.join(calls, left_on=["source_file", "tool_result_ids"], right_on=["source_file", "tool_use_ids"])
        .group_by("source_file", "target")
        .len()
        .filter(pl.col("len") > 1)
    )
    assert counted.height == reads.height > 0
    both = reads.join(counted, on=["source_file", "target"])
    assert both.height == reads.height and (both["count"] == both["len"]).all()
    # The repeats are at most the reads: each repeat is one of the file's results after the first.
    largest = findings.filter(pl.col("kind") == "largest_item")
    assert (largest.group_by("source_file").len()["len"] <= 10).all()
    rebuilds = findings.filter(pl.col("kind") == "cache_rebuild")
    assert (rebuilds["seconds"] > pl.Series(rebuilds["item"]).replace_strict({"5m": 300.0, "1h": 3600.0})).all()
    # Each rebuild is a request of the requests frame, as long after the one before it in its
    # chain (the session's main chain or one subagent's) as it says, and rewrote at most what it wrote.
    requests = (
        ccf.read_requests(real, cache=False)
        .sort("session_id", "agent_id", "time", nulls_last=True)
        .with_columns(
            (pl.col("time") - pl.col("time").shift(1).over("session_id", "agent_id")).dt.total_seconds().alias("gap"),
            (pl.col("cache_creation_5m_tokens") + pl.col("cache_creation_1h_tokens")).alias("written"),
        )
    )
    matched = rebuilds.join(requests, on=["session_id", "time"])
    assert rebuilds.height > 0 and matched.height == rebuilds.height
    assert (matched["gap"] == matched["seconds"].cast(pl.Int64)).all() and (
        matched["tokens"] <= matched["written"]
    ).all()
    jumps = findings.filter(pl.col("kind") == "window_jump")
    causes = jumps.group_by("source_file", "turn_index").agg(pl.col("part_tokens").sum(), pl.col("tokens").first())
    assert causes.height <= 5 * findings["source_file"].n_unique()
