"""Hypothesis strategies that mutate real inputs: transcript lines, transcripts, window documents.

Seeds are the project's own transcripts (``tests/golden/claude/synthetic``,
``data-samples/claude``; ChainlessChain: ``data-samples/chainless``, plus
``../shared/data/chainless`` when it is there) and golden windows (``tests/golden/claude/expected``, plus
``../shared/data/claude/expected`` when it is there). A mutation works on the JSON tree of a
line when the line parses (wrong types, deep nesting, huge numbers, duplicated or removed
keys, lone surrogates) and on its bytes otherwise or in addition (bit flips, truncation,
inserted random bytes, BOM, CR, NUL, broken UTF-8). A third kind aims at what pricing reads:
token counts, model and provider names, and the usage object itself. Some transcripts start
with a line nested thousands of levels deep (:data:`DEEP_HEADS`), where a reader that
recurses, or sniffs a file's format from its first line, would meet it first.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from cc_analytics.core import EventRef
from tests.golden.builders import Obj, Raw, dump

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
MAX_SLICE = 30  # lines of a seed transcript per example: keeps one example to a few milliseconds
DEPTHS = (64, 1000, 3000, 26_000)

NUMBERS = [
    "0", "-0", "1", "-1", "1.5", "1e2", "-0.0", "1e400", "-1e400", "1E400", "0.1e-400",
    "9007199254740993", "-9007199254740993", "9223372036854775808", "18446744073709551616",
    "9" * 400, "-" + "9" * 400, "9" * 5000, "1." + "5" * 400, "1e99999999999999999999",
]  # fmt: skip
STRINGS = [
    '""', '"x"', '" "', '"\\u0000"', '"\\ud800"', '"\\udc00x"', '"a\\ud83d"', '"\\ud83d\\ude00"',
    '"\\\\ud800"', '"\\u2028"', '"user"', '"assistant"', '"system"', '"attachment"', '"text"', '"tool_use"',
    '"tool_result"', '"AskUserQuestion"', '"Bash"', '"Edit"', '"MultiEdit"', '"Write"', '"queued_command"',
    '"2026-03-01T10:00:00Z"', '"0000-01-01T00:00:00Z"', '"2026-06-30T23:59:60Z"', '"2026-03-01"',
    '"[Request interrupted by user]"', '"<teammate-message x>"', '"full"', '"summary"', '"cc-transcript.context/2"',
    '"session_start"', '"user_message"', '"assistant_message"', '"token_usage"', '"compact"', '"ws_turn"',
    '"checkpoint_timeline_commit"', '"tool_call"', '"completed"', '"model"', '"subagent"',
]  # fmt: skip
OTHERS = [
    "null",
    "true",
    "false",
    "[]",
    "{}",
    '[1,"a",null]',
    '{"a":1}',
    '{"type":"text","text":"x"}',
    "NaN",
    "-Infinity",
]
LEXEMES = [Raw(x) for x in NUMBERS + STRINGS + OTHERS]
KEYS = [
    "type", "uuid", "sessionId", "timestamp", "message", "content", "model", "usage", "input_tokens",
    "tool_use_id", "toolUseResult", "input", "name", "id", "text", "isMeta", "isSidechain", "subtype",
    "attachment", "answers", "questions", "preview", "previews", "kind", "refs", "role", "schema",
    "selections", "labels", "trigger", "before", "after", "fidelity", "preview_chars", "anchor",
    "data", "messages", "tool_calls", "contextWindow", "provider", "attribution", "source", "outcome",
    "schemaVersion", "requestId", "user", "assistant", "originalTokens", "compressedTokens", "tool", "is_error",
]  # fmt: skip
# What pricing reads: token counts of every sign, size and type, odd model and provider names.
TOKEN_LEXEMES = [
    *NUMBERS, "-5", "-9223372036854775808", "9223372036854775807", "9223372036854775807.0", "4294967296",
    "1.0", "2.5", "-0.5", '"100"', '""', "true", "false", "null", "[]", "{}", '{"input_tokens":1}',
]  # fmt: skip
MODEL_LEXEMES = [
    '"claude-opus-4-1"', '"claude-opus-4-1-20250805"', '"claude-sonnet-4-5-20250929[1m]"', '"<synthetic>"',
    '""', '" "', '"gpt-4o"', '"qwen2.5-coder:14b"', '"anthropic/claude-3.5-sonnet"', '"CLAUDE-OPUS-4"',
    '"us.anthropic.claude-sonnet-4-20250514-v1:0"', '"claude-3-5-sonnet@20241022"', '"gemini-2.5-pro"',
    '"deepseek-chat"', '"o3"', '"\\ud800"', '"\\u6a21\\u578b"', '"claude-opus-4-7-99999999999999999999999"',
    '"' + "claude-" * 700 + '"', '"ollama"', '"openai"', '"anthropic"', '"bedrock"', "null", "42", "[]", "{}",
]  # fmt: skip
USAGE_KEYS = (
    "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
    "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens", "web_search_requests",
)  # fmt: skip
USAGE_OBJECTS = ("cache_creation", "server_tool_use")
NAME_KEYS = ("model", "provider", "service_tier", "speed")
SPECIAL_BYTES = [b"\xef\xbb\xbf", b"\r", b"\r\n", b"\x00", b"\t", b"\xed\xa0\x80", b"\xff", b"\xc3", b"\n", b'"', b"\\"]
PROBE = EventRef("S", "00000000-0000-4000-8000-00000000dead")
HEAD_DEPTH = 5000
_ENVELOPE = b'"uuid":"u0","sessionId":"s0","timestamp":"2026-03-01T10:00:00.000Z"'
# First lines nested HEAD_DEPTH deep: bare and unclosed, closed, inside an object the walkers
# read (a user's content, a tool input, a usage object), and what is still valid JSON.
DEEP_HEADS = (
    b"[" * HEAD_DEPTH,
    b"{" * HEAD_DEPTH,
    b"[" * HEAD_DEPTH + b"]" * HEAD_DEPTH,
    b'{"a":' * HEAD_DEPTH + b"1" + b"}" * HEAD_DEPTH,
    b'{"a":[' * (HEAD_DEPTH // 2) + b'"\\ud83d"' + b"]}" * (HEAD_DEPTH // 2),
    b"{" + b'"x":[{' * (HEAD_DEPTH // 2),
    b'{"type":"user",' + _ENVELOPE + b',"message":{"role":"user","content":['
    + b"[" * HEAD_DEPTH + b"]" * HEAD_DEPTH + b"]}}",
    b'{"type":"assistant",' + _ENVELOPE + b',"message":{"id":"m0","model":"claude-opus-4-1","content":'
    b'[{"type":"tool_use","id":"t0","name":"Bash","input":' + b'{"a":' * HEAD_DEPTH + b"1" + b"}" * HEAD_DEPTH
    + b'}],"usage":{"input_tokens":1,"output_tokens":1}}}',
    b'{"type":"assistant",' + _ENVELOPE + b',"message":{"usage":' + b"{" * HEAD_DEPTH,
)  # fmt: skip


@cache
def transcript_seeds() -> tuple[tuple[bytes, ...], ...]:
    """Every seed transcript as its non-blank lines."""
    paths = sorted((ROOT / "tests/golden/claude/synthetic").glob("*.jsonl"))
    paths += sorted((ROOT / "data-samples/claude").rglob("*.jsonl"))
    return tuple(tuple(line for line in p.read_bytes().split(b"\n") if line.strip()) for p in paths)


@cache
def transcript_corpus() -> tuple[bytes, ...]:
    """The fuzz corpus of whole Claude Code transcripts: every seed transcript as it is, then
    :func:`deep_heads`."""
    return tuple(b"\n".join(seed) + b"\n" for seed in transcript_seeds()) + deep_heads(transcript_seeds()[0])


def deep_heads(lines: tuple[bytes, ...]) -> tuple[bytes, ...]:
    """Each of :data:`DEEP_HEADS` alone, then at the head of ``lines``."""
    rest = b"\n".join(lines) + b"\n"
    return DEEP_HEADS + tuple(head + b"\n" + rest for head in DEEP_HEADS)


@cache
def line_seeds() -> tuple[bytes, ...]:
    return tuple(line for seed in transcript_seeds() for line in seed)


@cache
def chainless_seeds() -> tuple[tuple[bytes, ...], ...]:
    """Every ChainlessChain seed transcript as its non-blank lines (the shared corpus when present)."""
    paths = sorted((ROOT / "data-samples/chainless").glob("*.jsonl"))
    paths += sorted((SHARED / "data/chainless").rglob("*.jsonl")) if (SHARED / "data/chainless").is_dir() else []
    return tuple(tuple(line for line in p.read_bytes().split(b"\n") if line.strip()) for p in paths)


@cache
def chainless_line_seeds() -> tuple[bytes, ...]:
    return tuple(line for seed in chainless_seeds() for line in seed)


_CODEX_HEAD = b'{"timestamp":"2025-11-03T09:00:00.000Z","type":'
# Codex lines nested HEAD_DEPTH deep where the lean scan reads: a response item's output and
# content, a token count's info and rate limits, a turn context; then 25,000 levels in all (read)
# and 25,001 (a problem), in a token count's info.
CODEX_DEEP_LINES = (
    _CODEX_HEAD + b'"response_item","payload":{"type":"function_call_output","call_id":"c","output":'
    + b"[" * HEAD_DEPTH + b"]" * HEAD_DEPTH + b"}}",
    _CODEX_HEAD + b'"response_item","payload":{"type":"message","role":"user","content":[{"text":'
    + b'{"a":' * HEAD_DEPTH + b"1" + b"}" * HEAD_DEPTH + b"}]}}",
    _CODEX_HEAD + b'"event_msg","payload":{"type":"token_count","info":' + b'{"a":' * HEAD_DEPTH + b"1"
    + b"}" * HEAD_DEPTH + b',"rate_limits":null}}',
    _CODEX_HEAD + b'"event_msg","payload":{"type":"token_count","info":null,"rate_limits":' + b"[" * HEAD_DEPTH,
    _CODEX_HEAD + b'"turn_context","payload":{"model":"gpt-5","x":' + b"[" * HEAD_DEPTH + b"]" * HEAD_DEPTH + b"}}",
    _CODEX_HEAD + b'"event_msg","payload":{"type":"token_count","info":' + b"[" * 24_997 + b"]" * 24_997
    + b',"rate_limits":null}}',
    _CODEX_HEAD + b'"event_msg","payload":{"type":"token_count","info":' + b"[" * 24_998 + b"]" * 24_998
    + b',"rate_limits":null}}',
)  # fmt: skip


@cache
def codex_seeds() -> tuple[tuple[bytes, ...], ...]:
    """Every Codex seed rollout as its non-blank lines: the test fixtures and the samples."""
    paths = sorted((ROOT / "tests/fixtures/codex/home").rglob("*.jsonl"))
    paths += sorted((ROOT / "data-samples/codex").rglob("*.jsonl"))
    return tuple(tuple(line for line in p.read_bytes().split(b"\n") if line.strip()) for p in paths)


@cache
def codex_line_seeds() -> tuple[bytes, ...]:
    return tuple(line for seed in codex_seeds() for line in seed) + CODEX_DEEP_LINES


@cache
def codex_corpus() -> tuple[bytes, ...]:
    """The fuzz corpus of whole Codex rollouts: every seed as it is, each of :data:`DEEP_HEADS`
    and :data:`CODEX_DEEP_LINES` alone, at a rollout's head and after its header."""
    seeds = tuple(b"\n".join(seed) + b"\n" for seed in codex_seeds())
    first = codex_seeds()[0]
    rest = b"\n".join(first[1:]) + b"\n"
    deep = DEEP_HEADS + CODEX_DEEP_LINES
    heads = tuple(line + b"\n" + first[0] + b"\n" + rest for line in deep)
    middles = tuple(first[0] + b"\n" + line + b"\n" + rest for line in deep)
    return seeds + deep + heads + middles


