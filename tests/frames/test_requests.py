"""The requests frame of both formats, and the cost it gives sessions, turns and the context JSON."""

from __future__ import annotations

import doctest
import shutil
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import cc_analytics.frames as frames
from cc_analytics.frames import pricebook, prices
from cc_analytics.frames import schema as S
from cc_analytics.frames.chainless import requests as chainless_requests
from cc_analytics.frames.claude import read_requests, read_sessions, read_turns
from cc_analytics.frames.claude import requests as claude_requests
from cc_analytics.frames.claude.context import claude_context
from cc_analytics.frames.claude.decode import SESSIONS, decode_files
from cc_analytics.frames.claude.discovery import discover

from . import chainless_builders as cb
from .claude_builders import SESSION, assistant, text, usage, user, write

CLAUDE, CHAINLESS = "claude-code", "chainlesschain"
SAMPLES = Path(__file__).resolve().parents[2] / "data-samples"
MTOK = Decimal(1_000_000)


def usd(*terms: tuple[int, str]) -> float:
    """Σ tokens × published $/MTok, exactly, then rounded once to a float."""
    return float(sum(Decimal(tokens) * Decimal(price) for tokens, price in terms) / MTOK)


def opus(inp: int = 0, create: int = 0, read: int = 0, out: int = 0, **extra: object) -> dict:
    """Usage of a Claude Opus 4.5 response ($5 input, $6.25/$10 cache writes, $0.50 read, $25 output)."""
    return {**usage(inp, create, read, out), **extra}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A session split over a main file (one response in two lines, an API error) and a subagent."""
    folder = tmp_path / "projects" / "-work-demo"
    split = opus(
        1000,
        7000,
        100_000,
        800,
        cache_creation={"ephemeral_5m_input_tokens": 5000, "ephemeral_1h_input_tokens": 2000},
        service_tier="standard",
        server_tool_use={"web_search_requests": 2, "web_fetch_requests": 0},
    )
    write(
        folder / f"{SESSION}.jsonl",
        {"type": "summary", "summary": "a title", "leafUuid": "x"},
        user("hello", second=1),
        assistant([text("one")], message_id="msg_a", request_id="req_a", tokens=split, second=2),
        assistant([text("two")], message_id="msg_a", request_id="req_a", tokens=split, second=3),
        assistant([text("oops")], model="<synthetic>", tokens=opus(0, 0, 0, 0), second=4, isApiErrorMessage=True),
        user("again", second=5),
        assistant([text("three")], message_id="msg_b", request_id="req_b", tokens=opus(10, 300, 0, 40), second=6),
    )
    write(
        folder / SESSION / "subagents" / "agent-sub1.jsonl",
        user("task", isSidechain=True, agentId="sub1", second=7),
        assistant([text("done")], model="mystery-model-1", tokens=opus(5, 0, 0, 5), isSidechain=True, second=8),
    )
    return folder


def test_one_row_per_request_main_chain_and_subagents(project: Path) -> None:
    requests = read_requests(project)
    assert requests.schema == S.REQUESTS_SCHEMA
    assert requests.select("message_id", "agent_id", "is_sidechain", "model").rows() == [
        ("msg_a", None, False, "claude-opus-4-5"),
        ("msg_b", None, False, "claude-opus-4-5"),
        (requests["message_id"][2], "sub1", True, "mystery-model-1"),
    ]
    first = requests.row(0, named=True)
    assert (first["cache_creation_5m_tokens"], first["cache_creation_1h_tokens"]) == (5000, 2000)
    assert (first["web_search_requests"], first["service_tier"], first["speed"]) == (2, "standard", None)
    assert first["project"] == "/work/demo" and first["provider"] == "anthropic"
    assert first["time"].isoformat() == "2026-03-01T10:00:03+00:00"  # the last split line wins
    # Only the total recorded: every cache write is a 5-minute one.
    assert requests.row(1, named=True)["cache_creation_5m_tokens"] == 300
    expected = usd((1000, "5"), (5000, "6.25"), (2000, "10"), (100_000, "0.5"), (800, "25")) + 0.02
    assert first["cost_usd"] == pytest.approx(expected, rel=1e-15)
    assert requests["cost_usd"][2] is None


def test_requests_are_the_sessions_token_totals(project: Path) -> None:
    requests = read_requests(project)
    session = read_sessions(project).row(0, named=True)
    for name in (S.INPUT_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS):
        assert requests[name].sum() == session[name]
    creation = requests["cache_creation_5m_tokens"].sum() + requests["cache_creation_1h_tokens"].sum()
    assert creation == session[S.CACHE_CREATION_TOKENS]
    assert requests.height == session[S.REQUESTS] == 3


def test_session_and_turn_costs_sum_their_requests(project: Path) -> None:
    requests = read_requests(project)
    session = read_sessions(project).row(0, named=True)
    assert session[S.COST_USD] == pytest.approx(requests["cost_usd"].sum(), rel=1e-12)
    assert session[S.UNPRICED_REQUESTS] == 1
    turns = read_turns(project).sort(S.IS_SUBAGENT_FILE, S.TURN_INDEX)
    assert turns[S.COST_USD].sum() == pytest.approx(session[S.COST_USD], rel=1e-12)
    costs = requests[S.COST_USD].to_list()
    assert turns.select(S.IS_SUBAGENT_FILE, S.TURN_INDEX, S.COST_USD, S.UNPRICED_REQUESTS).rows() == [
        (False, 0, None, 0),  # no request before the first prompt: no cost, not a zero
        (False, 1, costs[0], 0),
        (False, 2, costs[1], 0),
        (True, 0, None, 1),  # the subagent's one request has no price
    ]
    report = claude_context(SESSION, roots=[project.parent])
    assert report is not None
    assert list(report)[-2:] == ["costUSD", "unpricedRequests"]
    assert (report["costUSD"], report["unpricedRequests"]) == (session[S.COST_USD], 1)


def test_a_session_without_a_priced_request_has_no_cost(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    write(folder / "a.jsonl", user("only a prompt", session="a"))
    write(folder / "b.jsonl", assistant([text("x")], model="mystery-2", session="b"))
    sessions = read_sessions(folder)
    assert sessions.select(S.SESSION_ID, S.REQUESTS, S.COST_USD, S.UNPRICED_REQUESTS).rows() == [
        ("a", 0, None, 0),
        ("b", 1, None, 1),
    ]


def test_profiles_give_the_same_requests(project: Path) -> None:
    files = discover([project])
    lean = claude_requests.request_rows(decode_files(files, SESSIONS).events.lazy(), files).collect()
    full = claude_requests.request_rows(decode_files(files).events.lazy(), files).collect()
    assert_frame_equal(lean, full)


def test_pricing_fields_of_the_wrong_type_are_problems(tmp_path: Path) -> None:
    tokens = {**usage(), "cache_creation": {"ephemeral_1h_input_tokens": "7"}, "service_tier": 3, "speed": "fast"}
    path = write(tmp_path / "p" / "s.jsonl", assistant([text("x")], tokens=tokens))
    decoded = decode_files(discover([path.parent]), SESSIONS)
    row = decoded.events.select("cache_creation_1h_tokens", "service_tier", "speed").row(0)
    assert row == (None, None, "fast")
    assert decoded.problems["reason"].to_list() == [
        "usage.cache_creation.ephemeral_1h_input_tokens is not an integer ('7')",
        "usage.service_tier is not a string (3)",
    ]


def test_chainless_token_usage_records_are_priced_by_provider_and_model(tmp_path: Path) -> None:
    attribution = {"origin": "agent", "subagentId": "sa-7", "role": "reviewer"}
    cb.write(
        tmp_path,
        "s",
        [
            cb.start(model="gpt-4o", provider="openai"),
            cb.msg("user", "hi"),
            cb.event("token_usage", {"model": "gpt-4o", "usage": {"input_tokens": 1_000_000, "output_tokens": 10}}),
            cb.msg("user", "more"),
            cb.event(
                "token_usage",
                {"provider": "ollama", "model": "qwen3:8b", "usage": {"input_tokens": 9}, "source": "subagent"},
            ),
            cb.event(
                "token_usage",
                {"provider": "acme", "model": "mystery-3", "usage": {"input_tokens": 9}, "attribution": attribution},
            ),
        ],
    )
    requests = chainless_requests.read_requests(tmp_path)
    assert requests.select("provider", "agent_id", "is_sidechain", "cost_usd").rows() == [
        ("openai", None, False, usd((1_000_000, "2.5"), (10, "10"))),  # the header names the provider
        ("ollama", None, True, 0.0),  # local: free
        ("acme", "sa-7", True, None),
    ]
    sessions = frames.read_sessions(tmp_path)
    assert sessions.select(S.COST_USD, S.UNPRICED_REQUESTS).row(0) == (requests["cost_usd"].sum(), 1)
    turns = frames.read_turns(tmp_path)
    assert turns[S.COST_USD].to_list() == [None, requests["cost_usd"][0], 0.0]
    assert turns[S.UNPRICED_REQUESTS].to_list() == [0, 0, 1]


def test_front_reads_both_formats_and_one_decode_gives_the_same_requests(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "claude" / "projects", tmp_path / "a")
    for path in (SAMPLES / "chainless").glob("*.jsonl"):
        shutil.copy(path, tmp_path / "a" / path.name)
    requests = frames.read_requests(tmp_path)
    assert requests.schema == S.REQUESTS_SCHEMA
    assert set(requests["format"]) == {CLAUDE, CHAINLESS}
    tables = frames.read_tables(tmp_path)
    key = [S.FORMAT, S.SESSION_ID, S.TIME, S.MESSAGE_ID, S.OUTPUT_TOKENS]
    assert_frame_equal(tables.requests.sort(key), requests.sort(key))
    costs = tables.sessions.group_by(S.FORMAT).agg(pl.col(S.COST_USD).sum()).sort(S.FORMAT)
    expected = requests.group_by(S.FORMAT).agg(pl.col(S.COST_USD).sum()).sort(S.FORMAT)
    assert_frame_equal(costs, expected, rel_tol=1e-12)
    by_day = frames.read_usage(tmp_path, by="day", timezone="UTC")
    assert by_day["requests"].sum() == requests.height
    assert by_day["cost_usd"].sum() == pytest.approx(requests["cost_usd"].sum(), rel=1e-12)


def test_price_book_remembers_and_never_guesses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC_ANALYTICS_CACHE_DIR", str(tmp_path / "cache"))
    requests = frames.read_requests(SAMPLES / "claude" / "projects")

    def fresh_book() -> None:
        monkeypatch.setattr(pricebook, "BOOK", pricebook.PriceBook())
        pricebook.resolve.cache_clear()
        pricebook.bands.cache_clear()

    fresh_book()
    cold = prices.price_requests(requests)
    (book,) = (tmp_path / "cache").glob("prices-*.json")
    fresh_book()
    ask = pricebook._ask_bands
    asked: list[tuple] = []
    monkeypatch.setattr(pricebook, "_ask_bands", lambda *key: asked.append(key))
    assert_frame_equal(prices.price_requests(requests), cold)
    assert asked == []  # every answer came from the book
    monkeypatch.setattr(pricebook, "_ask_bands", ask)
    book.write_text("{not json")  # a damaged book is no book: everything is asked again
    fresh_book()
    assert_frame_equal(prices.price_requests(requests), cold)
    fresh_book()
    assert_frame_equal(prices.price_requests(requests), cold)  # and the book is whole again


@pytest.mark.parametrize("module", [claude_requests, chainless_requests])
def test_docstring_examples(module: object) -> None:
    assert doctest.testmod(module).failed == 0  # type: ignore[arg-type]


def test_usage_counts_a_response_repeated_by_a_resumed_session_once(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    repeated = assistant([text("x")], message_id="msg_r", request_id="req_r", tokens=opus(out=1000), session="a")
    write(folder / "a.jsonl", user("go", session="a"), repeated)
    resumed = {**repeated, "sessionId": "b", "uuid": "copied"}
    fresh = assistant([text("y")], message_id="msg_s", request_id="req_s", tokens=opus(out=10), session="b")
    write(folder / "b.jsonl", resumed, user("more", session="b"), fresh)
    sessions = read_sessions(folder)
    assert sessions[S.OUTPUT_TOKENS].to_list() == [1000, 1010]  # each transcript holds it
    by_session = frames.read_usage(folder, by="session")
    assert by_session.select(S.SESSION_ID, S.OUTPUT_TOKENS, S.REQUESTS).rows() == [("a", 1000, 1), ("b", 10, 1)]
    assert frames.read_usage(folder, by="day")[S.COST_USD].item() == usd((1010, "25"))


def test_each_request_counts_once_whatever_its_ids_hold() -> None:
    """The key of a request is its format, message id and request id, exactly: ids that hold the
    separator the key is joined with stay apart, a request id of None is the empty one, and a
    message id without a request counted once per (format, request)."""
    from cc_analytics.frames.requests import first_of_each_request, requests_frame

    rows = [
        ("claude-code", "a\x00b", "c"),
        ("claude-code", "a", "b\x00c"),  # the same joined text as the row above, another request
        ("claude-code", "a\x00b", "c"),  # a repeat: dropped
        ("codex", "a\x00b", "c"),  # another format
        ("claude-code", "m", None),
        ("claude-code", "m", ""),  # None and "" are one request id
        ("claude-code", "m", "r2"),
        ("claude-code", None, "r"),  # no message id: a request of its own, every time
        ("claude-code", None, "r"),
    ]
    frame = requests_frame(
        [{"format": f, "message_id": m, "request_id": r, "session_id": str(i)} for i, (f, m, r) in enumerate(rows)]
    )
    assert frame.filter(first_of_each_request())["session_id"].to_list() == ["0", "1", "3", "4", "6", "7", "8"]
