"""The front: one schema for both formats, format told apart by content, same verbs per format."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

import polars as pl
import pytest

import cc_analytics.frames as frames
from cc_analytics.errors import InputError
from cc_analytics.frames import api
from cc_analytics.frames import schema as S

CLAUDE, CHAINLESS = "claude-code", "chainlesschain"
SAMPLES = Path(__file__).resolve().parents[2] / "data-samples"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder holding both formats side by side, nothing telling them apart but content."""
    folder = tmp_path_factory.mktemp("mixed")
    shutil.copytree(SAMPLES / "claude" / "projects", folder / "a")
    for path in (SAMPLES / "chainless").glob("*.jsonl"):
        shutil.copy(path, folder / "a" / path.name)
    return folder


def test_one_folder_both_formats_one_schema(mixed: Path) -> None:
    sessions = frames.read_sessions(mixed)
    assert sessions.schema == S.SESSIONS_SCHEMA
    counts = dict(sessions.group_by(S.FORMAT).len().iter_rows())
    claude_only = frames.read_sessions(SAMPLES / "claude" / "projects", format=CLAUDE)
    chainless_only = frames.read_sessions(SAMPLES / "chainless", format=CHAINLESS)
    assert counts == {CLAUDE: claude_only.height, CHAINLESS: chainless_only.height}
    assert chainless_only.height == 7
    # The same rows as each format read on its own.
    for name, alone in ((CLAUDE, claude_only), (CHAINLESS, chainless_only)):
        part = sessions.filter(pl.col(S.FORMAT) == name).drop(S.PROJECT_DIR).sort(S.SESSION_ID)
        assert part.equals(alone.drop(S.PROJECT_DIR).sort(S.SESSION_ID))


def test_turns_and_problems_share_schemas(mixed: Path) -> None:
    turns = frames.read_turns(mixed)
    assert turns.schema == S.TURNS_SCHEMA
    assert set(turns[S.FORMAT].unique()) == {CLAUDE, CHAINLESS}
    problems = frames.read_problems(mixed)
    assert problems.schema == S.PROBLEMS_SCHEMA


def test_read_tables_is_one_decode_of_the_same_rows(mixed: Path) -> None:
    tables = frames.read_tables(mixed)
    assert tables.sessions.equals(frames.read_sessions(mixed))
    by_key = [S.FORMAT, S.SOURCE_FILE, S.TURN_INDEX]
    assert tables.turns.sort(by_key).equals(frames.read_turns(mixed).sort(by_key))


def test_scan_equals_read(mixed: Path) -> None:
    assert frames.scan_sessions(mixed).collect().sort(S.FORMAT, S.SESSION_ID).equals(frames.read_sessions(mixed))


def test_events_need_one_format(mixed: Path) -> None:
    with pytest.raises(InputError, match="several formats"):
        frames.read_events(mixed)
    # A forced format reads the folder as that format's store would: the session files at its top.
    assert frames.read_events(mixed / "a", format=CHAINLESS)["session_id"].n_unique() == 7
    assert frames.read_events(SAMPLES / "claude" / "projects").height > 0


def test_unknown_format_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown format"):
        frames.read_sessions(SAMPLES, format="cursor")  # type: ignore[arg-type]


@pytest.mark.parametrize("verb", api.VERBS)
def test_format_packages_expose_the_same_verbs(verb: str) -> None:
    from cc_analytics.frames import chainless, claude

    claude_sig = inspect.signature(getattr(claude, verb))
    chainless_sig = inspect.signature(getattr(chainless, verb))
    assert claude_sig == chainless_sig
    assert list(claude_sig.parameters) == ["source", "workers", "on_progress"]
    front = inspect.signature(getattr(frames, verb))
    cached = ["cache"] if verb not in ("scan_events", "read_events") else []  # the tables are kept, not events
    assert list(front.parameters) == ["source", "format", "workers", "on_progress", *cached]


def test_the_readme_three_lines_on_the_samples() -> None:
    sessions = frames.read_sessions(SAMPLES)
    assert dict(sessions.group_by(S.FORMAT).len().iter_rows()) == {
        CLAUDE: 14,
        CHAINLESS: 7,
        "codex": 6,
        "gemini": 3,
        "opencode": 2,
        "qwen": 3,
        "copilot": 3,
    }
    turns = frames.read_turns(SAMPLES)
    assert set(turns[S.FORMAT].unique()) == {CLAUDE, CHAINLESS, "codex", "gemini", "opencode", "qwen", "copilot"}
    assert frames.read_problems(SAMPLES).is_empty()
