"""Sessions frame: deduplicated usage, occupancy, compactions, windows, buckets, context report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cc_analytics.format import fraction_4
from cc_analytics.frames.claude import claude_context, read_sessions, scan_sessions
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.windows import window_for
from cc_analytics.frames.estimate import estimate_text_tokens
from tests.conftest import shared_path

from .claude_builders import (
    SESSION,
    assistant,
    compact_boundary,
    text,
    thinking,
    tool_result,
    tool_use,
    usage,
    user,
    write,
)


def session_files(root: Path) -> Path:
    project = root / "projects" / "-work-demo"
    write(
        project / f"{SESSION}.jsonl",
        user("hello", uuid="u1"),
        # One response split over two lines: counted once, the last line kept.
        assistant(
            [thinking("think")],
            uuid="a1",
            message_id="m1",
            request_id="r1",
            tokens=usage(10, 100, 1000, 5),
        ),
        assistant(
            [text("hi"), tool_use("t1", "Read", {"path": "x"})],
            uuid="a2",
            message_id="m1",
            request_id="r1",
            tokens=usage(10, 100, 1000, 7),
        ),
        tool_result("t1", "content", uuid="r1"),
        assistant(
            [text("api error")],
            uuid="e1",
            model="<synthetic>",
            isApiErrorMessage=True,
            tokens=usage(0, 0, 0, 0),
        ),
        assistant(
            [text("more")],
            uuid="a3",
            message_id="m2",
            request_id="r2",
            tokens=usage(20, 200, 150_000, 9),
        ),
        compact_boundary(151_000, uuid="c1"),
        user("This session is being continued", uuid="s1", isCompactSummary=True),
        user("next", uuid="u2"),
        assistant(
            [text("after")],
            uuid="a4",
            message_id="m3",
            request_id="r3",
            tokens=usage(1, 2, 30_000, 3),
        ),
    )
    write(
        project / SESSION / "subagents" / "agent-x.jsonl",
        user("task", uuid="x1", isSidechain=True),
        assistant(
            [text("sub")],
            uuid="x2",
            isSidechain=True,
            message_id="m9",
            request_id="r9",
            model="claude-haiku-4-5",
            tokens=usage(1, 1, 1, 1),
        ),
    )
    return root / "projects"


def test_session_summary(tmp_path: Path) -> None:
    sessions = read_sessions(session_files(tmp_path))
    assert sessions.schema == S.SESSIONS_SCHEMA
    row = sessions.row(0, named=True)
    assert row[S.SESSION_ID] == SESSION
    assert (row[S.PROJECT], row[S.PROJECT_DIR]) == ("/work/demo", "-work-demo")
    assert (row[S.FILES], row[S.SUBAGENT_FILES], row[S.TURNS]) == (2, 1, 2)
    assert (
        row[S.INPUT_TOKENS],
        row[S.CACHE_CREATION_TOKENS],
        row[S.CACHE_READ_TOKENS],
        row[S.OUTPUT_TOKENS],
    ) == (
        10 + 20 + 1 + 1,
        100 + 200 + 2 + 1,
        1000 + 150_000 + 30_000 + 1,
        7 + 9 + 3 + 1,
    )
    assert row[S.REQUESTS] == 4
    assert (row[S.LAST_OCCUPANCY], row[S.PEAK_OCCUPANCY]) == (30_003, 150_220)
    assert row[S.COMPACTIONS] == 1
    assert (
        row[S.COMPACTION_TRIGGERS],
        row[S.COMPACTION_PRE_TOKENS],
        row[S.COMPACTION_POST_TOKENS],
    ) == (["auto"], [151_000], [30_003])
    assert row[S.MODELS] == ["claude-opus-4-5", "claude-haiku-4-5"]
    assert (row[S.WINDOW], row[S.EFFECTIVE_WINDOW], row[S.AUTOCOMPACT_THRESHOLD]) == (
        200_000,
        180_000,
        167_000,
    )
    assert row[S.HEADROOM] == 200_000 - 30_003
    assert row[S.CACHE_HIT_RATIO] == pytest.approx(181_001 / (32 + 303 + 181_001))
    assert row[S.TOKENS_USER] == estimate_text_tokens("hello") + estimate_text_tokens("next")
    assert row[S.TOKENS_TOOL] == estimate_text_tokens("content")
    assert row[S.TOKENS_TOOL_CALLS] == estimate_text_tokens('Read{"path":"x"}')
    assert row[S.TOKENS_SYSTEM] == estimate_text_tokens("This session is being continued")
    parts = ("think", "hi", "api error", "more", "after")
    assert row[S.TOKENS_ASSISTANT] == sum(estimate_text_tokens(p) for p in parts)
    assert row[S.ESTIMATED_TOKENS] == sum(row[b] for b in S.BUCKETS)


def test_window_inference() -> None:
    assert window_for("claude-opus-4-5") == 200_000
    assert window_for("claude-sonnet-4-6-20260101") == 1_000_000
    assert window_for("claude-opus-4-6", "2.1.74") == 200_000
    assert window_for("claude-opus-4-6", "2.1.75") == 1_000_000
    assert window_for("claude-opus-4-7", "2.1.116") == 200_000
    assert window_for("claude-opus-4-7", "2.1.117") == 1_000_000
    assert window_for("claude-opus-5", None) == 1_000_000
    assert window_for("claude-haiku-4-5", "1.0.24", 200_001) == 1_000_000
    assert window_for(None) == 200_000


def test_claude_context_report(tmp_path: Path) -> None:
    projects = session_files(tmp_path)
    report = claude_context(SESSION, roots=[projects])
    assert report is not None
    assert list(report)[:11] == [
        "sessionId", "model", "provider", "contextWindow", "totalTokens", "usedFraction",
        "remainingTokens", "messageCount", "breakdown", "counts", "overflows",
    ]  # fmt: skip
    assert report["provider"] == "anthropic"
    assert report["model"] == "claude-opus-4-5"
    assert list(report["breakdown"]) == ["system", "user", "assistant", "tool", "toolCalls"]
    assert list(report["counts"]) == ["system", "user", "assistant", "tool"]
    # Current context = since the compaction: the summary, "next" and "after".
    assert report["breakdown"] == {
        "system": estimate_text_tokens("This session is being continued"),
        "user": estimate_text_tokens("next"),
        "assistant": estimate_text_tokens("after"),
        "tool": 0,
        "toolCalls": 0,
    }
    assert report["counts"] == {"system": 1, "user": 1, "assistant": 1, "tool": 0}
    assert report["messageCount"] == 3
    assert report["totalTokens"] == sum(report["breakdown"].values())
    assert report["usedFraction"] == fraction_4(report["totalTokens"] / 200_000)
    assert (report["recordedTokens"], report["peakTokens"], report["compactions"]) == (
        30_003,
        150_220,
        1,
    )
    assert report["compactionHistory"] == [{"trigger": "auto", "preTokens": 151_000, "postTokens": 30_003}]
    assert (report["effectiveWindow"], report["autoCompactThreshold"]) == (180_000, 167_000)
    assert report["outputTokens"] == 20
    json.dumps(report)
    bigger = claude_context(SESSION, roots=[projects], model="claude-sonnet-4-6")
    assert bigger is not None
    assert (bigger["model"], bigger["contextWindow"], bigger["effectiveWindow"]) == (
        "claude-sonnet-4-6",
        1_000_000,
        980_000,
    )
    assert claude_context("00000000-0000-4000-8000-000000000000", roots=[projects]) is None
    assert claude_context("../x", roots=[projects]) is None


def test_lazy_equals_eager(tmp_path: Path) -> None:
    projects = session_files(tmp_path)
    eager = read_sessions(projects)
    assert scan_sessions(projects).collect().equals(eager)
    assert scan_sessions(projects).select(S.SESSION_ID, S.TURNS).collect().rows() == [(SESSION, 2)]


words = st.text(alphabet=st.sampled_from("ab 你好😀\n\u3000é"), max_size=30)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prompts=st.lists(words, min_size=1, max_size=4),
    replies=st.lists(words, min_size=1, max_size=4),
    results=st.lists(words, max_size=3),
)
def test_buckets_sum_to_total_and_lazy_equals_eager(
    tmp_path_factory: pytest.TempPathFactory,
    prompts: list[str],
    replies: list[str],
    results: list[str],
) -> None:
    root = tmp_path_factory.mktemp("buckets")
    lines = []
    for index, prompt in enumerate(prompts):
        lines.append(user(prompt))
        lines.append(assistant([text(r) for r in replies] + [tool_use(f"t{index}", "Bash", {"command": prompt})]))
        lines.extend(tool_result(f"t{index}", result) for result in results)
    path = write(root / f"{SESSION}.jsonl", *lines)
    eager = read_sessions(path)
    lazy = scan_sessions(path).collect()
    assert lazy.equals(eager)
    row = eager.row(0, named=True)
    assert row[S.ESTIMATED_TOKENS] == sum(row[b] for b in S.BUCKETS)
    expected_user = sum(estimate_text_tokens(p) for p in prompts)
    assert row[S.TOKENS_USER] == expected_user


def test_totals_equal_the_bench_reference(tmp_path: Path) -> None:
    """Deduplicated totals and occupancy sums equal ``bench_tasks.py json_naive`` exactly."""
    bench = shared_path("bench")
    corpus = tmp_path / "corpus"
    subprocess.run(
        [
            sys.executable,
            str(bench / "make_corpus.py"),
            str(corpus),
            "--sessions",
            "12",
            "--seed",
            "3",
            "--size-mb",
            "4",
        ],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [sys.executable, str(bench / "bench_tasks.py"), "json_naive", str(corpus)],
        check=True,
        capture_output=True,
    )
    expected = json.loads(out.stdout)
    sessions = read_sessions(corpus / "projects")
    totals = [
        int(sessions[c].sum()) for c in (S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS)
    ]
    assert totals == expected["usage_totals"]
    assert int(sessions[S.LAST_OCCUPANCY].sum()) == expected["sum_last_ctx"]
    assert int(sessions[S.PEAK_OCCUPANCY].sum()) == expected["sum_max_ctx"]
    assert sessions.filter(pl.col(S.REQUESTS) > 0).height == expected["sessions"]
