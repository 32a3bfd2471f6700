"""What the frames fuzz targets found, each pinned by the smallest input that showed it.

Through the public loaders, as a user would meet each: a file name that is not UTF-8 (Linux
allows any bytes but ``/`` and NUL), a ChainlessChain transcript whose name holds a glob
character, Claude Code token counts beyond 64 bits, and a line nested deeper than Python's
stack that also holds a number beyond double range.
"""

from __future__ import annotations

from pathlib import Path

import cc_analytics.frames as ccf
import cc_analytics.frames.chainless as chainless
from cc_analytics.frames.sources import shown
from tests.frames import chainless_builders as cl
from tests.frames.claude_builders import assistant, text, usage, user, write

NOT_UTF8 = "caf\udce9"  # the byte 0xE9 alone, as Python decodes it from a file name


def test_a_file_name_that_is_not_utf8_is_shown_with_its_byte_escaped(tmp_path: Path):
    project = tmp_path / f"proj-{NOT_UTF8}"
    claude_file = write(project / f"{NOT_UTF8}.jsonl", user("hi"), assistant(text("hello")), "[1")
    chainless_file = cl.write(tmp_path, f"agent-{NOT_UTF8}", [cl.start(), cl.msg("user", "hi"), "{"])

    tables = ccf.read_tables(tmp_path)  # used to raise UnicodeEncodeError while building the frames

    assert tables.sessions.height == 2 and "agent-caf\\xe9" in tables.sessions["session_id"].to_list()
    assert set(tables.sessions["project_dir"]) == {"proj-caf\\xe9", tmp_path.name}
    assert set(tables.problems["source_file"]) == {shown(str(claude_file)), shown(str(chainless_file))}
    assert shown(str(claude_file)).endswith("/proj-caf\\xe9/caf\\xe9.jsonl")
    events = ccf.read_events(chainless_file)
    assert events["source_file"].unique().to_list() == [shown(str(chainless_file))]


def test_a_chainless_transcript_named_with_glob_characters_is_read_as_named(tmp_path: Path):
    named = cl.write(tmp_path, "[x]", [cl.start(model="gpt-4o"), cl.msg("user", "hi")])
    cl.write(tmp_path, "x", [cl.start(model="qwen3:8b")])  # what "[x].jsonl" matches as a pattern

    sessions = ccf.read_sessions(tmp_path)  # by content: the files reach chainless.resolve one by one

    assert sorted(sessions["session_id"]) == ["[x]", "x"]
    assert chainless.read_sessions(named)["session_id"].to_list() == ["[x]"]
    assert chainless.read_sessions(tmp_path / "[[]x].jsonl")["session_id"].to_list() == ["[x]"]  # a real glob


def test_token_counts_beyond_64_bits_are_problems_and_the_rest_is_priced(tmp_path: Path):
    huge = {**usage(), "input_tokens": 2**64, "cache_creation": {"ephemeral_1h_input_tokens": 2**63}}
    negative_huge = {**usage(), "output_tokens": -(2**63) - 1}
    path = write(
        tmp_path / "p" / "s.jsonl",
        user("hi"),
        assistant([text("a")], tokens=huge),
        assistant([text("b")], tokens=negative_huge),
        assistant([text("c")]),
    )

    tables = ccf.read_tables(path)  # used to raise TypeError (a Python int too large for Int64)

    reasons = sorted(tables.problems["reason"])
    assert reasons == [
        "usage.cache_creation.ephemeral_1h_input_tokens is not a 64-bit integer (9223372036854775808)",
        "usage.input_tokens is not a 64-bit integer (18446744073709551616)",
        "usage.output_tokens is not a 64-bit integer (-9223372036854775809)",
    ]
    assert tables.requests["input_tokens"].to_list() == [10, 10]  # a request needs its input count
    assert tables.requests["cost_usd"].drop_nulls().len() >= 1
    assert ccf.read_sessions(path).height == 1


def test_a_deep_line_with_a_number_beyond_double_range_is_a_problem(tmp_path: Path):
    deep = '{"type":"user","n":1e400,"x":' + "[" * 5000 + "]" * 5000 + "}"
    path = write(tmp_path / "p" / "s.jsonl", user("hi"), deep, assistant([text("a")]))

    problems = ccf.read_problems(path)  # used to raise RecursionError from the lenient number parse

    assert problems["line"].to_list() == [2]
    assert ccf.read_events(path).height == 2


def _at_stack_depth(frames: int, call):
    return call() if frames == 0 else _at_stack_depth(frames - 1, call)


def test_a_deep_line_with_a_repeated_key_reads_the_same_whatever_the_callers_stack(tmp_path: Path):
    # The first "type" is 300 arrays deep, the second is "user": which one was read depended
    # on how much of Python's stack the caller had used. The lazy verbs decode on a Polars
    # thread (a fresh stack), read_tables on the caller's: read_tables != read_turns.
    deep = '{"type":' + "[" * 300 + "]" * 300 + ',"type":"user","uuid":"u2","sessionId":"S",'
    deep += '"timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"again"}}'
    path = write(tmp_path / "p" / "s.jsonl", user("hi"), deep)

    lazy = ccf.read_turns(path)
    eager_deep_in_the_stack = _at_stack_depth(400, lambda: ccf.read_tables(path).turns)

    assert lazy.equals(eager_deep_in_the_stack)
    # The JSON line policy: the first "type" (an array) wins at any depth and any length, as
    # the reference reads it, so the line is a problem (orjson's reading kept the last before).
    assert lazy.height == 1
    assert ccf.read_problems(path)["reason"].to_list() == ["missing or non-string 'type'"]


def test_chainless_values_nested_deeper_than_python_or_orjson_write_are_read(tmp_path: Path):
    deep_provider = "[" * 900 + '"x"' + "]" * 900  # orjson reads 1024 levels; Python recursed
    deep_calls = "[" * 300 + "]" * 300  # orjson writes only 255 levels
    lines = [
        cl.event("session_start", None).replace("null", '{"model":"gpt-4o","provider":' + deep_provider + "}"),
        cl.event("assistant_message", None).replace(
            "null", '{"role":"assistant","content":"a","tool_calls":' + deep_calls + "}"
        ),
    ]
    path = cl.write(tmp_path, "s", lines)

    tables = ccf.read_tables(path)  # used to raise RecursionError (String(v)) and TypeError (orjson)

    assert tables.problems.height == 0
    assert chainless.context_frame(path)["messages"].to_list() == [1]
    assert ccf.read_events(path)["provider"].to_list() == ["x", None]  # String([[["x"]]]) is "x"
