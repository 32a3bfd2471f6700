"""ChainlessChain turns: the opener rule, tool calls, the running context and the window per turn."""

from __future__ import annotations

from pathlib import Path

from cc_analytics.frames.chainless import read_turns, scan_turns
from cc_analytics.frames.schema import TURNS_SCHEMA

from .chainless_builders import event, msg, start, usage, write

START = start("gpt-4o", "openai")
WS_TURN = {
    "schemaVersion": 1,
    "requestId": "r-1",
    "outcome": "completed",
    "user": {"role": "user", "content": "over the socket"},
    "assistant": {"role": "assistant", "content": "ok"},
}


def test_a_user_prompt_opens_a_turn(tmp_path: Path) -> None:
    lines = [
        START,
        msg("system", "be brief", "system"),
        msg("user", "first"),
        msg("assistant", "answer", "assistant_message"),
        msg("system", "a user_message event with a system role", "user_message"),
        msg("user", "role decides, not the event type", "assistant_message"),
        event("user_message", {"role": 7, "content": "not replayable"}),
        event("ws_turn", WS_TURN),
        event("compact", {"messages": [{"role": "user", "content": "snapshot"}]}),
    ]
    turns = read_turns(write(tmp_path, "s", lines))
    assert turns.schema == TURNS_SCHEMA
    assert turns.select("turn_index", "role", "prompt").rows() == [
        (0, "assistant", None),
        (1, "user", "first"),
        (2, "user", "role decides, not the event type"),
        (3, "user", "over the socket"),
    ]
    assert turns["compacted"].to_list() == [False, False, False, True]
    assert turns["format"].unique().to_list() == ["chainlesschain"]
    assert turns["event_uuids"].null_count() == 4


def test_first_line_opener_is_turn_zero(tmp_path: Path) -> None:
    turns = read_turns(write(tmp_path, "s", [msg("user", "hi"), msg("assistant", "yo", "assistant_message")]))
    assert turns.select("turn_index", "role", "estimated_tokens").rows() == [(0, "user", 2)]


def test_tool_calls_times_and_running_context(tmp_path: Path) -> None:
    lines = [
        START,
        msg("user", "read it", ts=1767225601000),
        event("tool_call", {"tool": "read_file", "args": {"path": "a.py"}}, 1767225602000),
        event("tool_result", {"tool": "read_file", "result": "x" * 400}, 1767225603000),
        event("tool_call", {"id": "t2", "tool": "grep", "is_error": True}, 1767225604000),
        msg("assistant", "x" * 8, "assistant_message", ts=1767225605500),
        msg("user", "y" * 4, ts=1767225606000),
        event("compact", {"trigger": "manual", "messages": [{"role": "system", "content": "z" * 12}]}),
        msg("user", "w" * 4, ts=1767225609000),
    ]
    turns = read_turns(write(tmp_path, "s", lines))
    first = turns.row(1, named=True)
    assert (first["tool_calls"], first["tool_names"], first["tool_errors"]) == (2, ["read_file", "grep"], 1)
    assert (first["start_time"].second, first["end_time"].second, first["end_time"].microsecond) == (1, 5, 500000)
    # running context: 2 (read it) + 2 (8 x) = 4; then + 1 = 5; the compact leaves 3, + 1 = 4
    assert turns["estimated_context"].to_list() == [0, 4, 3, 4]
    assert turns["estimated_tokens"].to_list() == [0, 4, 4, 1]
    assert turns["occupancy"].to_list() == turns["estimated_context"].to_list()
    assert turns["used_fraction"].to_list()[1] == 4 / 128000


def test_window_follows_the_main_record_in_force(tmp_path: Path) -> None:
    lines = [
        START,
        msg("user", "a"),
        usage(100000),
        msg("user", "b"),
        usage(200000, source="subagent"),
        msg("user", "c"),
        usage("invalid"),
    ]
    turns = scan_turns(write(tmp_path, "s", lines)).collect()
    assert turns["window"].to_list() == [128000, 100000, 100000, 128000]
    assert turns["model"].to_list() == ["gpt-4o"] * 4
    assert turns["headroom"].to_list()[1] == 100000 - 1
