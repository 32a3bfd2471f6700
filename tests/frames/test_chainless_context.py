"""The lean context decoder (``read_context``) agrees with the full events path (``context_frame``)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cc_analytics.frames.chainless.events import decode_files, live_transcripts, session_id_of
from cc_analytics.frames.chainless.sessions import context_frame, read_context
from tests.conftest import SHARED

ROOT = Path(__file__).resolve().parents[2]
SHARED_SESSIONS = SHARED / "data" / "chainless" / "sessions"
SAMPLES = ROOT / "data-samples" / "chainless"
FLAGS = [{}, {"model": "gpt-4o"}, {"provider": "openai"}, {"model": "gpt-4o", "provider": "openai"}, {"model": ""}]


def via_events(paths: list[Path], **flags: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    frames = decode_files(paths)
    ids = [session_id_of(path) for path in paths]
    return context_frame(frames.events, frames.messages, sessions=ids, **flags).collect(), frames.problems


def assert_same(paths: list[Path], **flags: str) -> None:
    lean, lean_problems = read_context(paths, workers=1, **flags)
    full, full_problems = via_events(paths, **flags)
    assert_frame_equal(lean, full)
    assert_frame_equal(lean_problems, full_problems)


def store_files() -> list[Path]:
    paths = live_transcripts(SAMPLES)
    if SHARED_SESSIONS.is_dir():
        paths += live_transcripts(SHARED_SESSIONS)
    return paths


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "no-flags")
def test_lean_equals_events_path_on_every_sample(flags: dict[str, str]) -> None:
    paths = store_files()
    assert paths
    assert_same(paths, **flags)  # one batch: files share the column lists
    for path in paths:
        assert_same([path], **flags)


def test_pool_equals_single_process() -> None:
    paths = store_files()
    pooled, pooled_problems = read_context(paths, workers=2, batch_bytes=4096)
    single, single_problems = read_context(paths, workers=1)
    # Rows come in batch order, each batch sorted by id: compare as sets of rows.
    assert_frame_equal(pooled.sort(pl.all()), single.sort(pl.all()))
    assert_frame_equal(pooled_problems.sort(pl.all()), single_problems.sort(pl.all()))


def test_unreadable_file_is_an_empty_session_and_a_problem(tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    frame, problems = read_context([missing], workers=1)
    assert frame.row(0, named=True)["message_count"] == 0
    assert frame.row(0, named=True)["last_activity"] == 0.0
    assert problems["line"].to_list() == [None]
    assert problems["reason"].to_list()[0].startswith("unreadable: ")


def line(kind: object, data: object, ts: object = 1767225600000) -> str:
    return json.dumps({"type": kind, "timestamp": ts, "data": data}, ensure_ascii=False)


CALLS = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"n":1.5}'}}]
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "x", ""])},
    optional={
        "content": st.one_of(st.text(max_size=12), st.none(), st.integers(-2, 2), st.just({"v": 1.0})),
        "tool_calls": st.sampled_from([CALLS, [], "no", [1, 2.5]]),
    },
)
snapshot = st.lists(st.one_of(messages, st.just("text"), st.just({"role": 1}), st.none()), max_size=3)
usage_data = st.fixed_dictionaries(
    {
        "model": st.sampled_from(["gpt-4o", "deepseek-chat", 7]),
        "provider": st.sampled_from(["openai", "deepseek"]),
        "contextWindow": st.sampled_from([100000, 512, 2048.0, "4096", None, True, 10**400, -(10**400)]),
    },
    optional={"source": st.sampled_from(["model", "", "subagent", None]), "attribution": st.sampled_from([{}, None])},
)
ws_good = {
    "schemaVersion": 1,
    "requestId": "r-1",
    "outcome": "completed",
    "user": {"role": "user", "content": "hi"},
    "assistant": {"role": "assistant", "content": "ok"},
}
stamps = st.sampled_from([1767225600000, 1767225600001.5, "1767225600000", None, True, -5, 10**400])
events = st.one_of(
    st.builds(line, st.sampled_from(["user_message", "assistant_message", "system"]), messages, stamps),
    st.builds(line, st.just("assistant_message"), st.sampled_from([{"content": "no role"}, [], None])),
    st.builds(line, st.sampled_from(["compact", "checkpoint_timeline_commit"]), st.builds(dict, messages=snapshot)),
    st.builds(line, st.just("compact"), st.just({"messages": "not a list"})),
    st.builds(
        line,
        st.just("session_start"),
        st.fixed_dictionaries(
            {"model": st.sampled_from(["gpt-4o", "", None, 0]), "provider": st.sampled_from(["openai", ""])}
        ),
    ),
    st.builds(line, st.just("session_start"), st.just("not an object")),
    st.builds(line, st.just("token_usage"), usage_data, stamps),
    st.builds(line, st.just("ws_turn"), st.sampled_from([ws_good, dict(ws_good, outcome="failed")])),
    st.builds(line, st.sampled_from(["tool_result", [1], {"a": 1}, None]), st.just({"result": "x"}), stamps),
    st.sampled_from(["null", "42", "[]", '"x"', "NaN", "{'a':1}", "", "   ", '{"a":1,}', '{"type":"system"']),
    st.just('{"type":"user_message","data":{"role":"user","content":"\\ud800 lone"},"timestamp":1e400}'),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(events, max_size=14), min_size=1, max_size=3), st.sampled_from(["\n", "\r\n"]))
def test_lean_equals_events_path_on_generated_sessions(tmp_path_factory, files, newline) -> None:
    tmp = tmp_path_factory.mktemp("lean")
    paths = []
    for index, lines in enumerate(files):
        path = tmp / f"s{index}.jsonl"
        path.write_text(newline.join(lines), encoding="utf-8")
        paths.append(path)
    for flags in FLAGS[:4]:
        assert_same(paths, **flags)
