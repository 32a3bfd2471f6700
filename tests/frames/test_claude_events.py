"""Claude Code events frame: explicit schema, field extraction, and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.claude import read_events, read_problems, scan_events, scan_problems
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.discovery import TranscriptFile

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


def one_file(tmp_path: Path, *lines: object) -> Path:
    return write(tmp_path / f"{SESSION}.jsonl", *lines)  # type: ignore[arg-type]


def test_schema_is_explicit_and_fields_are_extracted(tmp_path: Path) -> None:
    path = one_file(
        tmp_path,
        {"type": "permission-mode", "permissionMode": "default", "sessionId": SESSION},
        user("Fix add()", uuid="u1"),
        assistant(
            [thinking("hmm"), text("Looking."), tool_use("tu1", "Edit", {"file_path": "a.py"})],
            uuid="a1",
            message_id="msg_1",
            request_id="req_1",
            tokens=usage(1, 2, 3, 4),
        ),
        tool_result("tu1", [{"type": "text", "text": "ok"}, {"type": "image"}], is_error=True, uuid="r1"),
        compact_boundary(150_000, uuid="c1"),
        envelope("attachment", uuid="q1", attachment={"type": "queued_command", "prompt": "later"}),
    )
    lazy = scan_events(path)
    assert lazy.collect_schema() == S.EVENTS_SCHEMA
    events = lazy.collect()
    assert events.schema == S.EVENTS_SCHEMA
    assert events[S.TYPE].to_list() == [
        "permission-mode",
        "user",
        "assistant",
        "user",
        "system",
        "attachment",
    ]
    assert events[S.LINE].to_list() == [1, 2, 3, 4, 5, 6]
    a1 = events.row(2, named=True)
    assert (a1[S.MODEL], a1[S.MESSAGE_ID], a1[S.REQUEST_ID]) == (
        "claude-opus-4-5",
        "msg_1",
        "req_1",
    )
    assert (
        a1[S.INPUT_TOKENS],
        a1[S.CACHE_CREATION_TOKENS],
        a1[S.CACHE_READ_TOKENS],
        a1[S.OUTPUT_TOKENS],
    ) == (1, 2, 3, 4)
    assert (a1[S.ASSISTANT_TEXT], a1[S.THINKING_CHARS]) == ("Looking.", 3)
    assert (a1[S.TOOL_USE_NAMES], a1[S.TOOL_USE_IDS], a1[S.TOOL_USE_INPUTS]) == (
        ["Edit"],
        ["tu1"],
        ['{"file_path":"a.py"}'],
    )
    r1 = events.row(3, named=True)
    assert (
        r1[S.TOOL_RESULT_IDS],
        r1[S.TOOL_RESULT_ERRORS],
        r1[S.IS_ERROR],
        r1[S.TOOL_RESULT_TEXT],
    ) == (["tu1"], [True], True, "ok")
    assert r1[S.PROMPT_TEXT] is None
    c1 = events.row(4, named=True)
    assert (c1[S.SUBTYPE], c1[S.COMPACT_TRIGGER], c1[S.COMPACT_PRE_TOKENS]) == (
        "compact_boundary",
        "auto",
        150_000,
    )
    assert events[S.TIMESTAMP].dtype == pl.Datetime("us", "UTC")
    assert events[S.HAS_ENVELOPE].to_list() == [False, True, True, True, True, True]
    assert events.row(5, named=True)[S.ATTACHMENT_TYPE] == "queued_command"
    assert read_problems(path).is_empty()


def test_lazy_projection_filter_and_eager_agree(tmp_path: Path) -> None:
    path = one_file(tmp_path, user("a"), assistant([text("b")]), user("c"))
    eager = read_events(path)
    lazy = scan_events(path).filter(pl.col(S.TYPE) == "user").select(S.LINE, S.PROMPT_TEXT).collect()
    assert lazy.rows() == [(1, "a"), (3, "c")]
    assert eager.filter(pl.col(S.TYPE) == "user").select(S.LINE, S.PROMPT_TEXT).equals(lazy)
    assert scan_events(path).head(2).collect().height == 2


GOOD = json.dumps(user("fine"), separators=(",", ":")).encode()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (GOOD[:-7], "invalid JSON"),
        (b'{"type":"user","x":"\xff\xfe"}', "invalid JSON"),
        (b"\xef\xbb\xbf" + GOOD, "byte-order mark"),
        (b"[1, 2]", "not a JSON object (array)"),
        (b"42", "not a JSON object (number)"),
        (b'"text"', "not a JSON object (string)"),
        (b"null", "not a JSON object (null)"),
        (b'{"type":"user","uuid":"u","sessionId":"s","timestamp":NaN}', "invalid JSON"),
        (
            b'{"type":"user","uuid":"\\ud800","sessionId":"s","timestamp":"2026-03-01T10:00:00Z"}',
            "invalid JSON",
        ),
        (b'{"uuid":"no type"}', "missing or non-string 'type'"),
        (b'{"type":5}', "missing or non-string 'type'"),
        (json.dumps({**user("x"), "uuid": None}).encode(), "without string uuid"),
        (json.dumps({**user("x"), "timestamp": 5}).encode(), "without string timestamp"),
        (json.dumps({**user("x"), "timestamp": "0000-01-01T00:00:00Z"}).encode(), "year-0"),
    ],
)
def test_a_bad_line_costs_only_itself(tmp_path: Path, bad: bytes, reason: str) -> None:
    path = one_file(tmp_path, user("before", uuid="u0"), bad, user("after", uuid="u2"))
    events = read_events(path)
    assert events[S.UUID].to_list() == ["u0", "u2"]
    found = read_problems(path)
    assert found.rows() == [(str(path), 2, found[S.REASON][0])]
    assert reason in found[S.REASON][0]


def test_fields_of_the_wrong_type_are_nulled_and_reported(tmp_path: Path) -> None:
    wrong_usage = assistant([text("x")], tokens={**usage(), "output_tokens": "5"}, uuid="a1")
    usage_not_object = assistant([text("y")], tokens=True, uuid="a2")  # type: ignore[arg-type]
    bad_content = envelope("user", uuid="u3", message={"role": "user", "content": 5})
    bad_result = tool_result("t", {"not": "text"}, uuid="u4")
    unknown = {"type": "custom-title", "customTitle": "x", "sessionId": SESSION}
    no_message = envelope("assistant", uuid="a5")
    path = one_file(tmp_path, wrong_usage, usage_not_object, bad_content, bad_result, unknown, no_message)
    events = read_events(path)
    assert events[S.TYPE].to_list() == [
        "assistant",
        "assistant",
        "user",
        "user",
        "custom-title",
        "assistant",
    ]
    assert events[S.OUTPUT_TOKENS].to_list()[:2] == [None, None]
    assert events[S.INPUT_TOKENS].to_list()[:2] == [10, None]
    reasons = read_problems(path)[S.REASON].to_list()
    assert any("usage.output_tokens" in r for r in reasons)
    assert any("usage is not an object" in r for r in reasons)
    assert any("neither a string nor a list" in r for r in reasons)
    assert any("assistant line without a message" in r for r in reasons)


def test_truncated_last_line_crlf_blank_lines_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(GOOD + b"\r\n   \n\n" + GOOD[:40])
    assert read_events(path).height == 1
    assert read_problems(path).rows() == [(str(path), 4, "truncated last line (the file may still be being written)")]
    empty = tmp_path / "empty" / f"{SESSION}.jsonl"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    assert read_events(empty).is_empty()
    assert read_events(empty).schema == S.EVENTS_SCHEMA
    assert read_problems(empty).is_empty()


def test_ten_megabyte_line(tmp_path: Path) -> None:
    big = "x" * 10_000_000
    path = one_file(tmp_path, user("hi"), tool_result("t1", big, uuid="big"), user("bye"))
    events = read_events(path)
    assert events.height == 3
    assert len(events.filter(pl.col(S.UUID) == "big")[S.TOOL_RESULT_TEXT][0]) == 10_000_000


def test_directory_named_jsonl_and_unreadable_sources(tmp_path: Path) -> None:
    (tmp_path / "weird.jsonl").mkdir()
    good = one_file(tmp_path, user("hi"))
    assert read_events(tmp_path)[S.SOURCE_FILE].to_list() == [str(good)]


def test_duplicate_keys_first_wins_except_tool_input(tmp_path: Path) -> None:
    line = (
        b'{"type":"user","type":"assistant","uuid":"u1","uuid":"u2","sessionId":"s",'
        b'"timestamp":"2026-03-01T10:00:00Z","isMeta":false,"isMeta":true,'
        b'"message":{"role":"user","content":"first"}}'
    )
    call = (
        b'{"type":"assistant","uuid":"a1","sessionId":"s","timestamp":"2026-03-01T10:00:01Z",'
        b'"message":{"model":"m","content":[{"type":"tool_use","id":"t","name":"Bash",'
        b'"input":{"command":"rm -rf x","command":"echo safe"}}]}}'
    )
    path = one_file(tmp_path, line, call)
    events = read_events(path)
    row = events.row(0, named=True)
    assert (row[S.TYPE], row[S.UUID], row[S.IS_META]) == ("user", "u1", False)
    assert events.row(1, named=True)[S.TOOL_USE_INPUTS] == ['{"command":"echo safe"}']


def test_subagent_file_columns(tmp_path: Path) -> None:
    sub = write(
        tmp_path / "proj" / SESSION / "subagents" / "agent-abc.jsonl",
        user("task", isSidechain=True),
        assistant([text("done")], isSidechain=True),
    )
    events = read_events(sub)
    assert events[S.IS_SUBAGENT_FILE].to_list() == [True, True]
    assert events[S.AGENT_ID].to_list() == ["abc", "abc"]
    assert events[S.FILE_SESSION_ID].to_list() == [SESSION, SESSION]


def test_a_file_that_cannot_be_read_is_one_problem_with_a_null_line(tmp_path: Path) -> None:
    good = one_file(tmp_path, user("hi", uuid="u1"))
    gone = TranscriptFile(tmp_path / "gone" / f"{SESSION}.jsonl", SESSION, None, "main", "gone", 10)
    files = [gone, TranscriptFile(good, SESSION, None, "main", tmp_path.name, good.stat().st_size)]
    assert read_events(files)[S.UUID].to_list() == ["u1"]
    found = read_problems(files)
    assert found.schema == S.PROBLEMS_SCHEMA
    assert found.rows() == [(str(gone.path), None, "cannot read file: No such file or directory")]
    assert scan_problems(files).filter(pl.col(S.LINE).is_null()).collect().equals(found)
