"""The token estimate, JSON.stringify and half-up rounding against the spec's worked examples."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cc_analytics.format import bar, round_half_up
from cc_analytics.frames.estimate import (
    content_text,
    estimate_text_tokens,
    estimate_tokens,
    js_number,
    js_stringify,
    well_formed,
)

WORKED = [
    ("你好世界", 3),
    ("I am fine. 你好世界", 6),
    ('""', 1),
    ("一", 1),
    ("龥龥龥", 2),
    ("边界字符测试：一龥 龦㐀\uf900 ひらがな カタカナ 한국어 ，。！", 12),
    ("👍👍👍", 2),
    ("𠀀𠀁", 1),
    ("", 0),
    ("a", 1),
    ("\ud800", 1),
    ("x\udc00y", 1),
]


@pytest.mark.parametrize(("text", "tokens"), WORKED)
def test_worked_examples(text: str, tokens: int) -> None:
    assert estimate_text_tokens(text) == tokens


def test_expression_matches_reference_formula_on_a_column() -> None:
    texts = [well_formed(t) for t, _ in WORKED]
    got = pl.DataFrame({"t": texts}).select(estimate_tokens("t")).to_series().to_list()
    assert got == [tokens for _, tokens in WORKED]


def test_null_text_stays_null() -> None:
    assert pl.DataFrame({"t": [None]}, schema={"t": pl.String}).select(estimate_tokens("t")).item() is None


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, '""'),
        (False, '""'),
        (0, '""'),
        ("", ""),
        ([], "[]"),
        ({}, "{}"),
        (42, "42"),
        (True, "true"),
        ({"v": 1.0}, '{"v":1}'),
        ({"abc": 0.0000001}, '{"abc":1e-7}'),
        ({"zero": -0.0, "k": 1e3}, '{"zero":0,"k":1000}'),
        ({"s": 'a"b\\c\n\x01é'}, '{"s":"a\\"b\\\\c\\n\\u0001é"}'),
        ([1e21, 1.5e-7, 123456789012345678901234567890], "[1e+21,1.5e-7,1.2345678901234568e+29]"),
        ({"inf": math.inf}, '{"inf":null}'),
        ("\ud800", "\ud800"),
        ({"lone": "\ud800"}, '{"lone":"\\ud800"}'),
    ],
)
def test_content_text_is_javascript_stringify(content: object, text: str) -> None:
    assert content_text(content) == text


def test_spec_sample_nonstring_tokens() -> None:
    assert estimate_text_tokens(content_text({"v": 1.0})) == 2
    assert estimate_text_tokens(content_text({"abc": 0.0000001})) == 3
    assert estimate_text_tokens(content_text({"zero": -0.0, "k": 1e3})) == 5
    note = {"kind": "note", "text": "日本語テキスト and 中文 inside an object"}
    assert estimate_text_tokens(content_text(note)) == 17


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (2.5, "2.5"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (-0.0, "0"),
        (10**400, "null"),
        (9999999999999999, "10000000000000000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-1.5e300, "-1.5e+300"),
        (10**400, "null"),
        (9999999999999999, "10000000000000000"),
        (2**53 + 1, "9007199254740992"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_half_up_rounding_on_exact_binary_values() -> None:
    assert str(round_half_up(1024 / 32768, 4)) == "0.0313"  # Python round() gives 0.0312
    assert str(round_half_up(160 / 64000 * 100, 1)) == "0.3"
    assert str(round_half_up(0.9 * 100, 1)) == "90.0"
    assert [int(round_half_up(x)) for x in (12.5, 62.5, 37.5)] == [13, 63, 38]
    assert bar(1536 / 8192).count("\u2588") == 5


@given(st.text())
def test_estimate_never_decreases_when_text_is_appended(text: str) -> None:
    base = estimate_text_tokens(text)
    assert estimate_text_tokens(text + "x") >= base
    assert estimate_text_tokens(text + "中") >= base


@given(st.text())
def test_estimate_equals_formula(text: str) -> None:
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fa5")
    assert estimate_text_tokens(text) == math.ceil(cjk / 1.5 + (units - cjk) / 4)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_stringify_fast_path_equals_slow_path(value: object) -> None:
    import cc_analytics.frames.estimate as est

    parts: list[str] = []
    est._stringify_into(value, parts)
    assert js_stringify(value) == "".join(parts)
