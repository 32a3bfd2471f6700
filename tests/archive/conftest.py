"""Archive test helpers: a small corpus of both formats in a temporary folder, and its frames."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from collections.abc import Iterator
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


# ------------------------------------------------------------------ object storage (moto's S3 server)

BUCKET = "transcripts"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="session")
def endpoint() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 (a free port), fsspec's s3 pointed at it: one for the whole
    session (fsspec caches its file systems, with the endpoint they were made with)."""
    import fsspec.config

    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    saved = {key: os.environ.get(key) for key in [*CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL"]}
    os.environ.update(CREDENTIALS, FSSPEC_S3_ENDPOINT_URL=url)
    fsspec.config.conf.setdefault("s3", {})["endpoint_url"] = url  # fsspec read the environment at import
    try:
        yield url
    finally:
        fsspec.config.conf["s3"].pop("endpoint_url", None)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture
def s3(endpoint: str) -> Iterator[object]:
    import fsspec

    fs = fsspec.filesystem("s3", skip_instance_cache=True)
    fs.mkdir(BUCKET)
    yield fs
    fs.rm(BUCKET, recursive=True)
