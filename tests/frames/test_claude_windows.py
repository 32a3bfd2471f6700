"""The Claude window rule: the Polars expression equals its stdlib scalar twin."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from cc_analytics.frames.claude.models import window_for
from cc_analytics.frames.claude.windows import context_window

MODELS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "claude-opus-4-5",
            "claude-sonnet-4-6",
            "claude-sonnet-4-6-20260101",
            "claude-opus-4-6",
            "claude-opus-4-7",
            "claude-fable-5",
            "claude-haiku-4-5",
            "<synthetic>",
            "xclaude-opus-5",
            "claude-opus-4-5[1m]",
            "claude-haiku-4-5[1M]",
        ]
    ),
    st.text(max_size=20),
)
VERSIONS = st.one_of(
    st.none(),
    st.builds(lambda a, b, c: f"{a}.{b}.{c}", st.integers(0, 3), st.integers(0, 2), st.integers(0, 200)),
    st.text(max_size=10),
)
OBSERVED = st.one_of(st.none(), st.integers(0, 2_000_000))


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(st.tuples(MODELS, VERSIONS, OBSERVED), min_size=1, max_size=30))
def test_expression_equals_scalar(rows: list[tuple[str | None, str | None, int | None]]) -> None:
    frame = pl.DataFrame(rows, schema={"m": pl.String, "v": pl.String, "o": pl.Int64}, orient="row")
    got = frame.select(context_window("m", "v", "o")).to_series().to_list()
    assert got == [window_for(m, v, o) for m, v, o in rows]


def test_the_version_gates() -> None:
    assert window_for("claude-opus-4-6", "2.1.74") == 200_000
    assert window_for("claude-opus-4-6", "2.1.75") == 1_000_000
    assert window_for("claude-opus-4-7", "2.1.116") == 200_000
    assert window_for("claude-opus-4-7", "2.1.117") == 1_000_000
