"""Frames kept packed between batches (``frames.memory.KeptFrames``) come back as they went in."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cc_analytics.frames import read_tables
from cc_analytics.frames import schema as S
from cc_analytics.frames.memory import KeptFrames
from cc_analytics.report import SAMPLES_DIR


def test_every_table_comes_back_as_it_went_in() -> None:
    # Lists, zoned times, enums and nulls of the real tables of the samples, kept twice.
    tables = read_tables(SAMPLES_DIR)
    for frame, schema in (
        (tables.sessions, S.SESSIONS_SCHEMA),
        (tables.turns, S.TURNS_SCHEMA),
        (tables.requests, S.REQUESTS_SCHEMA),
        (tables.problems, S.PROBLEMS_SCHEMA),
    ):
        kept = KeptFrames()
        kept.append(frame)
        kept.append(frame.head(0))
        kept.append(frame.reverse())
        assert len(kept) == 3
        assert_frame_equal(kept.concat(schema), pl.concat([frame, frame.reverse()]))
        assert len(kept) == 0  # read once: the packed bytes are let go


def test_a_large_frame_is_kept_as_it_is_among_packed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # Packing a large frame costs more than it spares (memory.PACK_MAX_BYTES).
    from cc_analytics.frames import memory

    requests = read_tables(SAMPLES_DIR).requests
    monkeypatch.setattr(memory, "PACK_MAX_BYTES", requests.head(3).estimated_size())
    kept = KeptFrames()
    kept.append(requests.head(2))  # small: packed
    kept.append(requests)  # large: the frame itself
    assert [type(item).__name__ for item in kept._packed] == ["bytes", "DataFrame"]
    assert_frame_equal(kept.concat(S.REQUESTS_SCHEMA), pl.concat([requests.head(2), requests]))
    assert len(kept) == 0
