"""The typed columns of the C extension (``_skim.Column``): what the batch profiles keep their
columns in. Each holds what ``pl.Series(values, dtype)`` builds from a list, survives a trip
to a worker process and back, and a decode with them equals a decode with lists.
"""

from __future__ import annotations

import pickle
import re
import struct
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal, assert_series_equal

from cc_analytics.frames.claude import decode
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import COLUMN_KINDS, SESSIONS, TURNS, decode_files, frames_of, walk_files
from cc_analytics.frames.claude.discovery import discover
from tests.conftest import ROOT, extension_or_skip

_skim = extension_or_skip()
Column, column_from_state = _skim.Column, _skim.column_from_state

DTYPES = {"i64": pl.Int64(), "bool": pl.Boolean(), "str": pl.String()}
VALUES: dict[str, list[Any]] = {
    "i64": [0, None, -(2**63), 2**63 - 1, 7, None, *range(1, 30)],
    "bool": [True, None, False, *([True, False, None] * 7)],
    "str": ["", None, "héllo 你好 😀", "a\x00b", *[f"id-{n}" if n % 3 else None for n in range(25)]],
}


def column(kind: str, values: list[Any]) -> Any:
    made = Column(kind)
    for value in values:
        made.append(value)
    return made


def series(made: Any, name: str, dtype: pl.DataType) -> pl.Series:
    return decode._series(name, made, dtype)


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_a_column_holds_what_a_list_builds(kind: str) -> None:
    values = VALUES[kind]
    for count in (0, 1, 8, 9, len(values)):  # empty, and bitmaps cut inside and on a byte
        made = column(kind, values[:count])
        assert len(made) == count
        want = pl.Series("c", values[:count], dtype=DTYPES[kind])
        assert_series_equal(series(made, "c", DTYPES[kind]), want)


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_a_column_survives_pickling_and_its_state(kind: str) -> None:
    made = column(kind, VALUES[kind])
    for copy in (pickle.loads(pickle.dumps(made)), column_from_state(*made.state())):
        assert copy == made and not (copy != made)
        assert_series_equal(series(copy, "c", DTYPES[kind]), series(made, "c", DTYPES[kind]))
    assert made != column(kind, VALUES[kind][:-1])
    made.clear()
    assert len(made) == 0 and made == Column(kind)


def test_a_column_refuses_what_its_list_could_not_become() -> None:
    with pytest.raises(TypeError, match="int64 column takes int or None, not str"):
        Column("i64").append("1")
    with pytest.raises(TypeError, match="int64 column takes int or None, not bool"):
        Column("i64").append(True)
    with pytest.raises(OverflowError):
        Column("i64").append(2**63)
    with pytest.raises(TypeError, match="bool column takes bool or None, not int"):
        Column("bool").append(1)
    with pytest.raises(TypeError, match="str column takes str or None, not bytes"):
        Column("str").append(b"x")
    with pytest.raises(UnicodeEncodeError):  # as pl.Series(["\ud800"]) raises
        Column("str").append("\ud800")
    with pytest.raises(ValueError, match="Column kind"):
        Column("f64")
    kind, length, nulls, valid, offsets, data = column("i64", [1, 2, 3]).state()
    with pytest.raises(ValueError, match="do not fit the length"):
        column_from_state(kind, length + 1, nulls, valid, offsets, data)


def offsets(*ends: int) -> bytes:
    return struct.pack(f"={len(ends)}q", *ends)


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        (("str", 3, 0, b"\x07", offsets(0, 5, 3, 5), b"abcde"), "offsets that decrease"),  # Polars crashed on it
        (("str", 1, 0, b"\x01", offsets(0, 100_000), b"ab"), "offsets that do not span the data"),
        (("str", 1, 0, b"\x01", offsets(1, 2), b"ab"), "offsets that do not span the data"),
        (("str", 1, 0, b"\x01", offsets(0, 1), b"\xff"), "text that is not UTF-8"),
        (("str", 2, 0, b"\x03", offsets(0, 1, 2), b"\xc3\xa9"), "text that is not UTF-8"),  # é cut in two
        (("i64", 3, 0, b"\x01", None, bytes(24)), "a null count that is not the validity's"),
        (("bool", 1, 0, b"\x01", None, b"\x02"), "a bool that is neither 0 nor 1"),
        (("i64", 1, 0, b"\x01", b"", bytes(8)), "a i64 column has no offsets, got bytes"),
        (("i64", 2**63 - 1, 0, b"", None, b""), "length 9223372036854775807 and nulls 0"),  # (length + 7) overflowed
        (("i64", 1, 2, b"\x00", None, bytes(8)), "length 1 and nulls 2"),
        (("bool", 9, 0, b"\xff", None, bytes(9)), "buffers that do not fit the length"),
    ],
)
def test_a_column_refuses_a_state_append_could_not_have_made(state: tuple[Any, ...], reason: str) -> None:
    # A state comes from another process (pickled); Polars trusts what the column hands it.
    with pytest.raises(ValueError, match=f"^column_from_state: {re.escape(reason)}"):
        column_from_state(*state)


def test_a_column_from_a_state_appends_its_nulls_as_nulls() -> None:
    # Validity bits past the last row (set here) are cleared, or the next row would read as set.
    made = column_from_state("i64", 1, 0, b"\xff", None, struct.pack("=q", 4))
    made.append(None)
    made.append(5)
    assert series(made, "c", pl.Int64()).to_list() == [4, None, 5]


def test_the_column_kinds_are_the_event_columns_types() -> None:
    kept = {*decode.SUMMARY_COLUMNS, *decode.IDENTITY_COLUMNS} - {S.TIMESTAMP}
    assert set(COLUMN_KINDS) == kept
    for name, kind in COLUMN_KINDS.items():
        assert S.EVENT_SCALARS[name] == DTYPES[kind], name
    blocks = decode.measured_blocks_schema()
    tokens = list(blocks)[4]
    assert [DTYPES[kind] for kind in decode.BLOCK_COLUMN_KINDS] == [
        blocks[S.ROW],
        pl.String(),  # the block kind: an Enum of it, cast as the frame is built
        blocks[S.NAME],
        blocks[S.IS_ERROR],
        blocks[tokens],
    ]


def transcripts() -> list[Any]:
    folders = [ROOT / "data-samples", ROOT / "tests"]
    return discover([folder for folder in folders if folder.exists()])


def test_a_decode_in_typed_columns_equals_one_in_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    files = transcripts()
    assert len(files) > 20
    for profile in (SESSIONS, TURNS):
        assert profile.columnar
        typed = decode_files(files, profile)
        walked = walk_files(files, profile)
        assert type(walked.columns[S.LINE]) is Column and type(walked.blocks.tokens) is Column
        with monkeypatch.context() as patch:
            patch.setattr(decode, "COLUMN", None)
            assert not profile.columnar
            listed = decode_files(files, profile)
        for got, want in zip(typed, listed, strict=True):
            assert_frame_equal(got, want)


def test_a_walk_in_typed_columns_crosses_to_another_process(tmp_path: Path) -> None:
    # A worker hands its walk back pickled (the columns as their state in one marshal blob).
    files = transcripts()
    walked = walk_files(files, TURNS)
    again = pickle.loads(pickle.dumps(walked))
    assert type(again.columns[S.MODEL]) is Column
    for got, want in zip(frames_of(again), frames_of(walk_files(files, TURNS)), strict=True):
        assert_frame_equal(got, want)
