"""frames.metrics: each Polars expression equals its scalar twin, and the definitions hold."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from cc_analytics.frames import metrics as M

USED = st.integers(min_value=0, max_value=3_000_000)
WINDOW = st.integers(min_value=1, max_value=2_000_000)


@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(USED, WINDOW), min_size=1, max_size=40))
def test_expressions_equal_scalar_twins(pairs: list[tuple[int, int]]) -> None:
    frame = pl.DataFrame({"used": [u for u, _ in pairs], "window": [w for _, w in pairs]})
    out = frame.select(
        M.used_fraction("used", "window").alias("fraction"),
        M.headroom("used", "window").alias("headroom"),
        M.overflows("used", "window").alias("overflows"),
        M.zone(M.used_fraction("used", "window")).alias("zone"),
        M.effective_window("window").alias("effective"),
        M.autocompact_threshold("window").alias("threshold"),
        M.until_autocompact("used", "window").alias("until"),
    )
    for (used, window), row in zip(pairs, out.iter_rows(named=True), strict=True):
        assert row["fraction"] == M.used_fraction_of(used, window)
        assert row["headroom"] == M.headroom_of(used, window)
        assert row["overflows"] == M.overflows_of(used, window)
        assert row["zone"] == M.zone_of(M.used_fraction_of(used, window))
        assert row["effective"] == M.effective_window_of(window)
        assert row["threshold"] == M.autocompact_threshold_of(window)
        assert row["until"] == M.until_autocompact_of(used, window)


def test_zone_boundaries_are_strict() -> None:
    fractions = [0.0, 0.7, 0.7000001, 0.9, 0.9000001, 1.5]
    expected = ["green", "green", "yellow", "yellow", "red", "red"]
    assert [M.zone_of(f) for f in fractions] == expected
    assert pl.DataFrame({"f": fractions}).select(M.zone("f")).to_series().to_list() == expected
    assert pl.DataFrame({"f": [None]}, schema={"f": pl.Float64}).select(M.zone("f")).item() is None


def test_claude_window_figures() -> None:
    assert M.effective_window_of(200_000) == 180_000
    assert M.autocompact_threshold_of(200_000) == 167_000
    assert M.autocompact_threshold_of(1_000_000) == 967_000
    assert M.until_autocompact_of(170_000, 200_000) == 0
    assert M.headroom_of(250_000, 200_000) == 0 and M.overflows_of(250_000, 200_000)


def test_scalar_twins_do_not_need_polars() -> None:
    import subprocess
    import sys

    code = "import sys, cc_analytics.frames.metrics as m; m.zone_of(m.used_fraction_of(1, 2)); print('polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
