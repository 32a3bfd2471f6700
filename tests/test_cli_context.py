"""``cc-analytics context`` on bad input and colour settings, through the installed console script."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SCRIPT, inherited_env, run_cli

SESSION = (
    "\n".join(
        json.dumps(e)
        for e in (
            {
                "type": "session_start",
                "timestamp": 1,
                "data": {"title": "", "provider": "deepseek", "model": "deepseek-chat"},
            },
            {"type": "user_message", "timestamp": 2, "data": {"role": "user", "content": "hello there"}},
        )
    )
    + "\n"
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    store = tmp_path / ".chainlesschain" / "sessions"
    store.mkdir(parents=True)
    (store / "s1.jsonl").write_text(SESSION)
    return tmp_path


def test_missing_session_is_one_line_exit_1(home: Path) -> None:
    result = run_cli(["context", "nope"], env={"HOME": str(home)})
    assert result.returncode == 1
    assert result.stdout == b""
    assert result.stderr.decode().count("\n") == 1
    assert b"Traceback" not in result.stderr


def test_directory_named_like_a_transcript_is_not_a_session(home: Path) -> None:
    (home / ".chainlesschain" / "sessions" / "dir.jsonl").mkdir()
    result = run_cli(["context", "dir", "--json"], env={"HOME": str(home)})
    assert result.returncode == 1
    assert json.loads(result.stderr)["error"]["message"].startswith('No headless transcript for session "dir"')
    latest = run_cli(["context", "--json"], env={"HOME": str(home)})
    assert json.loads(latest.stdout)["sessionId"] == "s1"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_unreadable_session(home: Path) -> None:
    path = home / ".chainlesschain" / "sessions" / "s1.jsonl"
    path.chmod(0)
    result = run_cli(["context", "s1"], env={"HOME": str(home)})
    assert result.returncode == 1
    assert b"cannot read" in result.stderr and b"Traceback" not in result.stderr


def test_chainlesschain_home_and_sessions_dir(home: Path, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("other")
    (other / "sessions").mkdir()
    (other / "sessions" / "s2.jsonl").write_text(SESSION)
    env = {"HOME": str(home), "CHAINLESSCHAIN_HOME": str(other)}
    assert json.loads(run_cli(["context", "--json"], env=env).stdout)["sessionId"] == "s2"
    flag = ["context", "--json", "--sessions-dir", str(home / ".chainlesschain" / "sessions")]
    assert json.loads(run_cli(flag, env=env).stdout)["sessionId"] == "s1"


def test_store_is_never_written(home: Path) -> None:
    store = home / ".chainlesschain" / "sessions"
    before = {p.name: p.stat().st_mtime_ns for p in store.iterdir()}
    run_cli(["context"], env={"HOME": str(home)})
    run_cli(["context", "s1", "--json"], env={"HOME": str(home)})
    assert {p.name: p.stat().st_mtime_ns for p in store.iterdir()} == before


def test_absent_store_means_no_session(tmp_path: Path) -> None:
    result = run_cli(["context"], env={"HOME": str(tmp_path)})
    assert result.returncode == 1
    assert result.stderr.startswith("\u2716 No session found".encode())


def run_on_tty(args: list[str], env: dict[str, str]) -> bytes:
    leader, follower = pty.openpty()
    base = {**inherited_env(), "LANG": "C", "TERM": "xterm-256color"}
    proc = subprocess.Popen([str(SCRIPT), *args], stdout=follower, stderr=subprocess.PIPE, env={**base, **env})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks)


def test_colour_follows_terminal_and_no_color(home: Path) -> None:
    coloured = run_on_tty(["context", "s1"], {"HOME": str(home)})
    assert b"\x1b[" in coloured
    plain = run_on_tty(["context", "s1"], {"HOME": str(home), "NO_COLOR": "1"})
    assert b"\x1b[" not in plain and b"Context" in plain
    forced_off = run_on_tty(["context", "s1"], {"HOME": str(home), "FORCE_COLOR": "0"})
    assert b"\x1b[" not in forced_off


def test_python_dash_m_is_the_same_program(home: Path) -> None:
    import sys

    env = {**inherited_env(), "HOME": str(home), "FORCE_COLOR": "0"}
    module = subprocess.run([sys.executable, "-m", "cc_analytics", "context", "s1"], env=env, capture_output=True)
    assert module.stdout == run_cli(["context", "s1"], env={"HOME": str(home)}).stdout
    assert module.returncode == 0


CLAUDE_SAMPLES = Path(__file__).resolve().parents[1] / "data-samples" / "claude" / "projects"


def _claude_home(tmp_path: Path, *, store: bool) -> tuple[Path, str]:
    """A HOME with the Claude Code samples (one made the most recent) and an empty or no store."""
    import shutil

    projects = tmp_path / ".claude" / "projects"
    shutil.copytree(CLAUDE_SAMPLES, projects)
    mains = sorted(p for p in projects.glob("*/*.jsonl"))
    for age, path in enumerate(mains):
        os.utime(path, (1_700_000_000 + age, 1_700_000_000 + age))
    newest = mains[0]
    os.utime(newest, (1_800_000_000, 1_800_000_000))
    if store:
        (tmp_path / ".chainlesschain" / "sessions").mkdir(parents=True)
    return tmp_path, newest.stem


@pytest.mark.parametrize("store", [False, True])
def test_no_id_and_no_chainless_session_shows_the_latest_claude_session(tmp_path: Path, store: bool) -> None:
    home, newest = _claude_home(tmp_path, store=store)
    result = run_cli(["context", "--json"], env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["sessionId"] == newest and report["provider"] == "anthropic"
    assert result.stderr.decode() == f"note: showing the most recently active Claude Code session, {newest}\n"
    gauge = run_cli(["context"], env={"HOME": str(home)})
    assert gauge.returncode == 0 and newest[:28] in gauge.stdout.decode()


def test_a_chainless_store_with_sessions_still_wins(home: Path) -> None:
    _claude_home(home / "x", store=False)
    result = run_cli(["context", "--json"], env={"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "x" / ".claude")})
    assert result.returncode == 0
    assert json.loads(result.stdout)["sessionId"] == "s1" and result.stderr == b""


def test_nothing_anywhere_does_not_send_a_claude_user_to_chainlesschain(tmp_path: Path) -> None:
    result = run_cli(["context"], env={"HOME": str(tmp_path)})
    assert result.returncode == 1
    message = result.stderr.decode()
    assert "no Claude Code transcripts" in message and "headless agent" not in message


def test_why_on_an_agent_without_a_composition_keeps_the_gauge(home: Path) -> None:
    plain = run_cli(["context", "s1"], env={"HOME": str(home)})
    why = run_cli(["context", "s1", "--why"], env={"HOME": str(home)})
    assert why.returncode == 0 and why.stdout == plain.stdout
    assert why.stderr.decode() == "note: ChainlessChain transcripts do not say what filled the window (--why)\n"
