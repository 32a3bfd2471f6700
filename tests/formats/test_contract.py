"""The format contract, checked the same way for every registered format (``frames.plugin``).

One suite parametrised over ``frames.registry.formats()``, as a library runs one suite over
every backend: a new format passes it by adding its package, its samples (``data-samples/``,
made by our generators) and one registry line. Each test reads the format's sample files and
checks one promise of the interface: the verbs and their signatures, the shared schemas, the
problems frame and hostile lines, a folder mixing every format read as one frame, the archive
round trip, the Dask engine equal to the local one, and a clean Ctrl-C.
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cc_analytics.frames import api
from cc_analytics.frames import schema as S
from cc_analytics.frames.engine import BATCH_THREAD
from cc_analytics.frames.plugin import BATCH_VERBS, VERBS, FormatPlugin
from cc_analytics.frames.registry import fallback, formats
from cc_analytics.frames.sources import TranscriptFile, plan
from tests.conftest import ROOT, SCRIPT, run_cli

SAMPLES = ROOT / "data-samples"
PLUGINS = formats()
NAMES = [plugin.name for plugin in PLUGINS]
SHARED_TABLES = {
    "sessions": S.SESSIONS_SCHEMA,
    "turns": S.TURNS_SCHEMA,
    "requests": S.REQUESTS_SCHEMA,
    "problems": S.PROBLEMS_SCHEMA,
}
DEEP = 30_000  # beyond the JSON line policy's depth (cc_analytics.jsonline: 25,000) and any recursion limit


@pytest.fixture(scope="module")
def samples() -> dict[str, list[TranscriptFile]]:
    return plan(SAMPLES)


def files_of(samples: dict[str, list[TranscriptFile]], plugin: FormatPlugin) -> list[TranscriptFile]:
    files = samples.get(plugin.name, [])
    assert files, f"data-samples/ holds no {plugin.label} session: every format ships samples made by our generators"
    return files


def copy_files(files: list[TranscriptFile], to: Path) -> Path:
    """The files under ``to`` with their paths relative to data-samples/ (layouts kept)."""
    for file in files:
        target = to / file.path.relative_to(SAMPLES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file.path, target)
    return to


def ordered(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    keys = {
        "sessions": ["format", "session_id"],
        "turns": ["format", "session_id", "source_file", "turn_index"],
        "requests": ["format", "session_id", "agent_id", "time", "message_id", "request_id"],
        "problems": ["source_file", "line", "reason"],
    }[table]
    return frame.sort(keys, nulls_last=True, maintain_order=True)


# -- the interface ----------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_the_verbs_module_has_every_verb_with_the_front_signature(plugin: FormatPlugin) -> None:
    module = plugin.module()
    for verb in VERBS:
        front = inspect.signature(getattr(api, verb))
        own = inspect.signature(getattr(module, verb))
        expected = [p for name, p in front.parameters.items() if name not in ("format", "cache")]
        assert [(p.name, p.kind) for p in own.parameters.values()] == [(p.name, p.kind) for p in expected], verb
    for verb in BATCH_VERBS:
        assert callable(getattr(module, verb)), verb
    assert isinstance(plugin.label, str) and plugin.label and plugin.store_hint
    assert all(isinstance(path, Path) for path in plugin.default_stores())
    __import__(plugin.worker_module)


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_the_batch_function_crosses_to_a_worker_process(plugin: FormatPlugin) -> None:
    # The table cache and the archive hand tables_batch to worker processes (pickled): a function
    # made inside the verbs module's factory would fail there, and only on corpora large enough
    # to start workers.
    work = partial(plugin.module().tables_batch, turns=False)
    again = pickle.loads(pickle.dumps(work))
    assert again.func.__qualname__ == work.func.__qualname__ and "<locals>" not in work.func.__qualname__
    requests = plugin.module().requests_batch  # what the cache runs for usage (lean_requests)
    named = requests.func if isinstance(requests, partial) else requests
    assert "<locals>" not in named.__qualname__ and pickle.loads(pickle.dumps(requests))


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_the_requests_batch_gives_what_iter_requests_gives(plugin: FormatPlugin, samples: dict) -> None:
    files = plugin.resolve([f.path for f in files_of(samples, plugin)], planned=True)
    requests, problems = plugin.module().requests_batch(files)
    batches = list(plugin.module().iter_requests(files))
    assert requests.equals(pl.concat([found for found, _ in batches]))
    assert problems.equals(pl.concat([found for _, found in batches]))
    assert requests.height


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_the_plugin_module_imports_no_polars(plugin: FormatPlugin) -> None:
    module = type(plugin).__module__
    code = f"import sys, {module}; print('polars' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_its_sample_files_are_recognised_as_its_own(plugin: FormatPlugin, samples: dict) -> None:
    files = files_of(samples, plugin)
    assert all(plugin.classify(f.path, size=f.size, head=f.path.read_bytes()[: 1 << 16]).session_id for f in files)
    assert {f.session_id for f in plugin.resolve([f.path for f in files], planned=True)} == {
        f.session_id for f in files
    }


# -- the shared schemas -----------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_every_shared_frame_is_in_its_schema_and_names_its_format(plugin: FormatPlugin, samples: dict) -> None:
    files = files_of(samples, plugin)
    module = plugin.module()
    for table, schema in SHARED_TABLES.items():
        frame = getattr(module, f"read_{table}")(files)
        assert frame.schema == schema, table
        if "format" in schema:
            assert set(frame["format"]) <= {plugin.name}, table
    sessions = module.read_sessions(files)
    assert sessions.height == len({f.session_id for f in files if not f.is_subagent} or {f.session_id for f in files})
    batches = list(module.iter_tables(files))
    assert batches
    for batch in batches:
        assert (batch.sessions.schema, batch.turns.schema) == (S.SESSIONS_SCHEMA, S.TURNS_SCHEMA)
        assert (batch.problems.schema, batch.requests.schema) == (S.PROBLEMS_SCHEMA, S.REQUESTS_SCHEMA)
    requests = pl.concat([requests for requests, _ in module.iter_requests(files)])
    assert_frame_equal(ordered(requests, "requests"), ordered(module.read_requests(files), "requests"))


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_tables_batch_from_bytes_equals_the_read(plugin: FormatPlugin, samples: dict) -> None:
    files = files_of(samples, plugin)
    module = plugin.module()
    batch = module.tables_batch(list(files), turns=True, contents=[f.path.read_bytes() for f in files])
    assert_frame_equal(ordered(batch.sessions, "sessions"), ordered(module.read_sessions(files), "sessions"))
    assert_frame_equal(ordered(batch.requests, "requests"), ordered(module.read_requests(files), "requests"))


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_broken_and_deeply_nested_lines_are_problems_and_the_rest_is_read(
    plugin: FormatPlugin, samples: dict, tmp_path: Path
) -> None:
    files = files_of(samples, plugin)
    folder = copy_files(files, tmp_path / "copy")
    before = api.read_sessions(folder)
    victim = next((f for f in sorted(folder.rglob("*.jsonl")) if f.stat().st_size), None)
    if victim is None:
        pytest.skip(f"the {plugin.label} samples hold no JSONL file (its own tests break its records)")
    lines = victim.read_bytes().splitlines(keepends=True)
    nested = b"[" * DEEP + b"]" * DEEP + b"\n"
    deep_object = b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n"
    victim.write_bytes(b"".join([lines[0], b"{not json\n", nested, deep_object, *lines[1:]]))
    problems = api.read_problems(folder)
    shown = str(victim)
    mine = problems.filter(pl.col("source_file") == shown)
    assert {2, 3, 4} <= set(mine["line"].drop_nulls()), mine
    after = api.read_sessions(folder)
    assert after.select("format", "session_id").equals(before.select("format", "session_id"))


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_a_file_whose_first_line_nests_thousands_of_arrays_is_one_problem(
    plugin: FormatPlugin, samples: dict, tmp_path: Path
) -> None:
    folder = copy_files(files_of(samples, plugin), tmp_path / "copy")
    before = api.read_sessions(folder)
    for name, opening, closing in (("arrays", b"[", b"]"), ("objects", b'{"a":', b"}")):
        head = opening * DEEP + b"1" * (opening == b'{"a":') + closing * DEEP
        (folder / f"deep-{name}.jsonl").write_bytes(head + b"\n")
    after = api.read_sessions(folder)
    assert after.equals(before.sort(after.columns[:2]).select(after.columns)) or after.sort("session_id").select(
        "format", "session_id"
    ).equals(before.sort("session_id").select("format", "session_id"))
    problems = api.read_problems(folder)
    for name in ("arrays", "objects"):
        assert problems.filter(pl.col("source_file").str.ends_with(f"deep-{name}.jsonl")).height >= 1
    done = run_cli(["sessions", str(folder), "--json"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr


# -- many formats at once ---------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_a_folder_mixing_every_format_reads_as_one_frame(plugin: FormatPlugin, samples: dict, tmp_path: Path) -> None:
    everything = copy_files([f for files in samples.values() for f in files], tmp_path / "all")
    alone = copy_files(files_of(samples, plugin), tmp_path / "alone")
    mixed = api.read_sessions(everything)
    assert set(mixed["format"]) == set(NAMES)
    own = mixed.filter(pl.col("format") == plugin.name).drop("project_dir")
    assert_frame_equal(own, api.read_sessions(alone).drop("project_dir"))
    requests = api.read_requests(everything).filter(pl.col("format") == plugin.name)
    assert_frame_equal(ordered(requests, "requests"), ordered(api.read_requests(alone), "requests"))


# -- the archive and Dask ---------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_the_archive_round_trip_gives_the_same_tables(plugin: FormatPlugin, samples: dict, tmp_path: Path) -> None:
    from cc_analytics.archive import update
    from cc_analytics.archive.read import open_archive

    folder = copy_files(files_of(samples, plugin), tmp_path / "src")
    summary = update([str(folder)], tmp_path / "archive")
    assert summary.new == summary.listed > 0
    archive = open_archive(tmp_path / "archive")
    direct = api.read_tables(folder)
    for table in ("sessions", "requests", "turns"):
        kept = archive.scan(table, format=plugin.name).collect()
        assert kept["machine"].unique().to_list() == [archive.machine]  # the archive's, in every row
        kept = kept.drop("machine")
        assert_frame_equal(ordered(kept, table), ordered(getattr(direct, table), table), check_exact=True)
    raw = [r.raw for r in archive.manifest.files.values()]
    assert raw and all(path.startswith(f"raw/{plugin.name}/") for path in raw)


@pytest.mark.slow
@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_the_dask_engine_archives_what_the_local_engine_does(
    plugin: FormatPlugin, samples: dict, tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    from cc_analytics.archive import update
    from cc_analytics.frames.engine import _resource_tracker_running, _stop_resource_tracker
    from tests.archive.conftest import assert_same, tables

    folder = copy_files(files_of(samples, plugin), tmp_path / "src")
    was_running = _resource_tracker_running()
    try:
        update([str(folder)], tmp_path / "dask", engine="dask", workers=2)
    finally:
        if not was_running:
            _stop_resource_tracker()
    update([str(folder)], tmp_path / "local")
    assert_same(tables(tmp_path / "dask"), tables(tmp_path / "local"))
    assert_same(tables(tmp_path / "local"), tables(folder))


# -- interrupts -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc")
@pytest.mark.parametrize("plugin", PLUGINS, ids=NAMES)
def test_ctrl_c_while_reading_ends_cleanly_and_writes_nothing(
    plugin: FormatPlugin, samples: dict, tmp_path: Path
) -> None:
    files = files_of(samples, plugin)
    folder = tmp_path / "many"
    # About 40 MB of this format (200 MB of one that reads in threads: they start in a moment)
    copies = max(1, ((200 if plugin.batching(0, turns=False)[1] else 40) << 20) // max(1, sum(f.size for f in files)))
    for index in range(copies):
        for path in dict.fromkeys(f.path for f in files):  # several sessions may share a file (a database)
            relative = path.relative_to(SAMPLES)
            target = folder / f"c{index}" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
    from tests.test_interrupts import assert_prompt_clean_exit, leftovers, supervise

    out = tmp_path / "sessions.parquet"
    command = [str(SCRIPT), "sessions", str(folder), "--parquet", str(out), "--quiet", "--workers", "2"]
    result = supervise(
        command, sig="SIGINT", when=f"thread:{BATCH_THREAD}" if plugin.batching(0, turns=False)[1] else "workers"
    )
    assert_prompt_clean_exit(result, "SIGINT")
    assert not out.exists() and leftovers(tmp_path) == []


# -- the registry -----------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", [p for p in PLUGINS if p.name != fallback()], ids=lambda p: p.name)
def test_removing_a_registry_line_removes_the_format_and_nothing_else(plugin: FormatPlugin) -> None:
    everyone = run_cli(["sessions", str(SAMPLES), "--json", "--quiet"])
    others = ",".join(name for name in NAMES if name != plugin.name)
    without = run_cli(["sessions", str(SAMPLES), "--json", "--quiet"], env={"CC_ANALYTICS_FORMATS": others})
    assert everyone.returncode == 0 and without.returncode == 0, without.stderr
    rows, rows_without = json.loads(everyone.stdout), json.loads(without.stdout)
    assert plugin.name in {row["format"] for row in rows}
    assert plugin.name not in {row["format"] for row in rows_without}
    assert [row for row in rows if row["format"] != plugin.name] == rows_without
