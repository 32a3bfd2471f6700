"""Qwen Code chats: recognition, records rewritten and rewound, bad input, and the token totals
against ccusage (``ccusage qwen session --json --offline``), the oracle.

ccusage runs where its binary is (``$CCUSAGE``, else ``/tmp/ccu/node_modules/.bin/ccusage``);
its figures for our samples are also written here. Where we differ on purpose
(``docs/qwen.md``): ccusage's ``inputTokens`` is the whole prompt, cached input included (its
``cacheReadTokens`` counts the cached input a second time), so its input is our input + cache
read; its ``outputTokens`` leaves the thoughts out; it sums every record, a record written
twice under its uuid too, where the last write wins here; and it prices Qwen3-Coder-Plus,
which genai-prices does not (ours: unpriced, named).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames import api
from cc_analytics.frames.qwen import read_events, read_problems, read_requests, read_sessions, read_turns
from cc_analytics.frames.qwen.plugin import PLUGIN
from cc_analytics.frames.qwen.store import default_stores
from cc_analytics.frames.sources import sniff_format
from tests.conftest import ROOT, run_cli, shared_path

SAMPLES = ROOT / "data-samples" / "qwen"
DEFAULT_BINARY = "/tmp/ccu/node_modules/.bin/ccusage"
CODER = "3f9a0c21-5e7b-4d18-a2c6-0b8e4f1d7a01"
REWOUND = "8c14e7b3-2a95-4f60-9d3e-6f0a2b7c9e02"
SHORT = "c02d5b8e-91f3-4a7c-8e24-3d6b1a9f0c03"
# ccusage 20.0.24 on data-samples/qwen: session -> (input with cached, cache read, output, thoughts).
CCUSAGE_SAMPLES = {
    CODER: (51053, 30464, 916, 316),
    REWOUND: (18440, 8192, 101, 0),  # the answer written twice is counted twice there
    SHORT: (4020, 0, 35, 0),
}
# The earlier write of the answer written twice: prompt 6,160 (4,096 cached), output 12.
TWICE = (6160, 4096, 12, 0)


def ours(source: object) -> dict[str, tuple]:
    """Per session, in ccusage's terms: (input with cached, cache read, output, thoughts, cost, unpriced)."""
    requests = source if isinstance(source, pl.DataFrame) else read_requests(source)
    sums = requests.group_by("session_id").agg(
        (pl.col("input_tokens") + pl.col("cache_read_tokens")).sum(),
        pl.col("cache_read_tokens").sum(),
        (pl.col("output_tokens") - pl.col("reasoning_tokens")).sum(),
        pl.col("reasoning_tokens").sum(),
        pl.col("cost_usd").sum(),
        pl.col("cost_usd").null_count().alias("unpriced"),
    )
    return {row[0]: row[1:] for row in sums.rows()}


def record(uuid: str, kind: str, parent: str | None = None, session: str = "s1", **fields: object) -> dict:
    base = {"uuid": uuid, "parentUuid": parent, "sessionId": session, "timestamp": "2026-08-17T12:00:00.000Z"}
    return {**base, "type": kind, "cwd": "/w", **fields}


def prompt(uuid: str, text: str, parent: str | None = None) -> dict:
    return record(uuid, "user", parent, message={"role": "user", "parts": [{"text": text}]})


def answer(uuid: str, parent: str, tokens: int, *, cached: int = 0, window: int = 0) -> dict:
    usage = {"promptTokenCount": tokens, "cachedContentTokenCount": cached, "candidatesTokenCount": 3}
    message = {"role": "model", "parts": [{"text": "ok"}]}
    return record(
        uuid,
        "assistant",
        parent,
        model="gemini-2.5-pro",
        usageMetadata=usage,
        message=message,
        contextWindowSize=window,
    )


def chat(tmp_path: Path, *records: dict, name: str = "s1.jsonl") -> Path:
    chats = tmp_path / "projects" / "-w" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / name
    path.write_text("".join(json.dumps(value) + "\n" for value in records))
    return path