@st.composite
def codex_rollouts(draw: st.DrawFn) -> bytes:
    """A slice of a Codex seed rollout (from its header, most often) with some lines mutated,
    dropped, copied or inserted; sometimes a deep line at its head or random bytes only."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=400))
    seed = draw(st.sampled_from(codex_seeds()))
    start = 0 if draw(st.integers(0, 3)) else draw(st.integers(0, max(0, len(seed) - 1)))
    picked = list(seed[start : start + draw(st.integers(1, MAX_SLICE))])
    if draw(st.integers(0, 9)) == 0:
        picked.insert(draw(st.integers(0, len(picked))), draw(st.sampled_from(CODEX_DEEP_LINES)))
    return _mutated(draw, picked, codex_line_seeds())


@cache
def window_seeds() -> tuple[str, ...]:
    """Distinct golden window documents, sorted."""
    folders = [ROOT / "tests/golden/claude/expected", SHARED / "data/claude/expected"]
    docs: set[str] = set()
    for folder in folders:
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
            for line in path.read_bytes().split(b"\n"):
                if not line.strip():
                    continue
                record = json.loads(line)
                docs.update(d for d in [record.get("window"), *(record.get("windows") or [])] if d)
    return tuple(sorted(docs))


def deep(draw: st.DrawFn) -> Raw:
    depth = draw(st.sampled_from(DEPTHS))
    shape = draw(st.sampled_from(["array", "object", "open", "mixed"]))
    if shape == "array":
        return Raw("[" * depth + "]" * depth)
    if shape == "object":
        return Raw('{"a":' * depth + "1" + "}" * depth)
    if shape == "open":
        return Raw("[" * depth)
    return Raw('[{"k":' * (depth // 2) + '"\\ud83d\\ude00"' + "}]" * (depth // 2))


def _value(draw: st.DrawFn, tree: Any) -> Any:
    how = draw(st.sampled_from(["lexeme", "lexeme", "deep", "text", "subtree"]))
    if how == "lexeme":
        return draw(st.sampled_from(LEXEMES))
    if how == "deep":
        return deep(draw)
    if how == "text":
        return draw(st.text(max_size=12))
    slots = _slots(tree)  # another part of the same line, moved: types that are "almost right"
    if not slots:
        return Raw("null")
    parent, i = slots[draw(st.integers(0, len(slots) - 1))]
    return parent[i][1] if isinstance(parent, Obj) else parent[i]


def _slots(tree: Any, limit: int = 2000) -> list[tuple[list, int]]:
    slots: list[tuple[list, int]] = []
    stack = [tree]
    while stack and len(slots) < limit:
        node = stack.pop()
        if isinstance(node, Obj):
            for i, (_, value) in enumerate(node):
                slots.append((node, i))
                stack.append(value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                slots.append((node, i))
                stack.append(value)
    return slots


def _tree_mutation(draw: st.DrawFn, line: bytes) -> bytes | None:
    try:
        tree = json.loads(line, object_pairs_hook=Obj)
    except (ValueError, RecursionError):
        return None
    slots = _slots(tree)
    if not slots:
        return None
    parent, i = slots[draw(st.integers(0, len(slots) - 1))]
    op = draw(st.sampled_from(["replace", "replace", "replace", "delete", "duplicate", "rename"]))
    if op == "replace":
        value = _value(draw, tree)
        parent[i] = (parent[i][0], value) if isinstance(parent, Obj) else value
    elif op == "delete":
        del parent[i]
    elif isinstance(parent, Obj) and op == "duplicate":
        key = parent[i][0]
        parent.insert(i + draw(st.integers(0, 1)), (key, _value(draw, tree)))
    elif isinstance(parent, Obj):
        parent[i] = (draw(st.sampled_from(KEYS)), parent[i][1])
    try:
        return dump(tree).encode("utf-8", "surrogatepass")
    except RecursionError:
        return None


def _byte_mutation(draw: st.DrawFn, line: bytes) -> bytes:
    pos = draw(st.integers(0, len(line)))
    op = draw(st.sampled_from(["flip", "truncate", "delete", "insert", "special", "random"]))
    if op == "flip" and pos < len(line):
        return line[:pos] + bytes([line[pos] ^ (1 << draw(st.integers(0, 7)))]) + line[pos + 1 :]
    if op == "truncate":
        return line[:pos]
    if op == "delete":
        return line[:pos] + line[pos + draw(st.integers(1, 16)) :]
    if op == "special":
        return line[:pos] + draw(st.sampled_from(SPECIAL_BYTES)) + line[pos:]
    if op == "random":
        return draw(st.binary(max_size=64))
    return line[:pos] + draw(st.binary(min_size=1, max_size=8)) + line[pos:]


def _objects(tree: Any, limit: int = 2000) -> list[Obj]:
    found: list[Obj] = []
    stack = [tree]
    while stack and len(found) < limit:
        node = stack.pop()
        if isinstance(node, Obj):
            found.append(node)
            stack.extend(value for _, value in node)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _usage_mutation(draw: st.DrawFn, line: bytes) -> bytes | None:
    """A token count, model or provider name, or usage object of the line replaced or added."""
    try:
        tree = json.loads(line, object_pairs_hook=Obj)
    except (ValueError, RecursionError):
        return None
    interesting = {"usage", *USAGE_KEYS, *USAGE_OBJECTS, *NAME_KEYS}
    places = [(node, i) for node in _objects(tree) for i, (key, _) in enumerate(node) if key in interesting]
    if not places:
        return None
    node, i = places[draw(st.integers(0, len(places) - 1))]
    key, value = node[i]
    if key in NAME_KEYS:
        node[i] = (key, Raw(draw(st.sampled_from(MODEL_LEXEMES))))
    elif key == "usage" and isinstance(value, Obj) and draw(st.booleans()):
        field = draw(st.sampled_from([*USAGE_KEYS[:4], *USAGE_OBJECTS, "service_tier", "speed"]))
        if field in USAGE_OBJECTS:
            inner = draw(st.sampled_from(USAGE_KEYS[4:]))
            added: Any = Obj([(inner, Raw(draw(st.sampled_from(TOKEN_LEXEMES))))])
        elif field in NAME_KEYS:
            added = Raw(draw(st.sampled_from(MODEL_LEXEMES)))
        else:
            added = Raw(draw(st.sampled_from(TOKEN_LEXEMES)))
        value.insert(draw(st.integers(0, len(value))), (field, added))
    else:
        node[i] = (key, Raw(draw(st.sampled_from(TOKEN_LEXEMES))))
    try:
        return dump(tree).encode("utf-8", "surrogatepass")
    except RecursionError:
        return None


def mutate_line(draw: st.DrawFn, line: bytes) -> bytes:
    """One line, changed in what pricing reads, in its JSON tree (when it parses) and/or in its bytes."""
    how = draw(st.integers(0, 7))
    if how < 2:
        mutated = _usage_mutation(draw, line)
        if mutated is not None:
            return mutated
    if how:
        mutated = _tree_mutation(draw, line)
        if mutated is not None:
            return mutated
    return _byte_mutation(draw, line)


def _line(draw: st.DrawFn, seeds: tuple[bytes, ...]) -> bytes:
    how = draw(st.integers(0, 9))
    if how == 0:
        return draw(st.binary(max_size=200))
    if how == 1:
        return dump(deep(draw)).encode()
    line = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 3))):
        line = mutate_line(draw, line)
    return line


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A mutated seed line, random bytes, or a deeply nested value."""
    return _line(draw, line_seeds())


