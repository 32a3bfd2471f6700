"""``cc-analytics statusline``: Claude Code's stdin document in, one line out, never a failure."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.commands.statusline import last_usage, status_line
from tests.conftest import ROOT, run_cli

SAMPLES = ROOT / "data-samples" / "claude" / "projects"


def _stdin(path: Path | str, **extra: object) -> bytes:
    document = {
        "session_id": "s",
        "transcript_path": str(path),
        "model": {"id": "claude-opus-4-5", "display_name": "Opus"},
        "workspace": {"current_dir": "/w"},
        **extra,
    }
    return json.dumps(document).encode()


def test_occupancy_equals_the_sessions_frame_on_every_sample() -> None:
    from cc_analytics.frames.claude import read_sessions

    sessions = read_sessions(SAMPLES)
    checked = 0
    for main in sorted(SAMPLES.glob("*/*.jsonl")):
        row = sessions.filter(pl.col("session_id") == main.stem)
        if row.height == 0 or row["last_occupancy"][0] is None:
            continue
        used, _model, _version = last_usage(main)
        assert used == row["last_occupancy"][0], main
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("raw", [b"", b"   ", b"{", b"[]", b"null", b"\xff\xfe", b'{"transcript_path": 7}'])
def test_bad_stdin_prints_the_fallback_and_exits_0(raw: bytes) -> None:
    done = run_cli(["statusline"], stdin=raw)
    assert done.returncode == 0
    assert done.stdout.decode().strip() == "cc-analytics: no context data yet"
    assert done.stderr == b""


def test_a_missing_transcript_names_the_model() -> None:
    assert status_line(_stdin("/nowhere/x.jsonl")) == "Opus · no context data yet"


def test_the_line_shows_model_occupancy_zone_and_autocompact_headroom(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 90,
        "cache_read_input_tokens": 149_900,
        "output_tokens": 5,
    }
    main = {
        "type": "assistant",
        "isSidechain": False,
        "version": "2.0.1",
        "message": {"model": "claude-opus-4-5", "usage": usage},
    }
    side = {
        "type": "assistant",
        "isSidechain": True,
        "message": {"model": "claude-haiku-4-5", "usage": {"input_tokens": 5}},
    }
    transcript.write_text(json.dumps(main) + "\n" + json.dumps(side) + "\n")
    assert status_line(_stdin(transcript)) == "Opus · 150.0k/200.0k 75% · 17.0k to auto-compact"
    coloured = status_line(_stdin(transcript), colour=True)
    assert "\x1b[33m150.0k/200.0k 75%\x1b[39m" in coloured  # yellow zone
    # Claude Code's own window size wins when it sends one.
    assert "150.0k/1.0M 15%" in status_line(_stdin(transcript, context_window={"context_window_size": 1_000_000}))


def test_the_usage_is_found_far_back_in_a_large_file(tmp_path: Path) -> None:
    transcript = tmp_path / "big.jsonl"
    usage = {"input_tokens": 1, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3}
    head = {"type": "assistant", "message": {"model": "claude-opus-4-5", "usage": usage}}
    filler = json.dumps({"type": "user", "message": {"content": "x" * 1000}})
    transcript.write_text(json.dumps(head) + "\n" + (filler + "\n") * 3000)
    assert last_usage(transcript) == (6, "claude-opus-4-5", None)


def test_through_the_console_script(tmp_path: Path) -> None:
    main = next(iter(sorted(SAMPLES.glob("*/*.jsonl"))))
    done = run_cli(["statusline"], stdin=_stdin(main), env={"NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    line = done.stdout.decode()
    assert line.count("\n") == 1 and line.startswith("Opus · ") and "to auto-compact" in line
