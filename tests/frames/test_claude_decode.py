"""The one Claude Code line walker: every profile applies the same rules, and the frames built
from the measured profiles equal those built from the events profile (and pinned values).

Regenerate the pinned frames of ``data-samples/`` (and review the diff) with
``python -m tests.frames.test_claude_decode --pin``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cc_analytics.frames.claude import read_events, read_problems, read_sessions, read_turns
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import (
    EVENTS,
    PRICING_COLUMNS,
    SESSIONS,
    TURNS,
    Profile,
    decode_files,
    parse_timestamp,
    parse_timestamps,
)
from cc_analytics.frames.claude.discovery import TranscriptFile, discover
from cc_analytics.frames.claude.sessions import prepared, summarize
from cc_analytics.frames.claude.tables import iter_tables, tables_batch
from cc_analytics.frames.claude.turns import turns_of
from cc_analytics.frames.estimate import estimate_tokens, text_tokens
from tests.conftest import ROOT, shared_path

from .claude_builders import (
    SESSION,
    assistant,
    compact_boundary,
    envelope,
    text,
    thinking,
    tool_result,
    tool_use,
    usage,
    user,
    write,
)

SAMPLES = ROOT / "data-samples" / "claude"
PINNED = Path(__file__).with_name("pinned")
PINNED_SESSIONS = PINNED / "claude-samples-sessions.ndjson"
PINNED_TURNS = PINNED / "claude-samples-turns.ndjson"
# sha256 of the events frame of data-samples/claude as NDJSON (relative paths, by file and line).
PINNED_EVENTS_SHA256 = "df3dc3c503df08d239b36247155c7122d4d56556e01c36abc93e40787e6f6ff7"

# Characters around every boundary the estimate cares about: ASCII, Latin-1, the BMP below,
# inside and above the CJK range U+4E00-U+9FA5 (high byte 0x9F on both sides of U+9FA5),
# and astral characters (two UTF-16 units).
EDGES = "aZ ~\n\té→─\u4dff\u4e00\u4e01中文\u9eff\u9f00\u9fa5\u9fa6\u9fff\ua000\uff01😀\U00010000\U0010ffff"


def estimated(texts: list[str]) -> list[int]:
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    return frame.select(estimate_tokens(pl.col("t"))).to_series().to_list()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(EDGES) | st.characters(codec="utf-8"), max_size=60), max_size=20))
def test_text_tokens_agrees_with_the_estimator(texts: list[str]) -> None:
    expected = estimated(texts)
    for value, want in zip(texts, expected, strict=True):
        got = text_tokens(value)
        if got is None:  # left to the estimator: only text holding U+9FA6-U+9FFF
            assert any("\u9fa6" <= char <= "\u9fff" for char in value)
        else:
            assert got == want, value


def test_text_tokens_edges() -> None:
    cases = [
        "",
        "abc",
        "abcd",
        "abcde",
        "é",
        "中",
        "中文",
        "\u9fa5",
        "😀",
        "a😀中→",
        EDGES.replace("\u9fa6", "").replace("\u9fff", ""),
    ]
    cases += ["中" * 1000 + "x" * 3, "→" * 7, "\u4dff" * 5, "\u9f00" * 3]
    assert [text_tokens(c) for c in cases] == estimated(cases)
    assert text_tokens("\u9fa6") is None


def summary_via(profile: Profile, files: list[TranscriptFile]) -> pl.DataFrame:
    return summarize(*prepared(decode_files(files, profile)), files)


def assert_profiles_agree(files: list[TranscriptFile]) -> None:
    """Sessions, turns and problems from the measured profiles equal those from the events profile."""
    full = decode_files(files, EVENTS)
    # Floats within an ulp: Polars' float division here may differ in the last bit run to run.
    assert_frame_equal(summary_via(SESSIONS, files), summary_via(EVENTS, files))
    assert_frame_equal(summary_via(TURNS, files), summary_via(EVENTS, files))
    assert_frame_equal(turns_of(decode_files(files, TURNS), files), turns_of(full, files))
    for profile in (SESSIONS, TURNS):
        assert decode_files(files, profile).problems.equals(full.problems)
    tables = tables_batch(files)
    assert_frame_equal(tables.sessions, summary_via(EVENTS, files))
    assert_frame_equal(tables.turns, turns_of(full, files))
    assert tables.problems.equals(full.problems)


def awkward_session(root: Path) -> Path:
    project = root / "projects" / "-work-demo"
    good = json.dumps(user("fine"), separators=(",", ":")).encode()
    write(
        project / f"{SESSION}.jsonl",
        {"type": "summary", "summary": "resumed", "leafUuid": "x"},
        user("hello 你好 😀", uuid="u1", cwd="/work/demo", version="2.0.1"),
        assistant([thinking("hmm"), text("hi → there"), tool_use("t1", "Bash", {"command": "ls 中"})], uuid="a1"),
        assistant([text("split")], tokens=usage(1, 2, 3, 4), uuid="a2", version="2.0.2"),
        tool_result("t1", [{"type": "text", "text": "out\u9fa6"}, {"type": "image"}], uuid="r1"),
        tool_result("t2", {"not": "text"}, uuid="r2", is_error=True),
        user("", uuid="u2", version="2.0.1"),
        user("[Request interrupted by user]", uuid="u3"),
        envelope("user", uuid="u4", isMeta=True, message={"role": "user", "content": "<meta>"}),
        envelope("system", uuid="s1", subtype="informational", content="note"),
        envelope("system", uuid="s2", subtype="api_error", content="oops"),
        compact_boundary(170_000, uuid="c1"),
        envelope("user", uuid="u5", isCompactSummary=True, message={"role": "user", "content": "summary"}),
        envelope("attachment", uuid="t1a", attachment={"type": "queued_command", "prompt": "next"}),
        assistant([text("x")], tokens={**usage(), "output_tokens": "5"}, uuid="a3"),
        assistant([text("y")], tokens=True, uuid="a4"),  # type: ignore[arg-type]
        assistant(["not a block", {"type": "text"}, {"type": "thinking"}], uuid="a5"),
        assistant([text("err")], model="<synthetic>", uuid="a6"),
        envelope("assistant", uuid="a7"),
        envelope("user", uuid="u6", message={"role": "user", "content": 5}),
        {**user("late"), "timestamp": "not a time"},
        {**user("x"), "uuid": None},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
        b'{"type":"user","type":"assistant","uuid":"d1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        b'"isMeta":false,"isMeta":true,"message":{"role":"user","content":"first"}}',
        b'{"type":"assistant","uuid":"n1","sessionId":"s","timestamp":"2026-03-01T10:00:02Z","message":'
        b'{"model":"m","content":[{"type":"tool_use","id":"t","name":"Big","input":{"x":1e400}}]}}',
        b'{"type":"assistant","uuid":"n2","sessionId":"s","timestamp":"2026-03-01T10:00:03Z","message":'
        b'{"model":"m","content":[{"type":"tool_use","id":"t","name":"Big","input":{"x":1e400,"y":123456789012345678901234567890}}]}}',
        b"[1, 2]",
        b'{"type":5}',
        b"\xef\xbb\xbf" + good,
        good[:-7],
    )
    write(
        project / SESSION / "subagents" / "agent-abc.jsonl",
        user("task", uuid="su1", isSidechain=True, agentId="abc", cwd="/work/sub"),
        assistant([text("done")], uuid="sa1", isSidechain=True, agentId="abc", model="claude-haiku-4-5"),
    )
    return root / "projects"


# What the two decoders before the one walker reported for ``awkward_session`` (line, reason).
AWKWARD_PROBLEMS = [
    (6, "tool_result content is neither a string nor a list"),
    (15, "usage.output_tokens is not an integer ('5')"),
    (16, "usage is not an object (boolean)"),
    (17, "assistant content block is not an object"),
    (17, "text block without string 'text'"),
    (17, "thinking block without string 'thinking'"),
    (19, "assistant line without a message object"),
    (20, "user message content is neither a string nor a list"),
    (22, "user line without string uuid"),
    # Line 26 (1e400 and an integer beyond 64 bits) was a problem, for orjson's reason; it is
    # strict JSON, which the JSON line policy reads (the reference reads it too).
    (27, "not a JSON object (array)"),
    (28, "missing or non-string 'type'"),
    (29, "line starts with a UTF-8 byte-order mark"),
    (30, "invalid JSON: unexpected end of data"),
    (21, "invalid or out-of-range timestamp (line kept, time unknown)"),
]


def test_profiles_agree_on_awkward_input(tmp_path: Path) -> None:
    files = discover([awkward_session(tmp_path)])
    assert_profiles_agree(files)
    problems = decode_files(files, SESSIONS).problems
    assert problems.select(S.LINE, S.REASON).rows() == AWKWARD_PROBLEMS


@pytest.mark.parametrize("part", ["real", "synthetic"])
def test_profiles_agree_on_the_shared_transcripts(part: str) -> None:
    files = discover([shared_path("data", "claude", part)])
    assert files
    assert_profiles_agree(files)


def test_profiles_agree_on_the_samples() -> None:
    assert_profiles_agree(discover([SAMPLES]))


def test_profile_columns() -> None:
    per_file = {S.SOURCE_FILE, S.FILE_SESSION_ID, S.IS_SUBAGENT_FILE}
    assert set(EVENTS.columns) | per_file | set(PRICING_COLUMNS) == set(S.EVENT_SCALARS)
    assert set(SESSIONS.columns) < set(TURNS.columns) < set(EVENTS.columns)
    assert {S.UUID, S.SESSION_ID, S.AGENT_ID} <= set(TURNS.columns)


def relative(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col(S.SOURCE_FILE).str.strip_prefix(f"{ROOT}/"))


def sample_frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    sessions = read_sessions(SAMPLES)
    turns = relative(read_turns(SAMPLES)).sort(S.SOURCE_FILE, S.TURN_INDEX)
    events = relative(read_events(SAMPLES)).sort(S.SOURCE_FILE, S.LINE)
    return sessions.sort(S.SESSION_ID), turns, events


def test_frames_of_the_samples_equal_the_pinned_values() -> None:
    sessions, turns, events = sample_frames()
    assert_frame_equal(sessions, pl.read_ndjson(PINNED_SESSIONS, schema=S.SESSIONS_SCHEMA))
    assert_frame_equal(turns, pl.read_ndjson(PINNED_TURNS, schema=S.TURNS_SCHEMA))
    assert hashlib.sha256(events.write_ndjson().encode()).hexdigest() == PINNED_EVENTS_SHA256
    assert read_problems(SAMPLES).is_empty()


def test_one_decode_gives_what_the_verbs_give() -> None:
    parts = list(iter_tables(SAMPLES))
    sessions = pl.concat([t.sessions for t in parts]).sort(S.SESSION_ID)
    turns = pl.concat([t.turns for t in parts])
    assert_frame_equal(sessions, read_sessions(SAMPLES))
    assert_frame_equal(turns, read_turns(SAMPLES))
    lean = list(iter_tables(SAMPLES, turns=False))
    assert all(t.turns.is_empty() and t.turns.schema == S.TURNS_SCHEMA for t in lean)
    assert_frame_equal(pl.concat([t.sessions for t in lean]).sort(S.SESSION_ID), sessions)


def test_turn_tool_names_follow_line_order() -> None:
    """Blocks keep line order through the join in ``prepare`` (tool names in call order)."""
    source = shared_path("data", "claude", "real")
    by_turns: dict[str, list[str]] = {}
    for path, names in read_turns(source).sort(S.SOURCE_FILE, S.TURN_INDEX).select(S.SOURCE_FILE, S.TOOL_NAMES).rows():
        by_turns.setdefault(path, []).extend(names)
    by_lines: dict[str, list[str]] = {}
    events = read_events(source).sort(S.SOURCE_FILE, S.LINE).select(S.SOURCE_FILE, S.TOOL_USE_NAMES)
    for path, names in events.rows():
        by_lines.setdefault(path, []).extend(names or [])
    assert by_turns == by_lines


STAMPS = [
    "2026-03-01T10:00:00.123Z",
    "2026-03-01T10:00:00Z",
    "2026-03-01T10:00:00.1Z",
    "2026-03-01T10:00:00.123456789Z",
    "2026-03-01T10:00:00.1234567891Z",
    "2026-03-01T10:00:00.123z",
    "2026-03-01t10:00:00.123Z",
    "2026-03-01 10:00:00.123Z",
    "2026-03-01T10:00:00.123+02:00",
    "2026-03-01T10:00:00.123-00:30",
    "2026-3-1T10:00:00Z",
    " 2026-03-01T10:00:00Z",
    "2026-03-01T10:00:00Z ",
    "2026-03-01T10:00:00.123ZZ",
    "2026-03-01T25:00:00Z",
    "2026-02-30T10:00:00Z",
    "0000-01-01T00:00:00Z",
    "0001-01-01T00:30:00+01:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999Z",
    "not a time",
    "",
    None,
]


@pytest.mark.parametrize("stamps", [STAMPS, STAMPS[:1] * 3, [None, None]])
def test_timestamp_fast_path_equals_the_general_parse(stamps: list[str | None]) -> None:
    raw = pl.Series(S.TIMESTAMP, stamps, dtype=pl.String)
    general = raw.to_frame().select(parse_timestamp(pl.col(S.TIMESTAMP))).to_series()
    assert parse_timestamps(raw).equals(general)


def pin() -> None:
    sessions, turns, events = sample_frames()
    PINNED.mkdir(exist_ok=True)
    sessions.write_ndjson(PINNED_SESSIONS)
    turns.write_ndjson(PINNED_TURNS)
    print("PINNED_EVENTS_SHA256 =", hashlib.sha256(events.write_ndjson().encode()).hexdigest())


if __name__ == "__main__" and sys.argv[1:] == ["--pin"]:
    pin()