def _anchor_candidates(seed_lines: list[bytes]) -> list[EventRef]:
    found = []
    for line in seed_lines:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
            session = obj.get("sessionId")
            found.append(EventRef(session if isinstance(session, str) else "S", obj["uuid"]))
    return found


def _slice(draw: st.DrawFn, seeds: tuple[tuple[bytes, ...], ...]) -> list[bytes]:
    seed = draw(st.sampled_from(seeds))
    start = draw(st.integers(0, max(0, len(seed) - 1)))
    return list(seed[start : start + draw(st.integers(1, MAX_SLICE))])


def _mutated(draw: st.DrawFn, picked: list[bytes], line_pool: tuple[bytes, ...]) -> bytes:
    """The lines with some mutated, dropped, copied or inserted, joined; sometimes torn at the end."""
    picked = list(picked)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(picked) - 1))
        op = draw(st.sampled_from(["mutate", "mutate", "mutate", "drop", "copy", "insert"]))
        if op == "mutate":
            picked[i] = mutate_line(draw, picked[i])
        elif op == "drop" and len(picked) > 1:
            del picked[i]
        elif op == "copy":
            picked.insert(draw(st.integers(0, len(picked))), picked[i])
        elif op == "insert":
            picked.insert(i, _line(draw, line_pool))
    if draw(st.integers(0, 19)) == 0:
        picked.insert(0, draw(st.sampled_from(DEEP_HEADS)))
    raw = b"\n".join(picked) + draw(st.sampled_from([b"\n", b"", b"\r\n"]))
    if draw(st.integers(0, 9)) == 0:  # a torn last line, as while another process appends
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


