"""Usage over time: 5-hour blocks on hand-made timelines, calendar groupings across
timezones, breakdowns and filters."""

from __future__ import annotations

import doctest
from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cc_analytics.errors import InputError
from cc_analytics.frames import usage as usage_module
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.requests import requests_frame
from cc_analytics.frames.usage import assign_blocks, local_timezone, usage


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def timeline(*times: str, model: str = "claude-sonnet-4-5-20250929", output_tokens: int = 10) -> pl.DataFrame:
    rows = [{"time": t, "model": model, "input_tokens": 100, "output_tokens": output_tokens} for t in times]
    return price_requests(requests_frame(rows))


def block_rows(frame: pl.DataFrame, **options) -> list[tuple]:
    table = usage(frame, "block", **options)
    return table.select("block_start", "block_end", "last_time", "requests").rows()


# ------------------------------------------------------------------ 5-hour blocks
# Expected blocks were checked against ccusage 20.0.24 (`blocks --json --offline`) on the same timelines.


def test_block_starts_at_the_hour_and_a_request_at_exactly_5h_stays_in_it():
    frame = timeline("2026-01-05T10:20:00Z", "2026-01-05T15:00:00Z")
    start = at("2026-01-05T10:00:00Z")
    assert block_rows(frame) == [(start, start + timedelta(hours=5), at("2026-01-05T15:00:00Z"), 2)]


def test_a_request_just_after_5h_opens_a_block_at_its_own_hour():
    frame = timeline("2026-01-05T10:00:00Z", "2026-01-05T14:59:59.999Z", "2026-01-05T15:00:00.001Z")
    assert [(row[0].hour, row[3]) for row in block_rows(frame)] == [(10, 2), (15, 1)]


def test_exact_hour_and_later_requests_in_the_same_hour_split():
    # 15:00:00 belongs to the 10:00 block; 15:30 opens the 15:00 block.
    frame = timeline("2026-01-05T10:00:00Z", "2026-01-05T15:00:00Z", "2026-01-05T15:30:00Z")
    assert [(row[0].hour, row[3]) for row in block_rows(frame)] == [(10, 2), (15, 1)]


def test_gaps_start_new_blocks():
    frame = timeline(
        "2026-01-05T10:20:00Z",
        "2026-01-05T11:00:00Z",
        "2026-01-05T16:00:00Z",  # 6 h after the block start: new block
        "2026-01-05T21:00:00Z",  # exactly 5 h after 16:00: same block
        "2026-01-06T09:45:00Z",  # a long gap
    )
    assert [(row[0], row[3]) for row in block_rows(frame)] == [
        (at("2026-01-05T10:00:00Z"), 2),
        (at("2026-01-05T16:00:00Z"), 2),
        (at("2026-01-06T09:00:00Z"), 1),
    ]


def test_blocks_span_sessions_and_ignore_row_order():
    rows = [
        {"session_id": "b", "time": "2026-01-05T12:00:00Z", "model": "claude-opus-4-5"},
        {"session_id": "a", "time": "2026-01-05T10:30:00Z", "model": "claude-opus-4-5"},
        {"session_id": "c", "time": "2026-01-05T16:10:00Z", "model": "claude-opus-4-5"},
    ]
    frame = price_requests(requests_frame(rows))
    assert assign_blocks(frame)["block_start"].dt.hour().to_list() == [10, 10, 16]


def test_active_block_burn_rate_and_projection():
    frame = timeline(
        "2026-01-05T02:00:00Z",  # an old block
        "2026-01-05T10:30:00Z",
        "2026-01-05T11:30:00Z",
        "2026-01-05T12:00:00Z",
        model="claude-opus-4-5",
        output_tokens=900,
    )
    table = usage(frame, "block")
    old, current = table.rows(named=True)
    assert (old["is_active"], old["projected_tokens"], old["tokens_per_hour"]) == (False, None, None)
    # 3 requests × 1,000 tokens over 1.5 h → 2,000 tokens/h; 3 h left until 15:00.
    assert current["is_active"] is True
    assert current["tokens_per_hour"] == pytest.approx(2000)
    assert current["projected_tokens"] == 3000 + 2000 * 3
    cost = 3 * (100 * 5 + 900 * 25) / 1e6
    assert current["cost_usd"] == pytest.approx(cost)
    assert current["cost_per_hour"] == pytest.approx(cost / 1.5)
    assert current["projected_cost_usd"] == pytest.approx(cost + cost / 1.5 * 3)


