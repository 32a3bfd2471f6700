"""``context`` leads with the recorded occupancy wherever a transcript records it (issue 23, point 1).

The headline of the gauge is the occupancy the sessions frame reports; the heuristic buckets
follow, scaled to that total and labelled as estimated; the window rests on named evidence; a
session above its window says why. ChainlessChain's gauge is left to the conformance tests
(byte parity with ``cc context``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.format import context_gauge, round_half_up
from cc_analytics.frames.claude import read_sessions
from cc_analytics.frames.claude.kept import keep
from cc_analytics.frames.registry import get
from cc_analytics.windowmath import scale_parts
from tests.conftest import run_cli, shared_path
from tests.frames.claude_builders import SESSION, assistant, text, usage, user, write

HEADLINE = re.compile(r"^  recorded\s+(\d+)  \S+ ([0-9.]+)% of window$", re.MULTILINE)
ROW = re.compile(r"^  (system|user|assistant|tool results|tool calls)\s+(\d+)  ", re.MULTILINE)


def gauge_of(report: dict) -> str:
    return context_gauge(report, colour=False)


def reports(source: Path) -> list[tuple[dict, dict | None]]:
    """(sessions row, context report) of every Claude Code session of ``source``."""
    plugin = get("claude-code")
    files = plugin.resolve(source)
    rows = read_sessions(source).rows(named=True)
    return [
        (row, plugin.context_report(row["session_id"], [f for f in files if f.session_id == row["session_id"]]))
        for row in rows
    ]


def test_every_real_session_headlines_its_recorded_occupancy() -> None:
    real = shared_path("data", "claude", "real")
    seen = recorded = 0
    for row, report in reports(real):
        assert report is not None, row["session_id"]
        seen += 1
        gauge = gauge_of(report)
        occupancy = row["last_occupancy"]
        headline = HEADLINE.search(gauge)
        if occupancy is None:  # no request recorded: the estimate, as `cc context` draws it
            assert headline is None and "\n  total " in gauge, row["session_id"]
            continue
        recorded += 1
        assert headline is not None, gauge
        assert int(headline.group(1)) == occupancy == report["recordedTokens"]
        assert report["contextWindow"] == row["window"]
        assert headline.group(2) == str(round_half_up(occupancy / row["window"] * 100, 1))
        assert gauge.index("  recorded ") < gauge.index("estimated composition")
        # The composition is scaled to the recorded total, part by part.
        parts = [int(tokens) for _, tokens in ROW.findall(gauge)]
        if sum(report["breakdown"].values()):
            assert sum(parts) == occupancy
        assert "above the window" not in gauge or occupancy > report["contextWindow"]
    assert seen >= 20 and recorded >= 15


def test_the_command_prints_the_same_headline(tmp_path: Path) -> None:
    real = shared_path("data", "claude", "real")
    session = "4d5611e5-241a-462a-8d15-5122611a9569"
    project = tmp_path / "projects" / "p"
    project.mkdir(parents=True)
    (project / f"{session}.jsonl").symlink_to(real / f"spotter--{session}.jsonl")
    result = run_cli(["context", session, "--claude-root", str(tmp_path / "projects")])
    assert result.returncode == 0, result.stderr
    occupancy = read_sessions(project).filter(pl.col("session_id") == session)["last_occupancy"].item()
    headline = HEADLINE.search(result.stdout.decode())
    assert headline is not None and int(headline.group(1)) == occupancy == 106_060
    assert "  auto-compact   167000  63.5% of the threshold" in result.stdout.decode()
    assert "window from the 200,000-token default" in result.stdout.decode()


def session(tmp_path: Path, *, model: str = "claude-opus-4-5", occupancy: int = 50_000) -> Path:
    """A session of two prompts and answers whose last request recorded ``occupancy``."""
    projects = tmp_path / "projects"
    write(
        projects / "p" / f"{SESSION}.jsonl",
        user("a" * 400),
        assistant([text("b" * 1200)], model=model, tokens=usage(10, 100, 1000)),
        user("c" * 400),
        assistant([text("d" * 2000)], model=model, tokens=usage(occupancy - 1100, 100, 1000)),
    )
    return projects


def report_of(projects: Path, model: str | None = None) -> dict:
    plugin = get("claude-code")
    report = plugin.context_report(SESSION, plugin.find_session(SESSION, [projects]), model=model)
    assert report is not None
    return report


def test_the_composition_is_the_estimate_scaled_and_labelled(tmp_path: Path) -> None:
    report = report_of(session(tmp_path))
    assert report["breakdown"] == {"system": 0, "user": 200, "assistant": 800, "tool": 0, "toolCalls": 0}
    gauge = gauge_of(report)
    assert "estimated composition (heuristic, 1000 tokens scaled \u00d750.00 to the recorded total)" in gauge
    assert ROW.findall(gauge) == [("user", "10000"), ("assistant", "40000")]
    assert scale_parts([200, 800], 50_000) == [10_000, 40_000]
    assert HEADLINE.search(gauge).groups() == ("50000", "25.0")  # type: ignore[union-attr]
    # The JSON keeps its keys: the estimate in `totalTokens`, the recorded figure beside it.
    assert (report["totalTokens"], report["recordedTokens"]) == (1000, 50_000)
    assert report["windowSource"] == "the 200,000-token default"


@pytest.mark.parametrize(
    ("model", "occupancy", "window", "source"),
    [
        ("claude-opus-4-5", 250_000, 1_000_000, "a request above 200,000 tokens"),
        ("claude-sonnet-4-6", 50_000, 1_000_000, "the model's default (claude-sonnet-4-6)"),
        ("claude-opus-4-5", 50_000, 200_000, "the 200,000-token default"),
    ],
)
def test_the_window_names_its_evidence(tmp_path: Path, model: str, occupancy: int, window: int, source: str) -> None:
    report = report_of(session(tmp_path, model=model, occupancy=occupancy))
    assert (report["contextWindow"], report["windowSource"]) == (window, source)
    assert f"  window from {source}\n" in gauge_of(report)
    assert "above the window" not in gauge_of(report)


def test_a_marked_model_has_the_million_window(tmp_path: Path) -> None:
    report = report_of(session(tmp_path), model="claude-opus-4-5[1m]")
    assert report["contextWindow"] == 1_000_000
    assert report["windowSource"] == "--model claude-opus-4-5[1m]: the [1m] marker of the model name"


def test_above_the_window_says_why(tmp_path: Path) -> None:
    report = report_of(session(tmp_path, occupancy=250_000), model="claude-opus-4-5")
    assert report["contextWindow"] == 200_000 and report["recordedTokens"] == 250_000
    gauge = gauge_of(report)
    assert "125.0% of window" in gauge
    assert (
        "\u26a0 above the window: its size (200,000) comes from --model claude-opus-4-5: the 200,000-token default, "
        "and this session's last request held more, so its window was larger"
    ) in gauge
    assert "reached: Claude Code compacts before the next request" in gauge


def test_the_status_lines_window_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC_ANALYTICS_CACHE_DIR", str(tmp_path / "cache"))  # this test's own kept windows
    projects = session(tmp_path)
    keep({"session_id": SESSION, "context_window": {"context_window_size": 1_000_000}})
    report = report_of(projects)
    assert report["contextWindow"] == 1_000_000
    assert report["windowSource"] == "Claude Code's status line (context_window)"
    assert "5.0% of window" in gauge_of(report)


def test_no_recorded_request_is_the_cc_context_gauge(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    write(projects / "p" / f"{SESSION}.jsonl", user("hello"))
    report = report_of(projects)
    assert report["recordedTokens"] is None
    gauge = gauge_of(report)
    assert HEADLINE.search(gauge) is None and "\n  total " in gauge and "estimated composition" not in gauge


def test_codex_leads_with_what_it_recorded(tmp_path: Path) -> None:
    usage_ = '{"input_tokens":16341,"cached_input_tokens":3584,"output_tokens":81,"total_tokens":16422}'
    (tmp_path / "rollout-a.jsonl").write_text(
        '{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"a"}}\n'
        '{"timestamp":"2025-10-01T10:00:01Z","type":"response_item","payload":{"type":"message",'
        '"role":"user","content":[{"type":"input_text","text":"List the files"}]}}\n'
        '{"timestamp":"2025-10-01T10:00:09Z","type":"event_msg","payload":{"type":"token_count",'
        f'"info":{{"total_token_usage":{usage_},"last_token_usage":{usage_},"model_context_window":258400}}}}}}\n'
    )
    plugin = get("codex")
    report = plugin.context_report("a", plugin.resolve(tmp_path))
    assert report is not None
    assert report["windowSource"] == "what Codex recorded (model_context_window)"
    gauge = gauge_of(report)
    assert HEADLINE.search(gauge).groups() == ("16422", "6.4")  # type: ignore[union-attr]
    assert "auto-compact" not in gauge  # Codex has no threshold of this kind
    assert sum(int(tokens) for _, tokens in ROW.findall(gauge)) == 16422
    json.dumps(report)


def test_the_reports_table_says_why_a_peak_is_above_the_window() -> None:
    from cc_analytics.report import _peak_cell

    assert _peak_cell(0.5, "recorded") == "<td class='num green'>50.0%</td>"
    above = _peak_cell(1.25, "recorded")
    assert "125.0% \u26a0" in above and "its window was larger" in above
    assert "the estimate overshoots" in _peak_cell(1.25, "estimated")


def test_why_says_what_filled_the_window_at_the_last_turn(tmp_path: Path) -> None:
    projects = session(tmp_path)
    args = ["context", SESSION, "--claude-root", str(projects)]
    plain = run_cli(args)
    result = run_cli([*args, "--why"])
    assert result.returncode == 0, result.stderr
    text, findings = result.stdout.decode().split("\n  findings (open one with:")
    assert text.startswith(plain.stdout.decode())  # the gauge, the parts, then the findings
    # The first request read 100 estimated tokens of 1,110 recorded: a baseline of 1,010; the last
    # one read 200 + 300 estimated for 50,000 recorded: 48,990 spread over them.
    assert text.endswith(
        "\n  what filled the window at turn 1 (estimated parts scaled \u00d797.98 to the recorded 50000;"
        " unscaled error -48490)\n"
        "  assistant text                             29394  " + "\u2588" * 14 + "\u2591" * 10 + "  59%\n"
        "  user prompts                               19596  " + "\u2588" * 9 + "\u2591" * 15 + "  39%\n"
        "  baseline (system prompt, tools, memory)     1010  " + "\u2591" * 24 + "   2%\n"
    )
    report = json.loads(run_cli([*args, "--why", "--json"]).stdout)
    assert [(row["category"], row["tokens"]) for row in report["composition"]] == [
        ("baseline", 1010),
        ("user", 19596),
        ("assistant", 29394),
    ]
    assert sum(row["tokens"] for row in report["composition"]) == report["recordedTokens"]


def test_why_lists_the_findings_after_the_composition(tmp_path: Path) -> None:
    from tests.fixtures.findings_transcript import SESSION as BUILT
    from tests.fixtures.findings_transcript import write_session

    projects = write_session(tmp_path).parent
    args = ["context", BUILT, "--claude-root", str(projects), "--why"]
    result = run_cli(args, env={"NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    composition, findings = result.stdout.decode().split("\n  findings (open one with:")
    assert "what filled the window at turn 4" in composition
    # The figures of tests/frames/test_claude_findings.py, as the reader sees them.
    assert (
        "  files read more than once\n"
        "      500  /w/a.py: 2 reads, the repeats' tokens (second read at turn 1)  \u00b7 r3\n"
    ) in findings
    assert (
        "  largest jumps of the window, and what entered\n"
        "    +1356  at turn 2: user prompts 20, assistant text 2  \u00b7 a6\n"
        "     +727  at turn 1: tool results \u00b7 Read 500, tool results \u00b7 mcp__github 200, user prompts 10  \u00b7 a5\n"
    ) in findings
    assert (
        "  cache rebuilt after an idle gap\n"
        "    11325  rewritten at turn 2 after 605 s idle (5m cache), $0.11  \u00b7 a6\n"
        "    10100  rewritten at turn 4 after 7220 s idle (1h cache), $0.10  \u00b7 a8\n"
    ) in findings
    assert "  \u2026 5 more\n" in findings  # ten largest items, five shown
    report = json.loads(run_cli([*args, "--json"]).stdout)
    rows = [(row["kind"], row["uuid"], row["tokens"]) for row in report["findings"]]
    assert ("repeated_read", "r3", 500) in rows and ("tool_definitions", "a1", 10_000) in rows
    assert len(rows) == 34 and all(row["sourceFile"].endswith(f"{BUILT}.jsonl") for row in report["findings"])