# Copilot CLI lines the walk's C loop must decline or read alike: 25,000 levels in all (read)
# and 25,001 (a problem) inside an answer's content, a tool result and a call's arguments; a
# float, whitespace, a repeated key and escapes inside a measured value; a type written with an
# escape; a bad outputTokens.
_COPILOT_HEAD = b'{"type":"'
_COPILOT_TAIL = b',"id":"e","timestamp":"2026-01-01T00:00:00Z","parentId":null}'
COPILOT_ODD_LINES = (
    _COPILOT_HEAD + b'assistant.message","data":{"content":' + b"[" * 24_998 + b"]" * 24_998 + b"}" + _COPILOT_TAIL,
    _COPILOT_HEAD + b'assistant.message","data":{"content":' + b"[" * 24_999 + b"]" * 24_999 + b"}" + _COPILOT_TAIL,
    _COPILOT_HEAD + b'tool.execution_complete","data":{"result":{"content":' + b'{"a":' * 24_997 + b"1"
    + b"}" * 24_997 + b"}}" + _COPILOT_TAIL,
    _COPILOT_HEAD + b'tool.execution_complete","data":{"result":{"content":' + b'{"a":' * 24_998 + b"1"
    + b"}" * 24_998 + b"}}" + _COPILOT_TAIL,
    _COPILOT_HEAD + b'assistant.message","data":{"toolRequests":[{"name":"\\u00e9\\/","arguments":{"k":"\\u00e9\\u001f\\n\\/"}},7,'
    b'{"arguments":["\\ud83d\\ude00","\xe9\xbe\xa5\xe4\xb8\x80"]}],"content":{"x":"\\u001F"},"outputTokens":-1}' + _COPILOT_TAIL,
    _COPILOT_HEAD + b'user\\u002emessage","data":{"content":"hi"}' + _COPILOT_TAIL,
    _COPILOT_HEAD + b'system.message","data":{"content":["a",{"b":true,"c":null,"d":-12}]},"data":1' + _COPILOT_TAIL,
    _COPILOT_HEAD + b'tool.execution_complete","data":{"success":false,"result":"\xe4\xb8\x80\xe9\xbe\xa6x"}' + _COPILOT_TAIL,
    _COPILOT_HEAD + b'assistant.message","data":{"outputTokens":99999999999999999999}' + _COPILOT_TAIL,
    _COPILOT_HEAD + b'assistant.message","data":{"messageId":"","requestId":"","apiCallId":"","model":"",'
    b'"outputTokens":5,"reasoningText":false}' + _COPILOT_TAIL,
)  # fmt: skip


