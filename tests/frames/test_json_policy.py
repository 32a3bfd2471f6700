"""The JSON line policy through the frames decoders: one reading whatever the line's length or
depth, with or without the C skimmer; orjson's reading taken only where it is the policy's; and
a deeply nested line in a folder is one problem, never a crash, for Claude Code and ChainlessChain.

The lengths and depths are those where a code path used to change or still does: the skimmer's
16-byte string scan near the end of the data, its scratch buffers (text 4,096 bytes, 64 blocks,
256 keys, 64 levels), the old duplicate-key check (8,192 bytes, 200 levels), orjson's limits
(1,024 levels read, 255 written), the standard library decoder's recursion (about 1,000) and the
policy's own limit (25,000).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

import cc_analytics.frames as ccf
import cc_analytics.frames.chainless as chainless
from cc_analytics.frames.claude import decode
from cc_analytics.frames.claude.decode import EVENTS, REQUESTS, RULES, SESSIONS, TURNS, decode_files
from cc_analytics.frames.claude.discovery import discover
from cc_analytics.frames.lines import read_line, read_value
from cc_analytics.jsonline import ECMASCRIPT, MAX_DEPTH, STRICT, LineError
from cc_analytics.jsonline import decode as policy_decode
from tests.conftest import run_cli
from tests.frames import chainless_builders as cl
from tests.frames.claude_builders import assistant, text, user, write
from tests.fuzz import mutations

LENGTHS = (4095, 4096, 4097, 8191, 8192, 8193, 9 * 1024, 65535, 65536, 65537)
DEPTHS = (0, 63, 64, 65, 127, 128, 129, 199, 200, 201, 254, 255, 256, 999, 1000, 1001, 1023, 1024, 1025, 1633)
DEPTHS += (3000, MAX_DEPTH - 1)  # levels under the line's object: MAX_DEPTH - 1 is the deepest line read
SKIMMER = decode.SKIM_LINES
WALKERS = ("skimmer", "python") if SKIMMER is not None else ("python",)
TOO_DEEP = f"line nested deeper than {MAX_DEPTH:,} levels"


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# -- Claude Code: a line that repeats what the walker reads ------------------------------------

REPEATS = (
    b'{"type":"assistant","type":"user","uuid":"a1","uuid":"a2","sessionId":"S",'
    b'"timestamp":"2026-03-01T10:00:01.000Z","timestamp":"bad",{pad0}"message":{"model":"first",'
    b'"content":[{"type":"text","text":"kept"},{"type":"tool_use","id":"t1","name":"Bash",'
    b'"input":{"command":"rm -rf build","command":"echo safe"},"input":{"command":"ignored"}}],'
    b'"content":[{"type":"text","text":"second content"}],"model":"last","id":"m1",'
    b'"usage":{"input_tokens":1,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,'
    b'"output_tokens":4,"input_tokens":"x"},"usage":{"input_tokens":7}},"requestId":"r1",'
    b'"isMeta":false,"isMeta":true,"x":{deep}{pad1}}'
)
# What every profile keeps of it, by the first occurrence of each key (the last inside "input").
EXPECTED = {
    "type": "assistant",
    "model": "first",
    "input_tokens": 1,
    "cache_creation_tokens": 2,
    "cache_read_tokens": 3,
    "output_tokens": 4,
    "message_id": "m1",
    "request_id": "r1",
    "is_meta": False,
}
# The same line without a repeated key inside the tool input: the skimmer keeps it itself.
SKIMMED = REPEATS.replace(b'"command":"rm -rf build",', b"")


def repeats(length: int | None = None, *, depth: int = 0, pad_first: bool = False, line: bytes = REPEATS) -> bytes:
    """The line with ``depth`` arrays under "x", padded (in an unread member, before or after the
    repeated keys) to ``length`` bytes."""
    bare = line.replace(b"{deep}", nested(depth) if depth else b"null")
    empty = bare.replace(b"{pad0}", b"").replace(b"{pad1}", b"")
    pad = b"" if length is None else b"p" * (length - len(empty) - len(b',"pad":""'))
    member = b'"pad":"' + pad + b'",' if pad_first else b',"pad":"' + pad + b'"'
    out = bare.replace(b"{pad0}", member if pad_first else b"").replace(b"{pad1}", b"" if pad_first else member)
    assert length is None or len(out) == length
    return out


def walked(path: Path, walker: str) -> dict[str, Any]:
    """What each profile keeps of the transcript at ``path``, read with the skimmer or without."""
    files = discover([path])
    kept: dict[str, Any] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decode, "SKIM_LINES", SKIMMER if walker == "skimmer" else None)
        for name, profile in (("events", EVENTS), ("sessions", SESSIONS), ("turns", TURNS), ("requests", REQUESTS)):
            got = decode_files(files, profile)
            rows = got.events.select(pl.col(c) for c in EXPECTED if c in got.events.columns).to_dicts()
            kept[name] = (rows, got.blocks.drop("text", strict=False).rows(), got.problems["reason"].to_list())
    return kept


def assistant_rows(kept: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for rows, _, _ in kept.values() for row in rows if row.get("type") == "assistant"]


def test_the_issues_line_reads_the_first_model_at_383_bytes_and_at_9_kb(tmp_path: Path) -> None:
    line = (
        '{"type":"assistant","uuid":"a1","sessionId":"S","timestamp":"2026-03-01T10:00:01.000Z","message":'
        '{"model":"first","model":"last","id":"m1","content":[{"type":"text","text":"hi"}],"usage":'
        '{"input_tokens":1,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":4}},'
        '"requestId":"r1","pad":""}'
    )
    for length in (383, 9 * 1024):
        padded = line.replace('"pad":""', '"pad":"' + "p" * (length - len(line)) + '"')
        assert len(padded) == length
        path = write(tmp_path / f"p{length}" / "s.jsonl", user("hi"), padded)
        assert ccf.read_events(path)["model"].to_list() == [None, "first"]
        assert ccf.read_sessions(path)["last_model"].to_list() == ["first"]


@pytest.mark.parametrize("pad_first", [False, True], ids=["pad-after", "pad-before"])
@pytest.mark.parametrize("walker", WALKERS)
def test_a_repeated_key_reads_the_same_at_every_length(tmp_path: Path, walker: str, pad_first: bool) -> None:
    lengths = [*LENGTHS, *range(700, 740)]  # every offset of the 16-byte scan near the end of the data
    results = []
    for length in lengths:
        for newline in (b"", b"\n"):  # the last line of the data: its strings end near the buffer's end
            path = tmp_path / f"{length}{len(newline)}" / "p" / "s.jsonl"
            path.parent.mkdir(parents=True)
            path.write_bytes(repeats(length, pad_first=pad_first) + newline)
            kept = walked(path, walker)
            assert assistant_rows(kept) == [EXPECTED] * 4, length
            results.append(kept)
    assert all(kept == results[0] for kept in results)


@pytest.mark.parametrize("walker", WALKERS)
def test_a_repeated_key_reads_the_same_at_every_depth(tmp_path: Path, walker: str) -> None:
    results = []
    for depth in DEPTHS:
        path = tmp_path / str(depth) / "p" / "s.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(repeats(depth=depth) + b"\n")
        kept = walked(path, walker)
        assert assistant_rows(kept) == [EXPECTED] * 4, depth
        results.append(kept)
    assert all(kept == results[0] for kept in results)
    path = tmp_path / "too-deep" / "p" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(repeats(depth=MAX_DEPTH) + b"\n")  # one level more than the policy reads
    assert all(got == ([], [], [TOO_DEEP]) for got in walked(path, walker).values())


def test_the_skimmer_keeps_a_line_that_repeats_a_key_itself_at_every_length_and_depth() -> None:
    skim = pytest.importorskip("cc_analytics.frames.claude._skim", reason="the C skimmer is not built").skim
    for line in [repeats(n, line=SKIMMED) for n in (640, 4097, 8193, 65537)] + [
        repeats(depth=d, line=SKIMMED) for d in (129, 1025, MAX_DEPTH - 1)
    ]:
        kept = skim(line, 0, len(line), 0, 3)
        assert kept is not None and kept[:2] == ("assistant", None) and kept[5] == "first"
        assert kept[14:18] == (1, 2, 3, 4)
    too_deep = repeats(depth=MAX_DEPTH, line=SKIMMED)
    assert skim(too_deep, 0, len(too_deep), 0, 3) is None  # left to the walker, which reports it


@pytest.mark.parametrize("walker", WALKERS)
def test_the_skimmers_buffers_change_nothing(tmp_path: Path, walker: str) -> None:
    """Around each scratch buffer's size: the prompt text (4,096 bytes, escaped or joined from
    blocks), the blocks (64), the keys of a tool input (256, one repeated) and its levels (64)."""
    lines = []
    for n in (4094, 4095, 4096, 4097):
        escaped = "é\\n" + "a" * (n - 3)
        lines.append(json.dumps(user("x"))[:-2].replace('"content": "x"', f'"content": "{escaped}"') + "}}")
        lines[-1] = lines[-1].replace('"content": ', '"content": "first", "content": ', 1) if n % 2 else lines[-1]
        parts = [{"type": "text", "text": "b" * (n // 8)}] * 8
        lines.append(json.dumps(user(parts)))
    for count in (63, 64, 65):
        lines.append(json.dumps(assistant([text(str(k)) for k in range(count)])))
    for keys in (255, 256, 257):
        tool = {"type": "tool_use", "id": "t", "name": "X", "input": {f"k{k}": k for k in range(keys)}}
        plain = json.dumps(assistant([tool]), separators=(",", ":"))
        lines += [plain, plain.replace('"k0":0', '"k0":0,"k0":"last"')]
    for levels in (62, 63, 64, 65, 66):
        tool = {"type": "tool_use", "id": "t", "name": "X", "input": "{deep}"}
        plain = json.dumps(assistant([tool]), separators=(",", ":"))
        deep = '{"a":' * levels + '{"b":1,"b":2}' + "}" * levels
        lines += [plain.replace('"{deep}"', deep), plain.replace('"{deep}"', deep.replace('"b":1,', ""))]
    path = write(tmp_path / "p" / "s.jsonl", *lines)
    got = walked(path, walker)
    assert all(problems == [] for _, _, problems in got.values())
    if walker == "skimmer":
        assert got == walked(path, "python")


# -- ChainlessChain: JSON.parse, the last of a repeated key -------------------------------------


def chainless_line(pad: int = 0, depth: int = 0) -> str:
    data = (
        '{"title":"t","provider":"openai","model":"first","model":"last","pad":"' + "p" * pad + '",'
        '"x":' + (nested(depth).decode() if depth else "null") + "}"
    )
    return cl.event("session_start", None).replace("null", data)


def test_chainless_reads_the_same_at_every_length_and_depth(tmp_path: Path) -> None:
    variants = [chainless_line(pad=n) for n in (0, 300, 8192, 9 * 1024, 65536)]
    variants += [chainless_line(depth=d) for d in (*DEPTHS[:-1], MAX_DEPTH - 2)]  # "x" is two objects deep
    for k, line in enumerate(variants):
        path = cl.write(tmp_path, f"s{k}", [line, cl.msg("user", "hi")])
        assert chainless.read_events(path).select("model", "provider").row(0) == ("last", "openai")
        assert chainless.read_problems(path).height == 0
    path = cl.write(tmp_path, "too-deep", [chainless_line(depth=MAX_DEPTH - 1), cl.msg("user", "hi")])
    assert chainless.read_problems(path)["reason"].to_list() == [
        f"not strict JSON (nested deeper than {MAX_DEPTH:,} levels); line skipped"
    ]


# -- orjson's reading, taken only where it is the policy's -------------------------------------


def same(a: Any, b: Any) -> bool:
    """Same value and types all the way down (1 is not 1.0, -0.0 is not 0.0), without recursion."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if type(x) is dict:
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif type(x) is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif type(x) is float:
            if x.hex() != y.hex():
                return False
        elif x != y:
            return False
    return True


