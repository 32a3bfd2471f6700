"""``frames.lines.decode_line`` (orjson, checked by writing back) equals the core's decoder on every line.

The fast decoder is only used by callers outside the core (previews, ``window``, capture at
scale), so these tests are what keeps their windows byte for byte the core's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from cc_analytics.core import EventRef, Session
from cc_analytics.core.jsontext import MISSING, TOO_DEEP, DupDict, LongInt
from cc_analytics.core.jsontext import decode_line as core_decode_line
from cc_analytics.frames.lines import decode_line
from tests.fuzz import mutations
from tests.paths import ROOT, SHARED

SEED_FOLDERS = (ROOT / "data-samples", ROOT / "tests/golden", ROOT / "tests/fixtures", SHARED / "data/claude")


def identical(a: Any, b: Any) -> bool:
    """Same value and same types all the way down (1 is not 1.0, -0.0 is not 0.0, ``first`` of a
    repeated key compared too); iterative, so values nested thousands deep compare too."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if type(x) is DupDict:
            stack.append((x.first, y.first))
        if isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[key], y[key]) for key in x)
        elif type(x) is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif type(x) is float:
            if x.hex() != y.hex():
                return False
        elif x is MISSING or x is TOO_DEEP or y is MISSING or y is TOO_DEEP:
            if x is not y:
                return False
        elif x != y:
            return False
    return True


def _transcripts() -> list[Path]:
    return [p for folder in SEED_FOLDERS if folder.is_dir() for p in sorted(folder.rglob("*.jsonl"))]


HAND_LINES = [
    b'{"a":1,"a":2}',
    b'{"a":{"b":1,"b":[2]},"c":"x"}',
    b'{"input":{"k":1,"k":2}}',
    b'{"n":-0}',
    b'{"n":-0.0}',
    b'{"n":1E5}',
    b'{"n":1e5}',
    b'{"n":100000.0}',
    b'{"n":0.1}',
    b'{"n":1.7976931348623157e308}',
    b'{"n":5e-324}',
    b'{"n":1e400}',
    b'{"n":9223372036854775807}',
    b'{"n":9223372036854775808}',
    b'{"n":18446744073709551615}',
    b'{"n":18446744073709551616}',
    b'{"n":' + b"9" * 5000 + b"}",
    b'{"s":"\\ud800"}',
    b'{"s":"\\ud83d\\ude00"}',
    '{"s":"\U0001f600"}'.encode(),
    b'{"s":"\\u00e9"}',
    '{"s":"\u00e9"}'.encode(),
    b'{"s":"\\/"}',
    b'{"s":"\\u001f\\n\\t"}',
    b'{"s":"\\u001F"}',
    b'{"s":"\x7f"}',
    b'{"s":"\xff"}',
    b'{ "a": 1 }',
    b'{"a":1}\r',
    b"\xef\xbb\xbf{}",
    b'{"a":NaN}',
    b"[" * 300 + b"]" * 300,
    b"[" * 2000 + b"]" * 2000,
    b"[" * 30000 + b"]" * 30000,
    b'{"a":1} x',
    b"",
    b"null",
]


@pytest.mark.parametrize("line", HAND_LINES, ids=range(len(HAND_LINES)))
def test_hand_written_lines(line: bytes) -> None:
    assert identical(decode_line(line), core_decode_line(line))


def test_every_line_of_every_transcript_we_have() -> None:
    files = _transcripts()
    assert len(files) >= 20, "the project's own samples and goldens are missing"
    lines = 0
    for path in files:
        for line in path.read_bytes().split(b"\n"):
            if line.strip():
                lines += 1
                assert identical(decode_line(line), core_decode_line(line)), f"{path}: {line[:120]!r}"
    assert lines > 1000


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(mutations.lines())
def test_mutated_lines(line: bytes) -> None:
    assert identical(decode_line(line), core_decode_line(line))


@pytest.mark.filterwarnings("ignore::cc_analytics.core.TranscriptWarning")  # the same lines warn either way
def test_windows_from_the_fast_decoder_are_the_cores_byte_for_byte() -> None:
    compared = 0
    for path in _transcripts():
        raw = path.read_bytes()
        core, fast = Session(raw, source=str(path)), Session(raw, source=str(path), decode=decode_line)
        assert len(core.turns) == len(fast.turns)
        for turn in core.turns[:: max(1, len(core.turns) // 5)]:
            for event in turn.events[:1]:
                if event.uuid is None or event.session_id is None:
                    continue
                anchor = EventRef(event.session_id, event.uuid)
                assert fast.window(anchor, 2, 1, 200).to_json() == core.window(anchor, 2, 1, 200).to_json()
                compared += 1
    assert compared > 50


def test_long_integers_stay_long_integers() -> None:
    value = decode_line(b'{"n":' + b"9" * 5000 + b"}")
    assert type(value["n"]) is LongInt