@cache
def copilot_seeds() -> tuple[tuple[bytes, ...], ...]:
    """Every Copilot CLI seed log as its non-blank lines: the samples and the shared examples."""
    paths = sorted((ROOT / "data-samples/copilot").rglob("*.jsonl"))
    paths += sorted((SHARED / "data/agents/copilot").rglob("*.jsonl"))
    return tuple(tuple(line for line in p.read_bytes().split(b"\n") if line.strip()) for p in paths)


@cache
def copilot_line_seeds() -> tuple[bytes, ...]:
    return tuple(line for seed in copilot_seeds() for line in seed) + COPILOT_ODD_LINES


@cache
def copilot_corpus() -> tuple[bytes, ...]:
    """The fuzz corpus of whole Copilot CLI logs: every seed as it is, and each odd line and deep
    head alone and after a seed's first line."""
    seeds = tuple(b"\n".join(seed) + b"\n" for seed in copilot_seeds())
    odd = DEEP_HEADS + COPILOT_ODD_LINES
    first = copilot_seeds()[0]
    return seeds + odd + tuple(first[0] + b"\n" + line + b"\n" + b"\n".join(first[1:]) + b"\n" for line in odd)


@st.composite
def copilot_logs(draw: st.DrawFn) -> bytes:
    """A slice of a Copilot CLI seed log with some lines mutated, dropped, copied or inserted
    (an odd line among them, sometimes); sometimes random bytes only."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=400))
    picked = _slice(draw, copilot_seeds())
    if draw(st.integers(0, 4)) == 0:
        picked = list(picked)
        picked.insert(draw(st.integers(0, len(picked))), draw(st.sampled_from(COPILOT_ODD_LINES)))
    return _mutated(draw, picked, copilot_line_seeds())


def _otel_record(n: int, **changes: object) -> bytes:
    record: dict = {
        "type": "span",
        "traceId": f"t{n % 3}",
        "spanId": f"s{n}",
        "name": "chat gpt-4.1" if n % 4 else "invoke_agent copilot",
        "startTime": [1767261600 + n, 0],
        "endTime": [1767261601 + n, 5000],
        "attributes": {
            "gen_ai.operation.name": "chat" if n % 4 else "invoke_agent",
            "gen_ai.conversation.id": f"c{n % 2}",
            "gen_ai.response.model": "claude-sonnet-4.5-1m-internal",
            "gen_ai.usage.input_tokens": 1000 + n,
            "gen_ai.usage.output_tokens": "50",
            "gen_ai.usage.cache_read.input_tokens": 800,
            "gen_ai.usage.cache_write.input_tokens": 10,
            "gen_ai.usage.reasoning.output_tokens": 5,
        },
    }
    record.update(changes)
    return json.dumps(record).encode()


OTEL_LINES = (
    *(_otel_record(n) for n in range(6)),
    _otel_record(6, type="log", attributes={"event.name": "gen_ai.client.inference.operation.details",
                                            "gen_ai.usage.input_tokens": 9}),
    _otel_record(7, type="metric", attributes=[1]),
    _otel_record(8, endTime=[10**30, -1], startTime="x", timestamp=-1),
    _otel_record(9, endTime=[1, 2, 3], attributes={"gen_ai.usage.input_tokens": "１２"}),
    _otel_record(10, attributes={"session.id": 7, "gen_ai.usage.input_tokens": 1.5, "gen_ai.usage.output_tokens": -2}),
    _otel_record(11, type=None, traceId=None, attributes={"gen_ai.usage.output_tokens": 99999999999999999999999}),
)  # fmt: skip
"""Lines of the OpenTelemetry file export, some of them odd (for ``frames.copilot.otel``)."""


@st.composite
def otel_exports(draw: st.DrawFn) -> bytes:
    """Lines of the OpenTelemetry file export, some mutated, dropped, copied or inserted;
    sometimes random bytes only."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=400))
    return _mutated(draw, list(OTEL_LINES[: draw(st.integers(1, len(OTEL_LINES)))]), OTEL_LINES)


