"""Pricing requests: hand-computed costs from the published per-million-token prices, and
agreement with genai-prices row by row."""

from __future__ import annotations

import doctest
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import polars as pl
import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from cc_analytics.errors import InputError
from cc_analytics.frames import prices, requests
from cc_analytics.frames.prices import price_requests, price_table, unpriced
from cc_analytics.frames.requests import requests_frame
from cc_analytics.frames.schema import REQUESTS_SCHEMA

MTOK = Decimal(1_000_000)


def cost_of(**row: object) -> float | None:
    return price_requests(requests_frame([{"time": "2026-01-05T10:00:00Z", **row}]))["cost_usd"].item()


def usd(*terms: tuple[int, str]) -> float:
    """Σ tokens × published $/MTok, exactly, then rounded once to a float."""
    return float(sum(Decimal(tokens) * Decimal(price) for tokens, price in terms) / MTOK)


def test_every_token_kind_at_its_own_rate():
    # Claude Opus 4.5: $5 input, $6.25 5-minute write, $10 1-hour write, $0.50 read, $25 output.
    got = cost_of(
        model="claude-opus-4-5-20251101",
        input_tokens=1234,
        cache_creation_5m_tokens=5000,
        cache_creation_1h_tokens=7000,
        cache_read_tokens=100_000,
        output_tokens=800,
    )
    assert got == usd((1234, "5"), (5000, "6.25"), (7000, "10"), (100_000, "0.5"), (800, "25"))
    assert got == 0.17742


def test_web_searches_cost_ten_dollars_a_thousand():
    assert cost_of(model="claude-opus-4-5", output_tokens=100, web_search_requests=3) == usd((100, "25")) + 0.03


@pytest.mark.parametrize(
    ("cache_read", "expected"),
    [
        (200_000, usd((200_000, "0.3"))),  # exactly 200k is not over 200k: base prices
        (200_001, usd((200_001, "0.6"))),  # one more and every token pays the long-context rate
    ],
)
def test_long_context_tier_starts_above_200k_prompt_tokens(cache_read, expected):
    assert cost_of(model="claude-sonnet-4-5-20250929", cache_read_tokens=cache_read) == expected


def test_a_tiered_request_prices_output_at_the_tier_too():
    got = cost_of(model="claude-sonnet-4-5", input_tokens=1000, cache_read_tokens=249_000, output_tokens=2000)
    assert got == usd((1000, "6"), (249_000, "0.6"), (2000, "22.5"))


def test_price_change_applies_from_its_utc_date():
    # Sonnet 4.6 lost its long-context surcharge on 2026-03-13 (UTC).
    usage = {"model": "claude-sonnet-4-6", "input_tokens": 10, "cache_read_tokens": 250_000, "output_tokens": 100}
    frame = requests_frame(
        [
            {**usage, "time": "2026-03-12T23:59:59.999Z"},
            {**usage, "time": "2026-03-13T00:30:00+01:00"},  # still the 12th in UTC
            {**usage, "time": "2026-03-13T00:00:00Z"},
        ]
    )
    before = usd((10, "6"), (250_000, "0.6"), (100, "22.5"))
    after = usd((10, "3"), (250_000, "0.3"), (100, "15"))
    assert price_requests(frame)["cost_usd"].to_list() == [before, before, after]


def test_fast_mode_is_priced_from_the_speed_column():
    assert cost_of(model="claude-opus-4-8", input_tokens=1_000_000, speed="fast") == 10.0
    assert cost_of(model="claude-opus-4-8", input_tokens=1_000_000, speed="standard") == 5.0


def test_a_mode_without_prices_is_unpriced_and_named():
    # genai-prices has standard prices only for Opus 4.6 (no fast mode), and no priority tier.
    frame = requests_frame(
        [
            {"model": "claude-opus-4-6", "time": "2026-03-20T10:00:00Z", "input_tokens": 10, "speed": "fast"},
            {"model": "claude-opus-4-5", "time": "2026-03-20T10:00:00Z", "service_tier": "priority"},
            {"model": "claude-opus-4-5", "time": "2026-03-20T10:00:00Z", "service_tier": "standard"},
        ]
    )
    priced = price_requests(frame)
    assert priced["cost_usd"].to_list()[:2] == [None, None]
    assert unpriced(priced).rows() == [
        (None, "claude-opus-4-5", "service tier priority", 1),
        (None, "claude-opus-4-6", "speed fast", 1),
    ]
    assert set(price_table(frame)["status"]) == {"unknown mode", "priced"}