def policy_reading(line: bytes, rules: Any) -> Any:
    try:
        return policy_decode(line, rules)
    except LineError as exc:
        return exc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutations.lines())
def test_read_line_is_the_policys_reading(line: bytes) -> None:
    for rules in (STRICT, RULES, ECMASCRIPT):
        want = policy_reading(line, rules)
        try:
            got, _ = read_value(line, rules)
        except LineError as exc:
            assert isinstance(want, LineError), exc
            assert exc.too_deep == want.too_deep
            continue
        assert not isinstance(want, LineError), want
        assert same(got, want)


@pytest.mark.parametrize(
    "line",
    [
        b'{"a":1e6,"b":1,"b":2}',  # orjson writes 1e6 longer by exactly what the repeated member takes
        b'{"t":"10:00","a":"x","a":"y:z"}',
        b'{"k\\u003a":1,"k\\u003a":2}',
        b"[18446744073709551616,-9223372036854775809]",
        b'{"x":' + nested(300) + b',"x":1}',  # deeper than orjson writes
        b'{"x":' + nested(1100) + b',"x":1}',  # deeper than orjson reads
        memoryview(b'{"a":{"b":1,"b":2}}'),
    ],
)
def test_read_line_where_orjsons_reading_is_not_the_policys(line: bytes) -> None:
    for rules in (STRICT, RULES, ECMASCRIPT):
        assert same(read_line(line, rules), policy_decode(bytes(line), rules))


