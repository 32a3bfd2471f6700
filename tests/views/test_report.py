"""``cc-analytics report``: the files it writes, where it refuses to write, and the Parquet."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.errors import InputError
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.sources import split_by_format
from cc_analytics.report import MARKER, check_out_dir, load, write_report
from tests.conftest import ROOT, run_cli

SAMPLES = ROOT / "data-samples"


@pytest.fixture(scope="module")
def data():
    return load(samples=True)


def test_load_reads_both_formats(data) -> None:
    counts = dict(data.sessions.group_by("format").len().iter_rows())
    assert counts == {
        "claude-code": 14,
        "chainlesschain": 7,
        "codex": 6,
        "gemini": 3,
        "opencode": 2,
        "qwen": 3,
        "copilot": 3,
    }
    claude = data.sessions.filter(pl.col("format") == "claude-code")
    assert claude[S.COMPACTIONS].sum() == 3
    assert claude[S.SUBAGENT_FILES].sum() == 3
    assert (claude[S.WINDOW] == 1_000_000).sum() >= 1
    assert data.turns.filter(~pl.col(S.IS_SUBAGENT_FILE)).height > 40
    assert data.problems.height == 0
    assert data.requests.height == data.sessions[S.REQUESTS].sum() == 197
    assert data.sessions[S.COST_USD].sum() == pytest.approx(data.requests[S.COST_USD].sum(), rel=1e-12)


def test_load_calls_meanwhile_while_its_workers_start(data) -> None:
    # The report command imports its charts' modules while the worker processes start: the
    # pool is started (and not yet taken by the reading) when ``meanwhile`` runs. Without the
    # cache: the samples were read before, and a warm run starts no workers.
    from cc_analytics.frames import engine

    seen: list[list[int]] = []
    loaded = load(samples=True, workers=2, meanwhile=lambda: seen.append(list(engine._started.values())), cache=False)
    assert seen == [[1]]
    assert not engine._started, "the started pool was taken by the reading, or ended"
    assert loaded.sessions.equals(data.sessions) and loaded.turns.equals(data.turns)
    assert loaded.requests.equals(data.requests)
    # Sources read before are likely kept (frames.tablecache): no worker is started ahead of the run.
    load(samples=True)
    seen.clear()
    again = load(samples=True, workers=2, meanwhile=lambda: seen.append(list(engine._started.values())))
    assert seen == [[]] and again.sessions.equals(data.sessions)


def test_write_report_and_parquet_round_trip(data, tmp_path: Path) -> None:
    written = write_report(data, tmp_path / "out")
    names = ["report.html", "requests.parquet", "sessions.parquet", "turns.parquet"]
    assert sorted(p.name for p in written.values()) == names
    assert pl.read_parquet(written["sessions.parquet"]).equals(data.sessions)
    assert pl.read_parquet(written["turns.parquet"]).equals(data.turns)
    assert pl.read_parquet(written["requests.parquet"]).equals(data.requests)
    page = written["report.html"].read_text(encoding="utf-8")
    assert MARKER in page
    assert not re.search(r"<(script|link)[^>]+(src|href)=", page), "the page must not load anything"
    assert "vegaEmbed" in page and page.count("class=chart") == 10
    assert "The costliest sessions" in page
    assert "left out of every cost (* marks a partial cost): qwen3-coder-plus (5), coder-model (1)." in page
    write_report(data, tmp_path / "out")  # our own report folder may be rewritten


def test_a_failed_page_leaves_no_file_and_no_new_folder(data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The Parquet files are written on a thread while the page is drawn: when drawing fails,
    # the writing is waited for and nothing of it stays, neither temporaries nor final names.
    import cc_analytics.report as R

    def broken(_data: object) -> str:
        raise RuntimeError("no page")

    monkeypatch.setattr(R, "render_html", broken)
    with pytest.raises(RuntimeError, match="no page"):
        write_report(data, tmp_path / "new")
    assert not (tmp_path / "new").exists()
    kept = tmp_path / "kept"
    monkeypatch.undo()
    first = write_report(data, kept)
    before = {p.name: p.read_bytes() for p in kept.iterdir()}
    monkeypatch.setattr(R, "render_html", broken)
    with pytest.raises(RuntimeError, match="no page"):
        write_report(data, kept)
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == before, "an earlier report stays whole"
    assert sorted(first) == sorted(before)


def test_a_failed_parquet_write_is_raised(data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cc_analytics.report as R

    def full(_jobs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(R, "_write_parquet", full)
    with pytest.raises(OSError, match="No space left"):
        write_report(data, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_refuses_folders_it_does_not_own(data, tmp_path: Path) -> None:
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me")
    with pytest.raises(InputError, match="refusing to overwrite"):
        write_report(data, other)
    assert (other / "todo.txt").read_text() == "keep me"
    (other / "report.html").write_text("<html>someone else's</html>")
    with pytest.raises(InputError, match="refusing to overwrite"):
        check_out_dir(other)


def test_refuses_the_claude_config_and_chainless_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("CHAINLESSCHAIN_HOME", str(tmp_path / "cc"))
    for inside in (tmp_path / ".claude" / "r", tmp_path / "cfg" / "projects" / "r", tmp_path / "cc" / "sessions" / "r"):
        with pytest.raises(InputError, match="refusing to write a report inside"):
            check_out_dir(inside)


def test_split_sources_sniffs_each_format(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(SAMPLES / "chainless", mixed / "chainless")
    shutil.copytree(SAMPLES / "claude", mixed / "claude")
    found = split_by_format([mixed])
    claude, chainless = found["claude-code"], found["chainlesschain"]
    assert len(chainless) == 7
    assert all("claude" in p.parts for p in claude) and len(claude) == 17
    with pytest.raises(InputError, match="no such file or folder"):
        split_by_format([tmp_path / "absent"])


def test_cli_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = run_cli(["report", str(SAMPLES), "--out", str(out)])
    assert result.returncode == 0, result.stderr.decode()
    printed = result.stdout.decode().split()
    assert sorted(Path(p).name for p in printed) == [
        "report.html",
        "requests.parquet",
        "sessions.parquet",
        "turns.parquet",
    ]
    assert "38 sessions" in result.stderr.decode()
    assert pl.read_parquet(out / "sessions.parquet").height == 38


def test_cli_refusal_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    result = run_cli(["report", "--samples", "--out", str(tmp_path)])
    assert result.returncode == 1
    assert result.stderr.decode().startswith("✖ refusing to overwrite")
    assert result.stdout == b""


@pytest.mark.parametrize("content", ["empty", "unreadable"])
def test_cli_reports_a_source_without_sessions(tmp_path: Path, content: str) -> None:
    # An empty folder, or one whose only transcript holds no readable line: a report saying so,
    # as `sessions` says "0 sessions" (the calibration chart had no pairs and raised a TypeError).
    source = tmp_path / "source"
    source.mkdir()
    if content == "unreadable":
        (source / "noise.jsonl").write_bytes(bytes(range(256)) * 8 + b"\n{not json\n")
    out = tmp_path / "report"
    result = run_cli(["report", str(source), "--out", str(out)])
    assert result.returncode == 0, result.stderr
    assert (out / "report.html").stat().st_size > 0 and pl.read_parquet(out / "sessions.parquet").height == 0
    assert b"0 sessions, 0 turns" in result.stderr + result.stdout
    if content == "unreadable":
        assert b"unreadable line(s) skipped" in result.stderr + result.stdout


def test_the_report_command_goes_without_altair_and_the_jupyter_modules(tmp_path: Path) -> None:
    # The report embeds its charts' specs as plain dicts: Altair (0.65 s to import, as much
    # again to build and serialize the charts), and with it jsonschema's format checkers
    # and the Jupyter chart's machinery (anywidget, ipywidgets), stay out. The probe looks as
    # the command exits.
    watched = {"altair", "jsonschema", "ipywidgets", "anywidget", "rfc3987_syntax", "isoduration", "webcolors"}
    probe = (
        "import os, sys\n"
        "exit_now = os._exit\n"
        "def probed(code):\n"
        f"    print(sorted({{n.split('.')[0] for n, m in sys.modules.items() if m}} & {watched!r}), "
        "file=sys.stderr, flush=True)\n"
        "    exit_now(code)\n"
        "os._exit = probed\n"
        "from cc_analytics.cli import main\n"
        f"sys.argv = ['cc-analytics', 'report', '--samples', '--out', {str(tmp_path / 'report')!r}, '--quiet']\n"
        "sys.exit(main())"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().strip().splitlines()[-1] == "[]"
    assert (tmp_path / "report" / "report.html").read_text().rstrip().endswith("</html>")


def test_the_report_says_what_fills_the_windows(tmp_path: Path) -> None:
    # The session of tests/fixtures/findings_transcript.py (its figures are worked out in
    # tests/frames/test_claude_findings.py) beside the samples' Claude Code sessions.
    from tests.fixtures.findings_transcript import write_session

    built = write_session(tmp_path / "built")
    claude = SAMPLES / "claude"
    data = load([built, claude], cache=False)
    assert data.findings is not None and set(data.findings["format"]) == {"claude-code"}
    from cc_analytics.report import windows_tables

    tables = windows_tables(data.findings)
    # At its fullest (turn 3) the built session held 2,000 tokens of Read results and calls 28:
    # Read's row sums those with the samples' own, and every part's share sums to one.
    alone = windows_tables(data.findings.filter(pl.col("project") == "/work/demo"))
    assert alone["parts"].filter(pl.col("what") == "Read")["tokens"].item() == 2_028
    assert alone["parts"]["tokens"].sum() == 12_712
    assert tables["parts"]["share"].sum() == pytest.approx(1.0)
    demo = tables["projects"].filter(pl.col("project") == "/work/demo").row(0, named=True)
    assert (demo["sessions"], demo["tokens"], demo["largest"], demo["read_again"], demo["rebuilds"]) == (
        1,
        12_712,
        "baseline (system prompt, tools, memory)",
        500,
        2,
    )
    assert demo["rebuild_cost"] == pytest.approx((11_325 + 10_100) * 10e-6)
    # The samples rebuild no cache: the costliest idle gaps are the built session's two.
    assert tables["gaps"].select("turn_index", "item", "tokens", "uuid").rows() == [
        (2, "5m", 11_325, "a6"),
        (4, "1h", 10_100, "a8"),
    ]
    page = write_report(data, tmp_path / "out")["report.html"].read_text(encoding="utf-8")
    section = page[page.index("<h2>What fills the windows</h2>") :]
    assert "<td class='num'>10 min</td><td>5m</td><td class='num'>11,325</td><td class='num'>$0.11</td>" in section
    assert "<td class='num'>120 min</td><td>1h</td><td class='num'>10,100</td><td class='num'>$0.10</td>" in section


def test_a_report_without_findings_says_the_windows_are_not_measured(data) -> None:
    from cc_analytics.report import ReportData, render_html

    page = render_html(ReportData(data.sessions, data.turns, data.problems, data.sources, data.requests, None))
    assert "Not measured: read without findings (an archive keeps no content blocks;" in page
    assert data.findings is not None and data.findings.height > 0  # samples: transcripts, measured


def test_a_session_of_more_than_5000_turns_is_drawn(tmp_path: Path) -> None:
    # Altair refuses a chart's data over 5,000 rows unless told: a long session's turns are charted whole.
    from tests.frames.claude_builders import assistant, text, user, write

    lines = []
    for index in range(5_100):
        second = index * 3_600 // 5_100  # the builders' clock turns over at the hour
        lines += [user(f"question {index}", second=second), assistant([text("answer")], second=second)]
    write(tmp_path / "long" / "session.jsonl", *lines)
    data = load([tmp_path / "long"], cache=False)
    assert data.turns.height >= 5_100
    page = write_report(data, tmp_path / "out")["report.html"].read_text(encoding="utf-8")
    assert "vegaEmbed" in page and page.count("class=chart") >= 5
