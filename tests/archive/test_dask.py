"""The Dask engine (a LocalCluster of 2 worker processes) archives exactly what the local engine does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cc_analytics.archive import update
from cc_analytics.archive.read import open_archive
from cc_analytics.frames.engine import _resource_tracker_running, _stop_resource_tracker
from tests.archive.conftest import Corpus, assert_same, tables
from tests.conftest import run_cli

distributed = pytest.importorskip("distributed")


@pytest.fixture(autouse=True)
def no_tracker_left() -> Iterator[None]:
    """A cluster's spawned processes start multiprocessing's resource tracker: stop it after,
    as the engine does (other tests check that none lingers)."""
    was_running = _resource_tracker_running()
    yield
    if not was_running:
        _stop_resource_tracker()


def test_dask_engine_equals_the_local_engine(small: Corpus, tmp_path: Path) -> None:
    local = update(small.sources, tmp_path / "local")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert len(client.scheduler_info()["workers"]) == 2
        remote = update(small.sources, tmp_path / "dask", engine="dask", client=client)
        assert_same(tables(tmp_path / "dask"), tables(tmp_path / "local"))
        # Incremental runs too: a grown file, through the cluster.
        grown = sorted(small.generated.glob("*/*.jsonl"))[0]
        grown.write_bytes(grown.read_bytes() + grown.read_bytes().splitlines(keepends=True)[0])
        again = update(small.sources, tmp_path / "dask", engine="dask", client=client)
    assert (remote.new, remote.sessions) == (local.new, local.sessions)
    assert (again.appended, again.sessions) == (1, 1)
    update(small.sources, tmp_path / "local")
    assert_same(tables(tmp_path / "dask"), tables(tmp_path / "local"))
    files = {k: v for k, v in open_archive(tmp_path / "dask").manifest.files.items()}
    assert files == open_archive(tmp_path / "local").manifest.files


def test_dask_engine_starts_its_own_local_cluster(small: Corpus, tmp_path: Path) -> None:
    summary = update([str(small.chainless)], tmp_path / "archive", engine="dask", workers=2)
    assert summary.new == summary.listed > 0
    assert_same(tables(tmp_path / "archive"), tables([str(small.chainless)]))


def test_a_scheduler_that_cannot_be_reached_is_named(small: Corpus, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    env = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
    for address, why in ((closed, "Timed out"), ("no-port-here", "missing port number")):
        to = tmp_path / f"archive-{why.split()[0]}"
        result = run_cli(
            ["archive", *small.sources, "--to", str(to), "--engine", "dask", "--scheduler", address], env=env
        )
        message = result.stderr.decode()
        assert result.returncode == 1, message
        assert f"cannot connect to the Dask scheduler at {address!r}" in message and why in message
        assert "Traceback" not in message and not list(to.glob("*/**/*.parquet"))
