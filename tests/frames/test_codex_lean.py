"""The lean scan behind ``cc-analytics sessions`` (``frames.codex.lean``) against the walker.

``tables_batch(files, turns=False)`` reads a batch with the lean scan where it can and with the
walker (``Profile.TABLES``) where it cannot; ``tables_batch(files)`` always uses the walker.
Their sessions, requests and problems must be equal on every input: the fixture home (its
hostile rollout included), the shared examples, a generated corpus and generated rollouts
with Codex's rules and hostile lines mixed in. Other tests check that the lean scan does read
what it should (the equality would hold trivially if it gave up on everything).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cc_analytics.frames.codex import iter_tables, read_problems, resolve, tables_batch
from cc_analytics.frames.codex.decode import Profile, decode
from cc_analytics.frames.codex.lean import requests_tables
from cc_analytics.frames.codex.plugin import lean_batch_bytes
from cc_analytics.frames.codex.requests import request_rows, requests_batch, walked_requests_batch
from cc_analytics.frames.codex.scan import Unclean, scan
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.sources import TranscriptFile
from tests.conftest import ROOT, shared_path
from tests.fixtures.codex import make_corpus
from tests.fixtures.codex.builders import line, message, meta, prompt, tokens, turn_context, usage

HOME = ROOT / "tests" / "fixtures" / "codex" / "home"
PREFIX = "0199a000-0000-7000-8000-0000000000"


def assert_same(files: list[TranscriptFile], contents: list[bytes] | None = None) -> None:
    """The lean tables of ``files`` equal the walker's, and so do the requests ``usage`` reads."""
    lean_requests, lean_problems = requests_tables(files, contents)
    walked = decode(files, Profile.USAGE, contents=contents)
    assert_frame_equal(lean_requests, price_requests(request_rows(walked).collect()))
    assert_frame_equal(lean_problems, walked.problems)
    if contents is None:
        assert_frame_equal(requests_batch(files)[0], walked_requests_batch(files)[0])
    lean = tables_batch(files, turns=False, contents=contents)
    full = tables_batch(files, contents=contents)
    assert_frame_equal(lean.sessions, full.sessions)
    assert_frame_equal(lean.requests, full.requests)
    assert_frame_equal(lean.problems, full.problems)
    assert lean.turns.is_empty()


# ------------------------------------------------------------------ fixtures and examples


def test_the_fixture_home() -> None:
    files = resolve(HOME)
    assert_same(files)
    assert_same(files, [file.path.read_bytes() for file in files])
    for subset in ([f for f in files if f.session_id.endswith(("01", "03"))], files[:1], files[-3:]):
        assert_same(subset)


def test_the_lean_scan_reads_the_clean_fixtures_and_gives_up_on_the_others() -> None:
    read, given_up = set(), set()
    for file in resolve(HOME):
        try:
            scan(file.path.read_bytes())
        except Unclean:
            given_up.add(file.path.name[-8:-6])
        else:
            read.add(file.path.name[-8:-6])
    # ``…08`` holds hostile lines; ``…0a`` predates the envelope.
    assert given_up == {"08", "0a"}
    assert read == {"01", "02", "03", "04", "05", "06", "07", "09"}


def test_the_shared_examples() -> None:
    files = resolve(shared_path("data", "agents", "codex"))
    assert_same(files)


def test_a_generated_corpus_is_read_by_the_lean_scan(tmp_path: Path) -> None:
    make_corpus.generate(tmp_path / "home", 3, seed=5)
    files = resolve(tmp_path / "home")
    assert any(f.is_subagent for f in files)
    assert any(b"forked_from_id" in f.path.read_bytes()[:400] for f in files)
    torn = {f.path for f in files if not f.path.read_bytes().endswith(b"\n")}
    for file in files:
        if file.path not in torn:
            scan(file.path.read_bytes())  # no rule it does not apply fires
    assert_same(files)
    batched = list(iter_tables(tmp_path / "home", turns=False))
    sessions = pl.concat([batch.sessions for batch in batched]).sort("session_id")
    assert_frame_equal(sessions, tables_batch(files).sessions)


