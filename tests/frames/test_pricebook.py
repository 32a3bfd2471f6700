"""The scalar price of one request (``frames.pricebook.request_cost``) is the vectorised one
(``frames.prices.price_requests``), row for row, on generated requests: one owner per
metric, and a twin tested equal."""

from __future__ import annotations

import doctest
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cc_analytics.frames import pricebook
from cc_analytics.frames.pricebook import request_cost
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.requests import requests_frame

MODELS = [
    ("claude-opus-4-5-20251101", None),
    ("claude-sonnet-4-5-20250929", "anthropic"),
    ("claude-sonnet-4-6", None),  # lost its long-context surcharge on 2026-03-13
    ("claude-haiku-4-5-20251001", "anthropic"),
    ("claude-opus-4-8", None),  # has fast-mode prices
    ("claude-opus-4-6", None),  # has none
    ("claude-3-5-haiku-20241022", None),
    ("deepseek-chat", "deepseek"),  # off-peak prices by UTC time of day
    ("kimi-k2", "kimi"),
    ("gpt-4o", "openai"),
    ("qwen2.5:7b", "ollama"),  # local: free
    ("<synthetic>", "anthropic"),  # free
    ("mystery-1", None),  # unknown: null
    ("mystery-2", "acme"),
    (None, None),
]
TOKENS = st.one_of(st.integers(min_value=0, max_value=400_000), st.integers(0, 3000), st.none())
MOMENT = st.one_of(
    st.datetimes(datetime(2025, 1, 1), datetime(2026, 12, 31)).map(lambda t: t.replace(tzinfo=UTC)),
    st.datetimes(datetime(2026, 3, 12, 22), datetime(2026, 3, 13, 2)).map(lambda t: t.replace(tzinfo=UTC)),
    st.none(),
)
REQUEST = st.fixed_dictionaries(
    {
        "model_provider": st.sampled_from(MODELS),
        "time": MOMENT,
        "input_tokens": TOKENS,
        "cache_creation_5m_tokens": TOKENS,
        "cache_creation_1h_tokens": TOKENS,
        "cache_read_tokens": TOKENS,
        "output_tokens": st.one_of(st.integers(0, 64_000), st.none()),
        "web_search_requests": st.one_of(st.integers(0, 5), st.none()),
        "speed": st.sampled_from([None, "standard", "fast"]),
        "service_tier": st.sampled_from([None, "standard", "priority"]),
    }
)


def _columns(row: dict) -> dict:
    model, provider = row["model_provider"]
    return {**{k: v for k, v in row.items() if k != "model_provider"}, "model": model, "provider": provider}


@settings(max_examples=150, deadline=None)
@given(st.lists(REQUEST, min_size=1, max_size=25))
def test_the_scalar_cost_is_the_vectorised_cost_row_by_row(rows: list[dict]) -> None:
    requests = [_columns(row) for row in rows]
    vectorised = price_requests(requests_frame(requests))["cost_usd"].to_list()
    assert [request_cost(**request) for request in requests] == vectorised


def test_examples_that_matter_are_generated() -> None:
    # The cases the property must cover are reachable: a tier, a price change, fast mode,
    # an unknown model and mode, off-peak time, a free model, a 1-hour write.
    at = datetime(2026, 3, 12, 23, 30, tzinfo=UTC)
    after = datetime(2026, 3, 13, 0, 30, tzinfo=UTC)
    cases = [
        {"model": "claude-sonnet-4-6", "time": at, "cache_read_tokens": 250_000, "output_tokens": 10},
        {"model": "claude-sonnet-4-6", "time": after, "cache_read_tokens": 250_000, "output_tokens": 10},
        {"model": "claude-opus-4-8", "time": after, "input_tokens": 10, "speed": "fast"},
        {"model": "claude-opus-4-6", "time": after, "input_tokens": 10, "speed": "fast"},
        {"model": "claude-opus-4-5", "time": after, "service_tier": "priority"},
        {"model": "deepseek-chat", "provider": "deepseek", "time": at, "input_tokens": 1000},
        {"model": "qwen2.5:7b", "provider": "ollama", "time": at, "input_tokens": 1000},
        {"model": "claude-opus-4-5", "time": None, "cache_creation_1h_tokens": 1000, "web_search_requests": 2},
        {"model": "mystery-1", "time": at},
    ]
    scalar = [request_cost(**case) for case in cases]
    assert scalar == price_requests(requests_frame(cases))["cost_usd"].to_list()
    assert scalar[0] != scalar[1]  # the price change
    assert scalar[3] is None and scalar[4] is None and scalar[8] is None
    assert scalar[6] == 0.0
    assert scalar[7] == (1000 * 10 + 2 * 10_000) / 1_000_000  # $10/MTok 1-hour write, $10 per 1000 searches


def test_the_price_book_module_imports_no_polars() -> None:
    probe = (
        "import sys\nfrom cc_analytics.frames.pricebook import request_cost\n"
        "print(any(name.split('.')[0] == 'polars' for name in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_docstring_examples() -> None:
    assert doctest.testmod(pricebook, raise_on_error=False).failed == 0


@given(
    st.tuples(
        st.one_of(st.none(), st.text()),
        st.text(),
        st.one_of(st.none(), st.text()),
        st.one_of(st.none(), st.text()),
        st.datetimes(timezones=st.just(UTC)),
    )
)
def test_book_keys_are_written_as_orjson_wrote_them(key: tuple) -> None:
    # The book no longer imports orjson (it costs the status line ~14 ms); a book written by
    # an earlier version must still answer, so its keys are spelled as orjson spelled them.
    orjson = pytest.importorskip("orjson")
    kind = "bands"
    try:
        expected = kind + orjson.dumps(key).decode()
    except orjson.JSONEncodeError:  # lone surrogates: orjson refused them, so no old book has them
        return
    book = pricebook.PriceBook()
    book._entries, book._path = {}, None
    asked: list[tuple] = []
    book.recall(kind, key, lambda *k: asked.append(k) or ("free", None, None, None))
    assert list(book._entries) == [expected]