def test_synthetic_and_local_requests_cost_nothing():
    assert cost_of(model="<synthetic>", output_tokens=50) == 0.0
    assert cost_of(model="qwen2.5:7b", provider="ollama", input_tokens=10_000) == 0.0


def test_unknown_models_get_a_null_cost_and_are_named():
    frame = price_requests(
        requests_frame(
            [
                {"model": "claude-opus-4-5", "time": "2026-01-05T10:00:00Z", "output_tokens": 1},
                {"model": "mystery-2", "time": "2026-01-05T10:00:00Z", "output_tokens": 1},
                {"model": "mystery-2", "time": "2026-01-06T10:00:00Z", "output_tokens": 1},
                {"model": "mystery-1", "provider": "acme", "time": "2026-01-06T10:00:00Z"},
                {"model": None, "time": "2026-01-06T10:00:00Z"},
            ]
        )
    )
    assert frame["cost_usd"].null_count() == 4
    assert unpriced(frame).rows() == [
        (None, "mystery-2", None, 2),
        ("acme", "mystery-1", None, 1),
        (None, None, None, 1),
    ]


def test_a_provider_genai_prices_does_not_know_falls_back_to_the_model_name():
    assert cost_of(model="deepseek-chat", provider="deepseek", input_tokens=1_000_000, time="2026-01-05T10:00:00Z")
    assert cost_of(model="kimi-k2", provider="kimi", input_tokens=1_000_000) == cost_of(
        model="kimi-k2", provider="moonshotai", input_tokens=1_000_000
    )


def test_off_peak_prices_follow_the_utc_time_of_day():
    # DeepSeek chat: off-peak 16:30–00:30 UTC at half price.
    peak = cost_of(model="deepseek-chat", provider="deepseek", input_tokens=1_000_000, time="2026-01-05T10:00:00Z")
    off = cost_of(model="deepseek-chat", provider="deepseek", input_tokens=1_000_000, time="2026-01-05T17:00:00Z")
    assert (peak, off) == (0.27, 0.135)


def test_other_columns_and_row_order_are_kept():
    frame = requests_frame(
        [
            {"session_id": f"s{i}", "model": model, "time": "2026-01-05T10:00:00Z", "output_tokens": i}
            for i, model in enumerate(["claude-opus-4-5", "mystery", "claude-sonnet-4-5", "<synthetic>"] * 3)
        ]
    )
    priced = price_requests(frame)
    assert priced.schema == REQUESTS_SCHEMA
    assert priced.drop("cost_usd").equals(frame.drop("cost_usd"))
    assert priced["cost_usd"].to_list()[:4] == [usd((0, "25")), None, usd((2, "15")), 0.0]


def test_lazy_equals_eager():
    frame = requests_frame(
        [{"model": "claude-haiku-4-5", "time": "2026-01-05T10:00:00Z", "input_tokens": n} for n in range(5)]
    )
    assert price_requests(frame.lazy()).collect().equals(price_requests(frame))


def test_a_frame_without_the_priced_columns_is_an_input_error():
    with pytest.raises(InputError, match="not a requests frame: no 'provider', 'speed' column"):
        price_requests(requests_frame([{"model": "claude-opus-4-5"}]).drop("provider", "speed").lazy())


def test_empty_frame():
    empty = pl.DataFrame(schema=REQUESTS_SCHEMA)
    assert price_requests(empty).schema == REQUESTS_SCHEMA
    assert price_table(empty).is_empty()


def test_price_table_shows_each_tier_and_period():
    table = price_table(
        requests_frame(
            [
                {"model": "claude-sonnet-4-6", "time": "2026-03-01T10:00:00Z"},
                {"model": "claude-sonnet-4-6", "time": "2026-04-01T10:00:00Z"},
            ]
        )
    )
    rows = table.select("period_start", "above_prompt_tokens", "input_mtok").rows()
    epoch, change = datetime(1970, 1, 1, tzinfo=UTC), datetime(2026, 3, 13, tzinfo=UTC)
    assert rows == [(epoch, None, Decimal("3")), (epoch, 200_000, Decimal("6")), (change, None, Decimal("3"))]


