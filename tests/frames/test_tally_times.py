"""The statusline's timestamp reading (``tally.parse_time``, no Polars) is the scalar twin of
the frames' (``decode.parse_timestamps``): the same UTC time, or None, for any text."""

from __future__ import annotations

import polars as pl
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cc_analytics.frames.claude.decode import parse_timestamps
from cc_analytics.frames.claude.tally import parse_time

digits = st.text("0123456789", min_size=1, max_size=9)
texts = st.one_of(
    st.builds(
        lambda y, mo, d, sep, h, mi, s, frac, zone: (
            f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{frac}{zone}"
        ),
        st.integers(0, 9998),  # year 10000 in UTC: the frames hold it, Python cannot
        st.integers(0, 13),
        st.integers(0, 32),
        st.sampled_from(["T", "t", " ", "_"]),
        st.integers(0, 24),
        st.integers(0, 60),
        st.integers(0, 61),
        st.one_of(st.just(""), digits.map(lambda f: "." + f)),
        st.one_of(
            st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "+24:00"]),
            st.builds(
                lambda sign, h, m: f"{sign}{h:02d}:{m:02d}",
                st.sampled_from("+-"),
                st.integers(0, 23),
                st.integers(0, 59),
            ),
        ),
    ),
    st.text(max_size=30),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, min_size=1, max_size=20))
@example(["0000-12-31T14:00:00-10:00"])  # year 0 in its zone, year 1 in UTC (found by the search)
def test_parse_time_equals_the_frames_parse(values: list[str]) -> None:
    frames = parse_timestamps(pl.Series(values, dtype=pl.String)).to_list()
    assert [parse_time(v) for v in values] == frames
