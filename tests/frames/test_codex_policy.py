"""Codex lines are read by the one JSON line policy (``cc_analytics.jsonline``), whatever their length.

The walker (``decode.py``) and the lean scan (``scan.py``; with the C scanner when it is built)
read a line the same way: the first of a repeated key wins, nesting up to 25,000 levels is read
and deeper is a problem row, integers are exact. Each case is a rollout whose lines sit around
a threshold (a repeated key on a short line and on a 9 KB one; 1,000, 1,100, 25,000 and 25,001
levels at a file's head and mid-file); the lean tables equal the walker's, and the rows and
problems are the ones the policy gives, with the lean scan's C loop and without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cc_analytics.frames.codex import scan as lean_scan
from cc_analytics.frames.codex import tables_batch
from cc_analytics.frames.codex.decode import Profile, decode
from cc_analytics.frames.sources import TranscriptFile
from tests.fixtures.codex.builders import meta, prompt, tokens, turn_context, usage

STAMP = "2025-11-03T09:00:01.000Z"
PAD = "x" * 9000  # a 9 KB line: past any short-line fast path


@pytest.fixture(autouse=True, params=["c", "python"])
def loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test with the lean scan's C loop (when built) and in pure Python."""
    if request.param == "c" and lean_scan.SCAN_LINES is None:
        pytest.skip("the Codex scan's C loop is not in use")
    if request.param == "python":
        monkeypatch.setattr(lean_scan, "SCAN_LINES", None)
    return str(request.param)


def as_file(rows: list[str], name: str = "a") -> tuple[list[TranscriptFile], list[bytes]]:
    data = ("\n".join(rows) + "\n").encode()
    return [TranscriptFile(Path(f"rollout-{name}.jsonl"), name, None, "main", "x", len(data))], [data]


def both(rows: list[str]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(sessions, requests, problems) of one rollout, equal for the lean scan and the walker."""
    files, contents = as_file(rows)
    lean = tables_batch(files, turns=False, contents=contents)
    full = tables_batch(files, contents=contents)
    assert_frame_equal(lean.sessions, full.sessions)
    assert_frame_equal(lean.requests, full.requests)
    assert_frame_equal(lean.problems, full.problems)
    return full.sessions, full.requests, full.problems


@pytest.mark.parametrize("pad", ["", PAD])
def test_the_first_of_a_repeated_model_wins(pad: str) -> None:
    context = turn_context("gpt-first").replace('"model":"gpt-first"', f'"pad":"{pad}","model":"gpt-first","model":"gpt-last"')  # fmt: skip
    assert context.count('"model"') == 2
    sessions, _, problems = both(
        [meta("a"), context, prompt("hi", STAMP), tokens(usage(10, 0, 5), usage(10, 0, 5), STAMP)]
    )
    assert sessions["models"].to_list() == [["gpt-first"]]
    assert problems.is_empty()


@pytest.mark.parametrize("pad", ["", PAD])
def test_the_first_of_a_repeated_usage_count_wins(pad: str) -> None:
    count = tokens(usage(100, 0, 5), usage(100, 0, 5), STAMP, pad=pad)
    count = count.replace('"input_tokens":100,', '"input_tokens":100,"input_tokens":999,')
    _, requests, problems = both([meta("a"), turn_context(), prompt("hi", STAMP), count])
    assert requests["input_tokens"].to_list() == [100]
    assert problems.is_empty()


@pytest.mark.parametrize("pad", ["", PAD])
def test_the_first_of_a_repeated_output_wins(pad: str) -> None:
    item = {"type": "function_call_output", "call_id": "c", "output": "a" * 400}
    text = json.dumps({"timestamp": STAMP, "type": "response_item", "payload": item}, separators=(",", ":"))
    text = text.replace('"output":', f'"pad":"{pad}","output":').replace("}}", ',"output":"b"}}')
    assert text.count('"output"') == 2
    sessions, _, _ = both([meta("a"), prompt("hi", STAMP), text])
    assert sessions["tokens_tool"].to_list() == [100]  # the first output's 400 characters


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def deep_line(levels: int) -> str:
    return json.dumps({"timestamp": STAMP, "type": "turn_context", "payload": {"model": "m", "x": 0}}).replace(
        "0}", deep(levels) + "}"
    )


@pytest.mark.parametrize("levels", [1_000, 1_100, 24_998])
@pytest.mark.parametrize("where", ["head", "middle"])
def test_nesting_up_to_the_limit_is_read(levels: int, where: str) -> None:
    # The line's own object and its payload are two levels: 24,998 more make 25,000 in all.
    body = [turn_context("gpt-5"), prompt("hi", STAMP), tokens(usage(10), usage(10), STAMP)]
    rows = [meta("a"), deep_line(levels), *body] if where == "middle" else [meta("a").replace('"id":"a"', f'"x":{deep(levels)},"id":"a"'), *body]  # fmt: skip
    sessions, requests, problems = both(rows)
    assert problems.is_empty()
    assert requests.height == 1 and sessions.height == 1
    if where == "head":
        files, contents = as_file(rows)
        header = decode(files, Profile.TABLES, contents=contents).files
        assert header["thread_id"].to_list() == ["a"]


@pytest.mark.parametrize("where", ["head", "middle"])
def test_nesting_past_the_limit_is_a_problem_and_the_rest_is_read(where: str) -> None:
    too_deep = deep_line(24_999)  # 25,001 levels in all
    body = [turn_context("gpt-5"), prompt("hi", STAMP), tokens(usage(10), usage(10), STAMP)]
    rows = [too_deep, meta("a"), *body] if where == "head" else [meta("a"), too_deep, *body]
    _, requests, problems = both(rows)
    line = 1 if where == "head" else 2
    assert problems.select("line", "reason").rows() == [
        (line, "not JSON (nested deeper than 25,000 levels); line skipped")
    ]
    assert requests.height == 1


def test_integers_are_exact_and_counts_beyond_64_bits_are_problems() -> None:
    big = tokens(usage(10), usage(10), STAMP, window=None).replace('"input_tokens":10,', f'"input_tokens":{2**64},', 1)
    window = tokens(usage(20), usage(10), STAMP, window=10**30)
    assert str(2**64) in big and str(10**30) in window
    rows = [meta("a"), turn_context(), prompt("hi", STAMP), big, window]
    _, requests, problems = both(rows)
    assert problems["reason"].to_list() == [
        "token_count total_token_usage.input_tokens is beyond 64 bits; that usage ignored"
    ]
    files, contents = as_file(rows)
    assert requests.height == 2
    assert decode(files, Profile.USAGE, contents=contents).usage["window"].to_list() == [None, None]