@st.composite
def chainless_transcripts(draw: st.DrawFn) -> bytes:
    """A slice of a ChainlessChain seed transcript with some lines mutated; sometimes random bytes only."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=400))
    return _mutated(draw, _slice(draw, chainless_seeds()), chainless_line_seeds())


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[bytes, list[EventRef], dict[str, int]]:
    """A slice of a seed transcript with some lines mutated, anchors into it, and capture options."""
    picked = _slice(draw, transcript_seeds())
    candidates = _anchor_candidates(picked) or [PROBE]
    raw = _mutated(draw, picked, line_seeds())
    anchors = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3))
    if draw(st.integers(0, 9)) == 0:
        anchors.append(PROBE)
    options = {
        "before": draw(st.integers(0, 8)),
        "after": draw(st.integers(0, 3)),
        "preview_chars": draw(st.integers(-3, 300)),
    }
    return raw, anchors, options


@st.composite
def window_documents(draw: st.DrawFn) -> str | bytes:
    """A golden window document, mutated in its JSON tree and/or its text; sometimes as bytes."""
    doc = draw(st.sampled_from(window_seeds())).encode("utf-8")
    for _ in range(draw(st.integers(1, 3))):
        doc = mutate_line(draw, doc)
    if draw(st.booleans()):
        return doc
    return doc.decode("utf-8", "surrogateescape")


# -- folder trees, for discovery ----------------------------------------------------------------

NAMES = [
    "a", "b", "proj", " sp ace ", "-dash", "*", "?", "[x]", "[", "**", "caf\u00e9", "\u6a21\u578b", "caf\udce9",
    "\udcff\udcfe", "new\nline", "tab\t", ".hidden", "..", "x" * 200, "subagents", "agent-1", "agent-", "agent-\udce9",
    "0b7e5c1a-7d2e-4c1b-9a55-2f0e8d3c4a10", "sessions", "~", "$HOME", "a,b",
]  # fmt: skip
KINDS = ["file", "file", "file", "folder", "folder", "link-file", "link-folder", "link-up", "broken", "loop", "fifo"]
CONTENTS = [
    "claude", "chainless", "summary", "empty", "blank", "random", "claude-then-chainless", "chainless-late",
    "claude-deep-head", "chainless-deep-head",
]  # fmt: skip
SUMMARY_LINE = b'{"type":"summary","summary":"Fixing the build","leafUuid":"00000000-0000-4000-8000-000000000001"}'


@dataclass(frozen=True)
class Entry:
    """One entry of a generated tree: under folder ``parent`` (0 is the root, k the k-th folder
    entry), a ``kind`` of thing; ``data`` is a file's bytes, ``target`` the entry a link points to."""

    parent: int
    name: str
    kind: str
    content: str
    data: bytes
    target: int


