"""archive.update: a first run equals the loaders; reruns are incremental and equal a fresh archive."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest

from cc_analytics.archive import update
from cc_analytics.archive.manifest import NAME, Manifest
from cc_analytics.archive.read import open_archive
from cc_analytics.errors import InputError
from tests.archive.conftest import Corpus, assert_same, parquet_files, snapshot, tables
from tests.conftest import ROOT, run_cli


def test_first_archive_reads_as_the_loaders(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    summary = update(small.sources, to)
    assert summary.new == summary.listed > 20
    got = tables(to)
    assert got["problems"].height > 0  # torn lines of the generated corpus are archived too
    assert set(got["sessions"]["format"]) == {"claude-code", "chainlesschain"}
    assert_same(got, tables(small.sources))
    # Partitioned by format and month, the partition columns only in the folder names.
    parts = sorted(p.relative_to(to) for p in to.glob("*/format=*/month=*/*.parquet"))
    assert {p.parts[0] for p in parts} == {"sessions", "turns", "problems", "requests"}
    assert "format" not in pl.read_parquet(to / parts[0]).columns


def test_rerun_without_change_touches_nothing(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    before = snapshot(to)
    summary = update(small.sources, to)
    assert not summary.changed and summary.sessions == 0 and summary.bytes_read == 0
    assert summary.unchanged == summary.listed
    assert snapshot(to) == before


def test_touched_file_updates_the_manifest_only(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    parts = parquet_files(to)
    victim = next(small.chainless.glob("*.jsonl"))
    os.utime(victim, ns=(1, 1))
    summary = update(small.sources, to)
    assert (summary.touched, summary.sessions, summary.parts_written) == (1, 0, 0)
    assert parquet_files(to) == parts
    assert open_archive(to).manifest.files[str(victim)].mtime_ns == 1
    assert update(small.sources, to).touched == 0


def _append(path: Path, lines: list[bytes]) -> None:
    with path.open("ab") as handle:
        for line in lines:
            handle.write(line + b"\n")


def _grow(corpus: Corpus) -> list[Path]:
    """Append a few lines to a Claude Code main file, one of its subagent files and a ChainlessChain transcript."""
    subagent = next(corpus.generated.glob("*/*/subagents/*.jsonl"))
    main = subagent.parent.parent.with_suffix(".jsonl")
    last = orjson.loads(main.read_bytes().splitlines()[-2])
    grown = []
    for path in (main, subagent):
        line = {**last, "uuid": f"appended-{path.stem}", "parentUuid": last.get("uuid"), "type": "user"}
        line["message"] = {"role": "user", "content": "one more question"}
        _append(path, [orjson.dumps(line), b'{"torn": '])
        grown.append(path)
    chainless = sorted(corpus.chainless.glob("*.jsonl"))[0]
    message = {"type": "user_message", "timestamp": 1799999999000, "data": {"role": "user", "content": "more"}}
    _append(chainless, [orjson.dumps(message)])
    grown.append(chainless)
    return grown


def test_appended_lines_give_what_a_fresh_archive_gives(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    parts = parquet_files(to)
    grown = _grow(small)
    summary = update(small.sources, to)
    assert (summary.appended, summary.rewritten, summary.new, summary.sessions) == (3, 0, 0, 2)
    assert 0 < summary.parts_removed <= 6
    fresh = tmp_path / "fresh"
    update(small.sources, fresh)
    assert_same(tables(to), tables(fresh))
    assert_same(tables(to), tables(small.sources))
    archive = open_archive(to)
    for path in grown:  # the raw copy grew by one zstd frame and reads as the file now is
        assert archive.raw_bytes(str(path)) == path.read_bytes()
        assert archive.manifest.files[str(path)].generation == 1
    untouched = set(parts) & set(parquet_files(to))
    assert len(untouched) >= len(parts) - summary.parts_removed  # other sessions' parts stay as they were
    assert not list(to.glob("raw/**/*.jsonl.zst")) or all(
        p.exists() for p in to.glob("raw/**/*.zst")
    )  # no dangling names


def test_a_rewritten_file_replaces_its_session(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    victim = sorted(small.generated.glob("*/*.jsonl"))[0]
    lines = victim.read_bytes().splitlines(keepends=True)
    victim.write_bytes(b"".join(lines[: len(lines) // 2]))  # shorter: not an append
    summary = update(small.sources, to)
    assert (summary.rewritten, summary.appended, summary.sessions) == (1, 0, 1)
    fresh = tmp_path / "fresh"
    update(small.sources, fresh)
    assert_same(tables(to), tables(fresh))
    # The replaced raw copy is gone; only the manifest's copies remain.
    archive = open_archive(to)
    named = {f"{to}/{name}" for name in archive.manifest.referenced()}
    assert {str(p) for p in to.glob("raw/**/*.zst")} == {n for n in named if "/raw/" in n}


def test_each_raw_copy_has_its_hash_in_the_manifest(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    victim = sorted(small.generated.glob("*/*.jsonl"))[0]
    _append(victim, [victim.read_bytes().splitlines()[0]])
    assert update(small.sources, to).appended == 1
    records = open_archive(to).manifest.files.values()
    assert {r.generation for r in records} == {0, 1}  # the appended copy is checked too
    for record in records:
        assert hashlib.sha1((to / record.copy).read_bytes()).hexdigest() == record.sha1


def test_same_size_new_bytes_are_rewritten_not_touched(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    victim = sorted(small.generated.glob("*/*.jsonl"))[0]
    data = victim.read_bytes()
    victim.write_bytes(data.replace(b'"user"', b'"USER"', 1))  # same size, other bytes
    summary = update(small.sources, to)
    assert (summary.rewritten, summary.touched, summary.sessions) == (1, 0, 1)
    fresh = tmp_path / "fresh"
    update(small.sources, fresh)
    assert_same(tables(to), tables(fresh))


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_a_grown_file_whose_copy_is_damaged_is_copied_whole(small: Corpus, tmp_path: Path, damage: str) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    victim = sorted(small.generated.glob("*/*.jsonl"))[0]
    copy = to / open_archive(to).manifest.files[str(victim)].copy
    if damage == "missing":
        copy.unlink()
    else:
        copy.write_bytes(copy.read_bytes()[: copy.stat().st_size // 2])
    _append(victim, [victim.read_bytes().splitlines()[0]])
    summary = update(small.sources, to)
    assert (summary.rewritten, summary.appended, summary.sessions) == (1, 0, 1)
    fresh = tmp_path / "fresh"
    update(small.sources, fresh)
    assert_same(tables(to), tables(fresh))
    record = open_archive(to).manifest.files[str(victim)]
    assert open_archive(to).raw_bytes(str(victim)) == victim.read_bytes()
    assert record.generation == 1


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_a_session_whose_gone_file_has_a_damaged_copy_is_held(small: Corpus, tmp_path: Path, damage: str) -> None:
    # The main file is gone and its raw copy damaged; a subagent file of the session grows. The
    # session cannot be decoded whole: it stays as archived, the run says so, and once the main
    # file is back the next run completes it.
    to = tmp_path / "archive"
    update(small.sources, to)
    before = tables(to)
    subagent = sorted(small.generated.glob("*/*/subagents/*.jsonl"))[0]
    main = subagent.parent.parent.with_suffix(".jsonl")
    saved = main.read_bytes()
    copy = to / open_archive(to).manifest.files[str(main)].copy
    main.unlink()
    if damage == "missing":
        copy.unlink()
    else:
        copy.write_bytes(copy.read_bytes()[:100])
    _append(subagent, [subagent.read_bytes().splitlines()[0]])
    parts = parquet_files(to)
    summary = update(small.sources, to)
    assert len(summary.held) == 1 and summary.held[0].startswith(f"{main.stem} (claude-code): the raw copy")
    assert summary.sessions == 0 and parquet_files(to) == parts
    assert_same(tables(to), before)
    record = open_archive(to).manifest.files[str(subagent)]
    assert record.size < subagent.stat().st_size  # not taken: the next run reads it again
    result = run_cli(["archive", *small.sources, "--to", str(to), "--quiet"])
    assert result.returncode == 0, result.stderr
    message = result.stderr.decode()
    assert "warning: 1 session left as archived before" in message and main.stem in message
    assert "Traceback" not in message
    main.write_bytes(saved)
    summary = update(small.sources, to)
    assert (summary.held, summary.sessions) == ((), 1)
    fresh = tmp_path / "fresh"
    update(small.sources, fresh)
    assert_same(tables(to), tables(fresh))


def test_deleted_sources_keep_their_sessions(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    before = tables(to)
    session = sorted(small.generated.glob("*/*/subagents"))[0].parent
    shutil.rmtree(session)
    session.with_suffix(".jsonl").unlink()
    for path in small.chainless.glob("*.jsonl"):
        path.unlink()
    summary = update(small.sources, to)
    assert summary.kept > 0 and not summary.changed
    assert_same(tables(to), before)
    # A new subagent file for the deleted session: decoded with the main file's raw copy.
    session.joinpath("subagents").mkdir(parents=True)
    extra = session / "subagents" / "agent-late.jsonl"
    shutil.copy(sorted(small.generated.glob("*/*/subagents/*.jsonl"))[0], extra)
    summary = update(small.sources, to)
    assert (summary.new, summary.sessions) == (1, 1)
    got = tables(to)
    assert_same({k: v.filter(pl.col("format") == "chainlesschain") if "format" in v.columns else v.head(0)
                 for k, v in got.items()},
                {k: v.filter(pl.col("format") == "chainlesschain") if "format" in v.columns else v.head(0)
                 for k, v in before.items()})  # fmt: skip
    sessions = got["sessions"].filter(pl.col("session_id") == session.name)
    assert (
        sessions["subagent_files"].item()
        == before["sessions"].filter(pl.col("session_id") == session.name)["subagent_files"].item() + 1
    )


def test_an_archive_as_a_source_of_every_frame(small: Corpus, tmp_path: Path) -> None:
    import cc_analytics.frames as frames

    to = tmp_path / "archive"
    update(small.sources, to, machine="devbox-1")
    sessions = frames.read_sessions(to)
    assert sessions["machine"].unique().to_list() == ["devbox-1"]  # every frame read from an archive names it
    assert sessions.drop("machine").equals(frames.read_sessions(small.sources))
    assert frames.read_turns(str(to)).drop("machine").equals(frames.read_turns(small.sources))
    claude_only = frames.read_sessions(to, format="claude-code")
    assert set(claude_only["format"]) == {"claude-code"}
    assert frames.scan_sessions([to]).select(pl.len()).collect().item() == frames.read_sessions(to).height
    with pytest.raises(InputError, match="events"):
        frames.read_events(to)
    order = ["format", "session_id", "agent_id", "time", "message_id", "request_id"]
    archived_requests = frames.read_requests(to)
    assert archived_requests.height > 0 and archived_requests["cost_usd"].sum() > 0
    assert archived_requests.drop("machine").sort(order).equals(frames.read_requests(small.sources).sort(order))
    assert frames.read_usage(to, by="day", timezone="UTC").equals(
        frames.read_usage(small.sources, by="day", timezone="UTC")
    )


def test_usage_cli_reads_an_archive_after_the_sources_are_gone(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    expected = run_cli(["usage", *small.sources, "--by", "month", "--timezone", "UTC", "--json"])
    assert expected.returncode == 0, expected.stderr
    for source in small.sources:
        shutil.rmtree(source)
    got = run_cli(["usage", str(to), "--by", "month", "--timezone", "UTC", "--json"])
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout and b'"cost_usd"' in got.stdout


def test_a_folder_that_is_not_an_archive_is_refused(tmp_path: Path, small: Corpus) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not an archive and not empty"):
        update(small.sources, tmp_path / "busy")


def test_what_is_at_to_is_checked_before_anything_is_written(tmp_path: Path, small: Corpus) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    for to in (a_file, a_file / "below"):
        with pytest.raises(InputError, match="is not a folder"):
            update(small.sources, to)
    assert a_file.read_text() == "mine"
    to = tmp_path / "archive"
    update(small.sources, to)
    manifest = orjson.loads((to / NAME).read_bytes())
    del manifest["files"][0]["size"]
    (to / NAME).write_bytes(orjson.dumps(manifest))
    kept = snapshot(to)
    for attempt in (lambda: update(small.sources, to), lambda: open_archive(to)):
        with pytest.raises(InputError, match="not a readable archive manifest .*a record is damaged"):
            attempt()
    assert snapshot(to) == kept
    result = run_cli(["sessions", str(to)])
    assert result.returncode == 1 and b"restore its manifest from a backup" in result.stderr
    assert b"Traceback" not in result.stderr


def test_a_full_disk_stops_the_run_with_a_message_and_the_next_run_completes(
    small: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from cc_analytics.archive.storage import LocalStorage

    to = tmp_path / "archive"
    update(small.sources, to)
    before = tables(to)
    _grow(small)

    def full(self: LocalStorage, files: dict[str, bytes]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", next(iter(files)))

    with monkeypatch.context() as patch:
        patch.setattr(LocalStorage, "write_many", full)
        with pytest.raises(InputError, match=r"stopped: the file system failed: \[Errno 28\] No space left") as caught:
            update(small.sources, to)
    assert "the next run completes it" in str(caught.value)
    assert_same(tables(to), before)  # as before the run
    update(small.sources, to)
    fresh = tmp_path / "fresh"
    update(small.sources, fresh)
    assert_same(tables(to), tables(fresh))


def test_concurrent_run_is_refused(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from cc_analytics.archive.storage import LocalStorage\n"
         f"with LocalStorage().lock({str(to)!r}):\n    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        result = run_cli(["archive", *small.sources, "--to", str(to)])
        assert result.returncode == 1
        message = result.stderr.decode()
        assert "another archive run is writing to" in message and f"pid {holder.pid}" in message
    finally:
        holder.communicate(b"")
    assert run_cli(["archive", *small.sources, "--to", str(to)]).returncode == 0


def test_cli_archive(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    first = run_cli(["archive", *small.sources, "--to", str(to)])
    assert first.returncode == 0, first.stderr
    assert first.stdout.decode().strip() == str(to)
    assert "new" in first.stderr.decode() and (to / NAME).is_file()
    again = run_cli(["archive", *small.sources, "--to", f"file://{to}"])
    assert "nothing to write" in again.stderr.decode()
    usage = run_cli(["archive", "--to", str(to), "--scheduler", "tcp://x:1"])
    assert usage.returncode == 2


def test_duckdb_reads_the_datasets_without_our_code(small: Corpus, tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    to = tmp_path / "archive"
    update(small.sources, to)
    sessions = tables(small.sources)["sessions"]
    query = f"""
        select * exclude (month) from read_parquet('{to}/sessions/**/*.parquet', hive_partitioning = true)
        order by format, session_id
    """
    got = pl.from_arrow(duckdb.sql(query).arrow())
    assert isinstance(got, pl.DataFrame)
    got = got.select(sessions.columns).cast(sessions.schema)  # type: ignore[arg-type]
    assert got.equals(sessions)
    totals = duckdb.sql(
        f"select format, sum(output_tokens), max(peak_occupancy), count(*) from "
        f"read_parquet('{to}/sessions/**/*.parquet', hive_partitioning = true) group by format order by format"
    ).fetchall()
    expected = (
        sessions.group_by("format")
        .agg(pl.col("output_tokens").sum(), pl.col("peak_occupancy").max(), pl.len())
        .sort("format")
        .rows()
    )
    assert [tuple(row) for row in totals] == expected
    turns = duckdb.sql(f"select count(*) from read_parquet('{to}/turns/**/*.parquet', hive_partitioning = true)")
    assert turns.fetchall() == [(tables(to)["turns"].height,)]


def test_manifest_round_trip(small: Corpus, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    update(small.sources, to)
    data = (to / NAME).read_bytes()
    assert Manifest.from_json(data).to_json() == data


def test_a_local_archive_needs_no_optional_dependency(tmp_path: Path) -> None:
    """The base install archives local folders: no fsspec, s3fs or dask is imported."""
    probe = (
        "import sys, json\nfrom cc_analytics.archive import update\nfrom cc_analytics.report import SAMPLES_DIR\n"
        f"update(SAMPLES_DIR, {str(tmp_path / 'archive')!r})\n"
        "import cc_analytics.frames as f\nf.read_sessions(" + repr(str(tmp_path / "archive")) + ")\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = {name.split(".")[0] for name in orjson.loads(out.stdout.splitlines()[-1])}
    assert not loaded & {"fsspec", "s3fs", "dask", "distributed", "cc_analytics.views", "altair"}


def test_a_refused_folder_is_left_as_it_was(tmp_path: Path, small: Corpus) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(InputError):
        update(small.sources, busy)
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]


def test_a_fifo_among_the_sources_is_never_read(small: Corpus, tmp_path: Path) -> None:
    fifo = small.chainless / "pipe.jsonl"
    os.mkfifo(fifo)
    summary = update([*small.sources, str(fifo)], tmp_path / "archive")  # would block if it were opened
    assert str(fifo) not in open_archive(tmp_path / "archive").manifest.files
    assert summary.new == summary.listed


def test_new_files_are_classified_a_group_at_a_time(
    small: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first run of 40,000 files once held every file's first 64 kB at once (2.2 GB for 10 GB).
    from cc_analytics.archive import plan as P
    from cc_analytics.archive.storage import LocalStorage

    whole = P.make_plan(Manifest({}, {}), small.sources)
    asked: list[int] = []
    heads = LocalStorage.heads

    def counting(self: LocalStorage, paths: list[str], size: int = 1 << 16) -> list[bytes]:
        asked.append(len(paths))
        return heads(self, paths, size)

    monkeypatch.setattr(P, "HEADS_AT_ONCE", 3)
    monkeypatch.setattr(LocalStorage, "heads", counting)
    grouped = P.make_plan(Manifest({}, {}), small.sources)
    assert max(asked) == 3 and sum(asked) == whole.new > 3
    assert grouped.items == whole.items


def test_empty_locations_are_refused(small: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Path("") is the current folder: an unset shell variable must not archive (or read) it.
    monkeypatch.chdir(tmp_path)
    for sources, to, message in (
        ([*small.sources], "", "an empty archive location"),
        ([""], "archive", "an empty source"),
    ):
        with pytest.raises(InputError, match=message):
            update(sources, to)
    assert sorted(p.name for p in tmp_path.iterdir()) == [small.root.name]  # nothing written here
    result = run_cli(["sessions", ""])
    assert result.returncode == 1 and b"an empty source" in result.stderr


def test_links_that_cannot_be_followed_are_named_not_archived(small: Corpus, tmp_path: Path) -> None:
    # A broken link and a link loop among the sources: the loaders report them as problems; the
    # archive cannot keep them (nothing to copy), says so, and archives the rest.
    folder = small.chainless
    (folder / "dangling.jsonl").symlink_to(tmp_path / "absent.jsonl")
    (folder / "loop.jsonl").symlink_to(folder / "loop.jsonl")
    to = tmp_path / "archive"
    summary = update(small.sources, to)
    assert sorted(summary.unreadable) == [
        f"{folder / 'dangling.jsonl'}: broken symbolic link",
        f"{folder / 'loop.jsonl'}: symbolic link loop",
    ]
    assert not any("dangling" in source or "loop" in source for source in open_archive(to).manifest.files)
    result = run_cli(["archive", *small.sources, "--to", str(to)])
    message = result.stderr.decode()
    assert result.returncode == 0 and "note: 2 files could not be read and were not archived (first: " in message
    assert "nothing to write" in message