# -- a folder with one deeply nested line: every other file read, that one a problem --------------


def claude_folder(root: Path, head: bytes | None, middle: bytes | None) -> Path:
    good = write(root / "p" / "good.jsonl", user("hi"), assistant([text("hello")]))
    other = "22222222-2222-4333-8444-555555555555"
    lines = [user("also", session=other), assistant([text("yes")], session=other)]
    bad = root / "p" / "bad.jsonl"
    body = [json.dumps(line).encode() for line in lines]
    if middle is not None:
        body.insert(1, middle)
    bad.write_bytes(b"\n".join(([head] if head is not None else []) + body) + b"\n")
    assert good.exists()
    return bad


DEEP_LINES = {
    "1633 arrays": nested(1633),
    "3000 objects": b'{"k":' * 3000 + b"1" + b"}" * 3000,
    "30000 arrays": nested(30_000),
    "30000 objects": b'{"k":' * 30_000 + b"1" + b"}" * 30_000,
    "30000 open": b"[" * 30_000,
}


@pytest.mark.parametrize("where", ["first", "middle"])
@pytest.mark.parametrize("name", sorted(DEEP_LINES))
def test_a_claude_folder_with_a_deep_line(tmp_path: Path, name: str, where: str) -> None:
    deep = DEEP_LINES[name]
    bad = claude_folder(tmp_path, deep if where == "first" else None, deep if where == "middle" else None)
    line = 1 if where == "first" else 2
    reason = (
        TOO_DEEP
        if name.startswith("30000")
        else "not a JSON object (array)"
        if "arrays" in name
        else "missing or non-string 'type'"
    )

    tables = ccf.read_tables(tmp_path)
    assert tables.sessions.height == 2 and tables.sessions["requests"].to_list() == [1, 1]
    assert tables.problems.select("line", "reason").rows() == [(line, reason)]
    assert tables.problems["source_file"].to_list() == [str(bad)]
    assert ccf.read_sessions(tmp_path).height == 2  # the lazy verbs, on a Polars thread

    result = run_cli(["sessions", str(tmp_path)])
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    assert b"2 sessions" in result.stdout and str(bad).encode() in result.stderr