@st.composite
def trees(draw: st.DrawFn) -> tuple[Entry, ...]:
    """A small folder tree: files of either format (or neither), folders, links of every kind, FIFOs."""
    folders = 1
    entries: list[Entry] = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(KINDS))
        name = draw(st.sampled_from(NAMES)) + draw(
            st.sampled_from([".jsonl", ".jsonl", ".jsonl", "", ".json", ".JSONL"])
        )
        content = draw(st.sampled_from(CONTENTS))
        target = draw(st.integers(0, max(0, len(entries) - 1)))  # an earlier entry, for a link
        entries.append(Entry(draw(st.integers(0, folders - 1)), name, kind, content, _content(draw, content), target))
        folders += kind == "folder"
    return tuple(entries)


def _content(draw: st.DrawFn, content: str) -> bytes:
    if content == "claude":
        return b"\n".join(draw(st.lists(st.sampled_from(line_seeds()), min_size=1, max_size=3))) + b"\n"
    if content == "chainless":
        return b"\n".join(draw(st.lists(st.sampled_from(chainless_line_seeds()), min_size=1, max_size=3))) + b"\n"
    if content == "summary":
        return b"\n".join([SUMMARY_LINE] * draw(st.integers(1, 12))) + draw(st.sampled_from([b"\n", b""]))
    if content == "blank":
        return draw(st.sampled_from([b"\n", b"\n\n\r\n", b" \t\n", b"\xef\xbb\xbf\n"]))
    if content == "random":
        return draw(st.binary(max_size=300))
    if content == "claude-then-chainless":
        return draw(st.sampled_from(line_seeds())) + b"\n" + draw(st.sampled_from(chainless_line_seeds())) + b"\n"
    if content == "chainless-late":  # a chainless envelope after lines that are not objects
        return b"[]\n42\nnot json\n" + draw(st.sampled_from(chainless_line_seeds())) + b"\n"
    if content == "claude-deep-head":  # the first line nested deep (any shape), then transcript lines
        head = dump(deep(draw)).encode()
        return head + b"\n" + b"\n".join(draw(st.lists(st.sampled_from(line_seeds()), min_size=1, max_size=3))) + b"\n"
    if content == "chainless-deep-head":  # arrays only: a first object decides the format
        depth = draw(st.sampled_from(DEPTHS))
        head = b"[" * depth + draw(st.sampled_from([b"]" * depth, b""]))
        # at least one ChainlessChain event line after it (the seeds also hold junk lines, and a
        # file of junk only is no ChainlessChain file to tell apart)
        envelope = b'{"type":"session_start","timestamp":1767225600000,"data":{"provider":"ollama"}}'
        lines = draw(st.lists(st.sampled_from(chainless_line_seeds()), min_size=0, max_size=3))
        return head + b"\n" + b"\n".join([*lines, envelope]) + b"\n"
    return b""


