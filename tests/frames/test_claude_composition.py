"""The composition frame (issue 23, point 2): what filled the window at each turn.

A transcript built for the purpose, whose every part has a known estimate (ASCII text: a
quarter token per character, rounded up per block) and whose requests record occupancies
chosen to give round calibrations, gives exactly the expected rows; on real sessions the
calibrated parts of every turn sum to its recorded occupancy.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from cc_analytics.frames.claude import read_sessions
from cc_analytics.frames.claude.composition import read_composition
from cc_analytics.frames.schema import COMPOSITION_SCHEMA
from cc_analytics.windowmath import scale_parts
from tests.conftest import shared_path
from tests.frames.claude_builders import (
    SESSION,
    assistant,
    compact_boundary,
    text,
    thinking,
    tool_result,
    tool_use,
    usage,
    user,
    write,
)

MEMORY = ("<system-reminder>Contents of /w/CLAUDE.md: " + "x" * 80)[:80]  # 80 characters: 20 tokens


def recorded(occupancy: int) -> dict[str, int]:
    return usage(occupancy, 0, 0, 5)


def built(tmp_path: Path) -> Path:
    """Three turns: a Read and a thinking block, an MCP call, then a compaction."""
    return write(
        tmp_path / "p" / f"{SESSION}.jsonl",
        # turn 0
        user("p" * 400),  # 100
        user(MEMORY, isMeta=True),  # memory 20
        # The first request read the prompt and the memory: the baseline is 10,120 − 120.
        assistant([thinking("t" * 40)], message_id="m1", tokens=recorded(10_120)),  # 10
        assistant([tool_use("r1", "Read", {"file_path": "a.py"})], message_id="m1", tokens=recorded(10_120)),  # 6
        tool_result("r1", "r" * 800),  # Read 200
        assistant([text("done")], message_id="m2", tokens=recorded(10_336)),  # 1, after turn 0's window
        # turn 1
        user("q" * 40),  # 10
        assistant([tool_use("g1", "mcp__github__create_issue", {"title": "x"})], message_id="m3", tokens=recorded(1)),
        tool_result("g1", "g" * 400),  # mcp__github 100
        assistant([text("ok")], message_id="m4", tokens=recorded(10_914)),
        compact_boundary(11_000),
        user("s" * 200, isCompactSummary=True, isVisibleInTranscriptOnly=True),  # summary 50
        # turn 2
        user("w" * 40),  # 10
        assistant([text("fine")], message_id="m5", tokens=recorded(10_090)),
    ).parent


COLUMNS = ["turn_index", "category", "item", "estimated_tokens", "entered_tokens", "dropped_tokens", "tokens"]


def test_a_built_transcript_gives_exactly_the_expected_composition(tmp_path: Path) -> None:
    frame = read_composition(built(tmp_path))
    assert frame.schema == COMPOSITION_SCHEMA
    rows = frame.select(COLUMNS).rows()
    assert rows == [
        # turn 0: the baseline is the first recorded request less what it read; calibration 1.
        (0, "baseline", None, 10_000, 10_000, 0, 10_000),
        (0, "memory", None, 20, 20, 0, 20),
        (0, "user", None, 100, 100, 0, 100),
        (0, "thinking", None, 10, 10, 0, 10),
        (0, "tool_call", "Read", 6, 6, 0, 6),
        (0, "tool_result", "Read", 200, 200, 0, 200),
        # turn 1: 457 estimated beside the baseline, 914 recorded: calibration 2.
        (1, "baseline", None, 10_000, 0, 0, 10_000),
        (1, "memory", None, 20, 0, 0, 40),
        (1, "user", None, 110, 10, 0, 220),
        (1, "assistant", None, 1, 1, 0, 2),
        (1, "thinking", None, 10, 0, 0, 20),
        (1, "tool_call", "Read", 6, 0, 0, 12),
        (1, "tool_call", "mcp__github", 10, 10, 0, 20),
        (1, "tool_result", "Read", 200, 0, 0, 400),
        (1, "tool_result", "mcp__github", 100, 100, 0, 200),
        # turn 2, after the compaction: the summary and the new prompt; all else dropped; calibration 1.5.
        (2, "baseline", None, 10_000, 0, 0, 10_000),
        (2, "memory", None, 0, 0, 20, 0),
        (2, "summary", None, 50, 50, 0, 75),
        (2, "user", None, 10, 10, 110, 15),
        (2, "assistant", None, 0, 0, 1, 0),
        (2, "thinking", None, 0, 0, 10, 0),
        (2, "tool_call", "Read", 0, 0, 6, 0),
        (2, "tool_call", "mcp__github", 0, 0, 10, 0),
        (2, "tool_result", "Read", 0, 0, 200, 0),
        (2, "tool_result", "mcp__github", 0, 0, 100, 0),
    ]
    turns = frame.group_by("turn_index", maintain_order=True).agg(
        pl.col("tokens").sum(),
        pl.col("occupancy").first(),
        pl.col("calibration").first(),
        pl.col("uncalibrated_error").first(),
        pl.col("compacted").first(),
        pl.col("compactions").first(),
    )
    assert turns.rows() == [
        (0, 10_336, 10_336, 1.0, 0, False, 0),
        (1, 10_914, 10_914, 2.0, -457, False, 0),
        (2, 10_090, 10_090, 1.5, -30, True, 1),
    ]
    assert set(frame["format"]) == {"claude-code"} and set(frame["session_id"]) == {SESSION}


def test_the_remainders_go_to_the_largest_fractions(tmp_path: Path) -> None:
    project = write(
        tmp_path / "p" / f"{SESSION}.jsonl",
        user("a" * 4),  # 1
        assistant([text("b")], message_id="m1", tokens=recorded(1_001)),  # baseline 1,000
        user("c" * 8),  # 2
        assistant([text("d")], message_id="m2", tokens=recorded(1_006)),  # user 3, assistant 1: 6 recorded
    ).parent
    frame = read_composition(project).filter(pl.col("turn_index") == 1)
    # 6 × (3, 1) / 4 = (4.5, 1.5): the floors (4, 1) leave one token, to the first of the tied remainders.
    assert frame.select("category", "estimated_tokens", "tokens").rows() == [
        ("baseline", 1_000, 1_000),
        ("user", 3, 5),
        ("assistant", 1, 1),
    ]
    assert scale_parts([3, 1], 6) == [5, 1] and frame["tokens"].sum() == 1_006


def test_every_real_turn_sums_to_its_recorded_occupancy() -> None:
    real = shared_path("data", "claude", "real")
    frame = read_composition(real)
    assert frame.height > 100
    per_turn = (
        frame.filter(pl.col("occupancy").is_not_null())
        .group_by("source_file", "turn_index")
        .agg(pl.col("tokens").sum(), pl.col("occupancy").first())
    )
    assert per_turn.height >= 30
    assert per_turn.filter(pl.col("tokens") != pl.col("occupancy")).height == 0
    # The last recorded turn of each session's main transcript is the sessions frame's occupancy.
    last = (
        frame.filter(pl.col("occupancy").is_not_null())
        .group_by("session_id")
        .agg(pl.col("occupancy").sort_by("turn_index").last())
    )
    sessions = read_sessions(real).select("session_id", "last_occupancy")
    joined = last.join(sessions, on="session_id")
    assert joined.height == last.height and (joined["occupancy"] == joined["last_occupancy"]).all()
