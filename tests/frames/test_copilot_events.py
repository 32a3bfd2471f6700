"""The C loop of the GitHub Copilot CLI walk (``frames/copilot/_events.c``): with it, ``events.parse``
gives what it gives in pure Python (event rows, requests, problems, line count), and the frames
of every verb are equal, on the samples, the shared examples, a generated corpus and hostile
logs; the loop does take the common lines (the equality would hold trivially if it declined them
all); token estimates of values orjson would write differently from their bytes are Python's.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cc_analytics import jsonline
from cc_analytics.frames import extension
from cc_analytics.frames.chatlog.messages import value_tokens
from cc_analytics.frames.copilot import events, verbs
from cc_analytics.frames.copilot.store import resolve
from tests.conftest import ROOT, shared_path
from tests.frames.test_copilot import shared_logs
from tests.fuzz.mutations import COPILOT_ODD_LINES, DEEP_HEADS

if extension.pure_python_asked() or events.SCAN_LINES is None:
    why = extension.missing(events.NATIVE) or f"{extension.PURE_PYTHON_ENV} is set"
    pytest.skip(f"the Copilot CLI walk's C loop is not in use: {why}", allow_module_level=True)

installed = extension.load(events.NATIVE)
assert installed is not None
SAMPLES = ROOT / "data-samples" / "copilot"
VERBS = ("events", "turns", "sessions", "problems", "requests")


def event(kind: str, data: object, n: int = 1) -> bytes:
    line = {"type": kind, "data": data, "id": f"e{n}", "timestamp": "2026-03-01T10:00:00.000Z", "parentId": None}
    return orjson.dumps(line)


def both(data: bytes) -> events.Parsed:
    """The parse of ``data`` with the C loop, asserted equal to the pure Python parse (the lean
    parse and the lines it reads too)."""
    native, pure = events.parse(data), events.parse(data, native=False)
    assert native == pure
    assert events.parse(data, lean=True) == events.parse(data, lean=True, native=False)
    assert installed.laid_out(data) == events._laid_out(data)
    return native


def taken(data: bytes) -> int:
    """How many lines of ``data`` the C loop takes (the rest are Python's)."""
    state = [0]
    start = number = 0
    columns: list[list] = [[] for _ in range(events.EVENT_WIDTH)]
    while (found := events.SCAN_LINES(data, start, number, 0, columns, [], None, None, state)) is not None:
        _, end, number = found
        start = end + 1
    return state[0]


def frames(store: Path, monkeypatch: pytest.MonkeyPatch, *, native: bool) -> dict:
    monkeypatch.setattr(events, "SCAN_LINES", installed.scan_lines if native else None)
    return {verb: getattr(verbs, f"read_{verb}")(store, workers=1) for verb in VERBS}


def assert_same_frames(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, pure = frames(store, monkeypatch, native=True), frames(store, monkeypatch, native=False)
    for verb in VERBS:
        assert fast[verb].equals(pure[verb]), verb


def test_the_policy_numbers() -> None:
    assert installed.MAX_DEPTH == jsonline.MAX_DEPTH
    assert installed.DUPLICATE_KEYS == jsonline.DUPLICATE_KEYS


def test_the_samples() -> None:
    for file in resolve(SAMPLES):
        both(file.path.read_bytes())


def test_the_shared_examples() -> None:
    for path in sorted(shared_path("data", "agents", "copilot").rglob("*.jsonl")):
        both(path.read_bytes())


def test_the_shared_examples_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_frames(shared_logs(tmp_path), monkeypatch)


def test_the_samples_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_frames(SAMPLES, monkeypatch)


def test_a_generated_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fixtures.copilot.make_corpus import generate

    generate(tmp_path / "home", 1.5, seed=5)
    store = tmp_path / "home" / ".copilot" / "session-state"
    lines = took = 0
    for file in resolve(store):
        data = file.path.read_bytes()
        both(data)
        lines += data.count(b"\n")
        took += taken(data)
    assert took > 0.85 * lines  # the session events (and any unusual line) are Python's
    assert_same_frames(store, monkeypatch)


def test_the_loop_takes_the_common_lines() -> None:
    lines = [
        event("user.message", {"content": "hi there"}),
        event(
            "assistant.message",
            {
                "content": "ok",
                "model": "m",
                "outputTokens": 5,
                "toolRequests": [{"name": "ls", "arguments": {"p": "."}}],
            },
        ),
        event("tool.execution_start", {"toolCallId": "c"}),
        event("tool.execution_complete", {"success": False, "result": {"content": "no such file"}}),
        event("assistant.reasoning", {"content": [1, True, None, {"a": "你好"}]}),
        event("system.message", {"content": "be brief"}),
        event("session.compaction_complete", {}),
        event("assistant.turn_end", None),
        event("hook.start", {"x": 1.5}),
    ]
    data = b"\n".join(lines) + b"\n"
    assert taken(data) == len(lines)
    parsed = both(data)
    assert parsed.events[3][:2] == ["user.message", "assistant.message"]


def test_the_lean_read_finds_the_same_lines() -> None:
    lines = [event("session.start", {"selectedModel": "m"}), event("user.message", {"content": "x"}, 2)]
    lines.append(event("assistant.message", {"outputTokens": 3}, 3))
    data = b"\n".join(lines) + b"\n"
    assert installed.laid_out(data) == (
        3,
        [(0, b"session.start", 0, len(lines[0])), (2, b"assistant.message", *span(data, 2))],
    )
    for other in (
        b"",
        b"\n",
        data[:-1],
        data + b"\n",
        data.replace(b"\n", b"\r\n"),
        data.replace(b"user.", b"u\\u0073er."),
    ):
        both(other)
    assert installed.laid_out(b"") == (0, [])
    odd_type = b'{"type":["user.message"],"data":{}}\n{"type":{"a":1},"data":{}}\n' + lines[2]  # read, not refused
    assert both(odd_type).problems == []


def span(data: bytes, place: int) -> tuple[int, int]:
    start = sum(len(line) + 1 for line in data.split(b"\n")[:place])
    return start, start + len(data.split(b"\n")[place])


def test_the_session_events_and_odd_lines_are_pythons() -> None:
    start = event("session.start", {"sessionId": "s", "producer": "copilot-agent", "selectedModel": "gpt-5"})
    assert taken(start + b"\n") == 0
    for line in COPILOT_ODD_LINES + DEEP_HEADS:
        for data in (line, line + b"\n", start + b"\n" + line + b"\n" + event("user.message", {"content": "x"}, 3)):
            both(data)


@pytest.mark.parametrize(
    "content",
    [
        {"a": 1.5},  # a float: orjson writes it its own way
        ["\u00e9", "\U0001f600", "\u9fa6", "\u9fa5", "\x1f\n/"],
        {"k": [[[[[]]]]], "e": {}, "n": -12, "t": True, "f": False, "z": None},
    ],
)
def test_estimates_of_values_are_orjsons(content: object) -> None:
    for raw in (orjson.dumps(content), json.dumps(content).encode(), json.dumps(content, ensure_ascii=False).encode()):
        line = b'{"type":"system.message","data":{"content":' + raw + b'},"id":"e","timestamp":"t","parentId":null}'
        parsed = both(line + b"\n")
        assert parsed.events[-6][0] == value_tokens(content)
    repeated = b'{"type":"system.message","data":{"content":{"a":1,"a":22}},"id":"e"}\n'
    assert both(repeated).events[-6][0] == value_tokens({"a": 1})


def test_a_value_deeper_than_orjson_writes_is_estimated() -> None:
    deep = b'{"a":' * 300 + b"1" + b"}" * 300
    line = b'{"type":"tool.execution_complete","data":{"result":{"content":' + deep + b"}}}\n"
    assert taken(line) == 1
    assert both(line).events[-3][0] == (len(deep) + 3) // 4


def test_bad_input_is_the_same_problems() -> None:
    good = event("user.message", {"content": "hi"})
    data = b"\n".join(
        [
            good,
            b"{not json",
            b'"a string"',
            b"\xff\xfe" + good,
            good.replace(b"hi", b"h\xffi"),
            b"[" * 26_000,
            event("assistant.message", {"outputTokens": -3}),
            event("assistant.message", {"outputTokens": "7"}),
            event("user.message", 5),
            b"   ",
            good + b"\r\r",
            good[:20],
        ]
    )
    parsed = both(data)
    assert [line for line, _ in parsed.problems] == [2, 3, 4, 5, 6, 7, 8, 9, 12]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.recursive(
            st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
            max_leaves=8,
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(
        ["system.message", "assistant.message", "assistant.reasoning", "tool.execution_complete", "user.message"]
    ),
)
def test_generated_values(values: list, kind: str) -> None:
    lines = []
    for n, value in enumerate(values):
        data = {
            "content": value,
            "result": value,
            "toolRequests": [{"name": "x", "arguments": value}],
            "outputTokens": n,
        }
        lines.append(json.dumps({"type": kind, "data": data, "id": str(n)}, ensure_ascii=n % 2 == 0).encode())
    both(b"\n".join(lines))


def test_the_lean_read_takes_the_answers_after_the_last_shutdown_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    usage = {"inputTokens": 10, "outputTokens": 3, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    lines = [
        event("session.start", {"sessionId": "s", "producer": "copilot-agent", "selectedModel": "gpt-4.1"}, 1),
        event("assistant.message", {"content": "covered", "outputTokens": 3}, 2),
        event("session.shutdown", {"modelMetrics": {"gpt-4.1": {"requests": {"count": 1}, "usage": usage}}}, 3),
        event("assistant.message", {"content": "after", "outputTokens": 4, "messageId": "m4"}, 4),
        event("assistant.message", {"content": "a bad count", "outputTokens": "7"}, 5),
        event("assistant.message", {"content": "after again", "outputTokens": 5, "model": "gpt-5"}, 6),
    ]
    data = b"\n".join(lines) + b"\n"
    taken_here: list[bool] = []

    def counting(*args: object) -> object:
        found = installed.tally_lines(*args)
        taken_here.append(found is None)
        return found

    monkeypatch.setattr(events, "TALLY_LINES", counting)
    parsed = events.parse(data, lean=True)
    assert taken_here == [True, False, True]  # the bad count is declined: Python names it
    assert parsed == events.parse(data, lean=True, native=False)
    requests = [(r[events.MODEL_AT], r[events.OUTPUT_AT]) for r in parsed.requests]
    assert requests == [("gpt-4.1", 3), ("gpt-4.1", 4), ("gpt-5", 5)]  # the shutdown's, then the answers'
    assert [line for line, _ in parsed.problems] == [5]
