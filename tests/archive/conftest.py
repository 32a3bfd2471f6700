"""Archive test helpers: a small corpus of both formats in a temporary folder, and its frames."""

from __future__ import annotations

import importlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))  # the corpus generator imports its siblings by name
corpus = importlib.import_module("corpus")

SAMPLES = ROOT / "data-samples"


@dataclass(frozen=True)
class Corpus:
    """Sources of both formats (samples plus generated sessions with subagents and torn lines)."""

    root: Path
    claude: Path
    chainless: Path
    generated: Path

    @property
    def sources(self) -> list[str]:
        return [str(self.claude), str(self.chainless), str(self.generated)]


def make_corpus(root: Path, *, size_mb: float = 3, sessions: int = 10) -> Corpus:
    claude = root / "claude"
    chainless = root / "chainless"
    shutil.copytree(SAMPLES / "claude" / "projects", claude)
    shutil.copytree(SAMPLES / "chainless", chainless)
    corpus.generate(root / "gen", size_mb=size_mb, sessions=sessions, seed=2)
    return Corpus(root, claude, chainless, root / "gen" / "projects")


@pytest.fixture
def small(tmp_path: Path) -> Corpus:
    return make_corpus(tmp_path / "src")


def tables(source: object, *, machine: bool = False) -> dict[str, pl.DataFrame]:
    """The four frames of a source (sources or an archive), in a canonical order; an archive's
    ``machine`` column left out (compared with the loaders' frames) unless ``machine``."""
    from cc_analytics.frames.api import read_tables

    found = read_tables(source)  # type: ignore[arg-type]
    out = {
        "sessions": found.sessions.sort("format", "session_id"),
        "turns": found.turns.sort("format", "session_id", "source_file", "turn_index"),
        "problems": found.problems.sort("source_file", "line", "reason", nulls_last=True),
        "requests": found.requests.sort("format", "session_id", "agent_id", "time", "message_id", "request_id"),
    }
    if machine:
        return out
    return {name: frame.drop("machine", strict=False) for name, frame in out.items()}


def assert_same(left: dict[str, pl.DataFrame], right: dict[str, pl.DataFrame]) -> None:
    from polars.testing import assert_frame_equal

    for name in ("sessions", "turns", "problems", "requests"):
        assert_frame_equal(left[name], right[name], check_exact=True)


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every file of an archive (but its lock) with inode, size and mtime."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != ".lock":
            stat = path.stat()
            out[str(path.relative_to(root))] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return out


def parquet_files(root: Path) -> dict[str, tuple[int, int, int]]:
    return {name: value for name, value in snapshot(root).items() if name.endswith(".parquet")}
