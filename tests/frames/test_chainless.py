"""ChainlessChain store, decoder, replay and the context report, built from small JSONL builders."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from cc_analytics.frames.chainless import (
    context_frame,
    is_safe_id,
    read_events,
    read_problems,
    report_dict,
    scan_events,
    session_path,
    table_window,
)

from .chainless_builders import event, msg, start, usage, write


def report(path: Path, **flags: str) -> dict:
    return report_dict(context_frame(path, **flags).row(0, named=True))


def test_typical_session_buckets(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s",
        [
            start(),
            msg("system", "abcd", "system"),
            msg("user", "你好世界"),
            msg("assistant", "x" * 9, "assistant_message"),
        ],
    )
    r = report(path)
    assert r["breakdown"] == {"system": 1, "user": 3, "assistant": 3, "tool": 0, "toolCalls": 0}
    assert r["counts"] == {"system": 1, "user": 1, "assistant": 1, "tool": 0}
    assert (r["model"], r["provider"], r["contextWindow"], r["totalTokens"]) == ("qwen2.5:7b", "ollama", 32768, 7)


def test_per_message_ceiling(tmp_path: Path) -> None:
    path = write(tmp_path, "s", [start()] + [msg("user", "a")] * 9)
    assert report(path)["breakdown"]["user"] == 9


def test_role_decides_bucket_and_tool_calls_counted_separately(tmp_path: Path) -> None:
    calls = [
        {
            "id": "call_7f1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path":"docs/deprecations.md"}'},
        }
    ]
    path = write(
        tmp_path,
        "s",
        [
            start(),
            msg("system", "sys", "user_message"),
            msg("tool", "ok", "assistant_message"),
            msg("assistant", None, "assistant_message", tool_calls=calls),
            msg("developer", "d", "assistant_message"),
            event("user_message", {"role": 7, "content": "dropped"}),
        ],
    )
    r = report(path)
    assert r["counts"] == {"system": 1, "user": 0, "assistant": 2, "tool": 1}
    assert r["breakdown"]["toolCalls"] == 30  # the spec's worked example: 119 UTF-16 units
    assert r["messageCount"] == 4


def test_latest_checkpoint_with_array_wins(tmp_path: Path) -> None:
    snapshot = [
        {"role": "system", "content": "summary"},
        "junk",
        None,
        {"content": "no role"},
        {"role": "user", "content": "q"},
    ]
    lines = [
        start(),
        msg("user", "before"),
        event("compact", {"messages": snapshot}),
        msg("user", "after"),
        event("compact", {"strategy": "x"}),
    ]
    r = report(write(tmp_path, "s", lines))
    assert r["messageCount"] == 3
    assert r["counts"] == {"system": 1, "user": 2, "assistant": 0, "tool": 0}


def test_empty_checkpoint_drops_history(tmp_path: Path) -> None:
    lines = [start(), msg("user", "before"), event("checkpoint_timeline_commit", {"messages": []})]
    assert report(write(tmp_path, "s", lines))["messageCount"] == 0


def test_tool_events_are_not_replayed(tmp_path: Path) -> None:
    lines = [
        start(),
        event("tool_call", {"tool": "read", "args": {}}),
        event("tool_result", {"tool": "read", "result": "x" * 400}),
        msg("user", "hi"),
    ]
    assert report(write(tmp_path, "s", lines))["totalTokens"] == 1


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    lines = ["\ufeff" + start(), "NaN", '{"a":1,}', "{'a':1}", "   ", msg("user", "kept"), '{"type":"user_message"']
    path = write(tmp_path, "s", lines, newline="\r\n")
    problems = read_problems(path)
    assert problems["line"].to_list() == [1, 2, 3, 4, 5, 7]
    assert problems["source_file"].unique().to_list() == [str(path)]
    r = report(path)
    assert (r["model"], r["messageCount"]) == (None, 1)  # the BOM line hid the header


def test_null_line_before_start_hides_header(tmp_path: Path) -> None:
    path = write(tmp_path, "s", ["null", start("claude-opus-4-6", "anthropic"), msg("user", "x")])
    r = report(path)
    assert (r["model"], r["provider"], r["contextWindow"], r["messageCount"]) == (None, "ollama", 32768, 1)
    other = write(tmp_path, "t", ["42", '"x"', "[]", start("claude-opus-4-6", "anthropic")])
    assert report(other)["contextWindow"] == 200000


def test_first_session_start_wins(tmp_path: Path) -> None:
    path = write(tmp_path, "s", [start("gpt-4o", "openai"), start("llama3:8b", "ollama")])
    assert report(path)["contextWindow"] == 128000


def test_window_resolution_order() -> None:
    frame = pl.DataFrame(
        {"m": ["gpt-4o", "unknown", None, "unknown", ""], "p": ["ollama", "deepseek", "kimi", "acme", "gemini"]}
    )
    assert frame.select(table_window(pl.col("m"), pl.col("p"))).to_series().to_list() == [
        128000,
        64000,
        131072,
        32768,
        1048576,
    ]


def test_recorded_window_rules(tmp_path: Path) -> None:
    base = [start("gpt-4o", "openai"), msg("user", "x")]
    assert report(write(tmp_path, "a", base + [usage(100000)]))["contextWindow"] == 100000
    skipped = [
        usage(65536),
        usage(200000, source="subagent"),
        usage(8192, source="semantic-compaction"),
        usage(4096, attribution={"origin": "skill"}),
    ]
    assert report(write(tmp_path, "b", base + skipped))["contextWindow"] == 65536
    for bad in (512, 16777217, "200000", 1024.5, None, True):
        assert report(write(tmp_path, "c", base + [usage(bad)]))["contextWindow"] == 128000
    assert report(write(tmp_path, "d", base + [usage(100000), usage(None)]))["contextWindow"] == 128000
    path = write(tmp_path, "e", base + [usage(100000)])
    assert report(path, model="gpt-3.5-turbo")["contextWindow"] == 16385
    assert report(path, model="gpt-4o", provider="openai")["contextWindow"] == 100000
    assert report(write(tmp_path, "f", base + [usage(1024, source="", attribution=None)]))["overflows"] is False


def test_ws_turns(tmp_path: Path) -> None:
    good = {
        "schemaVersion": 1,
        "requestId": "req-1",
        "outcome": "completed",
        "user": {"role": "user", "content": "hi"},
        "assistant": {"role": "assistant", "content": "hello"},
    }
    failed = dict(good, outcome="failed")
    blank = dict(good, assistant={"role": "assistant", "content": "  \u3000"})
    extra = dict(good, extra=1)
    path = write(tmp_path, "s", [start()] + [event("ws_turn", d) for d in (good, failed, blank, extra)])
    assert report(path)["counts"] == {"system": 0, "user": 1, "assistant": 1, "tool": 0}


def test_empty_file_still_reports(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    r = report(path)
    assert (r["sessionId"], r["totalTokens"], r["messageCount"], r["model"]) == ("empty", 0, 0, None)


def test_unsafe_ids_never_touch_the_filesystem(tmp_path: Path, monkeypatch) -> None:
    def boom(*_a: object, **_k: object) -> bool:
        raise AssertionError("filesystem touched")

    monkeypatch.setattr(Path, "is_file", boom)
    monkeypatch.setattr(Path, "exists", boom)
    for bad in ("", "a/b", "a\\b", "notes..v2", "..", "./x"):
        assert not is_safe_id(bad)
        assert session_path(bad, tmp_path) is None


def test_events_frame_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "s", [start(), msg("user", {"k": 1.0}), usage(100000, attribution={"origin": "x"}), "null"])
    events = read_events(path)
    assert events["type"].to_list() == ["session_start", "user_message", "token_usage", None]
    assert events["content_json"].to_list()[1] == '{"k":1}'
    row = events.row(2, named=True)
    assert (row["input_tokens"], row["recorded_window"], row["is_main_usage"], row["attribution"]) == (
        5,
        100000,
        False,
        '{"origin":"x"}',
    )
    assert events["is_null"].to_list() == [False, False, False, True]


contents = st.one_of(
    st.text(max_size=40), st.none(), st.booleans(), st.integers(-5, 5), st.lists(st.text(max_size=5), max_size=3)
)
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer", ""])
messages = st.lists(st.tuples(roles, contents, st.booleans()), max_size=12)


@settings(max_examples=60, deadline=None)
@given(messages)
def test_buckets_sum_to_total_and_lazy_equals_eager(tmp_path_factory, items) -> None:
    tmp = tmp_path_factory.mktemp("h")
    calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    lines = [start()] + [msg(r, c, "assistant_message", **({"tool_calls": calls} if t else {})) for r, c, t in items]
    path = write(tmp, "s", lines)
    r = report(path)
    assert sum(r["breakdown"].values()) == r["totalTokens"]
    assert sum(r["counts"].values()) == r["messageCount"] == len(items)
    assert scan_events(path).collect().equals(read_events(path))