# -- against ccusage --------------------------------------------------------------------------


def test_the_samples_totals_are_ccusages_but_for_the_differences_on_purpose() -> None:
    found = ours(SAMPLES)
    assert set(found) == set(CCUSAGE_SAMPLES)
    assert found[CODER][:4] == CCUSAGE_SAMPLES[CODER] and found[CODER][5] == 5  # Qwen3-Coder-Plus: unpriced
    assert found[SHORT][:4] == CCUSAGE_SAMPLES[SHORT] and found[SHORT][5] == 1  # coder-model: unpriced
    twice = tuple(a - b for a, b in zip(CCUSAGE_SAMPLES[REWOUND], TWICE, strict=True))
    assert found[REWOUND][:4] == twice and found[REWOUND][5] == 0


def ccusage_sessions(projects: Path, scratch: Path) -> dict[str, dict]:
    binary = os.environ.get("CCUSAGE") or DEFAULT_BINARY
    if not (shutil.which(binary) or Path(binary).is_file()):
        pytest.skip(f"ccusage is not installed ({binary!r}; set CCUSAGE to its path)")
    shutil.copytree(projects, scratch / ".qwen" / "projects")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "TZ": "UTC"}
    done = subprocess.run(
        [binary, "qwen", "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {session["sessionId"]: session for session in json.loads(done.stdout)["sessions"]}


def in_ccusage_terms(row: dict) -> tuple[int, int, int, int]:
    thoughts = row["totalTokens"] - row["inputTokens"] - row["cacheReadTokens"] - row["outputTokens"]
    return (row["inputTokens"], row["cacheReadTokens"], row["outputTokens"], thoughts)


def test_the_samples_against_ccusage_itself(tmp_path: Path) -> None:
    theirs = ccusage_sessions(SAMPLES / "projects", tmp_path)
    assert {session: in_ccusage_terms(row) for session, row in theirs.items()} == CCUSAGE_SAMPLES
    # Where there is no cached input, no record written twice and a price on both sides, the costs agree.
    rewound = ours(SAMPLES)[REWOUND]
    assert rewound[4] == pytest.approx(0.002801, rel=0.005)  # ccusage double-counts the cached and the twice-written


def test_the_shared_examples_against_ccusage(tmp_path: Path) -> None:
    examples = shared_path("data", "agents", "qwen")
    chats = tmp_path / "projects" / "fixture" / "chats"
    chats.mkdir(parents=True)
    for path in examples.iterdir():
        shutil.copy(path, chats / path.name)
    found = ours(tmp_path / "projects")
    assert {s: v[:4] for s, v in found.items()} == {"019f0000-0000-7000-8000-000000000004": (12, 0, 4, 0)}
    theirs = ccusage_sessions(tmp_path / "projects", tmp_path / "scratch")
    assert {session: in_ccusage_terms(row) for session, row in theirs.items()} == {s: v[:4] for s, v in found.items()}


def test_the_shared_examples_chain_and_problems(tmp_path: Path) -> None:
    examples = shared_path("data", "agents", "qwen")
    events = read_events(examples / "019f0000-0000-7000-8000-000000000004.jsonl")
    rewound = events.filter(pl.col("rewound"))["message_id"].to_list()
    assert rewound == ["019f0000-0000-7000-8000-000000000042", "019f0000-0000-7000-8000-000000000043"]
    assert events.filter(pl.col("message_id") == "019f0000-0000-7000-8000-000000000046")["line"].to_list() == [7]
    problems = read_problems(examples)
    glued = problems.filter(pl.col("source_file").str.ends_with("000000000005.jsonl"))
    assert glued["line"].to_list() == [1] and glued["reason"][0].startswith("not JSON")
    other = problems.filter(pl.col("source_file").str.ends_with("000000000002.jsonl"))
    assert other.height == 0  # one record, naming its own session: the file is that session
    assert read_sessions(examples / "019f0000-0000-7000-8000-000000000002.jsonl")["session_id"].to_list() == [
        "019f0000-0000-7000-8000-000000000099"
    ]


# -- recognition and stores -------------------------------------------------------------------


def test_qwen_records_are_qwens_and_not_claude_codes(tmp_path: Path) -> None:
    path = chat(tmp_path, prompt("u", "hi"), answer("a", "u", 10))
    assert sniff_format(path) == "qwen"
    done = run_cli(["sessions", str(path), "--json", "--quiet"], env={"CC_ANALYTICS_FORMATS": "claude-code,codex"})
    assert done.returncode == 0 and json.loads(done.stdout) == []  # unrecognised, never a Claude Code session


def test_the_default_store_follows_qwen_runtime_dir_then_qwen_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "home"))
    assert default_stores() == [tmp_path / "home" / "projects"]
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path))
    assert default_stores() == [tmp_path / "projects"]
    chat(tmp_path, prompt("u", "hi"), answer("a", "u", 10))
    (tmp_path / "projects" / "-w" / "notes.jsonl").write_text("{}\n")  # not in a chats folder
    assert [f.session_id for f in PLUGIN.resolve(None)] == ["s1"]


