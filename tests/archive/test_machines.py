"""Archives name their machine: ``archive --machine``, the ``machine`` column, and archives written
before machines were named (``tests/fixtures/archive/v1``, made by that version) read and upgraded."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import polars as pl
import pytest

from cc_analytics.archive import update
from cc_analytics.archive.layout import default_machine
from cc_analytics.errors import InputError
from tests.archive.conftest import SAMPLES, assert_same, tables
from tests.conftest import ROOT, run_cli

V1 = ROOT / "tests" / "fixtures" / "archive" / "v1"
V1_SOURCE = "/tmp/cc-analytics-archive-v1/projects"  # where make_v1.py put the project it archived
PROJECT = "-home-dev-webshop"


def _as_v1(frames: dict[str, pl.DataFrame], folder: Path) -> dict[str, pl.DataFrame]:
    """Source paths spelled as the fixture's manifest has them."""
    out = {}
    for name, frame in frames.items():
        if "source_file" in frame.columns:
            frame = frame.with_columns(pl.col("source_file").str.replace(str(folder), V1_SOURCE, literal=True))
        out[name] = frame
    return out


def _parts(root: Path) -> list[Path]:
    return sorted(root.glob("*/format=*/month=*/*.parquet"))


def test_an_archive_of_the_previous_version_reads_as_before_and_is_upgraded(tmp_path: Path) -> None:
    manifest = orjson.loads((V1 / "manifest.json").read_bytes())
    assert manifest["version"] == 1 and "machine" not in manifest
    assert all("machine" not in pl.read_parquet_schema(part) for part in _parts(V1))
    # It reads as the project it holds does (its machine unknown: null).
    expected = tables(SAMPLES / "claude" / "projects" / PROJECT)
    old = tables(V1, machine=True)
    assert all(frame["machine"].null_count() == frame.height for frame in old.values())
    assert_same({k: v.drop("machine") for k, v in old.items()}, _as_v1(expected, SAMPLES / "claude" / "projects"))

    # The next run names the machine and rewrites every part with the column.
    copy = tmp_path / "v1"
    shutil.copytree(V1, copy)
    result = run_cli(["archive", str(SAMPLES / "codex"), "--to", str(copy), "--machine", "old-laptop"])
    assert result.returncode == 0, result.stderr
    assert "3 parts of an older archive upgraded (machine 'old-laptop')" in result.stderr.decode()
    manifest = orjson.loads((copy / "manifest.json").read_bytes())
    assert (manifest["version"], manifest["machine"]) == (2, "old-laptop")
    for part in _parts(copy):
        assert pl.read_parquet(part)["machine"].unique().to_list() == ["old-laptop"], part
    upgraded = tables(copy, machine=True)
    claude = {k: v.filter(pl.col("machine") == "old-laptop") for k, v in upgraded.items()}
    for name in ("sessions", "turns", "requests"):  # what it held is all there, now named
        kept = claude[name].filter(pl.col("format") == "claude-code").drop("machine")
        assert kept.equals(old[name].drop("machine")), name
    assert set(upgraded["sessions"]["format"]) == {"claude-code", "codex"}
    # ... and only once: a second run has nothing to do.
    again = update(SAMPLES / "codex", copy)
    assert (again.upgraded, again.parts_written, again.machine) == (0, 0, "old-laptop")


def test_the_machine_is_the_host_name_kept_in_the_manifest_and_checked(tmp_path: Path) -> None:
    to = tmp_path / "a"
    first = update(SAMPLES / "codex", to)
    assert first.machine == default_machine()
    assert orjson.loads((to / "manifest.json").read_bytes())["machine"] == default_machine()
    with pytest.raises(InputError, match=f"holds the history of machine '{default_machine()}', not 'ci-7'"):
        update(SAMPLES / "codex", to, machine="ci-7")
    named = update(SAMPLES / "codex", tmp_path / "b", machine=" ci-7 ")
    assert named.machine == "ci-7"
    frames = tables(tmp_path / "b", machine=True)
    assert all(frame["machine"].unique().to_list() == ["ci-7"] for frame in frames.values() if frame.height)
    for bad in ("", "a/b", "x" * 101, "tab\there"):
        got = run_cli(["archive", str(SAMPLES / "codex"), "--to", str(tmp_path / "c"), "--machine", bad])
        assert got.returncode == 1 and b"a machine name is printable text" in got.stderr, bad
        assert b"Traceback" not in got.stderr and not (tmp_path / "c").exists()


def test_an_archive_of_a_newer_version_is_refused_clearly(tmp_path: Path) -> None:
    to = tmp_path / "a"
    update(SAMPLES / "codex", to)
    manifest = orjson.loads((to / "manifest.json").read_bytes())
    (to / "manifest.json").write_bytes(orjson.dumps({**manifest, "version": 99}))
    for args in (["sessions", str(to)], ["archive", str(SAMPLES / "codex"), "--to", str(to)]):
        got = run_cli(args)
        message = got.stderr.decode()
        assert got.returncode == 1 and "written by a newer cc-analytics (archive version 99" in message, message
        assert "upgrade cc-analytics" in message and "Traceback" not in message


def test_usage_by_machine_needs_archives(tmp_path: Path) -> None:
    got = run_cli(["usage", str(SAMPLES / "codex"), "--by", "machine"])
    assert got.returncode == 1 and b"usage by machine needs requests read from archives" in got.stderr
    assert b"Traceback" not in got.stderr
    update(SAMPLES / "codex", tmp_path / "a", machine="anna")
    one = run_cli(["usage", str(tmp_path / "a"), "--by", "machine", "--json"])
    assert one.returncode == 0, one.stderr
    (row,) = orjson.loads(one.stdout)
    assert row["machine"] == "anna" and row["requests"] == tables(SAMPLES / "codex")["requests"].height


def test_a_shared_archive_with_its_paths_kept_and_without_copies(tmp_path: Path) -> None:
    source = SAMPLES / "claude" / "projects" / PROJECT
    to = tmp_path / "shared"
    update(source, to, share=True, keep_paths=True, machine="anna")
    assert not (to / "raw").exists()
    sessions = tables(to)["sessions"]
    assert set(sessions["project"]) == {"/home/dev/webshop"}  # kept, as asked
    assert tables(to)["turns"]["prompt"].null_count() == tables(to)["turns"].height
    manifest = orjson.loads((to / "manifest.json").read_bytes())
    assert manifest["shared"] and manifest["keep_paths"] and all(f["raw"] == "" for f in manifest["files"])
    with pytest.raises(InputError, match="was written with --keep-paths"):
        update(source, to, share=True)
    session = sessions["session_id"][0]
    got = run_cli(["context", session, "--archive", str(to)])
    assert got.returncode == 1 and b"is a shared one (archive --share): it keeps no copy" in got.stderr
    for args, why in (
        (["--keep-paths"], b"--keep-paths applies to --share"),
        (["--share", "--mask-secrets"], b"a shared archive does not keep"),
    ):
        bad = run_cli(["archive", str(source), "--to", str(tmp_path / "other"), *args])
        assert bad.returncode == 1 and why in bad.stderr and b"Traceback" not in bad.stderr