@pytest.mark.parametrize("where", ["first", "middle"])
@pytest.mark.parametrize("depth", [1633, 30_000])
def test_a_chainless_folder_with_a_deep_line(tmp_path: Path, depth: int, where: str) -> None:
    deep = nested(depth).decode()
    cl.write(tmp_path, "good", [cl.start(model="gpt-4o"), cl.msg("user", "hi")])
    body = [cl.start(model="qwen3:8b"), cl.msg("user", "hello"), cl.msg("assistant", "yes", "assistant_message")]
    body.insert(0 if where == "first" else 1, deep)
    bad = cl.write(tmp_path, "bad", body)

    tables = ccf.read_tables(tmp_path)
    assert sorted(tables.sessions["session_id"]) == ["bad", "good"]
    assert set(tables.sessions["format"]) == {"chainlesschain"}  # the deep first line hides nothing
    problems = tables.problems.select("source_file", "line", "reason").rows()
    if depth > MAX_DEPTH:
        line = 1 if where == "first" else 2
        assert problems == [
            (str(bad), line, f"not strict JSON (nested deeper than {MAX_DEPTH:,} levels); line skipped")
        ]
    else:  # JSON.parse reads it: an event of no type
        assert problems == []
    assert chainless.context_frame(bad)["messages"].to_list() == [2]

    result = run_cli(["sessions", str(tmp_path)])
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    assert b"2 sessions" in result.stdout