def test_unreadable_and_empty_files_are_the_walkers(tmp_path: Path) -> None:
    (tmp_path / "rollout-gone.jsonl").symlink_to(tmp_path / "absent.jsonl")
    (tmp_path / "rollout-empty.jsonl").write_bytes(b"")
    (tmp_path / "rollout-blank.jsonl").write_bytes(b"\n\r\n\n")
    files = resolve(tmp_path)
    assert_same(files)
    assert tables_batch(files, turns=False).problems["reason"].to_list() == read_problems(tmp_path)["reason"].to_list()


def test_a_batch_size_for_the_lean_scan() -> None:
    assert lean_batch_bytes(10) == 64 * 2**20
    assert lean_batch_bytes(400 * 2**20) == 200 * 2**20
    assert lean_batch_bytes(10 * 2**30) == 512 * 2**20


# ------------------------------------------------------------------ generated rollouts

STAMPS = [
    "2025-11-03T09:00:00.000Z",
    "2025-11-03T09:00:00.400Z",
    "2025-11-03T09:00:01.900Z",
    "2025-11-03T09:00:05Z",
    "2025-11-03T10:00:00.000+01:00",
    "2025-11-03T08:59:59.999Z",
    "2025-13-03T09:00:00.000Z",  # not a date
    "late",
]
ONE = usage(1000, 200, 50, 10)
TWO = usage(3000, 1000, 80, 0, cache_write_input_tokens=100)


def _line_kinds(stamp: st.SearchStrategy[str], *, hostile: bool = True) -> st.SearchStrategy[str]:
    """One line of a rollout after its header: Codex's kinds and odd values, and (``hostile``)
    lines that are problems or that the lean scan leaves to the walker."""
    texts = ["go", "<environment_context>x</environment_context>", "# AGENTS.md rules", "你好世界", 'a\nb "q" \\ 👍']
    text = st.sampled_from([*texts, "\u9fa6"] if hostile else texts)
    clean = st.one_of(
        st.builds(prompt, text, stamp),
        st.builds(message, st.sampled_from(["user", "assistant", "developer", "system"]), text, stamp),
        st.builds(turn_context, st.sampled_from(["gpt-5", "gpt-5.1-codex-max", " ", "o3"]), stamp),
        st.builds(
            lambda ts, args: line(
                "response_item", {"type": "function_call", "name": "shell", "arguments": args, "call_id": "c"}, ts
            ),
            stamp,
            text,
        ),  # fmt: skip
        st.builds(
            lambda ts, out: line("response_item", {"type": "function_call_output", "call_id": "c", "output": out}, ts),
            stamp,
            st.one_of(
                text, st.just([{"type": "input_text", "text": "ok"}]), st.just({"content": "x", "success": False})
            ),
        ),  # fmt: skip
        st.builds(
            lambda ts: line(
                "response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch"}, ts
            ),
            stamp,
        ),  # fmt: skip
        st.builds(
            lambda ts: line("response_item", {"type": "local_shell_call", "action": {"command": ["ls"]}}, ts), stamp
        ),  # fmt: skip
        st.builds(
            lambda ts: line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}, ts),
            stamp,
        ),  # fmt: skip
        st.builds(lambda ts: line("event_msg", {"type": "agent_reasoning", "text": "hm"}, ts), stamp),
        st.builds(
            lambda total, last, ts: tokens(total, last, ts),
            st.sampled_from([ONE, TWO, None]),
            st.sampled_from([ONE, TWO, None]),
            stamp,
        ),  # fmt: skip
        st.builds(lambda ts: tokens(ONE, ONE, ts, window=0, rate_limits={"primary": {"used_percent": 1.0}}), stamp),
        st.builds(lambda ts: tokens(usage(5, cache_read_input_tokens=2), None, ts, window=None, model="gpt-5"), stamp),
        st.builds(lambda ts: line("event_msg", {"type": "token_count", "info": None, "rate_limits": None}, ts), stamp),
        st.builds(
            lambda ts: line(
                "event_msg", {"type": "thread_settings_applied", "thread_settings": {"service_tier": "priority"}}, ts
            ),
            stamp,
        ),  # fmt: skip
        st.builds(
            lambda ts: line(
                "compacted",
                {"message": "sum", "replacement_history": [{"type": "message", "role": "user", "content": "kept"}]},
                ts,
            ),
            stamp,
        ),  # fmt: skip
        st.builds(lambda ts: line("compacted", {"message": "summary only"}, ts), stamp),
        st.builds(lambda ts: line("event_msg", {"type": "context_compacted"}, ts), stamp),
        st.builds(lambda ts: meta("copied", ts), stamp),  # a later header (a fork's copy)
    )
    if not hostile:
        return clean
    return st.one_of(
        clean,
        st.builds(lambda ts: tokens({"input_tokens": 5.0}, None, ts), stamp),  # not a whole number: a problem
        st.sampled_from(
            [
                "not json",
                "[1,2]",
                "",
                '{"timestamp":"t","type":"event_msg","payload":"oops"}',
                '{"timestamp":"t","type":"event_msg","payload":{"type":"user_message",}}',  # prefix, broken
                '{"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message"}}',  # spaced
                '{"timestamp":"t","ordinal":3,"type":"event_msg","payload":{"type":"token_count","info":null}}',
                '{"timestamp":"t\\u0041","type":"response_item","payload":{"type":"reasoning"}}',
                '{"type":"message","role":"user","content":"bare"}',
                "[" * 1500 + "]" * 1500,
            ]
        ),
    )


