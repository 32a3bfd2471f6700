"""A Claude Code transcript read in line-aligned pieces (``frames.sources.read_pieces``) gives what
one read of the whole file gives: every frame, every verb, every problem at its line.

The pieces are made small here (``sources.PIECE_BYTES``), down to one line each, so that a piece
ends inside a turn, between a compaction and its summary, between two split lines of one
response (same message and request id), before and after a malformed line; the whole-file read
is the one piece a file smaller than ``PIECE_BYTES`` is.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import cc_analytics.frames as ccf
from cc_analytics.frames import sources
from cc_analytics.frames.claude import decode
from cc_analytics.frames.claude.decode import EVENTS, REQUESTS, SESSIONS, TURNS, decode_files
from cc_analytics.frames.claude.discovery import discover
from tests.conftest import ROOT
from tests.frames.claude_builders import assistant, envelope, jsonl, text, usage, user

sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their siblings by name
bigfile = importlib.import_module("bigfile")

WHOLE = 1 << 26  # more than the test file: one piece
PIECES = (1, 777, 1 << 16)  # one line a piece, a few lines, some thirty pieces of the 2 MB file
MALFORMED = b'{"type":"user","uuid":"broken","message":{"content":"cut'
VERSION_CHANGE = envelope("system", subtype="informational", content="updated", version="2.9.0")


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A ~2 MB session of the benchmark generator's (compactions, split responses, tool results),
    with lines it does not write put in its middle: a malformed line, blank and whitespace-only
    lines, a CRLF line, a version change; a subagent file beside it; and a torn last line.
    Returns the folder and the malformed line's number."""
    folder = tmp_path_factory.mktemp("pieces")
    path = bigfile.write_claude(folder, 2, seed=6)
    lines = path.read_bytes().split(b"\n")[:-1]
    middle = len(lines) // 2
    extra = [MALFORMED, b"", b"  \t ", jsonl(VERSION_CHANGE)[:-1], jsonl(user("crlf"))[:-1] + b"\r", b"[1]"]
    lines[middle:middle] = extra
    torn = jsonl(user("the last line, still being written"))[:40]
    path.write_bytes(b"\n".join(lines) + b"\n" + torn)
    agent = path.parent / path.stem / "subagents" / "agent-a1.jsonl"
    agent.parent.mkdir(parents=True)
    sidechain = {"isSidechain": True, "agentId": "a1", "session": bigfile.CLAUDE_SESSION}
    agent.write_bytes(
        jsonl(
            user("look", **sidechain),
            assistant([text("part one")], message_id="m1", request_id="r1", tokens=usage(1, 2, 3, 4), **sidechain),
            assistant([text("part two")], message_id="m1", request_id="r1", tokens=usage(1, 2, 3, 9), **sidechain),
        )
    )
    return folder, middle + 1


def test_the_pieces_cut_where_the_rules_span_lines(transcript: tuple[Path, int]) -> None:
    folder, _ = transcript
    (path,) = folder.glob("projects/*/*.jsonl")
    data = path.read_bytes()
    for piece_bytes in PIECES:
        pieces = list(sources.read_pieces(path, piece_bytes))
        assert b"".join(p.data[: p.size] for p in pieces) == data
        assert all(p.data[p.size - 1 : p.size] == b"\n" and not p.last for p in pieces[:-1]) and pieces[-1].last
        assert len(pieces) > 20
    assert len(list(sources.read_pieces(path, WHOLE))) == 1
    assert data.count(b'"subtype":"compact_boundary"') > 1  # compactions, each a line a piece may end on
    assert data.count(b'"requestId"') > data.count(b'"stop_reason":"end_turn"')  # responses split over lines


