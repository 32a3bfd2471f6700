"""One definition of a turn: the Polars turns frame and the core's turn lifting agree, file by file.

Runs on every transcript we have: ../shared/data/claude (real and synthetic, when present),
our own golden transcripts under tests/golden/claude, and data-samples/claude.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import cc_analytics.frames as ccf
from cc_analytics.core import lift_turns
from tests.conftest import ROOT, SHARED


def transcripts() -> list[Path]:
    roots = [
        SHARED / "data" / "claude" / "real",
        SHARED / "data" / "claude" / "synthetic",
        ROOT / "tests" / "golden" / "claude",
        ROOT / "data-samples" / "claude",
    ]
    return sorted(
        p
        for root in roots
        if root.exists()
        for p in root.rglob("*.jsonl")
        if p.is_file() and not p.name.endswith(".golden.jsonl")
    )


FILES = transcripts()


def core_partition(path: Path) -> list[tuple[int, str, list[str]]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        turns = lift_turns(path.read_bytes(), source=str(path))
    return [(t.index, t.role, [r.event_uuid for r in t.refs]) for t in turns]


def frame_partition(path: Path) -> list[tuple[int, str, list[str]]]:
    turns = ccf.read_turns(path).filter(pl.col("source_file") == str(path)).sort("turn_index")
    return [(row["turn_index"], row["role"], list(row["event_uuids"])) for row in turns.iter_rows(named=True)]


def test_corpus_is_not_empty() -> None:
    assert len(FILES) >= 17, "our own golden transcripts alone hold 17 files"


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_frames_and_core_cut_the_same_turns(path: Path) -> None:
    assert frame_partition(path) == core_partition(path)


def test_most_files_have_turns() -> None:
    with_turns = [p for p in FILES if len(core_partition(p)) > 1]
    assert len(with_turns) >= 0.6 * len(FILES)  # agent files and strict-error fixtures hold one turn or none