def test_now_decides_whether_the_newest_block_is_still_active():
    frame = timeline("2026-01-05T10:30:00Z", "2026-01-05T11:30:00Z", output_tokens=900)
    later = usage(frame, "block", now=at("2026-01-05T13:30:00Z")).row(0, named=True)
    assert later["is_active"] is True
    assert later["projected_tokens"] == 2000 + 2000 * 1.5  # 2,000 tokens/h, 1.5 h left
    past = usage(frame, "block", now=at("2026-01-05T15:00:01Z")).row(0, named=True)
    assert (past["is_active"], past["projected_tokens"]) == (False, None)


def naive_blocks(times: list[datetime]) -> list[datetime]:
    """The rule read literally, one request after the other."""
    starts, start, last = {}, None, None
    for moment in sorted(times):
        if start is None or moment > start + timedelta(hours=5) or moment - last > timedelta(hours=5):
            start = moment.replace(minute=0, second=0, microsecond=0)
        starts[moment] = start
        last = moment
    return [starts[moment] for moment in times]


MOMENTS = st.integers(min_value=0, max_value=72 * 3600).map(
    lambda seconds: datetime(2026, 1, 5, tzinfo=UTC) + timedelta(seconds=seconds)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(MOMENTS | st.integers(0, 72).map(lambda h: datetime(2026, 1, 5, tzinfo=UTC) + timedelta(hours=h))))
def test_blocks_equal_the_rule_applied_request_by_request(times):
    frame = requests_frame([{"time": moment} for moment in times])
    assert assign_blocks(frame)["block_start"].to_list() == naive_blocks(times)


def test_blocks_of_a_lazy_frame():
    frame = timeline("2026-01-05T10:20:00Z", "2026-01-05T16:00:00Z")
    assert usage(frame.lazy(), "block").collect().equals(usage(frame, "block"))


# ------------------------------------------------------------------ calendar groupings


def test_days_follow_the_timezone():
    frame = timeline("2026-01-05T23:30:00Z", "2026-01-06T00:30:00Z")
    assert usage(frame, "day", timezone="UTC")["day"].to_list() == [date(2026, 1, 5), date(2026, 1, 6)]
    assert usage(frame, "day", timezone="Asia/Tokyo")["day"].to_list() == [date(2026, 1, 6)]
    assert usage(frame, "day", timezone="America/New_York")["day"].to_list() == [date(2026, 1, 5)]


def test_days_across_a_daylight_saving_change():
    # Paris moves to UTC+2 at 01:00 UTC on 2026-03-29.
    frame = timeline("2026-03-28T22:59:00Z", "2026-03-28T23:00:00Z", "2026-03-29T21:59:00Z", "2026-03-29T22:00:00Z")
    days = usage(frame, "day", timezone="Europe/Paris").select("day", "requests").rows()
    assert days == [(date(2026, 3, 28), 1), (date(2026, 3, 29), 2), (date(2026, 3, 30), 1)]


def test_weeks_start_on_monday_and_months_on_the_first():
    frame = timeline("2026-01-04T12:00:00Z", "2026-01-05T12:00:00Z", "2026-01-31T23:30:00Z")
    weeks = usage(frame, "week", timezone="UTC").select("week", "requests").rows()
    assert weeks == [(date(2025, 12, 29), 1), (date(2026, 1, 5), 1), (date(2026, 1, 26), 1)]
    months = usage(frame, "month", timezone="Asia/Tokyo").select("month", "requests").rows()
    assert months == [(date(2026, 1, 1), 2), (date(2026, 2, 1), 1)]


def test_since_and_until_are_inclusive_days_in_the_timezone():
    frame = timeline("2026-01-04T23:30:00Z", "2026-01-05T12:00:00Z", "2026-01-06T15:30:00Z")
    kept = usage(frame, "day", timezone="UTC", since="2026-01-05", until="20260105")
    assert kept.select("day", "requests").rows() == [(date(2026, 1, 5), 1)]
    tokyo = usage(frame, "day", timezone="Asia/Tokyo", since=date(2026, 1, 5), until=date(2026, 1, 5))
    assert tokyo.select("day", "requests").rows() == [(date(2026, 1, 5), 2)]
    instant = usage(frame, "day", timezone="UTC", since=at("2026-01-05T12:00:00Z"))
    assert instant["requests"].sum() == 2


