"""Frames kept between batches (``frames.memory.KeptFrames``: written to a temporary file, or
packed as IPC bytes when no file can be made) come back as they went in."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cc_analytics.frames import read_tables
from cc_analytics.frames import schema as S
from cc_analytics.frames.memory import KeptFrames
from cc_analytics.report import SAMPLES_DIR


@pytest.mark.parametrize("writable", [True, False])
def test_every_table_comes_back_as_it_went_in(writable: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Lists, zoned times, enums and nulls of the real tables of the samples, kept twice.
    import tempfile

    tables = read_tables(SAMPLES_DIR)
    if not writable:  # no temporary file can be made: the frames are packed in memory

        def refused(*_args: object, **_kw: object) -> object:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(tempfile, "TemporaryFile", refused)
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
        assert {type(item).__name__ for item in kept._held} == {"tuple" if writable else "bytes"}
        assert_frame_equal(kept.concat(schema), pl.concat([frame, frame.reverse()]))
        assert len(kept) == 0  # read once: the file, or the packed bytes, let go


def test_a_large_frame_is_kept_as_it_is_among_packed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # Writing out a large frame, which its caller still holds, spares nothing (memory.PACK_MAX_BYTES).
    from cc_analytics.frames import memory

    requests = read_tables(SAMPLES_DIR).requests
    monkeypatch.setattr(memory, "PACK_MAX_BYTES", requests.head(3).estimated_size())
    kept = KeptFrames()
    kept.append(requests.head(2))  # small: written out
    kept.append(requests)  # large: the frame itself
    assert [type(item).__name__ for item in kept._held] == ["tuple", "DataFrame"]
    assert_frame_equal(kept.concat(S.REQUESTS_SCHEMA), pl.concat([requests.head(2), requests]))
    assert len(kept) == 0
