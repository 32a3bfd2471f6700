"""GitHub Copilot CLI event logs: recognition, stores, the shutdown totals as requests, bad input,
every command, and the token totals against ccusage (``ccusage copilot session --json --offline``).

ccusage 20.0.24 reads ``${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl`` and only
the ``modelMetrics`` of ``session.shutdown`` events (a later shutdown's growth over the previous
one); its figures for our samples are written here too, so the totals are checked without it.
We also count the output each answer records after a session's last shutdown (a session still
running or killed), which ccusage leaves out: compared with ccusage, our requests are the
shutdowns' (``docs/copilot.md``).
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
from cc_analytics.frames.copilot import read_events, read_problems, read_requests, read_sessions, read_turns
from cc_analytics.frames.copilot.plugin import PLUGIN
from cc_analytics.frames.copilot.store import default_stores
from cc_analytics.frames.prices import unpriced
from cc_analytics.frames.sources import sniff_format
from tests.conftest import ROOT, run_cli, shared_path

SAMPLES = ROOT / "data-samples" / "copilot"
DEFAULT_BINARY = "/tmp/ccu/node_modules/.bin/ccusage"
REFACTOR = "3f1c9a2e-5b7d-4e10-8c3a-1d2e4f6a8b01"
RESUMED = "7a20d4b8-91c3-4f2e-a6d5-3b8c0e1f2a47"
RUNNING = "c94e2b71-0d5a-4c8f-b3e6-7f9a1c2d3e58"
# ccusage 20.0.24 on data-samples/copilot: session -> (input, cache write, cache read, output, cost).
CCUSAGE_SAMPLES = {
    REFACTOR: (14126, 6100, 35284, 546, 0.0552431),
    RESUMED: (8258, 0, 8192, 375, 0.023612),
}
FIELDS = ("input_tokens", "cache_creation_5m_tokens", "cache_read_tokens", "output_tokens")


def event(kind: str, data: dict, n: int, time: str = "2026-03-01T10:00:00.000Z") -> dict:
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp": time, "parentId": f"e{n - 1}" if n > 1 else None}


def start(model: str = "gpt-4.1") -> dict:
    data = {"sessionId": "s1", "producer": "copilot-agent", "selectedModel": model, "context": {"cwd": "/w/app"}}
    return event("session.start", data, 1)


def shutdown(n: int, time: str, current: int | None, metrics: dict[str, tuple[int, int, int, int, int]]) -> dict:
    """A shutdown recording, per model, (requests, input with cache, output, cache reads, cache writes)."""
    model_metrics = {
        model: {
            "requests": {"count": count},
            "usage": {
                "inputTokens": entered,
                "outputTokens": output,
                "cacheReadTokens": read,
                "cacheWriteTokens": written,
            },
        }
        for model, (count, entered, output, read, written) in metrics.items()
    }
    data: dict = {"shutdownType": "routine", "modelMetrics": model_metrics}
    if current is not None:
        data["currentTokens"] = current
    return event("session.shutdown", data, n, time)


def answer(n: int, output: int, text: str = "ok", **data: object) -> dict:
    return event("assistant.message", {"content": text, "toolRequests": [], "outputTokens": output, **data}, n)


def log(tmp_path: Path, *values: object, session: str = "s1", raw: str = "") -> Path:
    folder = tmp_path / "session-state" / session
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "events.jsonl"
    path.write_text("".join(json.dumps(value) + "\n" for value in values) + raw)
    return path


def ours(source: object) -> dict[str, tuple]:
    """Our sums per session of the requests ccusage counts (the shutdowns')."""
    shutdowns = read_events(source).filter(pl.col("type") == "session.shutdown")["message_id"]
    requests = read_requests(source).filter(pl.col("message_id").is_in(shutdowns.implode()))
    sums = requests.group_by("session_id").agg(*(pl.col(name).sum() for name in FIELDS), pl.col("cost_usd").sum())
    return {row[0]: row[1:] for row in sums.rows()}


def ccusage_sessions(session_state: Path, scratch: Path) -> dict[str, dict]:
    binary = os.environ.get("CCUSAGE") or DEFAULT_BINARY
    if not (shutil.which(binary) or Path(binary).is_file()):
        pytest.skip(f"ccusage is not installed ({binary!r}; set CCUSAGE to its path)")
    shutil.copytree(session_state, scratch / ".copilot" / "session-state")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "TZ": "UTC"}
    done = subprocess.run(
        [binary, "copilot", "session", "--json", "--offline"],
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
        keys = ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "outputTokens")
        assert found[session][:4] == tuple(row[key] for key in keys), session
        assert found[session][4] == pytest.approx(row["totalCost"], rel=0.005), session


# -- the samples and the shared examples against ccusage --------------------------------------