def test_session_model_and_project_groupings():
    rows = [
        {"session_id": "s1", "project": "/a", "model": "claude-opus-4-5", "output_tokens": 1000},
        {"session_id": "s1", "project": "/a", "model": "claude-haiku-4-5", "output_tokens": 1000},
        {"session_id": "s2", "project": "/b", "model": "claude-opus-4-5", "output_tokens": 1000},
    ]
    frame = price_requests(requests_frame([{**row, "time": "2026-01-05T10:00:00Z"} for row in rows]))
    sessions = usage(frame, "session").select("session_id", "project", "models", "cost_usd").rows()
    assert sessions == [
        ("s1", "/a", ["claude-haiku-4-5", "claude-opus-4-5"], pytest.approx(0.03)),
        ("s2", "/b", ["claude-opus-4-5"], 0.025),
    ]
    models = usage(frame, "model", breakdown=True).select("model", "requests", "cost_usd").rows()
    assert models == [("claude-haiku-4-5", 1, 0.005), ("claude-opus-4-5", 2, 0.05)]
    assert usage(frame, "project").select("project", "requests").rows() == [("/a", 2), ("/b", 1)]


def test_breakdown_adds_a_row_per_model_under_each_group():
    rows = [
        ("2026-01-05T10:00:00Z", "claude-opus-4-5"),
        ("2026-01-05T11:00:00Z", "claude-haiku-4-5"),
        ("2026-01-05T12:00:00Z", "claude-opus-4-5"),
        ("2026-01-06T12:00:00Z", "claude-haiku-4-5"),
    ]
    frame = price_requests(requests_frame([{"time": t, "model": m, "output_tokens": 1000} for t, m in rows]))
    table = usage(frame, "day", timezone="UTC", breakdown=True)
    assert table.select("day", "model", "requests").rows() == [
        (date(2026, 1, 5), None, 3),
        (date(2026, 1, 5), "claude-haiku-4-5", 1),
        (date(2026, 1, 5), "claude-opus-4-5", 2),
        (date(2026, 1, 6), None, 1),
        (date(2026, 1, 6), "claude-haiku-4-5", 1),
    ]
    groups = table.filter(pl.col("model").is_null())
    parts = table.filter(pl.col("model").is_not_null()).group_by("day").agg(pl.col("cost_usd", "total_tokens").sum())
    assert_frame_equal(groups.select("day", "cost_usd", "total_tokens"), parts, check_row_order=False)
    assert "model" not in usage(frame, "day", timezone="UTC").columns


def test_unpriced_requests_are_counted_and_an_all_unpriced_group_has_no_cost():
    rows = [
        ("2026-01-05T10:00:00Z", "claude-opus-4-5"),
        ("2026-01-05T11:00:00Z", "mystery"),
        ("2026-01-06T10:00:00Z", "mystery"),
    ]
    frame = price_requests(requests_frame([{"time": t, "model": m, "output_tokens": 1000} for t, m in rows]))
    table = usage(frame, "day", timezone="UTC").select("day", "cost_usd", "requests", "unpriced_requests").rows()
    assert table == [(date(2026, 1, 5), 0.025, 2, 1), (date(2026, 1, 6), None, 1, 1)]


def test_token_columns_and_totals():
    frame = price_requests(
        requests_frame(
            [
                {
                    "time": "2026-01-05T10:00:00Z",
                    "model": "claude-opus-4-5",
                    "input_tokens": 1,
                    "cache_creation_5m_tokens": 20,
                    "cache_creation_1h_tokens": 300,
                    "cache_read_tokens": 4000,
                    "output_tokens": 50000,
                }
            ]
        )
    )
    row = usage(frame, "month", timezone="UTC").row(0, named=True)
    assert (row["input_tokens"], row["cache_creation_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (
        1,
        320,
        4000,
        50000,
    )
    assert row["total_tokens"] == 54321


def test_an_unpriced_frame_is_priced_and_lazy_stays_lazy():
    frame = requests_frame([{"time": "2026-01-05T10:00:00Z", "model": "claude-opus-4-5", "output_tokens": 1000}])
    lazy = usage(frame.drop("cost_usd").lazy(), "day", timezone="UTC")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["cost_usd"].item() == 0.025


def test_bad_options_are_input_errors():
    frame = timeline("2026-01-05T10:00:00Z")
    with pytest.raises(InputError, match="unknown timezone 'Mars/Olympus'"):
        usage(frame, "day", timezone="Mars/Olympus")
    with pytest.raises(InputError, match="not a date: '2026-13-01'"):
        usage(frame, "day", timezone="UTC", since="2026-13-01")
    with pytest.raises(InputError, match="cannot group usage by 'hour'"):
        usage(frame, "hour")  # type: ignore[arg-type]


def test_local_timezone_reads_tz_first(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    assert local_timezone() == "Asia/Kolkata"
    monkeypatch.setenv("TZ", ":Europe/Paris")
    assert local_timezone() == "Europe/Paris"
    monkeypatch.setenv("TZ", "not/a-zone")
    assert local_timezone() != "not/a-zone"


def test_docstring_examples():
    assert doctest.testmod(usage_module, raise_on_error=False).failed == 0
