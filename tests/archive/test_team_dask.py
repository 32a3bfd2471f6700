"""A team's bucket (moto's S3 server) read through Dask: the same frames as the local engine's,
which are the union of the three machines' transcripts, each session and request once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cc_analytics.archive import layout as L
from cc_analytics.archive import open_archives
from cc_analytics.errors import InputError
from cc_analytics.frames.engine import _resource_tracker_running, _stop_resource_tracker
from cc_analytics.report import load
from cc_analytics.views.widgets import SessionExplorer
from tests.archive.conftest import CREDENTIALS, SAMPLES, assert_same, tables
from tests.archive.test_team import _team
from tests.conftest import run_cli

distributed = pytest.importorskip("distributed")
pytest.importorskip("s3fs")
pytest.importorskip("moto.server")


@pytest.fixture(autouse=True)
def no_tracker_left() -> Iterator[None]:
    was_running = _resource_tracker_running()
    yield
    if not was_running:
        _stop_resource_tracker()


@pytest.fixture
def client(endpoint: str) -> Iterator[object]:
    """Two worker processes, started after the moto endpoint is in the environment they inherit."""
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as connected,
    ):
        yield connected


def test_dask_reads_the_bucket_as_the_local_engine_does(s3: object, client: object, tmp_path: Path) -> None:
    team, copy = _team(s3, tmp_path)
    local = open_archives([team])
    with open_archives([team], engine="dask", client=client) as spread:
        assert spread.machines == local.machines == ("anna", "ben", "cara")
        tasks = spread.tasks("requests")
        assert {task.index for task in tasks} == {0, 1, 2}  # the parts of the three archives
        with distributed.get_task_stream(client) as stream:
            for table in L.TABLE_NAMES:  # each table, row for row and in the same order
                assert_frame_equal(spread.scan(table).collect(), local.scan(table).collect(), check_exact=True)
        ran = {task["key"].split("-")[0] if isinstance(task["key"], str) else "" for task in stream.data}
        assert "read_parts" in ran  # read by the workers
        through_readers = tables(spread, machine=True)  # every reader takes the archives as opened
    assert_same(through_readers, tables(team, machine=True))
    # The union of the three machines: the samples' frames, each session and request once.
    assert_same({name: frame.drop("machine") for name, frame in through_readers.items()}, tables(SAMPLES))
    sessions = through_readers["sessions"]
    webshop = sessions.filter(pl.col("project").str.contains("webshop"))
    assert webshop.height == 4 and set(webshop["machine"]) == {"anna"}  # cara's copy counts once, as anna's
    assert not through_readers["turns"]["source_file"].str.starts_with(str(copy)).any()


def test_usage_and_sessions_through_a_scheduler_equal_the_local_read(
    s3: object, client: object, endpoint: str, tmp_path: Path
) -> None:
    team, _copy = _team(s3, tmp_path)
    env = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
    address = client.scheduler.address  # type: ignore[attr-defined]
    for command in (["usage", team, "--by", "machine", "--json"], ["sessions", team, "--json"]):
        here = run_cli(command, env=env)
        there = run_cli([*command, "--engine", "dask", "--scheduler", address], env=env)
        assert here.returncode == 0 and there.returncode == 0, (here.stderr, there.stderr)
        assert orjson.loads(there.stdout) == orjson.loads(here.stdout)
    rows = orjson.loads(run_cli(["usage", team, "--by", "machine", "--json"], env=env).stdout)
    assert {row["machine"] for row in rows} == {"anna", "ben", "cara"}


def test_the_report_and_the_explorer_read_the_bucket_through_dask_as_locally(
    s3: object, client: object, endpoint: str, tmp_path: Path
) -> None:
    team, _copy = _team(s3, tmp_path)
    address = client.scheduler.address  # type: ignore[attr-defined]
    here = load([team])
    with distributed.get_task_stream(client) as stream:
        there = load([team], engine="dask", scheduler=address)
        explorer = SessionExplorer.from_source(team, engine="dask", scheduler=address)
        out = tmp_path / "report"
        env = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
        command = ["report", team, "--engine", "dask", "--scheduler", address, "--out", str(out), "--quiet"]
        result = run_cli(command, env=env)
    assert result.returncode == 0, result.stderr.decode()
    reads = [task for task in stream.data if "read_parts" in str(task["key"])]
    # read by the workers: at least the requests' parts of the three archives, in each of the three reads
    assert len(reads) >= 3 * len(open_archives([team]).tasks("requests")) > 0
    for name in ("sessions", "turns", "problems", "requests"):
        assert_frame_equal(getattr(there, name), getattr(here, name), check_exact=True)
    assert set(there.sessions["machine"]) == {"anna", "ben", "cara"}
    assert_frame_equal(explorer.filtered(), SessionExplorer.from_source(team).filtered(), check_exact=True)
    for name in ("sessions", "turns", "requests"):  # the command's Parquet files: the same frames
        written = pl.read_parquet(out / f"{name}.parquet")
        assert_frame_equal(written, pl.read_parquet(_written(here, tmp_path / "local") / f"{name}.parquet"))
    assert "Per machine" in (out / "report.html").read_text()


def _written(data: object, out: Path) -> Path:
    from cc_analytics.report import write_report

    write_report(data, out)  # type: ignore[arg-type]
    return out


def test_the_dask_engine_reads_archives_only(tmp_path: Path) -> None:
    result = run_cli(["usage", str(SAMPLES), "--engine", "dask"])
    assert result.returncode == 2
    assert "--engine dask reads archives" in result.stderr.decode() and "Traceback" not in result.stderr.decode()
    result = run_cli(["sessions", str(SAMPLES), "--scheduler", "tcp://127.0.0.1:1"])
    assert result.returncode == 2 and "--scheduler only applies to --engine dask" in result.stderr.decode()
    for sources in ([str(SAMPLES)], ["--samples"]):
        result = run_cli(["report", *sources, "--engine", "dask", "--out", str(tmp_path / "report")])
        assert result.returncode == 2, result.stderr.decode()
        assert "--engine dask reads archives" in result.stderr.decode() and "Traceback" not in result.stderr.decode()
    result = run_cli(["report", "--samples", "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "report")])
    assert result.returncode == 2 and "--scheduler only applies to --engine dask" in result.stderr.decode()
    assert not (tmp_path / "report").exists()
    with pytest.raises(InputError, match="reads archives"):
        SessionExplorer.from_source(str(SAMPLES), engine="dask")
