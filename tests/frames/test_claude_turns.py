"""Turns frame: the reference's turn partition on every readable transcript, plus the rules."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.claude import read_turns, scan_turns
from cc_analytics.frames.claude import schema as S
from tests.conftest import shared_path

from .claude_builders import (
    SESSION,
    assistant,
    compact_boundary,
    envelope,
    text,
    tool_result,
    tool_use,
    usage,
    user,
    write,
)


def golden_cases() -> list[tuple[str, Path]]:
    base = shared_path("data", "claude")
    cases = []
    for golden in sorted((base / "expected").glob("*.golden.jsonl")):
        if golden.name.endswith(".batch.golden.jsonl"):
            continue
        cases.append((golden.name, golden))
    return cases


def transcript_of(golden: Path, name: str) -> Path:
    base = golden.parent.parent
    for folder in ("real", "synthetic"):
        if (base / folder / name).exists():
            return base / folder / name
    pytest.skip(f"transcript {name} of {golden.name} is absent")


def refs(turn: dict) -> list[str]:
    return [ref["event_uuid"] for ref in turn["refs"]]


def test_turn_partition_matches_the_reference_goldens() -> None:
    checked = matched = 0
    failures: list[str] = []
    for name, golden in golden_cases():
        records = [json.loads(line) for line in golden.read_bytes().split(b"\n") if line.strip()]
        windows = [r for r in records if r["window"] is not None]
        if not windows:
            continue  # the reference could not read this transcript
        checked += 1
        turns = read_turns(transcript_of(golden, records[0]["transcript"]))
        ours = [list(uuids) for uuids in turns[S.EVENT_UUIDS].to_list()]
        assert turns[S.TURN_INDEX].to_list() == list(range(len(ours)))
        problems = []
        for record in windows:
            window = json.loads(record["window"])
            params = record["params"]
            anchor = record["anchor"]["event_uuid"]
            t = next((i for i, uuids in enumerate(ours) if anchor in uuids), None)
            if t is None or refs(window["trigger"]) != ours[t]:
                problems.append(f"trigger of {anchor}")
                continue
            before = [refs(turn) for turn in window["before"]]
            after = [refs(turn) for turn in window["after"]]
            if before != ours[t - len(before) : t] or (len(before) < params["before"] and t != len(before)):
                problems.append(f"before of {anchor}")
            end = t + 1 + len(after)
            if after != ours[t + 1 : end] or (len(after) < params["after"] and end != len(ours)):
                problems.append(f"after of {anchor}")
            roles = [turn["role"] for turn in window["before"]] + [window["trigger"]["role"]]
            assert roles == turns[S.ROLE].to_list()[t - len(before) : t + 1], name
        if problems:
            failures.append(f"{name}: {problems[:3]}")
        else:
            matched += 1
    assert checked >= 60
    assert not failures, failures
    assert matched == checked


def test_turn_rules(tmp_path: Path) -> None:
    lines = [
        {"type": "summary", "summary": "title", "leafUuid": "x"},
        user("first", uuid="u1"),
        assistant(
            [text("ok"), tool_use("t1", "Bash", {"command": "ls"})],
            uuid="a1",
            tokens=usage(1, 1, 98),
        ),
        tool_result("t1", "files", uuid="r1"),
        user("<local-command-caveat>", uuid="m1", isMeta=True),
        user("[Request interrupted by user]", uuid="i1"),
        user("real but interrupted", uuid="i2", interruptedMessageId="msg_x"),
        user("   ", uuid="b1"),
        user("<teammate-message from=x>", uuid="j1"),
        user("sidechain", uuid="s1", isSidechain=True),
        compact_boundary(150_000, uuid="c1"),
        user("summary of before", uuid="cs", isCompactSummary=True),
        user([text("second"), {"type": "image"}], uuid="u2"),
        assistant([text("done")], uuid="a2", tokens=usage(1, 1, 48)),
    ]
    path = write(tmp_path / f"{SESSION}.jsonl", *lines)
    turns = read_turns(path)
    assert turns.schema == S.TURNS_SCHEMA
    assert turns[S.ROLE].to_list() == ["assistant", "user", "user"]
    assert turns[S.EVENT_UUIDS].to_list() == [
        [],
        ["u1", "a1", "r1", "m1", "i1", "i2", "b1", "j1", "s1", "c1", "cs"],
        ["u2", "a2"],
    ]
    assert turns[S.PROMPT].to_list() == [None, "first", "second"]
    assert turns[S.TOOL_CALLS].to_list() == [0, 1, 0]
    assert turns[S.TOOL_NAMES].to_list() == [[], ["Bash"], []]
    assert turns[S.OCCUPANCY].to_list() == [None, 100, 50]
    assert turns[S.COMPACTED].to_list() == [False, True, False]
    assert turns[S.WINDOW].to_list() == [200_000] * 3
    assert turns[S.AUTOCOMPACT_THRESHOLD].to_list() == [167_000] * 3
    assert turns[S.USED_FRACTION].to_list()[1] == pytest.approx(100 / 200_000)
    # After the compaction only the summary and the new turn count as context.
    second = turns.row(2, named=True)
    assert second[S.ESTIMATED_CONTEXT] < turns[S.ESTIMATED_TOKENS].sum()
    assert second[S.CALIBRATION] == pytest.approx(50 / second[S.ESTIMATED_CONTEXT])


def test_subagent_file_is_one_assistant_turn(tmp_path: Path) -> None:
    sub = write(
        tmp_path / "p" / SESSION / "subagents" / "agent-z.jsonl",
        user("do it", isSidechain=True, uuid="s1"),
        assistant([text("done")], isSidechain=True, uuid="s2", tokens=usage(5, 5, 5)),
    )
    turns = read_turns(sub)
    assert turns.select(S.TURN_INDEX, S.ROLE, S.EVENT_UUIDS, S.OCCUPANCY, S.AGENT_ID).rows() == [
        (0, "assistant", ["s1", "s2"], 15, "z")
    ]


def test_lazy_equals_eager_and_filters(tmp_path: Path) -> None:
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        user("a"),
        assistant([text("b")]),
        user("c"),
        envelope("attachment"),
    )
    eager = read_turns(path)
    lazy = scan_turns(path).filter(pl.col(S.ROLE) == "user").collect()
    assert lazy.equals(eager.filter(pl.col(S.ROLE) == "user"))
