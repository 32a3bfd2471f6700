"""``cc-analytics sessions`` through the installed console script."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.claude import schema as S
from tests.conftest import ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures" / "claude"
MAIN = "0b7e5c1a-7d2e-4c1b-9a55-2f0e8d3c4a10"
BROKEN = "5d3f9e22-1c4b-4e8a-b7d6-93a0c2e1f7b4"


def test_json_array_with_required_keys() -> None:
    done = run_cli(["sessions", str(FIXTURES), "--json"])
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [row["session_id"] for row in rows] == [BROKEN, MAIN]
    required = {
        "session_id", "project", "first_time", "last_time", "models", "turns", "last_occupancy",
        "peak_occupancy", "window", "input_tokens", "cache_creation_tokens", "cache_read_tokens",
        "output_tokens", "compactions", *S.BUCKETS,
    }  # fmt: skip
    assert all(required <= set(row) for row in rows)
    main = next(row for row in rows if row["session_id"] == MAIN)
    assert main["subagent_files"] == 1
    assert main["output_tokens"] == 60 + 20 + 15 + 12 + 30
    assert main["models"] == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    assert main["last_occupancy"] == 4 + 120 + 16650
    assert main["last_time"].endswith("Z")
    # Problems are counted on stderr; stderr is not a terminal, so there is no progress bar.
    stderr = done.stderr.decode()
    assert "4 malformed lines" in stderr
    assert "\r" not in stderr


def test_table_quiet_and_default_root(tmp_path: Path) -> None:
    done = run_cli(["sessions", str(FIXTURES), "--quiet"])
    assert done.returncode == 0
    assert done.stderr == b""
    text = done.stdout.decode()
    assert MAIN[:8] in text and BROKEN[:8] in text and "2 sessions" in text
    home = run_cli(["sessions", "--json"], env={"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(FIXTURES)})
    assert home.returncode == 0, home.stderr
    assert len(json.loads(home.stdout)) == 2
    empty = run_cli(["sessions", "--json"], env={"HOME": str(tmp_path)})
    assert (empty.returncode, json.loads(empty.stdout)) == (0, [])
    assert b"no transcripts found" in empty.stderr


def test_parquet_never_overwrites_without_force(tmp_path: Path) -> None:
    target = tmp_path / "sessions.parquet"
    first = run_cli(["sessions", str(FIXTURES), "--parquet", str(target), "--quiet"])
    assert first.returncode == 0, first.stderr
    frame = pl.read_parquet(target)
    assert frame.schema == S.SESSIONS_SCHEMA
    assert frame.height == 2
    target.write_bytes(b"precious")
    again = run_cli(["sessions", str(FIXTURES), "--parquet", str(target)])
    assert again.returncode == 1
    assert target.read_bytes() == b"precious"
    assert again.stderr.decode().count("\n") == 1
    assert "already exists" in again.stderr.decode()
    forced = run_cli(["sessions", str(FIXTURES), "--parquet", str(target), "--force", "--quiet"])
    assert forced.returncode == 0
    assert pl.read_parquet(target).height == 2


def test_refuses_to_write_inside_the_claude_config(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    (config / "projects").mkdir(parents=True)
    done = run_cli(
        ["sessions", str(FIXTURES), "--parquet", str(config / "out.parquet")],
        env={"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(config)},
    )
    assert done.returncode == 1
    assert b"refusing to write inside Claude Code's own folder" in done.stderr
    assert not (config / "out.parquet").exists()


def test_a_missing_source_is_an_error_line_with_a_hint(tmp_path: Path) -> None:
    done = run_cli(["sessions", "/definitely/not/here"], env={"HOME": str(tmp_path)})
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        "✖ no such file or folder: '/definitely/not/here'",
        "Hint: pass transcript files, folders or globs.",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sessions", "--force"], b"--force only applies to --parquet"),
        (["sessions", "--workers", "0"], b"--workers must be at least 1"),
        (["report", "--workers", "0"], b"--workers must be at least 1"),
        (["archive", "--to", "nowhere", "--workers", "0"], b"--workers must be at least 1"),
    ],
)
def test_option_mistakes_are_usage_errors(args: list[str], message: bytes, tmp_path: Path) -> None:
    done = run_cli(args, env={"HOME": str(tmp_path)})
    command = args[0].encode()
    assert done.returncode == 2  # a usage error: the usage line, then the error line
    assert done.stderr.startswith(b"usage: cc-analytics " + command)
    assert done.stderr.splitlines()[-1] == b"cc-analytics " + command + b": error: " + message + b", got 0" * (
        b"workers" in message
    )
    assert b"Traceback" not in done.stderr


def test_json_and_parquet_are_exclusive(tmp_path: Path) -> None:
    done = run_cli(["sessions", "--json", "--parquet", str(tmp_path / "x.parquet")])
    assert done.returncode == 2
    assert b"not allowed with" in done.stderr


def test_a_chainlesschain_folder_is_read_as_chainlesschain() -> None:
    done = run_cli(["sessions", str(ROOT / "data-samples" / "chainless"), "--json"])
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert len(rows) == 7 and {row["format"] for row in rows} == {"chainlesschain"}
    assert done.stderr == b""


def test_summary_only_transcripts_are_claude_code_and_no_hint_points_elsewhere(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "0b0c3f9e-7f1c-4a55-9a43-2a1f0f6c1d11.jsonl").write_text(
        '{"type":"summary","summary":"Refactor","leafUuid":"u-1"}\n'
    )
    done = run_cli(["sessions", str(tmp_path), "--json"])
    assert done.returncode == 0, done.stderr
    assert [row["format"] for row in json.loads(done.stdout)] == ["claude-code"]
    assert b"ChainlessChain" not in done.stderr
