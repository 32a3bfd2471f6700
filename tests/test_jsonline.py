"""The JSON line policy (``cc_analytics.jsonline``): each rule, at its edges, whatever the
caller's stack; and the numbers the C skimmer holds equal to the policy's."""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import pytest

from cc_analytics import jsonline
from cc_analytics.core import jsontext
from cc_analytics.core.jsontext import compact_json
from cc_analytics.jsonline import (
    DUPLICATE_KEYS,
    ECMASCRIPT,
    FIRST,
    MAX_DEPTH,
    STRICT,
    LineError,
    LongInt,
    Rules,
    decode,
    safe_loads,
)

CLAUDE = Rules(last_wins_under=frozenset({"input", "toolUseResult"}))
LONG = "9" * 5000


def nested(depth: int, shape: str = "array") -> bytes:
    if shape == "array":
        return b"[" * depth + b"]" * depth
    return b'{"k":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


def test_the_skimmer_holds_the_policys_numbers() -> None:
    skim = pytest.importorskip("cc_analytics.frames.claude._skim", reason="the C skimmer is not built")
    assert (skim.MAX_DEPTH, skim.DUPLICATE_KEYS) == (MAX_DEPTH, DUPLICATE_KEYS) == (25_000, FIRST)


def test_the_core_reads_by_the_same_limit() -> None:
    assert jsontext.MAX_DEPTH == MAX_DEPTH
    assert jsontext.decode_line(nested(MAX_DEPTH)) is not jsontext.TOO_DEEP
    assert jsontext.decode_line(nested(MAX_DEPTH + 1)) is jsontext.TOO_DEEP


@pytest.mark.parametrize(
    ("line", "strict", "ecmascript"),
    [
        # duplicate keys: first (at its position) or last, at any depth
        (b'{"a":1,"b":2,"a":3}', {"a": 1, "b": 2}, {"a": 3, "b": 2}),
        (b'[{"a":{"x":1,"x":2}}]', [{"a": {"x": 1}}], [{"a": {"x": 2}}]),
        # integers: exact at any length, never a float
        (b"[18446744073709551616,-9223372036854775809,-0]", [2**64, -(2**63) - 1, 0], [2**64, -(2**63) - 1, 0]),
        (b"[" + LONG.encode() + b"]", [LongInt(LONG)], [math.inf]),
        (b"[-" + LONG.encode() + b"]", [LongInt("-" + LONG)], [-math.inf]),
        # beyond the double range: infinity; -0.0 stays
        (b"[1e400,-1e400,-0.0,1.5e-400]", [math.inf, -math.inf, -0.0, 0.0], [math.inf, -math.inf, -0.0, 0.0]),
        # text: JSON.parse keeps lone surrogates and reads invalid UTF-8 as U+FFFD
        (b'["\\ud800"]', "lone surrogate escape", ["\ud800"]),
        (b'{"a":"\\ud800","a":"x"}', "lone surrogate escape", {"a": "x"}),  # shadowed, still in the line
        (b'["\xff"]', "invalid UTF-8 at byte 2", ["\ufffd"]),
        (b'["\\ud83d\\ude00"]', ["\U0001f600"], ["\U0001f600"]),
        # broken for both
        (b"\xef\xbb\xbf{}", "starts with a UTF-8 byte-order mark", "starts with a UTF-8 byte-order mark"),
        (b"[NaN]", "non-standard JSON constant 'NaN'", "non-standard JSON constant 'NaN'"),
        (b"[-Infinity]", "non-standard JSON constant '-Infinity'", "non-standard JSON constant '-Infinity'"),
        (b'{"a":1,}', LineError, LineError),
        (b'["a\tb"]', LineError, LineError),
        (b"{} x", LineError, LineError),
        (b"", LineError, LineError),
    ],
)
def test_each_rule(line: bytes, strict: Any, ecmascript: Any) -> None:
    for rules, expected in ((STRICT, strict), (ECMASCRIPT, ecmascript)):
        if expected is LineError or isinstance(expected, str):
            with pytest.raises(LineError) as caught:
                decode(line, rules)
            assert expected is LineError or caught.value.reason == expected
            assert safe_loads(line, rules) is None
        else:
            value = decode(line, rules)
            assert value == expected and repr(value) == repr(expected)  # repr: 0 is not 0.0, -0.0 not 0.0
            assert all(type(v) is not jsonline.DupDict for v in _containers(value))


