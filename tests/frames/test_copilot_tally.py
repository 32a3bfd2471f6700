"""The tally of a GitHub Copilot CLI log (``events.parse(..., tally=True)``), what ``sessions``
reads instead of event rows: it is the fold of the full read's rows, in C as in Python, and the
tables made of it (``batch_tables(turns=False)``) are the tables made of the rows, on the
samples, the shared examples, a generated corpus, the fuzz corpus and logs made to be hard
(timestamps whose text does not sort as their times, compactions, tools before the first
prompt, a session in an event log and in the OpenTelemetry export at once).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cc_analytics.frames import extension
from cc_analytics.frames.copilot import events, verbs
from cc_analytics.frames.copilot.events import FIRST_STAMP, LAST_STAMP, ODD_STAMPS, STAMP_SIZE
from cc_analytics.frames.copilot.store import resolve
from cc_analytics.frames.engine import batches
from tests.conftest import ROOT, shared_path
from tests.frames.test_copilot import answer, event, log, shared_logs, shutdown, start
from tests.frames.test_copilot_otel import export, span
from tests.fuzz.mutations import copilot_corpus

SAMPLES = ROOT / "data-samples" / "copilot" / "session-state"
STAMPS = (FIRST_STAMP, LAST_STAMP, STAMP_SIZE, ODD_STAMPS)
native_loop = pytest.mark.skipif(
    events.TALLY_LINES is None or extension.pure_python_asked(),
    reason=f"the Copilot CLI walk's C loop is not in use: {extension.missing(events.NATIVE) or 'pure Python asked'}",
)


def assert_tally_is_the_rows_fold(data: bytes) -> None:
    """The Python tally is the fold of the full read's rows; the C tally too, but where a
    timestamp it cannot compare as bytes (an escaped one) made it give up on the times: then
    the file is read again in full (``ODD_STAMPS``), and its other places still agree."""
    rows = events.parse(data, native=False)
    folded = events.tally_of_rows(rows)
    pure = events.parse(data, tally=True, native=False)
    assert pure.tally == folded
    assert (pure.requests, pure.problems, pure.lines, pure.window) == (
        rows.requests,
        rows.problems,
        rows.lines,
        rows.window,
    )
    if events.TALLY_LINES is None:
        return
    fast = events.parse(data, tally=True)
    assert (fast.requests, fast.problems, fast.lines, fast.window) == (
        pure.requests,
        pure.problems,
        pure.lines,
        pure.window,
    )
    same = [place for place in range(events.TALLY_WIDTH) if place not in STAMPS]
    assert [fast.tally[k] for k in same] == [folded[k] for k in same]
    if not fast.tally[ODD_STAMPS]:
        assert [fast.tally[k] for k in STAMPS] == [folded[k] for k in STAMPS]
    elif not folded[ODD_STAMPS]:
        assert b"\\" in data  # only an escaped timestamp is odd in C alone


def tables(files: list, *, turns: bool, pure: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patch:
        if pure:
            patch.setattr(events, "TALLY_LINES", None)
            patch.setattr(events, "SCAN_LINES", None)
        return verbs.batch_tables(files, turns=turns)


def assert_same_sessions(store: Path, monkeypatch: pytest.MonkeyPatch, batch_bytes: int = 1 << 30) -> None:
    """``batch_tables`` without turns (the tally) gives the tables it gives with them (the rows),
    batch by batch, in C and in pure Python."""
    files = resolve(store)
    assert files
    for batch in batches(files, batch_bytes):
        full = tables(batch, turns=True, pure=False, monkeypatch=monkeypatch)
        for pure in (False, True):
            lean = tables(batch, turns=False, pure=pure, monkeypatch=monkeypatch)
            for name in ("sessions", "problems", "requests"):
                assert_frame_equal(getattr(lean, name), getattr(full, name))
            assert lean.turns.is_empty() and lean.turns.schema == full.turns.schema


def test_the_samples_and_the_fuzz_corpus_tally_as_the_rows_fold() -> None:
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        assert_tally_is_the_rows_fold(path.read_bytes())
    for data in copilot_corpus():
        assert_tally_is_the_rows_fold(data)


def test_the_shared_examples_tally_as_the_rows_fold() -> None:
    for path in sorted(shared_path("data", "agents", "copilot").rglob("*.jsonl")):
        assert_tally_is_the_rows_fold(path.read_bytes())


def test_the_samples_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_sessions(SAMPLES, monkeypatch)


def test_the_shared_examples_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_sessions(shared_logs(tmp_path), monkeypatch)


def test_a_generated_corpus_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fixtures.copilot.make_corpus import generate

    generate(tmp_path / "home", 1.5, seed=7)
    store = tmp_path / "home" / ".copilot" / "session-state"
    for path in sorted(store.rglob("*.jsonl"))[:40]:
        assert_tally_is_the_rows_fold(path.read_bytes())
    assert_same_sessions(store, monkeypatch, batch_bytes=512 * 1024)


def stamped(kind: str, data: dict, n: int, time: object) -> dict:
    return {**event(kind, data, n), "timestamp": time}


HARD_LOGS = {
    # the times' order is not the texts' when the offsets or the lengths differ
    "offsets": [
        stamped("user.message", {"content": "a"}, 1, "2026-03-01T10:00:00.000+02:00"),
        stamped("user.message", {"content": "b"}, 2, "2026-03-01T09:00:00.000Z"),
    ],
    "lengths": [
        stamped("user.message", {"content": "a"}, 1, "2026-03-01T10:00:00Z"),
        stamped("user.message", {"content": "b"}, 2, "2026-03-01T10:00:00.5Z"),
    ],
    # the least and the greatest texts are no times (month 0, the 31st of April): the file is
    # read again in full; one in the middle (the 30th of February) is left out either way
    "no-such-day": [
        stamped("user.message", {"content": "a"}, 1, "2026-03-01T10:00:00.000Z"),
        stamped("user.message", {"content": "b"}, 2, "2026-04-31T10:00:00.000Z"),
        stamped("user.message", {"content": "c"}, 3, "2026-02-28T10:00:00.000Z"),
        stamped("user.message", {"content": "d"}, 4, "2026-00-10T10:00:00.000Z"),
        stamped("user.message", {"content": "e"}, 5, "2026-02-30T10:00:00.000Z"),
    ],
    "not-text": [
        stamped("user.message", {"content": "a"}, 1, 17),
        stamped("user.message", {"content": "b"}, 2, None),
        stamped("user.message", {"content": "c"}, 3, "2026-03-01T10:00:00.000Z"),
    ],
    # a tool called and a request made before the first prompt: turn 0
    "early": [
        start(),
        answer(1, 5, toolRequests=[{"name": "bash", "arguments": {"cmd": "ls"}}], model="gpt-5"),
        event("user.message", {"content": "then"}, 2),
        event("session.model_change", {"newModel": "claude-sonnet-4.5"}, 3),
        answer(4, 7),
        event("session.compaction_complete", {}, 5),
        answer(6, 9, text="after"),
        event("session.truncation", {"tokenLimit": 64000, "messagesRemovedDuringTruncation": 2}, 7),
        event("user.message", {"content": "一二三 and more"}, 8),
        shutdown(9, "2026-03-01T10:05:00.000Z", 900, {"gpt-5": (2, 1000, 50, 800, 0)}),
    ],
    "no-prompt": [start(), event("tool.execution_start", {"toolName": "x"}, 1), answer(2, 3)],
    "empty": [],
}


@pytest.mark.parametrize("name", sorted(HARD_LOGS))
def test_hard_logs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = log(tmp_path, *HARD_LOGS[name], session=name)
    assert_tally_is_the_rows_fold(path.read_bytes())
    assert_same_sessions(tmp_path / "session-state", monkeypatch)


def test_all_hard_logs_in_one_batch_with_an_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, values in HARD_LOGS.items():
        log(tmp_path, *values, session=name)
    log(tmp_path, *HARD_LOGS["early"], session="s1")
    # the export holds calls of session s1 too: the session is one log tallied and one export read in full
    export(tmp_path / "otel" / "a.jsonl", span("s1", 1), span("c2", 2))
    files = resolve(tmp_path / "session-state") + resolve(tmp_path / "otel")
    lean, full = verbs.batch_tables(files, turns=False), verbs.batch_tables(files, turns=True)
    for table in ("sessions", "problems", "requests"):
        assert_frame_equal(getattr(lean, table), getattr(full, table))
    s1 = lean.sessions.filter(pl.col("session_id") == "s1").row(0, named=True)
    assert s1["files"] == 2 and s1["turns"] == 3 + 1  # the log's turn 0 and two prompts; the export's calls


def test_a_log_whose_extreme_texts_are_no_times_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = log(tmp_path, *HARD_LOGS["no-such-day"], session="x")
    asked: list[frozenset[int]] = []
    decode = verbs.decode
    monkeypatch.setattr(verbs, "decode", lambda *a, **k: asked.append(k.get("full", frozenset())) or decode(*a, **k))
    found = verbs.batch_tables(resolve(path.parent), turns=False).sessions
    assert asked == [frozenset(), frozenset({0})]
    assert [time.isoformat()[:10] for time in found.select("first_time", "last_time").row(0)] == [
        "2026-02-28",
        "2026-03-01",
    ]


def test_only_the_odd_logs_make_event_rows(tmp_path: Path) -> None:
    plain = log(tmp_path, *HARD_LOGS["early"], session="plain")
    odd = log(tmp_path, *HARD_LOGS["offsets"], session="odd")
    made = verbs.decode([*resolve(plain.parent), *resolve(odd.parent)], tally=True)
    assert made.tallies is not None and made.tallies.height == 1  # the plain log, tallied
    assert set(made.decoded.messages["file"]) == {1}  # the odd one's rows: read in full
    assert made.decoded.messages.height == len(HARD_LOGS["offsets"])


@native_loop
def test_the_c_loop_tallies_the_common_lines() -> None:
    data = ("".join(json.dumps(event("user.message", {"content": f"hi {n}"}, n)) + "\n" for n in range(50))).encode()
    state = [0]
    tally = events.new_tally()
    assert events.TALLY_LINES(data, 0, 0, 0, tally, [], None, None, state) is None
    assert state == [50] and tally[events.ROWS] == 50 and tally[events.PROMPTS_AT] == 50
    assert tally == events.tally_of_rows(events.parse(data, native=False))


@native_loop
def test_the_c_loop_refuses_a_tally_of_the_wrong_shape() -> None:
    with pytest.raises(TypeError, match="tally_lines"):
        events.TALLY_LINES(b"", 0, 0, 0, [0] * 3, [], None, None, [0])
    bad = events.new_tally()
    bad[events.MODELS] = "not a list"
    with pytest.raises(TypeError, match="models"):
        events.TALLY_LINES(b"", 0, 0, 0, bad, [], None, None, [0])
