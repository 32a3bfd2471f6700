"""Codex rollouts: recognising them, where they belong, and the line walker's rules.

Rollouts are built with ``tests/fixtures/codex/builders.py`` or read from the fixture home
that ``tests/fixtures/codex/make_fixtures.py`` wrote (``tests/fixtures/codex/home``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cc_analytics.frames.codex import read_events, read_problems, resolve
from cc_analytics.frames.codex.decode import Profile, decode, usage_lines
from cc_analytics.frames.codex.plugin import PLUGIN
from cc_analytics.frames.codex.store import classify, default_stores, find_session, latest_session
from cc_analytics.frames.sources import SNIFF_BYTES
from tests.conftest import ROOT, shared_path
from tests.fixtures.codex.builders import line, message, meta, prompt, tokens, turn_context, usage, write

HOME = ROOT / "tests" / "fixtures" / "codex" / "home"
PREFIX = "0199a000-0000-7000-8000-0000000000"


def rollout(suffix: str) -> Path:
    return next(HOME.rglob(f"*{PREFIX}{suffix}.jsonl"))


# ------------------------------------------------------------------ recognising and placing files


def test_the_plugin_imports_the_standard_library_only() -> None:
    code = (
        "import sys; import cc_analytics.frames.codex.plugin as p; "
        "assert p.PLUGIN.name == 'codex'; print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('polars', 'orjson', 'pyarrow', 'numpy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_recognizes_a_rollout_whose_first_line_is_longer_than_the_head() -> None:
    head = rollout("08").read_bytes()[:SNIFF_BYTES]  # its session_meta holds 70 kB of instructions
    assert b"\n" not in head
    assert PLUGIN.recognizes(None, head)
    assert not PLUGIN.recognizes(None, b'{"type":"user","message":{"role":"user"}}')
    assert PLUGIN.recognizes(json.loads(rollout("0a").read_text().splitlines()[0]), b"")  # before the envelope
    assert not PLUGIN.recognizes({"type": "session_start", "timestamp": 1, "data": {}}, b"")


def test_classify_reads_the_session_from_a_cut_head() -> None:
    path = rollout("08")
    head = path.read_bytes()[:SNIFF_BYTES]
    file = classify(path, size=path.stat().st_size, head=head)
    assert (file.session_id, file.agent_id, file.layout, file.project_dir) == (
        PREFIX + "08",
        None,
        "main",
        "2025/11/05",
    )


def test_a_subagent_joins_the_session_that_spawned_it_and_forks_are_their_own() -> None:
    files = {f.path.name[-8:-6]: f for f in resolve(HOME)}
    assert (files["02"].session_id, files["02"].agent_id, files["02"].is_subagent) == (
        PREFIX + "01",
        PREFIX + "02",
        True,
    )
    assert (files["03"].session_id, files["03"].agent_id) == (PREFIX + "03", None)
    assert files["09"].project_dir == "archived_sessions"
    order = [f.session_id for f in resolve(HOME)]
    assert order == sorted(order)  # a session's files are adjacent, so batches never split one
    assert [f.is_subagent for f in resolve(HOME) if f.session_id == PREFIX + "01"] == [False, True]


def test_a_codex_home_means_its_two_stores_not_history_jsonl(monkeypatch: pytest.MonkeyPatch) -> None:
    names = {f.path.name for f in resolve(HOME)}
    assert len(names) == 10 and "history.jsonl" not in names
    monkeypatch.setenv("CODEX_HOME", str(HOME))
    assert default_stores() == [HOME / "sessions", HOME / "archived_sessions"]
    assert {f.path.name for f in resolve(None)} == names
    assert [f.agent_id for f in find_session(PREFIX + "01")] == [None, PREFIX + "02"]
    assert [f.path.name for f in PLUGIN.find_session(PREFIX + "01", [HOME])][0].endswith("01.jsonl")
    assert PLUGIN.find_session("../etc", [HOME]) == []


def test_latest_session_skips_subagents(tmp_path: Path) -> None:
    main = write(tmp_path, "main", [meta("main")])
    sub = write(tmp_path, "sub", [meta("sub", source={"subagent": {"thread_spawn": {"parent_thread_id": "main"}}})])
    os.utime(main, (1_000_000, 1_000_000))
    os.utime(sub, (2_000_000, 2_000_000))
    assert latest_session([tmp_path]) == (1_000_000.0, "main")


# ------------------------------------------------------------------ the walker


def test_hostile_lines_become_problems_and_the_rest_is_read() -> None:
    problems = read_problems(rollout("08"))
    assert problems.select("line", "reason").rows() == [
        (5, "not JSON (invalid literal, expected 'true'); line skipped"),
        (6, "not a JSON object (an array); line skipped"),
        (7, "not a JSON object (an array); line skipped"),  # 3,000 levels: JSON by the line policy
        (8, "not JSON (expected a value at 5000); line skipped"),  # 5,000 levels, never closed
        (9, "event_msg payload is a string, not an object; line ignored"),
        (
            10,
            "token_count total_token_usage.input_tokens is '12', not a whole number of at least 0; that usage ignored",
        ),
        (12, "truncated last line (the file may still be being written)"),
    ]
    events = read_events(rollout("08"))
    assert events["line"].to_list() == [1, 2, 3, 4, 9, 10, 11]
    assert events.filter(pl.col("line") == 2)["model"].item() == "gpt-5"  # a CRLF line


def test_an_unreadable_file_is_a_problem_without_a_line(tmp_path: Path) -> None:
    (tmp_path / "rollout-gone.jsonl").symlink_to(tmp_path / "absent.jsonl")
    problems = read_problems(tmp_path)
    assert problems.select("line", "reason").rows() == [(None, "unreadable: broken symbolic link")]


def test_the_usage_profile_reads_the_same_usage_as_the_others() -> None:
    files = resolve(HOME)
    lean, full = decode(files, Profile.USAGE), decode(files, Profile.EVENTS)
    for name in ("usage", "settings", "limits", "files"):
        assert getattr(lean, name).equals(getattr(full, name)), name
    assert lean.lines.is_empty() and lean.items.is_empty()


def test_usage_lines_skip_only_items_and_other_events_in_codex_layout() -> None:
    rows = [
        meta(),
        message("user", "hi"),
        line("event_msg", {"type": "agent_reasoning", "text": "x"}),
        tokens(usage(5), usage(5)),
        '{"timestamp": "t", "type": "response_item", "payload": {}}',  # another layout: read
        turn_context(),
        line("event_msg", {"type": "thread_settings_applied", "thread_settings": {}}),
    ]
    data = ("\n".join(rows)).encode()
    assert [number for number, _ in usage_lines(data)] == [1, 4, 5, 6, 7]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                prompt("go"),
                message("assistant", "ok"),
                tokens(usage(100, 50, 10), usage(100, 50, 10)),
                turn_context("gpt-5.1"),
                line("event_msg", {"type": "agent_reasoning", "text": "x"}),
                "not json",
                "[1]",
            ]
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_spaced_json_reads_as_codex_layout(rows: list[str], final_newline: bool) -> None:
    """The prefix fast path is only a shortcut: the same lines written with spaces (never
    matching it) give the same frames."""

    def spaced(text: str) -> str:
        try:
            return json.dumps(json.loads(text), separators=(", ", ": "))
        except ValueError:
            return text

    def frames(texts: list[str]) -> dict[str, pl.DataFrame]:
        data = ("\n".join([meta(), *texts]) + ("\n" if final_newline else "")).encode()
        from cc_analytics.frames.sources import TranscriptFile

        file = TranscriptFile(Path("rollout-s.jsonl"), "s", None, "main", "x", len(data))
        decoded = decode([file], Profile.TABLES, contents=[data])
        return {name: getattr(decoded, name) for name in ("lines", "items", "usage", "settings", "problems")}

    compact, loose = frames(rows), frames([spaced(row) for row in rows])
    for name in compact:
        if name == "problems":
            assert compact[name]["line"].to_list() == loose[name]["line"].to_list()
        else:
            assert compact[name].equals(loose[name]), name


def test_a_fork_marks_the_history_it_replayed(tmp_path: Path) -> None:
    events = read_events(rollout("03"))
    replayed = events.filter(pl.col("replayed"))
    assert replayed["line"].min() == 2
    assert replayed.filter(pl.col("type") == "session_meta").height == 1  # the parent's header, copied
    own = events.filter(~pl.col("replayed"))
    assert own.filter(pl.col("payload_type") == "user_message")["text"].to_list() == ["Try a different approach"]
    assert own.filter(pl.col("is_request").fill_null(False)).height == 1


def test_a_copy_stamped_before_the_fork_is_replayed_too(tmp_path: Path) -> None:
    early, fork = "2025-11-03T09:00:05.000Z", "2025-11-03T10:00:00.000Z"
    write(
        tmp_path,
        "child",
        [
            meta("child", fork, forked_from_id="parent"),
            meta("parent", early),
            tokens(usage(1000), usage(1000), early),
            tokens(usage(1000), usage(1000), "2025-11-03T09:00:09.000Z"),
            tokens(usage(3000), usage(2000), "2025-11-03T10:00:30.000Z"),
        ],
    )
    events = read_events(tmp_path)
    assert events.filter(pl.col("replayed"))["line"].to_list() == [2, 3, 4]
    assert events.filter(pl.col("is_request").fill_null(False))["last_input"].to_list() == [2000]


# ------------------------------------------------------------------ the shared examples


def test_the_shared_examples_read_without_problems() -> None:
    folder = shared_path("data", "agents", "codex")
    files = resolve(folder)
    assert {f.path.name for f in files} == {"large.jsonl", "small.jsonl", "schema_drift.jsonl"}
    assert read_problems(files).is_empty()
    events = read_events(folder)
    small = events.filter(pl.col("source_file").str.ends_with("small.jsonl"))
    assert small.height == 118
    assert small.filter(pl.col("type") == "session_meta").height == 7
