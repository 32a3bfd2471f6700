"""Every reader takes an archive: report, SessionExplorer, context --archive, window --archive,
after the original transcripts are gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from cc_analytics.archive import update
from tests.archive.conftest import Corpus
from tests.conftest import run_cli

CLAUDE_SESSION = "24422850-abc3-4525-9567-e2fd4bd0adcb"  # has a subagent file
CHAINLESS_SESSION = "sample-dashscope-cjk"


@pytest.fixture
def archived(small: Corpus, tmp_path: Path) -> tuple[Corpus, Path, Path]:
    """The corpus archived, and a copy of the sources as they were (the originals are deleted)."""
    to = tmp_path / "archive"
    update(small.sources, to)
    kept = tmp_path / "kept"
    shutil.copytree(small.root, kept)
    return small, to, kept


def _gone(corpus: Corpus) -> None:
    shutil.rmtree(corpus.root)


def test_context_from_the_archive(archived: tuple[Corpus, Path, Path]) -> None:
    corpus, to, kept = archived
    claude = run_cli(["context", CLAUDE_SESSION, "--claude-root", str(kept / "claude"), "--json"])
    chainless = run_cli(["context", CHAINLESS_SESSION, "--sessions-dir", str(kept / "chainless"), "--json"])
    _gone(corpus)
    for session, expected in ((CLAUDE_SESSION, claude), (CHAINLESS_SESSION, chainless)):
        got = run_cli(["context", session, "--archive", str(to), "--json"])
        assert got.returncode == 0, got.stderr
        assert got.stdout == expected.stdout and expected.stdout
    gauge = run_cli(["context", CHAINLESS_SESSION, "--archive", str(to)])
    assert b"Context" in gauge.stdout
    missing = run_cli(["context", "no-such-session", "--archive", str(to)])
    assert missing.returncode == 1 and b"No headless transcript" in missing.stderr
    latest = run_cli(["context", "--archive", str(to), "--json"])
    assert latest.returncode == 0 and orjson.loads(latest.stdout)["sessionId"]


def test_window_from_the_archive(archived: tuple[Corpus, Path, Path]) -> None:
    corpus, to, kept = archived
    source = next(corpus.claude.glob(f"*/{CLAUDE_SESSION}.jsonl"))
    lines = [orjson.loads(line) for line in source.read_bytes().splitlines()]
    uuid = next(line["uuid"] for line in lines if line.get("type") == "assistant")
    expected = run_cli(["window", str(source), "--uuid", uuid])
    assert expected.returncode == 0, expected.stderr
    _gone(corpus)
    got = run_cli(["window", str(source), "--uuid", uuid, "--archive", str(to)])
    assert got.stdout == expected.stdout
    copy = next(to.glob(f"raw/claude-code/*/{CLAUDE_SESSION}.jsonl.zst")).relative_to(to)
    assert run_cli(["window", str(copy), "--uuid", uuid, "--archive", str(to)]).stdout == expected.stdout
    unknown = run_cli(["window", "/nowhere.jsonl", "--uuid", uuid, "--archive", str(to)])
    assert unknown.returncode == 1 and b"not in the archive" in unknown.stderr


def test_report_and_explorer_from_the_archive(archived: tuple[Corpus, Path, Path], tmp_path: Path) -> None:
    import polars as pl

    from cc_analytics.views.widgets import SessionExplorer

    corpus, to, _kept = archived
    _gone(corpus)
    result = run_cli(["report", str(to), "--out", str(tmp_path / "report"), "--quiet"])
    assert result.returncode == 0, result.stderr
    sessions = pl.read_parquet(tmp_path / "report" / "sessions.parquet")
    assert set(sessions["format"]) == {"claude-code", "chainlesschain"}
    assert (tmp_path / "report" / "report.html").stat().st_size > 0
    explorer = SessionExplorer.from_source(str(to))
    assert explorer.sessions.height == sessions.filter(pl.col("format") == "claude-code").height
    assert explorer.select(CLAUDE_SESSION).turn_rows().height > 0


def test_sessions_command_from_the_archive(archived: tuple[Corpus, Path, Path]) -> None:
    corpus, to, _kept = archived
    expected = run_cli(["sessions", *corpus.sources, "--json", "--quiet"])
    _gone(corpus)
    got = run_cli(["sessions", str(to), "--json", "--quiet"])
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout and orjson.loads(got.stdout)