# -- the C extension's typed columns: states as Column.state() gives them, some broken ------------

COLUMN_KINDS = ("i64", "bool", "str")
_COLUMN_VALUES = {
    "i64": st.integers(-(2**63), 2**63 - 1),
    "bool": st.booleans(),
    "str": st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
}
_COUNTS = (-1, 0, 1, 7, 8, 9, 2**60, 2**62, 2**63 - 1)


def column_state(kind: str, values: list[Any]) -> tuple[Any, ...]:
    """What ``Column(kind)`` holding ``values`` (None: null) gives as ``state()``: (kind, length,
    nulls, validity bits, int64 offsets or None, data), in the machine's byte order."""
    n = len(values)
    valid = bytes(sum(1 << j for j in range(8) if i + j < n and values[i + j] is not None) for i in range(0, n, 8))
    nulls = values.count(None)
    if kind == "i64":
        return kind, n, nulls, valid, None, b"".join(struct.pack("=q", v or 0) for v in values)
    if kind == "bool":
        return kind, n, nulls, valid, None, bytes(1 if v else 0 for v in values)
    texts = [v.encode() for v in values if v is not None]
    ends = [0]
    for v in values:
        ends.append(ends[-1] + (len(v.encode()) if v is not None else 0))
    return kind, n, nulls, valid, struct.pack(f"={n + 1}q", *ends), b"".join(texts)


@st.composite
def column_states(draw: st.DrawFn) -> tuple[Any, ...]:
    """A column's state, sometimes with a field changed: its kind, a count, a buffer's bytes."""
    kind = draw(st.sampled_from(COLUMN_KINDS))
    values = draw(st.lists(st.none() | _COLUMN_VALUES[kind], max_size=20))
    state = list(column_state(kind, values))
    for _ in range(draw(st.integers(0, 3))):
        field = draw(st.integers(0, 5))
        if field == 0:
            state[0] = draw(st.sampled_from((*COLUMN_KINDS, "f64")))
        elif field in (1, 2):
            state[field] = draw(st.sampled_from((state[field] - 1, state[field] + 1, *_COUNTS)))
        elif state[field] is None or draw(st.integers(0, 9)) == 0:
            state[field] = None if state[field] is not None else draw(st.binary(max_size=40))
        else:
            buffer = bytearray(state[field])
            how = draw(st.sampled_from(["cut", "grow", "flip"]))
            if how == "cut" or (how == "flip" and not buffer):
                del buffer[draw(st.integers(0, len(buffer))) :]
            elif how == "grow":
                buffer += draw(st.binary(min_size=1, max_size=9))
            else:
                buffer[draw(st.integers(0, len(buffer) - 1))] ^= 1 << draw(st.integers(0, 7))
            state[field] = bytes(buffer)
    return tuple(state)
