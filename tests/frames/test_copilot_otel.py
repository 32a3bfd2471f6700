"""GitHub Copilot CLI's OpenTelemetry file export: discovery, the rules a call is read by, bad
input, every reader and command over it, and the per-session totals against ccusage 20.0.24
(``ccusage copilot session --json --offline`` reads the same files; its figures for the home
below are written here too, so the totals are checked without it).
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
from cc_analytics.frames.copilot import otel, read_problems, read_requests, read_sessions
from cc_analytics.frames.copilot.store import OTEL_UNIT, classify, resolve
from cc_analytics.frames.sources import sniff_format
from tests.conftest import run_cli
from tests.frames.test_copilot import DEFAULT_BINARY, FIELDS, log, shutdown, start

T0 = 1767261600  # 2026-01-01T10:00:00Z
INFERENCE = {"event.name": "gen_ai.client.inference.operation.details"}


def span(
    session: str | None,
    n: int,
    *,
    model: str = "gpt-4.1",
    entered: object = 1000,
    output: object = 50,
    read: object = 800,
    written: object = None,
    kind: str | None = "span",
    operation: str | None = "chat",
    key: str = "gen_ai.conversation.id",
    times: dict | None = None,
    **attributes: object,
) -> dict:
    """A record of the export as Copilot CLI writes it (``None`` leaves a field out)."""
    values = {
        "gen_ai.operation.name": operation,
        key: session,
        "gen_ai.request.model": model,
        "gen_ai.response.model": model,
        "gen_ai.response.id": f"resp-{n}",
        "gen_ai.usage.input_tokens": entered,
        "gen_ai.usage.output_tokens": output,
        "gen_ai.usage.cache_read.input_tokens": read,
        "gen_ai.usage.cache_write.input_tokens": written,
        **attributes,
    }
    record = {
        "type": kind,
        "traceId": f"trace-{n}",
        "spanId": f"span-{n}",
        "name": f"chat {model}",
        "startTime": [T0 + 60 * n, 0],
        "endTime": [T0 + 60 * n + 2, 250_000_000],
        "attributes": {name: value for name, value in values.items() if value is not None},
    }
    if kind is None:
        del record["type"]
    record.update(times or {})
    return {name: value for name, value in record.items() if value is not None}


def export(path: Path, *records: object, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records) + tail)
    return path


def agent_span() -> dict:
    record = span("c1", 4, operation="invoke_agent", entered=99_999)
    return {**record, "name": "invoke_agent copilot", "traceId": "trace-1"}


def team_home(home: Path) -> Path:
    """A Copilot home with two export files (one in a sub-folder) and a session-state log."""
    export(
        home / "otel" / "a.jsonl",
        span("c1", 1),  # input 1000 with 800 read: 200
        span("c1", 2, model="claude-sonnet-4.5-1m-internal", entered=5000, output=300, read=0, written=1200),
        span("c2", 3, entered="2000", output="10", read=None),  # counts as strings of digits
        agent_span(),  # the agent's span of the first call's trace: its calls' sum
        span("c2", 5, entered=0, output=0, read=0),  # no usage: no call
        {"type": "metric", "name": "gen_ai.client.token.usage", "attributes": {}},
        "not json",
    )
    export(
        home / "otel" / "old" / "b.jsonl",
        span(
            "c3",
            6,
            model="gpt-5-mini",
            entered=400,
            output=40,
            read=100,
            **{"gen_ai.usage.reasoning.output_tokens": 30},
        ),
    )
    log(home, start(), shutdown(2, "2026-03-01T10:05:00.000Z", 900, {"gpt-4.1": (2, 1000, 50, 800, 0)}), session="s1")
    return home


# ccusage 20.0.24 on team_home: session -> (input, cache write, cache read, output).
CCUSAGE_TEAM = {
    "c1": (200 + 5000, 1200, 800, 350),
    "c2": (2000, 0, 0, 10),
    "c3": (300, 0, 100, 40),
    "s1": (200, 0, 800, 50),
}


def sums(requests: pl.DataFrame) -> dict[str, tuple]:
    found = requests.group_by("session_id").agg(*(pl.col(name).sum() for name in FIELDS), pl.col("cost_usd").sum())
    return {row[0]: row[1:] for row in found.rows()}


def test_a_home_with_the_export_reads_every_session(tmp_path: Path) -> None:
    home = team_home(tmp_path / ".copilot")
    found = sums(read_requests(home))
    assert {session: row[:4] for session, row in found.items()} == CCUSAGE_TEAM
    assert all(row[4] > 0 for row in found.values())  # every model priced
    requests = read_requests(home)
    long_context = requests.filter(pl.col("message_id") == "span-2")
    assert long_context["model"].to_list() == ["claude-sonnet-4.5"]  # priced as its model
    assert requests.filter(pl.col("message_id") == "span-6")["reasoning_tokens"].to_list() == [30]
    assert requests.filter(pl.col("message_id") == "span-1")["time"].dt.to_string("%H:%M:%S%.3f").to_list() == [
        "10:01:02.250"
    ]
    problems = read_problems(home)
    assert problems.filter(pl.col("source_file").str.ends_with("a.jsonl"))["line"].to_list() == [7]


def test_the_home_against_ccusage_itself(tmp_path: Path) -> None:
    binary = os.environ.get("CCUSAGE") or DEFAULT_BINARY
    if not (shutil.which(binary) or Path(binary).is_file()):
        pytest.skip(f"ccusage is not installed ({binary!r}; set CCUSAGE to its path)")
    home = team_home(tmp_path / ".copilot")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "TZ": "UTC"}
    done = subprocess.run(
        [binary, "copilot", "session", "--json", "--offline"], env=env, capture_output=True, text=True, check=True
    )
    theirs = {s["sessionId"]: s for s in json.loads(done.stdout)["sessions"]}
    found = sums(read_requests(home))
    assert set(found) == set(theirs)
    keys = ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "outputTokens")
    for session, row in theirs.items():
        assert found[session][:4] == tuple(row[key] for key in keys), session
        assert found[session][4] == pytest.approx(row["totalCost"], rel=0.005), session


def test_the_default_stores_hold_the_export_and_the_named_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = team_home(tmp_path / "copilot-home")
    named = export(tmp_path / "elsewhere" / "telemetry.log", span("c9", 9))
    monkeypatch.setenv("COPILOT_HOME", str(home))
    monkeypatch.setenv("COPILOT_OTEL_FILE_EXPORTER_PATH", str(named))
    export(home / "otel" / "c.jsonl", {"resource": {"service.name": "copilot"}}, span("c4", 4))  # another first line
    files = resolve(None)
    exported = sorted(f.path.name for f in files if f.session_id == OTEL_UNIT)
    assert exported == ["a.jsonl", "b.jsonl", "c.jsonl", "telemetry.log"]
    assert set(read_sessions(None)["session_id"]) == {"c1", "c2", "c3", "c4", "c9", "s1"}


def test_an_export_file_is_recognised_by_its_first_line(tmp_path: Path) -> None:
    path = export(tmp_path / "x" / "spans.jsonl", span("c1", 1))
    assert sniff_format(path) == "copilot"
    assert classify(path, size=path.stat().st_size, head=path.read_bytes()).session_id == OTEL_UNIT
    metric = export(tmp_path / "y" / "m.jsonl", {"type": "metric", "name": "x"}, span("c2", 2))
    assert sniff_format(metric) == "copilot"
    # In a folder beside other agents' files: read as one frame with them.
    sessions = api.read_sessions([path, metric], format="copilot")
    assert sorted(sessions["session_id"]) == ["c1", "c2"]


def test_the_session_is_the_first_id_of_its_kinds() -> None:
    keys = [*otel.SESSION_KEYS]
    for place, key in enumerate(keys):
        attributes = {later: f"id-{later}" for later in keys[place:]}
        record = span(None, 1, **attributes)
        (found,) = otel.parse(json.dumps(record).encode() + b"\n")
        assert found.session_id == f"id-{key}", key
    (by_trace,) = otel.parse(json.dumps(span(None, 1, **{"gen_ai.response.id": None})).encode() + b"\n")
    assert by_trace.session_id == "trace-1"
    nameless = {
        name: value for name, value in span(None, 1, **{"gen_ai.response.id": None}).items() if name != "traceId"
    }
    (unknown,) = otel.parse(json.dumps(nameless).encode() + b"\n")
    assert (unknown.session_id, len(unknown.requests)) == (otel.UNKNOWN_SESSION, 1)


def test_an_agents_span_counts_only_in_a_trace_without_model_calls() -> None:
    def calls(*records: dict) -> list[str]:
        found = otel.parse(("\n".join(json.dumps(r) for r in records) + "\n").encode())
        return [row[1] for parsed in found for row in parsed.requests]

    tool = {**span("c1", 5, operation="execute_tool"), "name": "execute_tool bash"}
    alone = {**agent_span(), "traceId": "trace-9"}
    assert calls(span("c1", 1), agent_span()) == ["span-1"]
    assert calls(span("c1", 1), alone) == ["span-1", "span-4"]  # another trace: no call of its own
    assert calls(agent_span(), tool) == ["span-4"]
    assert calls(tool) == ["span-5"]
    # A span named as a model call's is one, whatever its operation (as ccusage reads it).
    assert calls({**agent_span(), "name": "chat gpt-4.1"}, span("c1", 1)) == ["span-4", "span-1"]


def test_inference_events_count_only_in_a_file_without_spans() -> None:
    events = [span("c1", n, kind="log", **INFERENCE) for n in (1, 2)]
    other_log = span("c1", 3, kind="log")  # a log record of another event
    found = otel.parse(("\n".join(json.dumps(r) for r in [*events, other_log]) + "\n").encode())
    assert [len(p.requests) for p in found] == [2]
    with_span = otel.parse(("\n".join(json.dumps(r) for r in [*events, span("c2", 4)]) + "\n").encode())
    assert [(p.session_id, len(p.requests)) for p in with_span] == [("c2", 1)]


def test_the_time_is_the_end_else_the_start_else_the_timestamp() -> None:
    def time_of(times: dict) -> str | None:
        record = span("c1", 0, times=times)
        for key in ("startTime", "endTime"):
            if times.get(key) is None:
                record.pop(key, None)
        found = otel.parse(json.dumps(record).encode() + b"\n")
        return found[0].requests[0][3] if found[0].requests else None

    assert time_of({"startTime": [T0, 0], "endTime": [T0 + 5, 0]}) == "2026-01-01T10:00:05.000000Z"
    assert time_of({"startTime": [T0, 7000], "endTime": None}) == "2026-01-01T10:00:00.000007Z"
    assert (
        time_of({"startTime": None, "endTime": None, "timestamp": T0 * 1_000_000 + 123})
        == "2026-01-01T10:00:00.000123Z"
    )
    assert time_of({"startTime": None, "endTime": "2026-01-01T10:00:05Z"}) is None  # not a time the export writes
    (found,) = otel.parse(json.dumps(span("c1", 0, times={"startTime": None, "endTime": None})).encode() + b"\n")
    assert found.requests == [] and found.problems == [(1, otel.NO_TIME)]


def test_bad_counts_and_lines_are_problems(tmp_path: Path) -> None:
    path = export(
        tmp_path / "otel" / "a.jsonl",
        span("c1", 1, entered=-5),
        span("c1", 2, output=1.5),
        "[1, 2]",
        tail='{"type":"span","attr',
    )
    found = read_problems(path)
    reasons = dict(zip(found["line"].to_list(), found["reason"].to_list(), strict=True))
    assert "gen_ai.usage.input_tokens" in reasons[1] and "gen_ai.usage.output_tokens" in reasons[2]
    assert reasons[3].startswith("not a JSON object") and reasons[4].startswith("truncated last line")
    assert sums(read_requests(path))["c1"][:4] == (200, 0, 1600, 50)  # a bad count is 0


def test_every_command_and_the_cache_and_the_archive(tmp_path: Path) -> None:
    home = team_home(tmp_path / ".copilot")
    cold = api.read_sessions(home, cache=False)
    assert api.read_sessions(home).equals(cold) and api.read_sessions(home).equals(cold)  # the second from the cache
    assert cold.filter(pl.col("session_id") == "c1")["requests"].to_list() == [2]
    done = run_cli(["usage", str(home), "--by", "day", "--json"])
    assert done.returncode == 0, done.stderr
    days = json.loads(done.stdout)
    assert sum(day["input_tokens"] for day in days) == sum(row[0] for row in CCUSAGE_TEAM.values())
    archive = tmp_path / "archive"
    done = run_cli(["archive", str(home), "--to", str(archive), "--quiet"])
    assert done.returncode == 0, done.stderr
    archived = api.read_sessions(archive).drop("machine").sort("session_id")
    assert archived.equals(cold.sort("session_id"))
