"""Codex requests: Codex's repeated token counts, deltas of totals, forks, pricing, rate limits.

The pinned numbers come from the fixture home (``tests/fixtures/codex/make_fixtures.py``): each
is the sum of the usages that script writes, and ``test_codex_ccusage.py`` checks them against
ccusage where it is installed.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.codex import read_rate_limits, read_requests, resolve
from cc_analytics.frames.prices import unpriced
from tests.conftest import ROOT
from tests.fixtures.codex.builders import line, meta, plus, tokens, turn_context, usage, write

HOME = ROOT / "tests" / "fixtures" / "codex" / "home"
PREFIX = "0199a000-0000-7000-8000-0000000000"
SUMS = ["input_tokens", "cache_creation_5m_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"]
# Per rollout (by its id's last two digits): requests, then the sums of SUMS.
PINNED = {
    "01": (4, 41224, 0, 30976, 760, 224),
    "02": (2, 3556, 0, 2944, 250, 40),
    "03": (1, 544, 0, 13056, 60, 0),
    "04": (1, 532, 0, 3968, 80, 16),
    "05": (3, 1800, 0, 1500, 170, 35),
    "06": (2, 500, 400, 1100, 100, 20),
    "07": (3, 1576, 0, 2024, 60, 0),
    "08": (1, 1200, 0, 0, 40, 0),
    "09": (1, 976, 0, 1024, 100, 0),
}


def sums(frame: pl.DataFrame) -> tuple[int, ...]:
    return (frame.height, *(int(frame[name].sum()) for name in SUMS))


def per_rollout(requests: pl.DataFrame) -> dict[str, tuple[int, ...]]:
    own = pl.coalesce("agent_id", "session_id").str.slice(-2)
    return {key: sums(group) for (key,), group in requests.group_by(own.alias("key"))}


def test_pinned_sums_of_the_fixture_home() -> None:
    requests = read_requests(HOME)
    assert per_rollout(requests) == PINNED
    assert requests.filter(pl.col("agent_id").is_not_null())["is_sidechain"].all()
    assert set(requests["format"]) == {"codex"}


def test_a_repeated_cumulative_total_is_one_request(tmp_path: Path) -> None:
    one, two = usage(1000, 200, 50, 10), usage(1500, 1000, 80, 20)
    write(
        tmp_path,
        "s",
        [
            meta(),
            turn_context("gpt-5"),
            tokens(one, one),
            tokens(one, one),  # written again as rate limits change
            tokens(plus(one, two), two),
            tokens(plus(one, two), one),  # the total did not move: a repeat, whatever `last` says
        ],
    )
    assert sums(read_requests(tmp_path)) == (2, 1300, 0, 1200, 130, 30)


def test_without_last_usage_the_delta_of_totals_counts(tmp_path: Path) -> None:
    one, two = usage(1000, 200, 50, 10), usage(1500, 1000, 80, 20)
    back = usage(500, 100, 10)
    write(
        tmp_path, "s", [meta(), tokens(one), tokens(one), tokens(plus(one, two)), tokens(back), tokens(plus(back, two))]
    )
    # The step back to a smaller total counts nothing (each count at least 0); the next
    # delta is taken from it.
    assert sums(read_requests(tmp_path)) == (3, 1800, 0, 2200, 210, 50)


def test_zero_usage_info_null_and_missing_counts(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s",
        [
            meta(),
            line("event_msg", {"type": "token_count", "info": None, "rate_limits": None}),
            tokens(usage(0), usage(0)),
            tokens({"input_tokens": 10}, {"input_tokens": 10}),  # the other counts missing: 0
        ],
    )
    assert sums(read_requests(tmp_path)) == (1, 10, 0, 0, 0, 0)


def test_cached_and_written_input_are_bounded_by_the_input(tmp_path: Path) -> None:
    odd = usage(100, 150, 5, cache_write_input_tokens=30)  # cached beyond the input: all of it cached
    write(tmp_path, "s", [meta(), tokens(odd, odd)])
    assert sums(read_requests(tmp_path)) == (1, 0, 0, 100, 5, 0)


def test_the_model_is_the_latest_named_and_the_provider_the_header_s(tmp_path: Path) -> None:
    one, two = usage(10), usage(20)
    write(
        tmp_path,
        "s",
        [
            meta(model_provider="azure"),
            turn_context("gpt-5"),
            tokens(one, one),
            turn_context("gpt-5.1-codex-max"),
            tokens(plus(one, two), two, model="gpt-5-mini"),  # an event naming its own model
        ],
    )
    assert read_requests(tmp_path).select("model", "provider").rows() == [("gpt-5", "azure"), ("gpt-5-mini", "azure")]


def test_unpriced_requests_are_named_never_zero() -> None:
    requests = read_requests(next(HOME.rglob(f"*{PREFIX}07.jsonl")))
    assert requests["cost_usd"].null_count() == 3
    assert unpriced(requests).select("model", "mode").rows() == [
        ("gpt-5", "service tier priority"),
        ("gpt-9-preview", None),
        (None, None),
    ]


def test_costs_are_priced_at_the_request_date() -> None:
    requests = read_requests(next(HOME.rglob(f"*{PREFIX}01.jsonl")))
    assert requests["cost_usd"].sum() == pytest.approx(0.063002, rel=1e-9)


def test_a_fork_counts_its_own_requests_only() -> None:
    requests = read_requests(resolve(HOME))
    fork = requests.filter(pl.col("session_id") == PREFIX + "03")
    assert fork.select("model", "input_tokens", "cache_read_tokens").rows() == [("gpt-5.1-codex-max", 544, 13056)]
    orphan = requests.filter(pl.col("session_id") == PREFIX + "04")
    assert orphan["input_tokens"].to_list() == [532]  # the parent's request, replayed, is left out


def test_rate_limits() -> None:
    limits = read_rate_limits(HOME)
    main = limits.filter(pl.col("session_id") == PREFIX + "01")
    assert main.height == 14 and set(main["plan_type"]) == {"plus"} and set(main["limit_id"]) == {"codex"}
    last = main.sort("time", "limit_window").tail(2)
    assert last.select("limit_window", "used_percent", "window_minutes").rows() == [
        ("primary", 7.0, 300),
        ("secondary", 13.0, 10080),
    ]
    assert (last["resets_at"] - last["time"]).dt.total_seconds().to_list() == [3600, 86400]
    flat = limits.filter(pl.col("session_id") == PREFIX + "09")
    assert flat.select("limit_window", "used_percent", "window_minutes", "resets_at").rows() == [
        ("primary", 12.5, 300, None),
        ("secondary", 3.0, 10080, None),
    ]


def test_resets_in_seconds_count_from_the_event(tmp_path: Path) -> None:
    limits = {"primary": {"used_percent": 40, "window_minutes": 300, "resets_in_seconds": 600}}
    write(tmp_path, "s", [meta(), line("event_msg", {"type": "token_count", "info": None, "rate_limits": limits})])
    row = read_rate_limits(tmp_path).row(0, named=True)
    assert (row["used_percent"], (row["resets_at"] - row["time"]).total_seconds()) == (40.0, 600)
