"""Projects trees with things in them that are not transcripts one can read: each is reported (a
problems row with a null line, a counted note on stderr) and the rest loads, through
``frames.read_sessions``, ``cc-analytics sessions`` and ``cc-analytics report``.

A FIFO, a broken symbolic link and a symbolic link loop named ``*.jsonl`` stand in for an
unreadable file wherever the tests run; ``chmod 000`` is tried too, except as root (who reads
everything). A FIFO is never opened for reading in a way that waits for a writer.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import cc_analytics.frames as ccf
from cc_analytics.errors import InputError
from cc_analytics.frames.chainless.decode import Profile, decode
from cc_analytics.frames.chainless.store import transcript_file
from cc_analytics.frames.claude.decode import SESSIONS, decode_files
from cc_analytics.frames.claude.discovery import discover
from cc_analytics.frames.sources import TranscriptFile, split_by_format
from tests.conftest import run_cli

from . import chainless_builders as cl
from .claude_builders import assistant, text, user, write

GOOD = ("aaaaaaaa-2222-4333-8444-555555555555", "bbbbbbbb-2222-4333-8444-555555555555")
INSIDE = "cccccccc-2222-4333-8444-555555555555"
ROOT_READS_ALL = pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file or folder")
HANG_SECONDS = 60


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """Opening a FIFO for reading the blocking way would wait forever: fail instead."""

    def expire(_signum: int, _frame: object) -> None:
        raise TimeoutError("blocked: a FIFO opened for reading waits for a writer")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def hostile_tree(config: Path) -> tuple[Path, dict[str, str]]:
    """A Claude config folder whose projects tree holds two sessions and every kind of trap.

    Returns the projects folder and, per trap that is reported, its file name and the reason.
    """
    project = config / "projects" / "-work-demo"
    for session in GOOD:
        write(project / f"{session}.jsonl", user("hi", session=session), assistant([text("yo")], session=session))
    (project / "broken.jsonl").symlink_to(project / "gone.jsonl")
    (project / "loop.jsonl").symlink_to("loop.jsonl")
    os.mkfifo(project / "fifo.jsonl")
    (project / "up").symlink_to("..")  # a folder link (here a loop): not followed
    folder = project / "folder.jsonl"  # a folder named like a transcript is a folder: what it holds is read
    write(folder / f"{INSIDE}.jsonl", user("inside", session=INSIDE))
    reported = {
        "broken.jsonl": "cannot read file: broken symbolic link",
        "loop.jsonl": "cannot read file: symbolic link loop",
        "fifo.jsonl": "cannot read file: not a regular file (a FIFO)",
    }
    return config / "projects", reported


def env_for(tmp: Path, config: Path) -> dict[str, str]:
    return {"HOME": str(tmp / "home"), "CLAUDE_CONFIG_DIR": str(config), "CHAINLESSCHAIN_HOME": str(tmp / "none")}


def test_read_sessions_reports_each_trap_and_loads_the_rest(tmp_path: Path) -> None:
    projects, reported = hostile_tree(tmp_path / "config")
    sessions = ccf.read_sessions(projects)
    assert sorted(sessions["session_id"]) == sorted([*GOOD, INSIDE])
    problems = ccf.read_problems(projects)
    assert problems["line"].null_count() == problems.height
    assert {Path(p).name: reason for p, reason in problems.select("source_file", "reason").rows()} == reported
    tables = ccf.read_tables(projects)
    assert tables.sessions.height == 3 and tables.problems.height == len(reported)


def test_the_default_projects_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _projects, reported = hostile_tree(tmp_path / "config")
    for name, value in env_for(tmp_path, tmp_path / "config").items():
        monkeypatch.setenv(name, value)
    assert ccf.read_sessions().height == 3
    assert sorted(Path(p).name for p in ccf.read_problems()["source_file"]) == sorted(reported)


def test_discovery_keeps_the_traps_for_the_loader_to_report(tmp_path: Path) -> None:
    projects, reported = hostile_tree(tmp_path / "config")
    names = sorted(f.path.name for f in discover([projects]))
    assert names == sorted([*reported, *(f"{session}.jsonl" for session in (*GOOD, INSIDE))])
    by_format = split_by_format(projects)
    assert by_format["chainlesschain"] == []
    assert sorted(p.name for p in by_format["claude-code"]) == names


def test_sessions_command_notes_the_unreadable_files(tmp_path: Path) -> None:
    config = tmp_path / "config"
    hostile_tree(config)
    done = run_cli(["sessions", "--json"], env=env_for(tmp_path, config))
    assert done.returncode == 0, done.stderr
    assert len(pl.read_json(done.stdout)) == 3
    stderr = done.stderr.decode()
    assert "note: 3 files could not be read and were skipped (first: " in stderr
    assert "broken.jsonl: cannot read file: broken symbolic link" in stderr
    assert "Traceback" not in stderr


def test_report_command_notes_the_unreadable_files(tmp_path: Path) -> None:
    config = tmp_path / "config"
    projects, _reported = hostile_tree(config)
    out = tmp_path / "report"
    done = run_cli(["report", str(projects), "--out", str(out)], env=env_for(tmp_path, config))
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().strip().endswith("3 sessions, 3 turns, 3 unreadable file(s) skipped")
    assert pl.read_parquet(out / "sessions.parquet").height == 3


def test_an_explicit_source_that_is_a_trap_is_reported_too(tmp_path: Path) -> None:
    projects, reported = hostile_tree(tmp_path / "config")
    project = projects / "-work-demo"
    problems = ccf.read_problems([project / "fifo.jsonl", project / "broken.jsonl", project / f"{GOOD[0]}.jsonl"])
    assert sorted(problems["reason"]) == sorted([reported["fifo.jsonl"], reported["broken.jsonl"]])
    done = run_cli(["sessions", str(project / "loop.jsonl"), str(project / f"{GOOD[1]}.jsonl"), "--json"])
    assert done.returncode == 0 and len(pl.read_json(done.stdout)) == 1
    assert "loop.jsonl: cannot read file: symbolic link loop" in done.stderr.decode()


def test_a_file_that_became_a_folder_or_vanished_after_discovery(tmp_path: Path) -> None:
    # Both loaders read each file once, when its batch comes: what changed since is reported.
    folder = tmp_path / "x.jsonl"
    folder.mkdir()
    vanished = tmp_path / "gone.jsonl"
    claude = decode_files(
        [TranscriptFile(folder, "x", None, "main", "p", 0), TranscriptFile(vanished, "g", None, "main", "p", 0)],
        SESSIONS,
    )
    assert claude.problems.select("line", "reason").rows() == [
        (None, "cannot read file: not a regular file (a folder)"),
        (None, "cannot read file: No such file or directory"),
    ]
    chainless = decode([transcript_file(folder)], Profile.CONTEXT)
    assert chainless.problems.select("line", "reason").rows() == [(None, "unreadable: not a regular file (a folder)")]


@ROOT_READS_ALL
def test_a_file_without_read_permission(tmp_path: Path) -> None:
    projects, reported = hostile_tree(tmp_path / "config")
    locked = projects / "-work-demo" / f"{GOOD[1]}.jsonl"
    locked.chmod(0)
    try:
        assert ccf.read_sessions(projects)["session_id"].to_list() == sorted([GOOD[0], INSIDE])
        problems = ccf.read_problems(projects)
        assert (str(locked), None, "cannot read file: Permission denied") in problems.rows()
    finally:
        locked.chmod(0o644)


@ROOT_READS_ALL
def test_a_folder_without_read_permission(tmp_path: Path) -> None:
    projects, _reported = hostile_tree(tmp_path / "config")
    locked = projects / "-locked"
    write(locked / "dddddddd-2222-4333-8444-555555555555.jsonl", user("hidden"))
    locked.chmod(0)
    try:
        assert ccf.read_sessions(projects).height == 3
        assert (str(locked), None, "cannot read file: Permission denied") in ccf.read_problems(projects).rows()
    finally:
        locked.chmod(0o755)


def test_traps_in_a_chainless_store(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    cl.write(store, "s", [cl.start()])
    os.mkfifo(store / "fifo.jsonl")  # not a regular file: no transcript of the store
    (store / "s.meta.json").symlink_to("s.meta.json")  # a loop where the metadata is looked up
    assert ccf.read_sessions(store, format="chainlesschain")["session_id"].to_list() == ["s"]


@ROOT_READS_ALL
def test_a_chainless_store_that_cannot_be_listed_is_an_input_error(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    cl.write(store, "s", [cl.start()])
    store.chmod(0)
    try:
        with pytest.raises(InputError, match="cannot list the sessions folder"):
            ccf.read_sessions(store, format="chainlesschain")
    finally:
        store.chmod(0o755)