# ------------------------------------------------------------------ genai-prices row by row

MODELS = [
    ("claude-opus-4-5-20251101", None),
    ("claude-sonnet-4-5-20250929", None),
    ("claude-sonnet-4-6", None),
    ("claude-haiku-4-5-20251001", None),
    ("claude-haiku-5-5", None),
    ("claude-opus-4-8", None),
    ("claude-3-5-haiku-20241022", None),
    ("claude-2.1", None),
    ("deepseek-chat", "deepseek"),
    ("gpt-4o", "openai"),
]
TOKENS = st.integers(min_value=0, max_value=400_000)
REQUEST = st.fixed_dictionaries(
    {
        "model_provider": st.sampled_from(MODELS),
        "time": st.datetimes(datetime(2025, 6, 1), datetime(2026, 11, 1)).map(lambda t: t.replace(tzinfo=UTC)),
        "input_tokens": TOKENS,
        "cache_creation_5m_tokens": TOKENS,
        "cache_creation_1h_tokens": TOKENS,
        "cache_read_tokens": TOKENS,
        "output_tokens": st.integers(min_value=0, max_value=64_000),
        "web_search_requests": st.integers(min_value=0, max_value=5),
        "speed": st.sampled_from([None, "standard", "fast"]),
    }
)


def library_price(row: dict) -> float | None:
    """What genai-prices says for one request, given its usage the way Anthropic reports it
    (None for fast mode on a model it has no fast-mode prices for)."""
    writes = row["cache_creation_5m_tokens"] + row["cache_creation_1h_tokens"]
    usage = Usage(
        input_tokens=row["input_tokens"] + writes + row["cache_read_tokens"],
        cache_write_tokens=writes,
        cache_write_5m_tokens=row["cache_creation_5m_tokens"],
        cache_write_1h_tokens=row["cache_creation_1h_tokens"],
        cache_read_tokens=row["cache_read_tokens"],
        output_tokens=row["output_tokens"],
        web_searches=row["web_search_requests"],
    )
    context = {"speed": row["speed"]} if row["speed"] else None
    model, provider = row["model_provider"]
    found = calc_price(usage, model, provider_id=provider, genai_request_timestamp=row["time"], price_context=context)
    fast_prices = [
        variant
        for variant in found.model.price_variants or ()
        if variant.when.get("speed") == "fast"
        and (variant.constraint is None or variant.constraint.active(row["time"]))
    ]
    if row["speed"] == "fast" and not fast_prices:
        return None
    return float(found.total_price)


@settings(max_examples=60, deadline=None)
@given(st.lists(REQUEST, min_size=1, max_size=20))
def test_vectorised_prices_equal_genai_prices_row_by_row(rows):
    frame = requests_frame(
        [
            {**{k: v for k, v in row.items() if k != "model_provider"}, "model": mp[0], "provider": mp[1]}
            for row in rows
            for mp in [row["model_provider"]]
        ]
    )
    assert price_requests(frame)["cost_usd"].to_list() == [library_price(row) for row in rows]


def test_many_rows_and_periods_at_once():
    start = datetime(2026, 3, 10, tzinfo=UTC)
    rows = [
        {"model": "claude-sonnet-4-6", "time": start + timedelta(hours=7 * i), "cache_read_tokens": 150_000 + 1000 * i}
        for i in range(40)
    ]
    frame = requests_frame(rows)
    expected = [library_price({**r, "model_provider": ("claude-sonnet-4-6", None), **_zeros(r)}) for r in rows]
    assert price_requests(frame)["cost_usd"].to_list() == expected


def _zeros(row: dict) -> dict:
    kinds = ("input_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens", "output_tokens")
    return {**dict.fromkeys(kinds, 0), "web_search_requests": 0, "speed": None, **row}


@pytest.mark.parametrize("module", [prices, requests])
def test_docstring_examples(module):
    assert doctest.testmod(module, raise_on_error=False).failed == 0
