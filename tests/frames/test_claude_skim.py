"""The C skimmer of the Claude Code walker (``_skim.c``): with it, every profile it serves decodes
exactly what the pure Python walker decodes (events, blocks, problems), on every corpus we have
and on mutated, random and hostile lines; and it never crashes on arbitrary bytes.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cc_analytics.frames.claude import decode
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import FINDINGS, REQUESTS, SESSIONS, TURNS, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile, discover
from tests.conftest import ROOT, extension_or_skip, shared_path
from tests.fuzz.mutations import lines, mutate_line

_skim = extension_or_skip()
skim, skim_lines = _skim.skim, _skim.skim_lines

PROFILES = (SESSIONS, TURNS, FINDINGS, REQUESTS)
FAKE = TranscriptFile(Path("/nowhere/11111111-2222-4333-8444-555555555555.jsonl"), "s", None, "main", "p", 0)
AGENT_FILE = TranscriptFile(Path("/nowhere/agent-x.jsonl"), "s", "x", "subagents-dir", "p", 0)


def assert_same_decoding(files: list[TranscriptFile], contents: list[bytes] | None = None) -> None:
    """Each profile the skimmer serves decodes the same with it as without it."""
    for profile in PROFILES:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(decode, "SKIM_LINES", skim_lines)
            fast = decode_files(files, profile, contents=contents)
            patch.setattr(decode, "SKIM_LINES", None)
            pure = decode_files(files, profile, contents=contents)
        for got, want in zip(fast, pure, strict=True):
            assert_frame_equal(got, want)


def transcripts_under(*folders: Path) -> list[TranscriptFile]:
    return [f for f in discover([folder for folder in folders if folder.exists()])]


def test_the_walker_uses_the_skimmer() -> None:
    # (Under CC_ANALYTICS_PURE_PYTHON this module is skipped: the walker has no skimmer then.)
    assert decode.SKIM_LINES is skim_lines
    assert decode.COLUMN is _skim.Column and decode.COLUMN_FROM_STATE is _skim.column_from_state
    walked = decode.walk_files(transcripts_under(ROOT / "data-samples" / "claude"), SESSIONS)
    assert type(walked.columns[S.LINE]) is _skim.Column and len(walked.columns[S.LINE]) > 100


def test_the_samples_and_the_test_transcripts() -> None:
    files = transcripts_under(ROOT / "data-samples", ROOT / "tests")
    assert len(files) > 20
    assert_same_decoding(files)


def test_the_shared_transcripts() -> None:
    files = discover([shared_path("data", "claude")])
    assert_same_decoding(files)


@pytest.mark.slow
def test_the_benchmark_corpus(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        corpus = importlib.import_module("corpus")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    corpus.generate(tmp_path, size_mb=3, sessions=10, seed=2)
    files = discover([tmp_path])
    assert files
    assert_same_decoding(files)


def decline_rate(raw: bytes) -> float:
    spans = []
    start = 0
    for line in raw.split(b"\n"):
        if line[:1] == b"{":
            spans.append((start, start + len(line)))
        start += len(line) + 1
    declined = sum(skim(raw, s, e, 0, 3) is None for s, e in spans)
    return declined / max(len(spans), 1)


def test_the_skimmer_reads_the_common_lines() -> None:
    # The samples are ordinary transcripts: the skimmer must read nearly all of them itself.
    raw = b"\n".join(f.path.read_bytes() for f in discover([ROOT / "data-samples" / "claude"]))
    assert decline_rate(raw) < 0.05


# --- Lines the skimmer must decline or read exactly ----------------------------------------------

BASE = {
    "parentUuid": None,
    "isSidechain": False,
    "cwd": "/w",
    "sessionId": "s1",
    "version": "2.1.40",
    "type": "assistant",
    "uuid": "u1",
    "timestamp": "2026-03-01T10:00:00.000Z",
    "requestId": "req_1",
    "message": {
        "model": "claude-opus-4-5",
        "id": "msg_1",
        "content": [
            {"type": "text", "text": "héllo 你好 😀"},
            {"type": "thinking", "thinking": "hmm"},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls\n", "n": 3, "x": [True, None]}},
        ],
        "usage": {
            "input_tokens": 1,
            "cache_creation_input_tokens": 2,
            "cache_read_input_tokens": 3,
            "output_tokens": 4,
            "cache_creation": {"ephemeral_5m_input_tokens": 2, "ephemeral_1h_input_tokens": 0},
            "server_tool_use": {"web_search_requests": 0},
            "service_tier": "standard",
        },
    },
}
USER = {
    "type": "user",
    "uuid": "u2",
    "sessionId": "s1",
    "timestamp": "2026-03-01T10:00:01.000Z",
    "cwd": "/w",
    "message": {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a"}, {"type": "x"}]},
            {"type": "text", "text": 'do "it"\\n'},
            {"type": "tool_result", "tool_use_id": "t2", "content": "é", "is_error": True},
            {"type": "text", "text": "second 你"},
            "stray",
        ],
    },
    "interruptedMessageId": "m",
    "toolUseResult": {"stdout": "x" * 50, "n": 1.5e10, "deep": [[[{"a": -0.0}]]]},
}
SYSTEM = {
    "type": "system",
    "subtype": "compact_boundary",
    "uuid": "u3",
    "sessionId": "s1",
    "timestamp": "2026-03-01T10:00:02.000Z",
    "content": "Conversation compacted",
    "compactMetadata": {"trigger": "auto", "preTokens": 155000},
}
ATTACHMENT = {
    "type": "attachment",
    "uuid": "u4",
    "sessionId": "s1",
    "timestamp": "2026-03-01T10:00:03.000Z",
    "attachment": {"type": "queued_command", "prompt": "next 😀"},
    "agentId": "a1",
}
OTHER = {"type": "summary", "summary": "x", "leafUuid": "u1", "isMeta": True}

HOSTILE = [
    b'{"type":"user","type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":"a"}}',
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":"a","content":[]}}',
    b'{"type":"summary","x":{"k":1,"k":2}}',
    b'{"typ\\u0065":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z"}',
    b'{"type":"us\\u0065r","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":"a"}}',
    b'{"type":"summary","x":"\\ud800"}',
    b'{"type":"summary","x":"\\udc00"}',
    b'{"type":"summary","x":"\\ud83d\\ude00 \\u00e9 \\/"}',
    b'{"type":"summary","x":"\xed\xa0\x80"}',
    b'{"type":"summary","x":"\xc0\xaf"}',
    b'{"type":"summary","x":"\xf4\x90\x80\x80"}',
    b'{"type":"summary","x":"a\tb"}',
    b'{"type":"summary","x":NaN}',
    b'{"type":"summary","x":01}',
    b'{"type":"summary","x":-0}',
    b'{"type":"summary","x":1e400}',
    b'{"type":"summary","x":1.5e-400}',
    b'{"type":"summary","x":9223372036854775808}',
    b'{"type":"summary","x":-9223372036854775808}',
    b'{"type":"summary","x":18446744073709551616}',
    b'{"type":"summary"} x',
    b'{"type":"summary"}\r',
    b'{"type":"summary"}  \t',
    b'{"type":"summary",}',
    b'{"type":"summary"',
    b'\xef\xbb\xbf{"type":"summary"}',
    b'{"type":"summary","d":' + b"[" * 127 + b"]" * 127 + b"}",
    b'{"type":"summary","d":' + b"[" * 128 + b"]" * 128 + b"}",
    b'{"type":"summary","d":' + b"[" * 2000 + b"]" * 2000 + b"}",
    b'{"type":"summary","isSidechain":"",  "isMeta":0}',
    b'{"type":"summary","isSidechain":[1]}',
    b'{"type":5}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"0000-01-01T00:00:00Z","message":{}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":{}}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":{"input_tokens":null}}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":{"input_tokens":1.0}}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":{"input_tokens":true}}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":0}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":{"cache_creation":"x","speed":"fast"}}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"usage":{"service_tier":5}}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","name":"\\u00e9","input":{"a":"\\u0001\\n\\u00e9"}}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","input":{"a":"\\u001F"}}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","input":{"a": 1}}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","input":{"a":1.0}}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","input":"\xe4\xbd\xa0\xe9\xbe\xa6"}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_use","input":null,"name":5}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"text","text":"\xe9\xbe\xa6\xe9\xbe\xa5"}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"text"}]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[5]}}',
    b'{"type":"assistant","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":"x"}}',
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"tool_result"}]}}',
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[{"type":"text","text":5},{"type":"tool_result","content":[{"type":"text","text":"\\u4f60"},{"text":"x","type":"text"}]}]}}',
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":[]}}',
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":{"content":""}}',
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","message":[]}',
    b'{"type":"system","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","subtype":"api_error","content":""}',
    b'{"type":"system","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","subtype":"compact_boundary","compactMetadata":{"preTokens":1.5,"trigger":5}}',
    b'{"type":"attachment","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","attachment":{"type":"queued_command","prompt":""}}',
    b'{"type":"attachment","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z","attachment":{"type":"queued_command","prompt":"\\u0000"}}',
    b'{"type":"summary","x":"\xe9\xbe\xa6\\u9fa5\\u9fa6"}',
    b'{"type":"summary","cwd":"/a","version":"1"}',
    b'{"type":"summary","cwd":"/b","version":"1"}',
    b'{"type":"summary","version":"2","agentId":""}',
]


def test_hostile_lines() -> None:
    clean = [
        json.dumps(x, ensure_ascii=False, separators=(",", ":")).encode()
        for x in (BASE, USER, SYSTEM, ATTACHMENT, OTHER)
    ]
    for line in clean:
        assert skim(line, 0, len(line), 0, 3) is not None, line
    raw = b"\n".join(clean + HOSTILE + clean)
    assert_same_decoding([FAKE, AGENT_FILE], [raw, raw])
    for line in HOSTILE:  # one line at a time too: a failure names its line
        assert_same_decoding([FAKE], [line])


STAMPS = [
    "2026-03-01T10:00:00.000Z", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00.5Z", "2026-03-01T10:00:00.123456Z",
    "2026-03-01T10:00:00.1234567Z", "2026-03-01T10:00:00.123456789Z", "2026-03-01T10:00:00.Z",
    "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z", "2026-12-31T23:59:59.999999Z", "2026-06-30T23:59:60Z", "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
    "0001-01-01T00:00:00Z", "0000-06-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999Z",
    "1970-01-01T00:00:00Z", "2026-03-01t10:00:00Z", "2026-03-01 10:00:00Z", "2026-03-01T10:00:00z",
    "2026-03-01T10:00:00+01:00", "2026-03-01T10:00:00.000+00:00", "2026-3-01T10:00:00Z", "2026-03-01T10:00:0aZ",
    "+2026-03-01T10:00:00Z", "2026-03-01T10:00:00.000ZZ", "", "yesterday", "2026-03-01T10:00:00.\u0030Z",
]  # fmt: skip


def test_timestamps_read_as_microseconds_decode_as_their_text_does() -> None:
    # The skimmer reads Claude Code's own form to microseconds; every other text is the
    # walker's to parse. Both give the same times and the same problems.
    lines = []
    for stamp in STAMPS:
        line = json.dumps({**BASE, "timestamp": stamp}, separators=(",", ":"))
        lines.append(line.replace("\\\\u0030", "\\u0030").encode())
    raw = b"\n".join(lines)
    read = [skim(line, 0, len(line), 0, 0) for line in lines]
    assert read[0] is not None and read[0][2] == 1772359200000000  # microseconds since 1970
    assert read[27] is not None and read[27][2] == "2026-03-01T10:00:00+01:00"  # the walker's to parse
    assert_same_decoding([FAKE], [raw])
    events = decode_files([FAKE], SESSIONS, contents=[raw]).events
    times = dict(zip(events["line"], events["timestamp"], strict=True))  # line numbers from 1
    assert times[1].isoformat() == "2026-03-01T10:00:00+00:00"
    assert times[8].isoformat() == "2024-02-29T23:59:59.999000+00:00"
    assert times[9] is None and times[12] is None  # no such day
    assert times[14].isoformat() == "2026-07-01T00:00:00+00:00"  # a leap second is the next minute's first
    assert 21 not in times  # year 0: the line is dropped
    assert times[23].isoformat() == "1969-12-31T23:59:59.999000+00:00"


def test_strings_at_every_offset_of_a_16_byte_block() -> None:
    # The string scan reads 16 bytes at a time (SSE2), past the line's end up to the data's
    # end: a special byte must be found at any offset, and never beyond its line.
    specials = [b'\\"', b"\\n", b"\\u00e9", "é".encode(), "你".encode(), "😀".encode(), b"\x01", b"\xff", b"\xe4\xbd"]
    batch = []
    for before in range(18):
        for special in specials:
            for after in (0, 1, 15, 16, 17):
                text = b"a" * before + special + b"b" * after
                batch.append(b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
                             b'"message":{"content":"' + text + b'"},"version":"' + text + b'"}')  # fmt: skip
    for line in batch[:: len(specials) * 5]:
        assert skim(line, 0, len(line), 0, 3) is not None
    raw = b"\n".join(batch)
    assert_same_decoding([FAKE], [raw])
    assert_same_decoding([FAKE] * len(batch), batch)  # each line the last of its data


# --- The line loop ---------------------------------------------------------------------------------


def clean_lines() -> list[bytes]:
    return [
        json.dumps(x, ensure_ascii=False, separators=(",", ":")).encode()
        for x in (BASE, USER, SYSTEM, ATTACHMENT, OTHER)
    ]


DECLINED = HOSTILE[3]  # an escaped key: the Python walker reads it (a repeated key no longer is one)
LAYOUTS = {
    "empty": b"",
    "one LF": b"\n",
    "blank lines": b"\n\n{c}\n\n\n{c}\n\n",
    "whitespace-only lines": b" \n{c}\n\t \r\n{c}\n   \n\x0b\x0c\n{c}",
    "CRLF": b"{c}\r\n{d}\r\n{c}\r\n\r\n",
    "no LF at the end": b"{c}\n{c}",
    "declined at the end without LF": b"{c}\n{d}",
    "declined in the middle": b"{c}\n{d}\n{c}\n{d}\n{d}\n{c}\n",
    "only declined lines": b"{d}\n{d}\n[1]\n{d}",
    "not JSON among clean lines": b"{c}\nnot json\n{c}\n{{\n{c}\n\xff\n{c}\n{c}",
    "a truncated last line": b'{c}\n{c}\n{"type":"user","uuid":',
    # The skimmer parses a line to the end of its object, then looks for its line feed:
    # ({s}: a clean line with a line feed after its first comma, {v}: after its first colon)
    "an object split over two lines": b"{c}\n{s}\n{c}\n{s}",
    "a line feed where a value goes": b"{c}\n{v}\n{c}\n{\n}\n{c}",
    "text after the object": b"{c} {c}\n{c}x\n{c}\t \r\n{c}\r\r\n{c} \n{c}\r",
    "two objects on a line": b"{c}{c}\n{c}\n",
    "a line feed inside a string": b'{c}\n{"type":"user","uuid":"a\nb"}\n{c}',
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_line_layouts_decode_the_same(layout: str) -> None:
    template = LAYOUTS[layout]
    cases = []
    for clean in clean_lines():
        split = clean.replace(b',"', b',\n"', 1)
        value = clean.replace(b'":', b'":\n', 1)
        cases.append(
            template.replace(b"{c}", clean).replace(b"{d}", DECLINED).replace(b"{s}", split).replace(b"{v}", value)
        )
    mixed = template
    for clean in clean_lines():  # a different clean line at each place (cwd and version change)
        mixed = mixed.replace(b"{c}", clean, 1)
    cases.append(mixed.replace(b"{c}", clean_lines()[1]).replace(b"{d}", DECLINED))
    assert_same_decoding([FAKE] * len(cases), cases)
    assert_same_decoding([AGENT_FILE] * len(cases), cases)


def sink_of(identity: bool = True) -> tuple[Any, ...]:
    lists = [[] for _ in range(24)]
    if not identity:
        lists[21] = lists[22] = lists[23] = None
    return (*lists, [], tuple([] for _ in range(5)), [], None)


def test_skim_lines_stops_at_the_first_line_it_cannot_read() -> None:
    clean = clean_lines()[0]
    raw = clean + b"\n\n" + DECLINED + b"\n \n" + clean + b"\r\n" + clean
    sink = sink_of()
    state: list[Any] = [True, None]
    first = len(clean) + 2
    assert skim_lines(raw, 0, 0, sink, state) == (first, first + len(DECLINED), 3)
    assert sink[26] == [1]
    assert state == [False, "2.1.40"]
    assert sink[3] == ["/w"] and sink[4] == ["2.1.40"]
    blank = first + len(DECLINED) + 1
    assert skim_lines(raw, first + len(DECLINED) + 1, 3, sink, state) == (blank, blank + 1, 4)
    assert skim_lines(raw, blank + 2, 4, sink, state) == 6  # the end: the number of the last line
    assert sink[26] == [1, 5, 6]
    assert sink[3] == ["/w", None, None] and sink[4] == ["2.1.40", None, None]
    assert skim_lines(raw, len(raw) + 1, 6, sink, state) == 6
    assert skim_lines(b"", 0, 0, sink, state) == 1  # one empty segment
    assert skim_lines(b"\n\n", 0, 0, sink, state) == 3
    assert skim_lines(b"\n\n", 0, 7, sink, state) == 10  # counted on from the number given
    assert sink[26] == [1, 5, 6]


def test_skim_lines_refuses_a_bad_sink() -> None:
    with pytest.raises(TypeError):
        skim_lines(b"{}", 0, 0, (), [True, None])
    with pytest.raises(TypeError):
        skim_lines(b"{}", 0, 0, sink_of(), [True])
    with pytest.raises(ValueError):
        skim_lines(b"{}", -1, 0, sink_of(), [True, None])
    with pytest.raises(ValueError, match="line number too large"):  # counting on from it overflowed
        skim_lines(b"{}\n{}", 0, sys.maxsize - 1, sink_of(), [True, None])
    with pytest.raises(TypeError):
        skim(b"{}", "0", 2, 0, 3)
    with pytest.raises(OverflowError):
        skim(b"{}", 0, 2, 0, 2**64)


def test_empty_buffers_of_every_kind() -> None:
    for raw in (b"", bytearray(), memoryview(b""), memoryview(b"{}")[2:]):
        assert skim_lines(raw, 0, 0, sink_of(), [True, None]) == 1


def test_one_call_per_clean_file() -> None:
    calls = []

    def counted(*args: Any) -> Any:
        calls.append(args[1])
        return skim_lines(*args)

    raw = b"\n".join(clean_lines() * 20) + b"\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decode, "SKIM_LINES", counted)
        decoded = decode_files([FAKE], SESSIONS, contents=[raw])
    assert calls == [0]
    assert decoded.events.height == 100 and decoded.problems.is_empty()


# --- Generated lines ------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FIELDS = {
    (): ["type", "uuid", "sessionId", "timestamp", "cwd", "version", "isSidechain", "isMeta", "isCompactSummary",
         "isApiErrorMessage", "interruptedMessageId", "agentId", "requestId", "message", "subtype", "content",
         "compactMetadata", "attachment"],
    ("message",): ["model", "id", "content", "usage"],
    ("message", "usage"): ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
                           "cache_creation", "server_tool_use", "service_tier", "speed"],
}  # fmt: skip


@st.composite
def edited_lines(draw: st.DrawFn) -> bytes:
    """A clean line with one field the walker reads replaced by any JSON value, written compact or spaced."""
    tree: Any = json.loads(json.dumps(draw(st.sampled_from((BASE, USER, SYSTEM, ATTACHMENT, OTHER)))))
    path = draw(st.sampled_from(sorted(FIELDS)))
    parent = tree
    for key in path:
        parent = parent.get(key) if isinstance(parent, dict) else None
    if isinstance(parent, dict):
        parent[draw(st.sampled_from(FIELDS[path]))] = draw(json_values)
    blocks = tree.get("message", {}).get("content") if isinstance(tree.get("message"), dict) else None
    if isinstance(blocks, list) and blocks and draw(st.booleans()):
        block = draw(st.sampled_from(blocks))
        if isinstance(block, dict):
            key = draw(st.sampled_from(["type", "text", "thinking", "name", "input", "content", "is_error"]))
            block[key] = draw(json_values | st.sampled_from(["text", "thinking", "tool_use", "tool_result"]))
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    text = json.dumps(tree, ensure_ascii=draw(st.booleans()), separators=separators)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def skimmed_lines(draw: st.DrawFn) -> bytes:
    line = draw(st.one_of(lines(), edited_lines()))
    if draw(st.integers(0, 3)) == 0:
        line = mutate_line(draw, line)
    return line


SEPARATORS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b"\n\n", b"\n \t\n", b" \n", b"\n\r\n"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(skimmed_lines(), SEPARATORS), min_size=1, max_size=6), st.booleans())
def test_generated_lines_decode_the_same(batch: list[tuple[bytes, bytes]], last_lf: bool) -> None:
    raw = b"".join(line + separator for line, separator in batch)
    if not last_lf:
        raw = raw[: -len(batch[-1][1])]
    assert_same_decoding([FAKE, AGENT_FILE], [raw, raw])


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 3), st.data())
def test_the_skimmer_never_crashes(data: bytes, flags: int, draw: st.DataObject) -> None:
    for raw in (data, b"{" + data, b'{"type":"user","message":{"content":[' + data):
        start = draw.draw(st.integers(0, len(raw) - 1)) if raw else 0
        end = draw.draw(st.integers(start + 1, len(raw))) if raw else 0
        if not raw:
            with pytest.raises(ValueError):
                skim(raw, start, end, 0, flags)
            continue
        got = skim(raw, start, end, 7, flags)
        assert got is None or (type(got) is tuple and len(got) == 26)
        got = skim(bytearray(raw), 0, len(raw), 7, flags)
        assert got is None or type(got) is tuple
        sink, state, position, number = sink_of(identity=bool(flags & 1)), [True, None], 0, 0
        while type(span := skim_lines(raw, position, number, sink, state)) is tuple:
            start, end, seen = span
            assert position <= start < end <= len(raw) and seen > number
            assert b"\n" not in raw[start:end] and (end == len(raw) or raw[end] == 0x0A)
            position, number = end + 1, seen
        assert span == raw.count(b"\n") + 1  # at the end: the number of the last segment
        assert len(sink[26]) == len(sink[0]) == len(sink[3]) == len(sink[4])


def test_the_walker_skims_for_the_profiles_that_keep_no_text_and_only_for_them() -> None:
    every = {"EVENTS": decode.EVENTS, "SESSIONS": SESSIONS, "TURNS": TURNS, "FINDINGS": FINDINGS, "REQUESTS": REQUESTS}
    assert {name for name, p in every.items() if not p.texts} == {"SESSIONS", "TURNS", "FINDINGS", "REQUESTS"}
    assert set(PROFILES) == {SESSIONS, TURNS, FINDINGS, REQUESTS}  # what assert_same_decoding compares
    raw = b"\n".join(clean_lines()) + b"\n"
    calls: list[tuple[str, int]] = []
    for name, profile in every.items():
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(
                decode, "SKIM_LINES", lambda *args, name=name: calls.append((name, args[1])) or skim_lines(*args)
            )
            decoded = decode_files([FAKE], profile, contents=[raw])
        assert decoded.events.height == len(clean_lines()), name
    assert calls == [("SESSIONS", 0), ("TURNS", 0), ("FINDINGS", 0), ("REQUESTS", 0)]  # one call per clean file


def test_the_findings_marks_of_each_block() -> None:
    # What the findings read of a block instead of its text (decode.Profile.marks), the same with
    # the skimmer as without: ids (escaped too), the memory mark (escaped, split over text
    # blocks, in a queued prompt), a tool call's input (absent: null).
    head = '"uuid":"u{n}","sessionId":"s","timestamp":"2026-03-01T10:00:0{n}Z"'
    lines = [
        '{"type":"user",' + head + ',"isMeta":true,"message":{"content":"see /w/CLAUDE\\u002emd"}}',
        '{"type":"user",' + head + ',"message":{"content":[{"type":"text","text":"CLAUDE"},'
        '{"type":"text","text":".md"},{"type":"tool_result","tool_use_id":"t\\u0031","content":"x"}]}}',
        '{"type":"assistant",' + head + ',"message":{"id":"m","content":[{"type":"tool_use","id":"t1",'
        '"name":"Read","input":{"file_path":"/w/CLAUDE.md"}},{"type":"tool_use","id":7,"name":"X"},'
        '{"type":"text","text":"CLAUDE.md"}]}}',
        '{"type":"attachment",' + head + ',"attachment":{"type":"queued_command","prompt":"CLAUDE.md now"}}',
    ]
    raw = "\n".join(line.replace("{n}", str(n)) for n, line in enumerate(lines)).encode() + b"\n"
    assert_same_decoding([FAKE], [raw])
    blocks = decode_files([FAKE], FINDINGS, contents=[raw]).blocks
    assert blocks.select(S.KIND, S.BLOCK_ID, S.NAMES_MEMORY, S.TOOL_INPUT).rows() == [
        ("prompt", None, True, None),
        ("tool_result", "t1", None, None),
        ("prompt", None, False, None),  # " ".join of the texts: "CLAUDE .md"
        ("tool_use", "t1", None, '{"file_path":"/w/CLAUDE.md"}'),
        ("tool_use", None, None, "null"),
        ("text", None, None, None),
        ("prompt", None, True, None),
    ]
