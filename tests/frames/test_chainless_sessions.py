"""ChainlessChain sessions and the context report: pinned figures, and one walker under both profiles."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import cc_analytics.frames.chainless as chainless
from cc_analytics.frames.chainless import (
    context_frame,
    iter_tables,
    live_transcripts,
    read_problems,
    read_sessions,
    read_turns,
    resolve,
    scan_sessions,
)
from cc_analytics.frames.chainless.sessions import context_batch, tables_batch
from cc_analytics.frames.chainless.store import transcript_file
from cc_analytics.frames.engine import run_batches
from cc_analytics.frames.schema import BUCKETS, SESSIONS_SCHEMA
from tests.conftest import ROOT, SHARED

from .chainless_builders import event, write

SHARED_SESSIONS = SHARED / "data" / "chainless" / "sessions"
SAMPLES = ROOT / "data-samples" / "chainless"
FLAGS = [{}, {"model": "gpt-4o"}, {"provider": "openai"}, {"model": "gpt-4o", "provider": "openai"}, {"model": ""}]
VERBS = [f"{kind}_{noun}" for noun in ("events", "turns", "sessions", "problems") for kind in ("scan", "read")]

# ``cc context`` figures of data-samples/chainless, as the implementation before the one-walker
# rewrite reported them (checked against the spec by hand when the samples were made):
# session, model, provider, window, total, messages, the five buckets, the four counts, headroom, overflows.
PINNED_CONTEXT = [
    ("sample-anthropic-compaction", "claude-sonnet-4-6", "anthropic", 200000, 181, 6, 46, 12, 26, 10, 87, 2, 1, 2, 1, 199819, False),
    ("sample-dashscope-cjk", "qwen-plus", "dashscope", 131072, 925, 11, 10, 130, 785, 0, 0, 1, 5, 5, 0, 130147, False),
    ("sample-deepseek-yellow", "deepseek-chat", "deepseek", 64000, 50655, 97, 25, 33590, 17040, 0, 0, 1, 48, 48, 0, 13345, False),
    ("sample-gemini-ws-turns", "gemini-2.0-flash", "gemini", 1048576, 40, 4, 0, 26, 14, 0, 0, 0, 2, 2, 0, 1048536, False),
    ("sample-llama3-overflow", "llama3:8b", "ollama", 8192, 8774, 2, 0, 8757, 17, 0, 0, 0, 1, 1, 0, 0, True),
    ("sample-ollama-refactor", "qwen2.5-coder:14b", "ollama", 32768, 643, 13, 25, 198, 420, 0, 0, 1, 6, 6, 0, 32125, False),
    ("sample-openai-recorded-window", "gpt-4o", "openai", 100000, 1089, 13, 25, 84, 32, 528, 420, 1, 4, 4, 4, 98911, False),
]  # fmt: skip
CONTEXT_COLUMNS = [
    "session_id", "model", "provider", "window", "context_estimate", "messages",
    "tokens_system", "tokens_user", "tokens_assistant", "tokens_tool", "tokens_tool_calls",
    "messages_system", "messages_user", "messages_assistant", "messages_tool", "headroom", "overflows",
]  # fmt: skip
# session, turns, peak, estimated tokens (all history), requests, input, output, compactions, models
PINNED_SESSIONS = [
    ("sample-anthropic-compaction", 10, 4705, 4886, 0, 0, 0, 1, ["claude-sonnet-4-6"]),
    ("sample-dashscope-cjk", 6, 925, 925, 0, 0, 0, 0, ["qwen-plus"]),
    ("sample-deepseek-yellow", 49, 50655, 50655, 0, 0, 0, 0, ["deepseek-chat"]),
    ("sample-gemini-ws-turns", 3, 40, 40, 0, 0, 0, 0, ["gemini-2.0-flash"]),
    ("sample-llama3-overflow", 2, 8774, 8774, 0, 0, 0, 0, ["llama3:8b"]),
    ("sample-ollama-refactor", 7, 643, 643, 6, 11400, 720, 0, ["qwen2.5-coder:14b"]),
    ("sample-openai-recorded-window", 5, 1089, 1089, 5, 21400, 1250, 0, ["gpt-4o", "gpt-4o-mini"]),
]
SESSION_COLUMNS = [
    "session_id", "turns", "peak_occupancy", "estimated_tokens", "requests",
    "input_tokens", "output_tokens", "compactions", "models",
]  # fmt: skip


def store_files() -> list[Path]:
    paths = live_transcripts(SAMPLES)
    if SHARED_SESSIONS.is_dir():
        paths += live_transcripts(SHARED_SESSIONS)
    return paths


def test_the_verbs_and_their_signature() -> None:
    for name in VERBS:
        verb = getattr(chainless, name)
        parameters = inspect.signature(verb).parameters
        assert list(parameters) == ["source", "workers", "on_progress"], name
        assert parameters["source"].default is None
        assert parameters["workers"].kind is inspect.Parameter.KEYWORD_ONLY and parameters["workers"].default == 1
        assert verb.__doc__ and "Examples:" in verb.__doc__


def test_context_figures_are_pinned() -> None:
    assert context_frame(SAMPLES).select(CONTEXT_COLUMNS).rows() == PINNED_CONTEXT


def test_session_figures_are_pinned() -> None:
    sessions = read_sessions(SAMPLES)
    assert sessions.schema == SESSIONS_SCHEMA
    assert sessions.select(SESSION_COLUMNS).rows() == PINNED_SESSIONS
    context = sessions.select(pl.exclude("models")).row(0, named=True)
    assert context["format"] == "chainlesschain" and context["project"] is None
    assert (context["project_dir"], context["occupancy_source"], context["last_occupancy"]) == (
        "chainless",
        "estimated",
        181,
    )
    assert context["compaction_triggers"] == ["auto"] and context["compaction_pre_tokens"] == [9800]
    assert context["first_time"] == datetime(2026, 5, 28, 21, 26, 41, 500000, tzinfo=UTC)
    assert context["effective_window"] is None and context["autocompact_threshold"] is None


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "no-flags")
def test_flags_size_the_window(flags: dict[str, str]) -> None:
    frame = context_frame(store_files(), **flags)
    assert frame.height == len(store_files())
    if flags.get("model"):
        assert frame["model"].unique().to_list() == [flags["model"]]
    assert (frame["headroom"] == (frame["window"] - frame["context_estimate"]).clip(lower_bound=0)).all()


def assert_profiles_agree(paths: list[Path]) -> None:
    """The lean profile (context) and the full one (sessions, turns) report the same context."""
    context = context_frame(paths)
    sessions = read_sessions(paths)
    same = ["session_id", "provider", "window", "context_estimate", "messages", "used_fraction", "headroom"]
    assert_frame_equal(context.select(same), sessions.select(same))
    turns = read_turns(paths)
    last = turns.group_by("session_id").agg(
        pl.col("estimated_context").last(), pl.col("window").last(), pl.col("model").last(), pl.len().alias("turns")
    )
    joined = sessions.join(last, on="session_id", how="left", suffix="_turn")
    has_turns = joined.filter(pl.col("turns") > 0)
    assert (has_turns["context_estimate"] == has_turns["estimated_context"]).all()
    assert (has_turns["window"] == has_turns["window_turn"]).all()
    assert has_turns["last_model"].eq_missing(has_turns["model"]).all()
    assert (joined["turns"] == joined["turns_turn"].fill_null(0)).all()
    buckets = [*BUCKETS, "estimated_tokens"]
    sums = turns.group_by("session_id").agg(pl.col(buckets).sum()).sort("session_id")
    assert_frame_equal(sums, sessions.filter(pl.col("turns") > 0).select("session_id", *buckets))
    assert (sessions["peak_occupancy"] >= sessions["last_occupancy"]).all()


def test_profiles_agree_on_every_sample() -> None:
    assert_profiles_agree(store_files())


def test_lazy_and_progress() -> None:
    paths = store_files()
    assert_frame_equal(scan_sessions(paths).collect().sort("session_id"), read_sessions(paths))
    seen: list[tuple[int, int]] = []
    context_frame(paths, on_progress=lambda done, total: seen.append((done, total)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] > 0


def test_worker_processes_give_the_same_rows() -> None:
    files = resolve(store_files())
    pooled = list(run_batches(tables_batch, files, workers=2, batch_bytes=8192))
    assert len(pooled) > 2
    assert_frame_equal(pl.concat([t.sessions for t in pooled]).sort("session_id"), read_sessions(files))
    context = partial(context_batch, model="gpt-4o")
    rows = pl.concat([r for r, _ in run_batches(context, files, workers=2, batch_bytes=8192)])
    assert_frame_equal(rows.sort("session_id"), context_frame(files, model="gpt-4o"))


def test_unreadable_file_is_an_empty_session_and_a_problem(tmp_path: Path) -> None:
    missing = transcript_file(tmp_path / "gone.jsonl")
    row = context_frame([missing]).row(0, named=True)
    assert (row["session_id"], row["messages"], row["last_activity"]) == ("gone", 0, 0.0)
    problems = read_problems([missing])
    assert problems["line"].to_list() == [None]
    assert problems["reason"].to_list()[0].startswith("unreadable: ")
    session = read_sessions([missing]).row(0, named=True)
    assert (session["turns"], session["events"], session["first_time"]) == (0, 0, None)


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
    st.builds(event, st.sampled_from(["user_message", "assistant_message", "system"]), messages, stamps),
    st.builds(event, st.just("assistant_message"), st.sampled_from([{"content": "no role"}, [], None])),
    st.builds(event, st.sampled_from(["compact", "checkpoint_timeline_commit"]), st.builds(dict, messages=snapshot)),
    st.builds(event, st.just("compact"), st.just({"messages": "not a list"})),
    st.builds(
        event,
        st.just("session_start"),
        st.fixed_dictionaries(
            {"model": st.sampled_from(["gpt-4o", "", None, 0]), "provider": st.sampled_from(["openai", ""])}
        ),
    ),
    st.builds(event, st.just("session_start"), st.just("not an object")),
    st.builds(event, st.just("token_usage"), usage_data, stamps),
    st.builds(event, st.just("ws_turn"), st.sampled_from([ws_good, dict(ws_good, outcome="failed")])),
    st.builds(event, st.just("tool_call"), st.sampled_from([{"tool": "read", "is_error": True}, {"tool": 3}])),
    st.builds(event, st.sampled_from(["tool_result", [1], {"a": 1}, None]), st.just({"result": "x"}), stamps),
    st.sampled_from(["null", "42", "[]", '"x"', "NaN", "{'a':1}", "", "   ", '{"a":1,}', '{"type":"system"']),
    st.just('{"type":"user_message","data":{"role":"user","content":"\\ud800 lone"},"timestamp":1e400}'),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(events, max_size=14), min_size=1, max_size=3), st.sampled_from(["\n", "\r\n"]))
def test_profiles_agree_on_generated_sessions(tmp_path_factory, files, newline) -> None:
    tmp = tmp_path_factory.mktemp("profiles")
    paths = []
    for index, lines in enumerate(files):
        path = tmp / f"s{index}.jsonl"
        path.write_text(newline.join(lines), encoding="utf-8")
        paths.append(path)
    assert_profiles_agree(paths)


def test_one_decode_gives_sessions_turns_and_problems() -> None:
    paths = store_files()
    tables = list(iter_tables(paths))
    assert_frame_equal(pl.concat([t.sessions for t in tables]).sort("session_id"), read_sessions(paths))
    assert_frame_equal(pl.concat([t.turns for t in tables]), read_turns(paths))
    assert_frame_equal(pl.concat([t.problems for t in tables]), read_problems(paths))
    assert sum(t.turns.height for t in iter_tables(paths, turns=False)) == 0


def test_deleted_transcripts_are_no_sessions(tmp_path: Path) -> None:
    for name in ("live", "tombstoned", "meta-deleted"):
        write(tmp_path, name, [event("user_message", {"role": "user", "content": name})])
    (tmp_path / "tombstoned.tombstone").write_text("")
    (tmp_path / "meta-deleted.meta.json").write_text('{"deleted": true}')
    for source in (tmp_path, sorted(tmp_path.glob("*.jsonl")), str(tmp_path / "*")):
        assert [f.session_id for f in resolve(source)] == ["live"]