@st.composite
def rollouts(draw: st.DrawFn, *, hostile: bool = True) -> list[tuple[str, str]]:
    """One to three rollouts (name, text): a main one, maybe a subagent of it and a fork."""
    stamp = st.sampled_from(STAMPS)
    out = []
    for role in draw(st.lists(st.sampled_from(["fork", "subagent"]), unique=True, max_size=2)) + ["main"]:
        extra: dict = {}
        if role == "fork":
            extra["forked_from_id"] = "main"
        elif role == "subagent":
            extra["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": "main"}}}
        if draw(st.booleans()):
            extra["base_instructions"] = {"text": draw(st.sampled_from(["be brief", "简洁", ""]))}
        body = draw(st.lists(_line_kinds(stamp, hostile=hostile), max_size=14))
        if body and draw(st.booleans()):
            body.insert(draw(st.integers(0, len(body) - 1)), body[draw(st.integers(0, len(body) - 1))])  # a repeat
        head = meta(role, draw(stamp), **extra) if not hostile or draw(st.integers(0, 9)) else "not a header"
        newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
        torn = hostile and not draw(st.integers(0, 5))
        text = newline.join([head, *body]) + ("" if torn else newline)
        out.append((role, text))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rollouts())
def test_generated_rollouts(found: list[tuple[str, str]]) -> None:
    assert_same(*_as_files(found))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rollouts(hostile=False))
def test_generated_clean_rollouts_are_read_by_the_lean_scan(found: list[tuple[str, str]]) -> None:
    files, contents = _as_files(found)
    for data in contents:
        scan(data)  # no rule it does not apply fires
    assert_same(files, contents)


def _as_files(found: list[tuple[str, str]]) -> tuple[list[TranscriptFile], list[bytes]]:
    """Generated rollouts as a batch's files (a session's files together) and their bytes."""
    files, contents = [], []
    for role, text in found:
        data = text.encode()
        session = "main" if role in ("main", "subagent") else role
        layout = "agent-file" if role == "subagent" else "main"
        files.append(TranscriptFile(Path(f"rollout-{role}.jsonl"), session, role if role == "subagent" else None, layout, "x", len(data)))  # fmt: skip
        contents.append(data)
    order = sorted(range(len(files)), key=lambda index: (files[index].session_id, files[index].is_subagent))
    return [files[i] for i in order], [contents[i] for i in order]


def test_a_clean_fork_is_read_by_the_lean_scan() -> None:
    early, fork = "2025-11-03T09:00:05.000Z", "2025-11-03T10:00:00.000Z"
    rows = [
        meta("child", fork, forked_from_id="parent"),
        meta("parent", early),
        prompt("copied", early),
        tokens(usage(1000), usage(1000), early),
        tokens(usage(1000), usage(1000), early),
        line(
            "compacted",
            {"message": "", "replacement_history": [{"type": "message", "role": "user", "content": "x"}]},
            fork,
        ),  # fmt: skip
        prompt("own", "2025-11-03T10:00:30.000Z"),
        tokens(usage(3000), usage(2000), "2025-11-03T10:00:31.000Z"),
    ]
    data = ("\n".join(rows) + "\n").encode()
    found = scan(data)
    assert found.replay == (2, 5)
    file = TranscriptFile(Path("rollout-child.jsonl"), "child", None, "main", "x", len(data))
    assert_same([file], [data])
    row = tables_batch([file], turns=False, contents=[data]).sessions.row(0, named=True)
    assert (row["requests"], row["turns"], row["compactions"]) == (1, 2, 1)


