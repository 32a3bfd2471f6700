"""The lean decoder behind ``sessions``: same summaries and problems as the full decoder, and a
per-block token count that agrees with the shared estimator."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cc_analytics.frames import read_events, read_turns
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import (
    Decoded,
    decode_files,
    parse_timestamp,
    parse_timestamps,
)
from cc_analytics.frames.claude.decode_lean import decode_summary_files
from cc_analytics.frames.claude.discovery import TranscriptFile, discover
from cc_analytics.frames.claude.sessions import KEY, summarize
from cc_analytics.frames.claude.turns import prepare
from cc_analytics.frames.estimate import estimate_tokens, text_tokens
from tests.conftest import shared_path

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


def summary_via(decoder: Callable[[Sequence[TranscriptFile]], Decoded], files: list[TranscriptFile]) -> pl.DataFrame:
    decoded = decoder(files)
    events, blocks = prepare(decoded)
    blocks = blocks.join(events.select(S.ROW, KEY, S.IS_SUBAGENT_FILE), on=S.ROW, how="left")
    events_df, blocks_df = pl.collect_all([events, blocks])
    return summarize(events_df, blocks_df, files)


def assert_same_as_full_decoder(files: list[TranscriptFile]) -> None:
    # Floats within an ulp: Polars' float division here may differ in the last bit run to run.
    assert_frame_equal(summary_via(decode_summary_files, files), summary_via(decode_files, files))
    assert decode_summary_files(files).problems.equals(decode_files(files).problems)


def test_lean_equals_full_on_awkward_input(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-demo"
    good = json.dumps(user("fine"), separators=(",", ":")).encode()
    write(
        project / f"{SESSION}.jsonl",
        {"type": "summary", "summary": "resumed", "leafUuid": "x"},
        user("hello 你好 😀", uuid="u1", cwd="/work/demo", version="2.0.1"),
        assistant([thinking("hmm"), text("hi → there"), tool_use("t1", "Bash", {"command": "ls 中"})], uuid="a1"),
        assistant([text("split")], tokens=usage(1, 2, 3, 4), uuid="a2", version="2.0.2"),
        tool_result("t1", [{"type": "text", "text": "out\u9fa6"}, {"type": "image"}], uuid="r1"),
        tool_result("t2", {"not": "text"}, uuid="r2"),
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
    assert_same_as_full_decoder(discover([tmp_path / "projects"]))


@pytest.mark.parametrize("part", ["real", "synthetic"])
def test_lean_equals_full_on_the_shared_transcripts(part: str) -> None:
    files = discover([shared_path("data", "claude", part)])
    assert files
    assert_same_as_full_decoder(files)


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
