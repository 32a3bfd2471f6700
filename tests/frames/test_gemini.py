"""Gemini CLI chats: recognition, the two file forms, the log's patches, bad input, and the
token totals against ccusage (``ccusage gemini session --json --offline``), the oracle.

ccusage runs where its binary is (``$CCUSAGE``, else ``/tmp/ccu/node_modules/.bin/ccusage``);
its figures for our samples are also written here, so the totals are checked without it.
ccusage's ``outputTokens`` leaves the thoughts out (its ``totalTokens`` has them): ours are in
``output_tokens`` and ``reasoning_tokens``, so output − reasoning must equal its output.
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
from cc_analytics.frames.gemini import read_events, read_problems, read_requests, read_sessions, read_turns
from cc_analytics.frames.gemini.plugin import PLUGIN
from cc_analytics.frames.gemini.store import default_stores
from cc_analytics.frames.sources import sniff_format, walk
from tests.conftest import ROOT, run_cli, shared_path

SAMPLES = ROOT / "data-samples" / "gemini"
DEFAULT_BINARY = "/tmp/ccu/node_modules/.bin/ccusage"
# ccusage 20.0.24 on data-samples/gemini: session -> (input, cache read, output, thoughts, cost).
CCUSAGE_SAMPLES = {
    "5b0c3f2e-1d4a-4e8f-9a61-0c2d7e4b9f01": (11667, 17920, 695, 236, 0.0063652),
    "8e41d9a0-77b2-4c55-b0e3-5a9f1c6d2e17": (7616, 4096, 1530, 1204, 0.0254275),
    "c7a2e5f1-3b68-4d09-8f14-2e6b0d9a5c33": (5271, 4096, 228, 60, 0.0037043),
}


def log(tmp_path: Path, *values: object, name: str = "session-x.jsonl") -> Path:
    chats = tmp_path / "tmp" / "p" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / name
    path.write_text("".join(json.dumps(value) + "\n" for value in values))
    return path


def header(session: str = "s1") -> dict:
    return {"sessionId": session, "projectHash": "h", "startTime": "2026-04-29T21:39:22.319Z", "kind": "main"}


def answer(identifier: str, prompt: int, output: int, *, cached: int = 0, thoughts: int = 0, tool: int = 0) -> dict:
    tokens = {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts, "tool": tool}
    return {
        "id": identifier,
        "timestamp": "2026-04-29T21:39:35.125Z",
        "type": "gemini",
        "content": "ok",
        "model": "gemini-2.5-pro",
        "tokens": tokens,
    }


def ours(source: object) -> dict[str, tuple]:
    requests = read_requests(source)
    sums = requests.group_by("session_id").agg(
        pl.col("input_tokens").sum(),
        pl.col("cache_read_tokens").sum(),
        (pl.col("output_tokens") - pl.col("reasoning_tokens")).sum(),
        pl.col("reasoning_tokens").sum(),
        pl.col("cost_usd").sum(),
    )
    return {row[0]: row[1:] for row in sums.rows()}


# -- the samples and the shared examples against ccusage --------------------------------------


def test_the_samples_totals_are_ccusages() -> None:
    found = ours(SAMPLES)
    assert set(found) == set(CCUSAGE_SAMPLES)
    for session, (tokens, cost) in ((s, (v[:4], v[4])) for s, v in CCUSAGE_SAMPLES.items()):
        assert found[session][:4] == tokens, session
        assert found[session][4] == pytest.approx(cost, rel=0.005)


def ccusage_sessions(gemini_tmp: Path, scratch: Path) -> dict[str, dict]:
    binary = os.environ.get("CCUSAGE") or DEFAULT_BINARY
    if not (shutil.which(binary) or Path(binary).is_file()):
        pytest.skip(f"ccusage is not installed ({binary!r}; set CCUSAGE to its path)")
    shutil.copytree(gemini_tmp, scratch / ".gemini" / "tmp")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "TZ": "UTC"}
    done = subprocess.run(
        [binary, "gemini", "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {session["sessionId"]: session for session in json.loads(done.stdout)["sessions"]}


def assert_equal_to_ccusage(found: dict[str, tuple], theirs: dict[str, dict]) -> None:
    assert set(found) == set(theirs)
    for session, row in theirs.items():
        thoughts = row["totalTokens"] - row["inputTokens"] - row["cacheReadTokens"] - row["outputTokens"]
        assert found[session][:4] == (row["inputTokens"], row["cacheReadTokens"], row["outputTokens"], thoughts)
        assert found[session][4] == pytest.approx(row["totalCost"], rel=0.005)


def test_the_samples_against_ccusage_itself(tmp_path: Path) -> None:
    assert_equal_to_ccusage(ours(SAMPLES), ccusage_sessions(SAMPLES / "tmp", tmp_path))


@pytest.fixture
def shared_home(tmp_path: Path) -> Path:
    """The shared Gemini CLI examples in a store, named as Gemini CLI names its chats."""
    examples = shared_path("data", "agents", "gemini")
    chats = tmp_path / "tmp" / "0b7dfb12" / "chats"
    chats.mkdir(parents=True)
    for path in sorted(examples.iterdir()):
        shutil.copy(path, chats / f"session-{path.name}")
    return tmp_path / "tmp"


def test_the_shared_examples_against_ccusage(shared_home: Path, tmp_path: Path) -> None:
    found = ours(shared_home)
    assert found["gemini_stage0_jsonl"][:4] == (12422, 11502, 228, 0)  # ccusage 20.0.24
    assert_equal_to_ccusage(found, ccusage_sessions(shared_home, tmp_path / "scratch"))


def test_the_shared_examples_are_read_and_the_odd_one_is_a_problem(shared_home: Path) -> None:
    sessions = api.read_sessions(shared_home)
    assert set(sessions["format"]) == {"gemini"} and sessions.height == 3
    problems = api.read_problems(shared_home)
    # schema_drift.json has no sessionId: no format's, one problem row, never a session.
    assert problems["source_file"].str.ends_with("session-schema_drift.json").to_list() == [True]
    turns = api.read_turns(shared_home).filter(pl.col("session_id") == "session-2025-12-16T23-47-b4f17607")
    assert turns["prompt"].to_list() == ["Run a command", "Step 1"]
    assert turns["tool_names"][0].to_list() == ["run_shell_command", "run_shell_command"]


# -- recognition and stores -------------------------------------------------------------------


def test_a_document_written_over_many_lines_and_a_log_are_recognised(tmp_path: Path) -> None:
    document = tmp_path / "session-a.json"
    document.write_text(json.dumps({**header("a"), "messages": []}, indent=2))
    assert sniff_format(document) == "gemini"
    assert sniff_format(log(tmp_path, header("b"), answer("m", 1, 1))) == "gemini"
    assert PLUGIN.file_names == ("*.jsonl", "session-*.json")
    other = tmp_path / "tmp" / "p" / "logs.json"  # Gemini CLI's prompt log: no chat, not walked
    other.write_text("[]")
    assert {f.path.name for f in api.plan(tmp_path)["gemini"]} == {"session-a.json", "session-x.jsonl"}
    assert "logs.json" not in {path.name for path in walk([tmp_path])}


def test_the_default_store_follows_gemini_cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert default_stores() == [tmp_path / ".gemini" / "tmp"]
    log(tmp_path / ".gemini", header("home"), answer("m", 5, 1))
    (tmp_path / ".gemini" / "tmp" / "p" / "logs.json").write_text("[]")
    assert [f.session_id for f in PLUGIN.resolve(None)] == ["home"]


# -- the log's patches ------------------------------------------------------------------------


def test_a_rewritten_message_is_one_request_the_last_write_wins(tmp_path: Path) -> None:
    path = log(
        tmp_path, header(), answer("a", 1000, 100, cached=200), answer("a", 2000, 100, cached=200, thoughts=50, tool=7)
    )
    requests = read_requests(path)
    assert requests.select(
        "message_id", "input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"
    ).rows() == [("a", 1807, 200, 150, 50)]
    events = read_events(path)
    assert events.select("line", "message_id", "prompt_tokens").rows() == [(3, "a", 2000)]


def test_a_rewind_keeps_the_spent_tokens_but_not_the_context(tmp_path: Path) -> None:
    user = {"id": "u1", "type": "user", "timestamp": "2026-04-29T21:39:30Z", "content": [{"text": "hi"}]}
    retry = {**user, "id": "u2", "content": "again"}
    path = log(tmp_path, header(), user, answer("a1", 100, 10), {"$rewindTo": "u1"}, retry, answer("a2", 50, 5))
    events = read_events(path)
    assert events.select("message_id", "rewound").rows() == [("u1", True), ("a1", True), ("u2", False), ("a2", False)]
    assert read_requests(path)["input_tokens"].to_list() == [100, 50]
    session = read_sessions(path).row(0, named=True)
    assert (session["requests"], session["messages"], session["turns"], session["last_occupancy"]) == (2, 2, 2, 50)


def test_set_patches_the_header(tmp_path: Path) -> None:
    path = log(tmp_path, header(), {"$set": {"lastUpdated": "2026-05-01T00:00:00Z"}})
    session = read_sessions(path).row(0, named=True)
    assert session["session_id"] == "s1" and session["last_time"].isoformat() == "2026-05-01T00:00:00+00:00"


def test_turns_occupancy_and_window(tmp_path: Path) -> None:
    user = {"id": "u1", "type": "user", "timestamp": "2026-04-29T21:39:30Z", "content": "go"}
    path = log(tmp_path, header(), user, answer("a1", 300_000, 10, tool=4), answer("a2", 524_288, 10))
    turn = read_turns(path).row(0, named=True)
    assert (turn["prompt"], turn["occupancy"], turn["window"], turn["used_fraction"]) == ("go", 524_288, 1_048_576, 0.5)


# -- bad input --------------------------------------------------------------------------------


def test_bad_input_is_problem_rows(tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-broken.json").write_text('{\n  "sessionId": "b",\n  "projectHash": "h",\n  "messages": [\n')
    (chats / "session-array.json").write_text('{"sessionId": "c", "projectHash": "h", "messages": 3}')
    bad_count = answer("m", 10, 1)
    bad_count["tokens"]["output"] = -4
    torn = json.dumps(answer("n", 5, 1))[:-9]
    (chats / "session-torn.jsonl").write_text(json.dumps(header("t")) + "\n" + json.dumps(bad_count) + "\n" + torn)
    problems = read_problems(chats).sort("source_file")
    reasons = dict(zip(problems["source_file"].str.split("/").list.last(), problems["reason"], strict=True))
    assert reasons["session-array.json"].startswith("no messages array")
    assert reasons["session-broken.json"].startswith("not JSON (")
    torn_rows = problems.filter(pl.col("source_file").str.ends_with("torn.jsonl")).sort("line")
    assert torn_rows.select("line", "reason").rows() == [
        (2, "tokens.output is -4, not a whole number of at least 0; taken as 0"),
        (3, "truncated last line (the file may still be being written)"),
    ]
    sessions = read_sessions(chats)
    assert sorted(sessions["session_id"]) == ["b", "c", "t"]  # each file is still its session
    assert read_requests(chats)["output_tokens"].to_list() == [0]
    done = run_cli(["sessions", str(chats), "--json"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr


# -- commands ---------------------------------------------------------------------------------


def test_context_reports_the_recorded_occupancy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "tmp", home / ".gemini" / "tmp")
    env = {"HOME": str(home), "GEMINI_CLI_HOME": str(home)}
    done = run_cli(["context", "c7a2e5f1-3b68-4d09-8f14-2e6b0d9a5c33", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["totalTokens"], report["contextWindow"], report["model"]) == (
        3175,
        1_048_576,
        "gemini-3-flash-preview",
    )


def test_a_message_written_in_two_files_of_a_session_counts_once_from_the_later(tmp_path: Path) -> None:
    # The same id in two chats of one session (a session resumed into a new file): one request,
    # the write of the file read last (the batch's files in the plan's order).
    log(tmp_path, header(), answer("a", 1000, 100), name="session-a.jsonl")
    log(tmp_path, header(), answer("a", 2000, 100), answer("b", 10, 1), name="session-b.jsonl")
    requests = read_requests(tmp_path)
    assert requests.select("session_id", "message_id", "input_tokens").rows() == [("s1", "a", 2000), ("s1", "b", 10)]
    assert read_sessions(tmp_path).select("files", "requests").row(0) == (2, 2)