@pytest.mark.parametrize(
    "text",
    [
        '{"timestamp":"2025-11-03T09:00:00.000Z","type":"session_meta","payload":{"id":"a"}}\n[1]\n',
        '{"timestamp":"2025-11-03T09:00:00.000Z","type":"turn_context","payload":{}}\n',  # no header first
        '{"timestamp":"2025-11-03T09:00:00.000Z","type":"session_meta","payload":{"id":"a"}}\n'
        '{"timestamp":"2025-11-03T09:00:00.000Z","type":"event_msg","payload":{"type":"token_count",'
        '"info":{"total_token_usage":{"input_tokens":"12"}}}}\n',
        '{"timestamp":"2025-11-03T09:00:00.000Z","type":"session_meta","payload":{"id":"a"}}\n{"a":1}\n',
    ],
)
def test_the_lean_scan_gives_up_where_a_rule_it_does_not_apply_fires(text: str) -> None:
    with pytest.raises(Unclean):
        scan(text.encode())


HEAD = '{"timestamp":"2025-11-03T09:00:00.000Z","type":"session_meta","payload":{"id":"a"}}\n'
COUNT = tokens(usage(1000), usage(1000), "2025-11-03T09:00:02.000Z")


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        (
            HEAD + '{"timestamp":"2025-11-03T09:00:01.000Z","type":"response_item","payload":{"type":"message",}}\n',
            [(2, "not JSON")],
        ),
        (HEAD + '{"timestamp":"2025', [(2, "truncated last line")]),
        (HEAD + '{"timestamp":"2025\r\n' + COUNT + "\n", [(2, "not JSON")]),
        (HEAD + "{nope}\n" + COUNT + "\n" + COUNT[:-9] + "\n", [(2, "not JSON"), (4, "not JSON")]),
        # A count that does not parse between two that are the same: the third is still a repeat.
        (HEAD + COUNT + "\n" + COUNT.replace('"info":{', '"info":{,') + "\n" + COUNT + "\n", [(3, "not JSON")]),
        (HEAD + "\n".join([prompt("a", "2025-11-03T09:00:01.000Z")[:-1], COUNT]), [(2, "not JSON")]),
    ],
)
def test_lines_that_are_not_json_are_the_lean_scans_problems_as_they_are_the_walkers(
    text: str, problems: list[tuple[int, str]]
) -> None:
    """A line that is not JSON (torn at a file's end, or anywhere) is skipped and reported as
    the walker skips and reports it, and the rest of the rollout is still read by the lean scan
    (a live session's torn last line does not send it to the walker)."""
    data = text.encode()
    found = scan(data)
    assert [(line, reason.split(" (")[0]) for line, reason in found.problems] == problems
    file = TranscriptFile(Path("rollout-a.jsonl"), "a", None, "main", "x", len(data))
    assert_same([file], [data])
    other = HEAD.replace('"a"', '"b"').encode() + COUNT.encode() + b"\n"
    second = TranscriptFile(Path("rollout-b.jsonl"), "b", None, "main", "x", len(other))
    assert_same([second, file], [other, data])


def test_token_counts_read_from_their_info_alone_equal_the_whole_line() -> None:
    """The layout the scan reads ``info`` of without parsing the rest, and its near misses."""
    base = json.loads(tokens(ONE, TWO, rate_limits={"primary": {"used_percent": 3.0, "window_minutes": 300}}))
    variants = [
        json.dumps(base, separators=(",", ":")),
        json.dumps(base, separators=(",", ":")).replace('"rate_limits":{', '"rate_limits":{"x":[1,{"y":null}],'),
        json.dumps(base, separators=(",", ":")).replace('"used_percent":3.0', '"used_percent":3.0e400'),
        json.dumps(base, separators=(",", ":")).replace(',"rate_limits"', ',"info":null,"rate_limits"'),
        json.dumps(base, separators=(",", ":")).replace("}}}", '}},"rate_limits":{}}}', 1),
    ]
    for variant in variants:
        data = (meta("a") + "\n" + variant + "\n").encode()
        file = TranscriptFile(Path("rollout-a.jsonl"), "a", None, "main", "x", len(data))
        assert_same([file], [data])