def _containers(value: Any) -> list[Any]:
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            out.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    return out


def test_the_last_of_a_repeated_key_wins_under_the_formats_keys_only() -> None:
    line = (
        b'{"type":"a","type":"b","input":{"k":1,"k":{"j":1,"j":2}},"toolUseResult":[{"r":1,"r":2}],"x":{"k":1,"k":2}}'
    )
    assert decode(line, CLAUDE) == {"type": "a", "input": {"k": {"j": 2}}, "toolUseResult": [{"r": 2}], "x": {"k": 1}}
    assert decode(line) == {"type": "a", "input": {"k": 1}, "toolUseResult": [{"r": 1}], "x": {"k": 1}}
    # a repeated "input" key itself: the first is the block's (the reference ignores a second)
    assert decode(b'{"input":{"a":1},"input":{"b":2}}', CLAUDE) == {"input": {"a": 1}}


@pytest.mark.parametrize("shape", ["array", "object"])
def test_one_depth_limit_for_every_rule_set(shape: str) -> None:
    for rules in (STRICT, ECMASCRIPT, CLAUDE):
        assert safe_loads(nested(MAX_DEPTH, shape), rules) is not None
        with pytest.raises(LineError, match=f"^nested deeper than {MAX_DEPTH:,} levels$") as caught:
            decode(nested(MAX_DEPTH + 1, shape), rules)
        assert caught.value.too_deep
        # too deep is decided where the limit is crossed, whatever follows
        with pytest.raises(LineError) as caught:
            decode(b"[" * (MAX_DEPTH + 1), rules)
        assert caught.value.too_deep


@pytest.mark.parametrize("depth", [100, 999, 1000, 1001, 1024, 1025, 1633, 3000, MAX_DEPTH])
def test_the_same_reading_whatever_the_callers_stack(depth: int) -> None:
    """The standard library's C decoder recurses (about 1,000 levels from a fresh stack); the
    policy reads again without recursion where it gives up, so the caller's stack never shows."""
    line = b'{"a":1,"a":2,"d":' + nested(depth - 1) + b"}"
    fresh = decode(line)

    def deep_in_the_stack(frames: int) -> Any:
        return decode(line) if frames == 0 else deep_in_the_stack(frames - 1)

    text = compact_json(fresh)  # compared as text: ``==`` recurses
    assert compact_json(deep_in_the_stack(sys.getrecursionlimit() - 100)) == text
    found: list[Any] = []
    old = threading.stack_size(512 * 1024)  # a small thread stack, as a worker's may be
    try:
        thread = threading.Thread(target=lambda: found.append(decode(line)))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old)
    assert [compact_json(value) for value in found] == [text] and fresh["a"] == 1


def test_agrees_proves_a_faster_readings_duplicates_and_integers() -> None:
    agrees = jsonline.agrees
    assert agrees(b'{"t":"10:00:01","u":"a:b"}', {"t": "10:00:01", "u": "a:b"})
    assert not agrees(b'{"a":1,"a":2}', {"a": 2})
    assert not agrees(b'{"a":{"b":"x:y","b":"z"}}', {"a": {"b": "z"}})  # the dropped value held a colon
    assert not agrees(b'{"k\\u003a":1,"k\\u003a":2,"x":"::"}', {"k:": 2, "x": "::"})  # an escaped colon
    assert not agrees(b"[1e19]", [1e19]) and agrees(b"[1e18]", [1e18])
    assert agrees(b'{"a":1,"a":2}', {"a": 2}, ECMASCRIPT)