def test_the_samples_totals_are_ccusages() -> None:
    found = ours(SAMPLES)
    assert set(found) == set(CCUSAGE_SAMPLES)
    for session, figures in CCUSAGE_SAMPLES.items():
        assert found[session][:4] == figures[:4], session
        assert found[session][4] == pytest.approx(figures[4], rel=0.005)


def test_the_samples_against_ccusage_itself(tmp_path: Path) -> None:
    assert_equal_to_ccusage(ours(SAMPLES), ccusage_sessions(SAMPLES / "session-state", tmp_path))


def shared_logs(folder: Path) -> Path:
    """Every shared example log as a session's ``events.jsonl`` under ``folder/session-state`` (returned)."""
    for path in sorted(shared_path("data", "agents", "copilot").rglob("*.jsonl")):
        session = folder / "session-state" / f"{path.parent.name}-{path.stem}"
        session.mkdir(parents=True)
        (session / "events.jsonl").write_bytes(path.read_bytes())
    return folder / "session-state"


@pytest.fixture
def shared_home(tmp_path: Path) -> Path:
    """The shared Copilot CLI examples as Copilot CLI lays them out: ``session-state/<name>/events.jsonl``."""
    examples = shared_path("data", "agents", "copilot")
    store = tmp_path / "session-state"
    for path in sorted(examples.glob("*.jsonl")):
        (store / path.stem).mkdir(parents=True)
        shutil.copy(path, store / path.stem / "events.jsonl")
    shutil.copytree(examples / "subdir_v1", store, dirs_exist_ok=True)
    return store


def test_the_shared_examples_against_ccusage(shared_home: Path, tmp_path: Path) -> None:
    found = ours(shared_home)
    assert found["schema_drift"][:4] == (200, 0, 800, 50)  # ccusage 20.0.24
    assert_equal_to_ccusage(found, ccusage_sessions(shared_home, tmp_path / "scratch"))


def test_the_shared_examples_are_read_without_problems(shared_home: Path) -> None:
    sessions = api.read_sessions(shared_home)
    assert set(sessions["format"]) == {"copilot"} and sessions.height == 4
    assert api.read_problems(shared_home).height == 0
    # small.jsonl's shutdown records request counts but no usage: its answers' output counts.
    small = read_requests(shared_home).filter(pl.col("session_id") == "small")
    assert small.select("request_id", "model", "output_tokens").rows() == [
        ("r-1", "gpt-5-mini", 12),
        ("r-2", "gpt-5-mini", 3),
    ]
    turns = read_turns(shared_home).filter(pl.col("session_id") == "large")
    assert turns["prompt"].to_list() == ["Step 1", "Step 2", "Step 3"]


# -- recognition and stores -------------------------------------------------------------------


def test_copilot_logs_are_recognised_and_other_formats_are_not_taken(tmp_path: Path) -> None:
    assert sniff_format(log(tmp_path, start(), answer(2, 5))) == "copilot"
    resumed = tmp_path / "tail.jsonl"  # a log whose first line is not the session's start
    resumed.write_text(json.dumps(answer(7, 5)) + "\n")
    assert sniff_format(resumed) == "copilot"
    claude = tmp_path / "claude.jsonl"
    claude.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u"}) + "\n")
    assert sniff_format(claude) != "copilot"
    assert not PLUGIN.recognizes({"type": "session.start", "data": {"producer": "someone-else"}}, b"")