# -- records ----------------------------------------------------------------------------------


def test_a_record_written_twice_is_one_request_and_the_window_is_recorded(tmp_path: Path) -> None:
    path = chat(
        tmp_path,
        prompt("u", "hi"),
        answer("a", "u", 100, window=131_072),
        answer("a", "u", 120, cached=20, window=131_072),
    )
    assert read_requests(path).select("input_tokens", "cache_read_tokens").rows() == [(100, 20)]
    events = read_events(path)
    assert events.select("line", "window", "window_source").rows() == [(1, None, None), (3, 131_072, "recorded")]
    turn = read_turns(path).row(0, named=True)
    assert (turn["occupancy"], turn["window"]) == (120, 131_072)


def test_a_compression_is_a_compaction_and_ends_the_context(tmp_path: Path) -> None:
    compression = record("c", "system", "a", subtype="chat_compression", systemPayload={})
    path = chat(
        tmp_path, prompt("u", "hi"), answer("a", "u", 100), compression, prompt("v", "more", "c"), answer("b", "v", 30)
    )
    session = read_sessions(path).row(0, named=True)
    assert (session["compactions"], session["messages"], session["turns"], session["last_occupancy"]) == (1, 3, 2, 30)


def test_bad_input_is_problem_rows(tmp_path: Path) -> None:
    bad = answer("a", "u", 10)
    bad["usageMetadata"]["candidatesTokenCount"] = "many"
    path = chat(tmp_path, prompt("u", "hi"), bad, record("x", "user", session="other", message={"parts": []}))
    with path.open("a") as handle:
        handle.write("[1, 2]\n" + json.dumps(answer("b", "a", 5))[:-7])
    problems = read_problems(path).sort("line", nulls_last=True)
    assert problems.select("line", "reason").rows() == [
        (2, "usageMetadata.candidatesTokenCount is 'many', not a whole number of at least 0; taken as 0"),
        (4, "not a JSON object (an array); line skipped"),
        (5, "truncated last line (the file may still be being written)"),
        (None, "records of another session ('other') in this file; counted in the file's session"),
    ]
    assert read_sessions(path).select("session_id", "requests").rows() == [("s1", 1)]
    done = run_cli(["sessions", str(path), "--json"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr


def test_usage_reads_every_format_with_qwen_unpriced_named() -> None:
    done = run_cli(["usage", str(SAMPLES), "--json"])
    assert done.returncode == 0, done.stderr
    assert "qwen3-coder-plus" in done.stderr.decode() + done.stdout.decode()
    frame = api.read_requests(SAMPLES)
    assert set(frame.filter(pl.col("cost_usd").is_null())["model"]) == {"qwen3-coder-plus", "coder-model"}

