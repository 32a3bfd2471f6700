"""Hostile transcript lines: deep nesting, long integers, shadowed lone surrogates.

Expected digests and outcomes were taken from the reference library (cc-transcript 14.45.3)
with the oracle harness; the reference reads every line here except the one nested past
its stack (docs/core-differences.md).
"""

from __future__ import annotations

import json
import warnings

import pytest

from cc_analytics.cli import main
from cc_analytics.core import DigestError, EventRef, TranscriptWarning, capture_window
from cc_analytics.core.jsontext import MAX_DEPTH, MISSING, TOO_DEEP, LongInt, compact_json, decode_line
from tests.golden.builders import Obj, Raw, assistant, jsonl, tool_use, user

LONG = "9" * 5000


def _capture(raw: bytes, uuid: str, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranscriptWarning)  # none of these lines may warn
        return capture_window(raw, EventRef("S", uuid), **kwargs)


@pytest.mark.parametrize(
    ("tool_input", "digest"),
    [
        ("[" * 3000 + "]" * 3000, "1030a4e27c6f1da1efea8c911a4bd679df4872bcbaaab4b2bbd86eece6dc88dc"),
        ('{"k":' * 3000 + '"v"' + "}" * 3000, "5584f8bcbbaf2541691510055164404e7ff057cd9104f8d122e567f77b8bf788"),
        (
            '{"a":[' * 2500 + '"\\u00e9\\ud83d\\ude00", 1.5e300, -0.0, {"z":1,"Z":2}' + "]}" * 2500,
            "93f94405e70eb46ddbb00946d18fe5e05ef10dcae581557efe56eceab748086c",
        ),
    ],
)
def test_deeply_nested_tool_input_is_read_and_digested_like_the_reference(tool_input, digest):
    raw = jsonl([user("u1", 0, "hi"), assistant("a1", 1, [tool_use("t1", "X", Raw(tool_input))])])
    for strict in (False, True):
        window = _capture(raw, "a1", strict=strict)
        assert window.trigger.tool_digests == (digest,)
        assert window.trigger.preview.startswith("user: hi\nX(" + tool_input[:20])


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 3000,  # the line: not JSON, skipped silently as the reference does
        b"[" * 3000 + b"]" * 3000,  # JSON but not an object
        b"[" * 3000 + b"]" * 3000 + b"x",
        b'{"type":"summary","x":' + b"[" * 3000 + b"NaN" + b"]" * 3000 + b"}",
        b'{"type":"summary","x":' + b"[" * 3000 + b'"\\ud800"' + b"]" * 3000 + b"}",
    ],
)
def test_deep_lines_that_are_not_events_are_skipped_silently(line):
    raw = jsonl([user("u1", 0, "hi"), line, user("u2", 2, "yo")])
    assert _capture(raw, "u2").render_preview() == "user: hi\n\nuser: yo"


def test_a_line_nested_beyond_max_depth_is_skipped_with_a_warning():
    deep = b'{"type":"user","x":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"
    assert decode_line(deep) is TOO_DEEP and decode_line(deep[:-1].replace(b"[", b"", 1)) is not TOO_DEEP
    raw = jsonl([user("u1", 0, "hi"), deep, user("u2", 2, "yo")])
    with pytest.warns(TranscriptWarning, match=rf"^t\.jsonl:2: ValueError: JSON nested more than {MAX_DEPTH} levels"):
        window = capture_window(raw, EventRef("S", "u2"), source="t.jsonl")
    assert window.render_preview() == "user: hi\n\nuser: yo"
    with pytest.raises(ValueError, match="nested more than"):
        capture_window(raw, EventRef("S", "u2"), strict=True)


def test_integers_beyond_the_digit_limit_are_read():
    raw = jsonl([user("u1", 0, "hi"), user("u2", 1, "yo", n=Raw(LONG), isMeta=Raw("-" + LONG))])
    window = _capture(raw, "u2")
    assert [r.event_uuid for r in window.trigger.refs] == ["u1", "u2"]  # u2 is meta: it joins u1's turn
    value = decode_line(b'{"n":' + LONG.encode() + b"}")
    assert value == {"n": LongInt(LONG)} and compact_json(value) == '{"n":' + LONG + "}"


def test_a_long_integer_in_a_tool_input_digests_leniently_and_fails_strictly():
    raw = jsonl([user("u1", 0, "hi"), assistant("a1", 1, [tool_use("t1", "X", Raw('{"n":' + LONG + "}"))])])
    with pytest.warns(TranscriptWarning, match="integer exceeds IEEE-754 double precision: 9999"):
        window = capture_window(raw, EventRef("S", "a1"))
    assert window.trigger.preview == 'user: hi\nX({"n":' + "9" * 195 + "…(+4806ch))"
    with pytest.raises(DigestError) as info:
        capture_window(raw, EventRef("S", "a1"), strict=True)
    assert str(info.value) == f'tool input digests: "integer exceeds IEEE-754 double precision: {LONG}"'


def test_result_content_of_a_long_integer_is_reported_as_float_as_the_reference_does():
    result = user("r1", 1, [{"type": "tool_result", "tool_use_id": "t1", "content": Raw(LONG)}])
    with pytest.raises(ValueError, match="^unexpected result content shape: float$"):
        capture_window(jsonl([user("u1", 0, "hi"), result]), EventRef("S", "u1"), strict=True)


@pytest.mark.parametrize(
    "extra",
    [
        Obj([("x", "\ud800"), ("x", "ok")]),
        Obj([("x", "ok"), ("x", ["\udc00"]), ("x", "ok")]),
    ],
)
def test_a_lone_surrogate_in_a_shadowed_duplicate_still_rejects_the_line(extra):
    line = Obj([*user("u2", 1, "yo").items(), ("extra", extra)])
    assert decode_line(jsonl([line]).rstrip()) is MISSING
    with pytest.raises(ValueError, match="anchor u2 not found"):
        _capture(jsonl([user("u1", 0, "hi"), line]), "u2")


def test_window_command_reads_a_deeply_nested_transcript(tmp_path, capsys):
    path = tmp_path / "S.jsonl"
    deep = b'{"type":"summary","x":' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    path.write_bytes(jsonl([user("u1", 0, "hi"), b"[" * 3000, deep]))
    assert main(["window", str(path), "--uuid", "u1"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["trigger"]["preview"] == "user: hi"
    assert (
        err
        == f"cc-analytics: warning: {path}:3: ValueError: JSON nested more than {MAX_DEPTH} levels deep; line skipped\n"
    )