@pytest.mark.parametrize("skimmer", [True, False], ids=["skimmer", "pure-python"])
@pytest.mark.parametrize("piece_bytes", PIECES)
def test_every_profile_decodes_the_same_in_pieces(
    transcript: tuple[Path, int], piece_bytes: int, skimmer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, malformed = transcript
    files = discover([folder])
    whole = [f.path.read_bytes() for f in files]
    if not skimmer:
        monkeypatch.setattr(decode, "SKIM_LINES", None)
    for profile in (EVENTS, TURNS, SESSIONS, REQUESTS):
        want = decode_files(files, profile, contents=whole)  # one walk over each file's bytes
        monkeypatch.setattr(sources, "PIECE_BYTES", piece_bytes)
        got = decode_files(files, profile)
        for got_frame, want_frame in zip(got, want, strict=True):
            assert_frame_equal(got_frame, want_frame)
    reasons = dict(zip(got.problems["line"], got.problems["reason"], strict=True))
    assert reasons[malformed].startswith("invalid JSON")
    assert reasons[malformed + 5] == "not a JSON object (array)"
    assert reasons[max(reasons)].startswith("truncated last line")
    versions = got.events.filter(pl.col("line") == malformed + 3)["version"].to_list()
    assert versions == ["2.9.0"]  # the change, seen as one (the walk's state went on across pieces)


@pytest.mark.parametrize("piece_bytes", PIECES)
def test_the_verbs_give_the_same_frames_in_pieces(
    transcript: tuple[Path, int], piece_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = transcript
    verbs = {
        "sessions": lambda: ccf.read_sessions(folder, cache=False),
        "requests": lambda: ccf.read_requests(folder, cache=False),
        "usage": lambda: ccf.read_usage(folder, by="day", timezone="UTC", cache=False),
        "problems": lambda: ccf.read_problems(folder, cache=False),
        "turns": lambda: ccf.read_turns(folder, cache=False),
    }
    monkeypatch.setattr(sources, "PIECE_BYTES", WHOLE)
    want = {name: verb() for name, verb in verbs.items()}
    monkeypatch.setattr(sources, "PIECE_BYTES", piece_bytes)
    for name, verb in verbs.items():
        assert_frame_equal(verb(), want[name], check_exact=True)
    (row,) = want["sessions"].select("session_id", "files", "subagent_files", "compactions", "requests").iter_rows()
    assert row[:3] == (bigfile.CLAUDE_SESSION, 2, 1) and row[3] > 1 and row[4] > 50


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    st.integers(1, 64),
    st.booleans(),
)
def test_pieces_are_the_file_cut_after_line_feeds(lines: list[bytes], piece_bytes: int, last_lf: bool) -> None:
    import tempfile

    data = b"\n".join(lines) + (b"\n" if last_lf and lines else b"")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(data)
        pieces = list(sources.read_pieces(path, piece_bytes))
    assert b"".join(p.data[: p.size] for p in pieces) == data
    assert pieces[-1].last and not any(p.last for p in pieces[:-1])
    for piece in pieces[:-1]:
        assert piece.data[piece.size - 1] == 0x0A
        assert piece.size <= piece_bytes or piece.data.find(b"\n") >= piece_bytes  # longer for a longer line only


@pytest.mark.parametrize("piece_bytes", PIECES)
def test_the_status_line_cost_is_the_same_in_pieces(
    transcript: tuple[Path, int], piece_bytes: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from cc_analytics.frames.claude import tally

    folder, _ = transcript
    (main,) = folder.glob("projects/*/*.jsonl")
    monkeypatch.setattr(sources, "PIECE_BYTES", WHOLE)
    want = tally.session_cost(main, state_dir=tmp_path / "whole")
    kept = tally._load(next((tmp_path / "whole").iterdir()), tally._book_name())
    monkeypatch.setattr(sources, "PIECE_BYTES", piece_bytes)
    assert tally.session_cost(main, state_dir=tmp_path / "pieces") == want
    state = tally._load(next((tmp_path / "pieces").iterdir()), tally._book_name())
    assert {name: (e.offset, e.lines, e.check, e.costs) for name, e in state[0].items()} == {
        name: (e.offset, e.lines, e.check, e.costs) for name, e in kept[0].items()
    }
    assert want.requests > 50 and want.usd is not None
    frame = ccf.read_sessions(folder, cache=False)
    assert frame["requests"].item() == want.requests  # the last line, torn, is no request either way