def test_the_default_store_follows_copilot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "c"))
    assert default_stores() == [tmp_path / "c" / "session-state"]
    log(tmp_path / "c", start(), answer(2, 5), session="abc")
    (tmp_path / "c" / "session-state" / "abc" / "workspace.yaml").write_text("cwd: /w\n")
    (tmp_path / "c" / "logs").mkdir()
    (tmp_path / "c" / "logs" / "process.jsonl").write_text("{}\n")
    assert [(f.session_id, f.path.name) for f in PLUGIN.resolve(None)] == [("abc", "events.jsonl")]
    monkeypatch.delenv("COPILOT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert default_stores() == [tmp_path / "h" / ".copilot" / "session-state"]


# -- the requests -----------------------------------------------------------------------------


def test_a_resumed_session_counts_each_shutdowns_growth(tmp_path: Path) -> None:
    path = log(
        tmp_path,
        start(),
        answer(2, 50),
        shutdown(3, "2026-03-01T10:10:00.000Z", 900, {"gpt-4.1": (2, 1000, 50, 800, 0)}),
        event("session.resume", {"eventCount": 3}, 4, "2026-03-02T09:00:00.000Z"),
        answer(5, 10),
        shutdown(
            6,
            "2026-03-02T09:30:00.000Z",
            1200,
            {"gpt-4.1": (3, 1300, 60, 900, 0), "claude-sonnet-4.5": (3, 5000, 100, 4000, 500)},
        ),
    )
    requests = read_requests(path)
    assert requests.select("model", *FIELDS).rows() == [
        ("gpt-4.1", 200, 0, 800, 50),
        ("gpt-4.1", 200, 0, 100, 10),
        ("claude-sonnet-4.5", 500, 500, 4000, 100),
    ]
    assert requests["time"].dt.day().to_list() == [1, 2, 2]  # each growth at its own shutdown's date
    assert requests["cost_usd"].null_count() == 0
    session = read_sessions(path).row(0, named=True)
    assert (session["requests"], session["last_occupancy"], session["peak_occupancy"]) == (3, 1200, 1200)
    events = read_events(path).filter(pl.col("type") == "session.shutdown")
    assert events.select("model", "usage_input", "usage_requests", "is_request").rows() == [
        ("gpt-4.1", 1000, 2, True),
        ("gpt-4.1", 300, 1, True),
        ("claude-sonnet-4.5", 5000, 3, True),
    ]


def test_answers_after_the_last_shutdown_count_their_output(tmp_path: Path) -> None:
    change = event("session.model_change", {"previousModel": "gpt-4.1", "newModel": "claude-haiku-4.5"}, 4)
    path = log(
        tmp_path,
        start(),
        answer(2, 50),
        shutdown(3, "2026-03-01T10:10:00.000Z", None, {"gpt-4.1": (1, 1000, 50, 0, 0)}),
        change,
        answer(5, 30, requestId="r-5"),
        answer(6, 7, model="gpt-5-mini"),
    )
    requests = read_requests(path)
    assert requests.select("model", "request_id", "input_tokens", "output_tokens").rows() == [
        ("gpt-4.1", None, 1000, 50),
        ("claude-haiku-4.5", "r-5", 0, 30),
        ("gpt-5-mini", None, 0, 7),
    ]
    assert read_sessions(path)["models"].to_list()[0] == ["gpt-4.1", "claude-haiku-4.5", "gpt-5-mini"]


def test_a_model_without_a_price_is_named_never_free(tmp_path: Path) -> None:
    path = log(tmp_path, start("mystery-model-9"), answer(2, 40))
    requests = read_requests(path)
    assert requests["cost_usd"].to_list() == [None]
    assert [row[1:] for row in unpriced(requests).rows()] == [("mystery-model-9", None, 1)]


def test_turns_occupancy_and_window(tmp_path: Path) -> None:
    truncation = event("session.truncation", {"tokenLimit": 128_000, "messagesRemovedDuringTruncation": 0}, 3)
    path = log(
        tmp_path,
        start(),
        event("user.message", {"content": "go"}, 2),
        truncation,
        answer(4, 5),
        shutdown(5, "2026-03-01T10:10:00.000Z", 64_000, {"gpt-4.1": (1, 64_000, 5, 0, 0)}),
    )
    turns = read_turns(path)
    assert turns.height == 1  # the session's start belongs to no turn
    turn = turns.row(0, named=True)
    assert (turn["prompt"], turn["occupancy"], turn["window"], turn["used_fraction"]) == ("go", 64_000, 128_000, 0.5)
    assert read_sessions(path)["compactions"].to_list() == [0]  # a truncation that removed nothing


def test_a_compaction_ends_the_context(tmp_path: Path) -> None:
    path = log(
        tmp_path,
        start(),
        event("user.message", {"content": "a long question " * 50}, 2),
        event("session.compaction_complete", {"success": True}, 3),
        event("user.message", {"content": "next"}, 4),
    )
    session = read_sessions(path).row(0, named=True)
    assert (session["compactions"], session["messages"], session["turns"]) == (1, 2, 2)
    assert session["tokens_user"] > session["context_estimate"] > 0


# -- bad input --------------------------------------------------------------------------------


def test_bad_input_is_problem_rows(tmp_path: Path) -> None:
    bad_count = shutdown(4, "2026-03-01T10:10:00.000Z", None, {"gpt-4.1": (1, 100, 5, 0, 0)})
    bad_count["data"]["modelMetrics"]["gpt-4.1"]["usage"]["outputTokens"] = -3
    deep = "[" * 30_000 + "]" * 30_000
    torn = json.dumps(answer(6, 9))[:-12]
    path = log(tmp_path, start(), answer(2, "many"), "just a string", bad_count, raw=f"{{not json\n{deep}\n{torn}")
    problems = read_problems(path).sort("line")
    assert problems.select("line", "reason").rows() == [
        (2, "outputTokens is 'many', not a whole number of at least 0; taken as 0"),
        (3, "not a JSON object (a string); line skipped"),
        (4, "modelMetrics.gpt-4.1.usage.outputTokens is -3, not a whole number of at least 0; taken as 0"),
        (5, problems["reason"][3]),
        (6, "not JSON (nested deeper than 25,000 levels); line skipped"),
        (7, "truncated last line (the file may still be being written)"),
    ]
    assert problems["reason"][3].startswith("not JSON (")
    assert read_requests(path).select("input_tokens", "output_tokens").rows() == [(100, 0)]
    done = run_cli(["sessions", str(tmp_path), "--json"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert b"6 malformed lines skipped or read in part, in 1 file" in done.stderr


# -- every command on a Copilot folder --------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES / "session-state", tmp_path / "home" / ".copilot" / "session-state")
    return tmp_path / "home"


def env_of(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "CC_ANALYTICS_FORMATS": "copilot"}


def test_sessions_and_usage_read_the_default_store(home: Path) -> None:
    sessions = run_cli(["sessions", "--json", "--quiet"], env=env_of(home))
    assert sessions.returncode == 0, sessions.stderr
    rows = {row["session_id"]: row for row in json.loads(sessions.stdout)}
    assert set(rows) == {REFACTOR, RESUMED, RUNNING}
    assert rows[RESUMED]["input_tokens"] == CCUSAGE_SAMPLES[RESUMED][0]
    usage = run_cli(["usage", "--by", "session", "--json", "--quiet"], env=env_of(home))
    assert usage.returncode == 0, usage.stderr
    by_session = {row["session_id"]: row for row in json.loads(usage.stdout)}
    assert by_session[RUNNING]["output_tokens"] == 55
    assert by_session[REFACTOR]["cost_usd"] == pytest.approx(CCUSAGE_SAMPLES[REFACTOR][4], rel=0.005)


def test_report_context_and_archive(home: Path, tmp_path: Path) -> None:
    store = str(home / ".copilot" / "session-state")
    out = tmp_path / "report"
    done = run_cli(["report", store, "--out", str(out), "--quiet"], env=env_of(home))
    assert done.returncode == 0, done.stderr
    assert pl.read_parquet(out / "sessions.parquet").height == 3
    context = run_cli(["context", RESUMED, "--json"], env=env_of(home))
    assert context.returncode == 0, context.stderr
    report = json.loads(context.stdout)
    assert (report["totalTokens"], report["contextWindow"], report["windowAssumed"]) == (6410, 128_000, False)
    shown = run_cli(["context", REFACTOR], env=env_of(home))
    assert shown.returncode == 0 and b"Traceback" not in shown.stderr and b"16940" in shown.stdout
    archive = tmp_path / "archive"
    done = run_cli(["archive", store, "--to", str(archive), "--quiet"], env=env_of(home))
    assert done.returncode == 0, done.stderr
    stored = api.read_requests(archive)
    direct = api.read_requests(store)
    assert stored.height == direct.height == 6
    assert stored["cost_usd"].sum() == pytest.approx(direct["cost_usd"].sum())


def test_a_generated_corpus_against_ccusage(tmp_path: Path) -> None:
    from tests.fixtures.copilot.make_corpus import generate

    generate(tmp_path / "home", 1.5, seed=3)
    store = tmp_path / "home" / ".copilot" / "session-state"
    theirs = ccusage_sessions(store, tmp_path / "scratch")
    found = ours(store)
    assert len(found) > 3 and any(len(row["modelsUsed"]) > 1 for row in theirs.values())
    assert_equal_to_ccusage(found, theirs)
    # The sessions still running: only their answers' output, which ccusage does not count.
    running = set(read_sessions(store)["session_id"]) - set(theirs)
    assert running and read_requests(store).filter(pl.col("session_id").is_in(list(running)))["input_tokens"].sum() == 0


def test_the_lean_requests_are_the_tables_requests(tmp_path: Path) -> None:
    from cc_analytics.frames.copilot import iter_tables, resolve
    from cc_analytics.frames.copilot.verbs import requests_batch
    from tests.fixtures.copilot.make_corpus import generate

    generate(tmp_path / "home", 1.0, seed=5)
    broken = log(tmp_path / "home" / ".copilot", start(), event("user.message", 3, 2), answer(3, 4), raw="{oops\n[1]\n")
    for source in (SAMPLES, tmp_path / "home" / ".copilot" / "session-state", broken):
        files = resolve(source)
        lean, problems = requests_batch(files)
        tables = list(iter_tables(files))
        assert len(tables) == 1
        assert lean.equals(tables[0].requests) and lean.height > 0
        assert problems.equals(tables[0].problems)
    assert problems.height == 3  # the data that is not an object, the line not JSON, the array
    # A line in Copilot CLI's layout broken inside, of an event no request is made of: only the
    # full read parses it (and names it).
    odd = log(tmp_path / "odd", start(), raw='{"type":"tool.execution_complete","data":{"success":true,}}\n')
    assert requests_batch(resolve(odd))[1].height == 0
    assert read_problems(odd)["line"].to_list() == [2]
