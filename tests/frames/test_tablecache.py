"""The cache of decoded sessions (``frames.tablecache``): every reader gives what it gives
without it, cold, warm, after files grew, were replaced, removed, and when what is kept is
damaged, stale, or being written by another run.

The sources are copies of ``data-samples`` (every registered format), their files dated an hour
back: a file modified in the last seconds is decoded but never kept (its time could stay the
same through another write).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames import api, sources, tablecache
from cc_analytics.frames.registry import formats, get, names
from cc_analytics.report import SAMPLES_DIR
from tests.conftest import run_cli

HOUR_AGO = time.time() - 3600
READERS: dict[str, Callable[..., pl.DataFrame]] = {
    "sessions": api.read_sessions,
    "turns": api.read_turns,
    "problems": api.read_problems,
    "requests": api.read_requests,
    "usage by day": lambda source, **kw: api.read_usage(source, by="day", timezone="UTC", **kw),
    "usage by session": lambda source, **kw: api.read_usage(source, by="session", timezone="UTC", **kw),
}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CC_ANALYTICS_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    """A copy of the samples, every file dated an hour back, with one malformed line (a problem)."""
    out = tmp_path / "samples"
    shutil.copytree(SAMPLES_DIR, out, ignore=shutil.ignore_patterns("*.py"))
    first = sorted(out.rglob("*.jsonl"))[0]
    with first.open("ab") as handle:
        handle.write(b"{not json\n")
    settle(out)
    return out


def settle(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (HOUR_AGO, HOUR_AGO))


def tables_of(source: Path, **kw: object) -> dict[str, pl.DataFrame]:
    out = {name: read(source, **kw) for name, read in READERS.items()}
    tables = api.read_tables(source, **kw)  # type: ignore[arg-type]
    out.update({f"tables.{name}": getattr(tables, name) for name in ("sessions", "turns", "problems", "requests")})
    batches = list(api.iter_requests(source, **kw))  # type: ignore[arg-type]
    out["iter_requests"] = pl.concat([requests for _name, requests, _problems in batches])
    return out


def assert_same_as_without_cache(source: Path) -> None:
    cached = tables_of(source)
    plain = tables_of(source, cache=False)
    for name, frame in plain.items():
        assert cached[name].equals(frame), name


def kept_sessions(cache: Path) -> int:
    return tablecache.info()["sessions"]


def test_every_reader_gives_the_same_cold_and_warm(samples: Path, cache: Path) -> None:
    plain = tables_of(samples, cache=False)
    assert not (cache / "tables").exists()  # cache=False neither reads nor writes (prices are kept there too)
    assert set(plain["sessions"]["format"]) == set(names())  # every format is read
    assert plain["problems"].height  # and a problem is kept too
    cold = tables_of(samples)
    assert kept_sessions(cache) == plain["sessions"].height
    warm = tables_of(samples)
    for name, frame in plain.items():
        assert cold[name].equals(frame), name
        assert warm[name].equals(frame), name


def test_a_warm_run_decodes_nothing(samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = api.read_sessions(samples, cache=False)
    api.read_tables(samples)

    def refuse(*args: object, **_kw: object) -> None:
        if args[-1]:
            raise AssertionError(f"read again: {args}")

    monkeypatch.setattr(tablecache, "_decode", lambda name, files, **kw: refuse(files) or iter(()))
    monkeypatch.setattr(sources, "sniff_format", lambda path: refuse([path]))
    assert api.read_tables(samples).sessions.equals(expected)


def test_a_grown_file_is_decoded_again_with_its_session_only(samples: Path, cache: Path) -> None:
    api.read_tables(samples)
    grown = max(samples.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    lines = grown.read_bytes().splitlines(keepends=True)
    with grown.open("ab") as handle:
        handle.write(lines[-1])
    os.utime(grown, (HOUR_AGO + 60, HOUR_AGO + 60))
    decoded: list[str] = []
    original = tablecache._decode

    def spy(name: str, files: list, **kw: object):  # type: ignore[no-untyped-def]
        decoded.extend(str(f.path) for f in files)
        return original(name, files, **kw)

    tablecache._decode = spy  # type: ignore[assignment]
    try:
        assert_same_as_without_cache(samples)
    finally:
        tablecache._decode = original  # type: ignore[assignment]
    assert str(grown) in decoded and len(set(decoded)) <= 3, decoded  # the session's files, not the rest


def test_replaced_removed_and_new_files(samples: Path, cache: Path) -> None:
    api.read_tables(samples)
    files = sorted(samples.rglob("*.jsonl"))
    files[0].unlink()  # removed: leaves the results
    replaced = files[1]
    data = replaced.read_bytes()
    replaced.unlink()
    replaced.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")  # replaced, shorter
    shutil.copy(files[2], files[2].with_name("copy-" + files[2].name))  # a new file
    settle(samples)
    assert_same_as_without_cache(samples)
    before = kept_sessions(cache)
    api.read_tables(samples)
    assert kept_sessions(cache) == before  # nothing left to decode: the manifest holds what is listed
    manifest = json.loads((tablecache.root() / "manifest.json").read_bytes())
    assert not any(str(files[0]) in entry["paths"] for entry in manifest["units"].values())


def test_a_file_modified_just_now_is_read_but_not_kept(samples: Path, cache: Path) -> None:
    fresh = sorted(samples.rglob("*.jsonl"))[0]
    os.utime(fresh)  # now
    api.read_tables(samples)
    manifest = json.loads((tablecache.root() / "manifest.json").read_bytes())
    assert not any(str(fresh) in entry["paths"] for entry in manifest["units"].values())
    assert_same_as_without_cache(samples)


@pytest.mark.parametrize(
    "damage", ["truncate", "garbage", "remove", "manifest", "plan", "manifest shape", "plan shape"]
)
def test_damaged_entries_are_read_again(samples: Path, cache: Path, damage: str) -> None:
    expected = tables_of(samples, cache=False)
    api.read_tables(samples)
    folder = tablecache.root()
    packs = sorted((folder / "packs").glob("*.arrow"))
    assert packs
    for pack in packs:
        if damage == "truncate":
            pack.write_bytes(pack.read_bytes()[: pack.stat().st_size // 2])
        elif damage == "garbage":
            pack.write_bytes(b"\0" * pack.stat().st_size)
        elif damage == "remove":
            pack.unlink()
    if damage == "manifest":
        (folder / "manifest.json").write_bytes(b'{"layout": 1, "units": {"x": 1')
    if damage == "plan":
        for plan in (folder / "plans").glob("*.json"):
            plan.write_bytes(b"[")
    if damage == "manifest shape":  # JSON, but not what was written: every entry of another type
        manifest = json.loads((folder / "manifest.json").read_bytes())
        for entry in manifest["units"].values():
            entry["stamps"] = "x"
        first = next(iter(manifest["packs"].values()))
        first["rows"] = None
        (folder / "manifest.json").write_text(json.dumps(manifest))
    if damage == "plan shape":
        for plan in (folder / "plans").glob("*.json"):
            document = json.loads(plan.read_bytes())
            for rows in document["plan"].values():
                rows[0][1] = 7
            document["state"]["files"][0] = ["x"]
            plan.write_text(json.dumps(document))
    for _ in range(2):  # the run that finds the damage, and the next
        got = tables_of(samples)
        for name, frame in expected.items():
            assert got[name].equals(frame), (damage, name)
    assert kept_sessions(cache) == expected["sessions"].height


def test_half_written_files_and_another_version_are_ignored(samples: Path, cache: Path) -> None:
    api.read_tables(samples)
    folder = tablecache.root()
    (folder / "packs" / ".123-1-0.sessions.arrow.tmp").write_bytes(b"ARROW1 half")
    (folder / ".manifest.json.1.tmp").write_bytes(b"{")
    other = folder.parent / "0000000000000000"
    (other / "packs").mkdir(parents=True)
    (other / "manifest.json").write_text('{"layout": 1, "units": {}, "packs": {}}')
    assert tablecache.info()["other_versions_bytes"] > 0
    assert_same_as_without_cache(samples)
    (samples / "new.jsonl").write_bytes(sorted(samples.rglob("*.jsonl"))[0].read_bytes())
    settle(samples)
    api.read_tables(samples)  # a run that writes removes the other version's folder
    assert not other.exists()


def test_another_version_or_prices_is_another_folder(
    samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.read_tables(samples)
    first = tablecache.root()
    monkeypatch.setattr(tablecache, "fingerprint", lambda: "feedfacefeedface")
    assert tablecache.root() != first and kept_sessions(cache) == 0
    assert_same_as_without_cache(samples)
    assert kept_sessions(cache) > 0 and not first.exists()


def test_the_fingerprint_follows_the_package_files() -> None:
    # The package's own files are in it (a new version, an edited schema), and genai-prices' data.
    assert len(tablecache.fingerprint()) == 16
    assert "genai_prices" in tablecache.LIBRARIES and "data.py" in tablecache.LIBRARIES["genai_prices"]


def test_a_run_that_finds_the_lock_taken_keeps_nothing(samples: Path, cache: Path) -> None:
    import fcntl

    folder = tablecache.root()
    folder.mkdir(parents=True)
    with open(folder / "lock", "w") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        assert_same_as_without_cache(samples)
        assert kept_sessions(cache) == 0
        assert not list((folder / "packs").glob("*.arrow"))  # its packs went with it
    api.read_tables(samples)
    assert kept_sessions(cache) > 0


def test_the_bound(samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tablecache.MAX_MB_ENV, "0")
    assert_same_as_without_cache(samples)
    assert kept_sessions(cache) == 0
    monkeypatch.setenv(tablecache.MAX_MB_ENV, "0.001")  # 1 kB: less than one pack
    assert_same_as_without_cache(samples)
    assert tablecache.info()["bytes"] < 50_000


def test_turns_asked_after_a_read_without_them(samples: Path, cache: Path) -> None:
    sessions = api.read_sessions(samples)  # kept without turns
    turns = api.read_turns(samples)  # decoded again, with turns
    assert turns.equals(api.read_turns(samples, cache=False)) and turns.height
    assert api.read_sessions(samples).equals(sessions)


def test_usage_first_keeps_the_requests_alone_of_the_formats_whose_requests_cost_less(
    samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``usage`` before ``sessions``: the formats whose requests cost less than their tables
    (``lean_requests``) decode and keep their requests alone, the others their tables (one decode
    serves both); a later ``sessions`` decodes the first ones' sessions whole, and nothing after."""
    plain = tables_of(samples, cache=False)
    lean = {plugin.name for plugin in formats() if plugin.lean_requests}
    assert lean and lean < set(names())
    decoded: list[tuple[str, bool]] = []
    real = tablecache._decode

    def spy(name: str, files: list[sources.TranscriptFile], **kw: object) -> object:
        if files:
            decoded.append((name, bool(kw.get("lean"))))
        return real(name, files, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(tablecache, "_decode", spy)
    assert api.read_usage(samples, by="day", timezone="UTC").equals(plain["usage by day"])
    assert sorted(decoded) == sorted((name, name in lean) for name in names())
    units = json.loads((tablecache.root() / "manifest.json").read_bytes())["units"].values()
    lean_sessions = plain["sessions"].filter(pl.col("format").is_in(sorted(lean))).height
    assert sum(not unit["sessions"] for unit in units) == lean_sessions > 0
    assert api.read_requests(samples).equals(plain["requests"])
    decoded.clear()
    assert api.read_sessions(samples).equals(plain["sessions"])  # the lean formats' sessions, whole
    assert sorted(decoded) == sorted((name, False) for name in lean)
    decoded.clear()
    assert api.read_usage(samples, by="day", timezone="UTC").equals(plain["usage by day"])
    assert api.read_sessions(samples).equals(plain["sessions"])
    assert decoded == []
    assert_same_as_without_cache(samples)


def test_findings_from_the_tables_decode_cold_warm_and_after_a_read_without_them(
    samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = api.read_findings(samples)
    assert expected.height and api.read_tables(samples).findings is None  # kept without findings
    cold = api.read_tables(samples, findings=True)  # decoded again, with them
    assert cold.findings is not None and cold.findings.equals(expected)
    assert api.read_tables(samples, cache=False, findings=True).findings.equals(expected)  # type: ignore[union-attr]

    def refuse(name: str, files: list[object], **_kw: object) -> object:
        assert not files, f"decoded again: {files}"
        return iter(())

    monkeypatch.setattr(tablecache, "_decode", refuse)
    warm = api.read_tables(samples, findings=True)
    assert warm.findings is not None and warm.findings.equals(expected) and warm.sessions.equals(cold.sessions)


def test_unreadable_files_are_never_kept(samples: Path, cache: Path) -> None:
    (samples / "claude" / "projects" / "gone.jsonl").symlink_to(samples / "absent.jsonl")
    os.mkfifo(samples / "fifo.jsonl")
    assert_same_as_without_cache(samples)
    problems = api.read_problems(samples)
    assert problems.filter(pl.col("line").is_null()).height == 2


def test_the_commands_and_cache_info_clear(samples: Path, cache: Path) -> None:
    env = {"CC_ANALYTICS_CACHE_DIR": str(cache)}
    for index, command in enumerate((["sessions", "--json"], ["usage", "--by", "day", "--json", "--timezone", "UTC"])):
        plain = run_cli([*command, str(samples), "--no-cache"], env=env)
        assert plain.returncode == 0, plain.stderr
        assert index or not (cache / "tables").exists()
        for _ in range(2):
            done = run_cli([*command, str(samples)], env=env)
            assert (done.returncode, done.stdout, done.stderr) == (0, plain.stdout, plain.stderr)
    info = run_cli(["cache", "info", "--json"], env=env)
    facts = json.loads(info.stdout)
    assert facts["sessions"] > 0 and 0 < facts["bytes"] <= facts["max_bytes"] and facts["folder"] == str(cache)
    text = run_cli(["cache", "info"], env=env).stdout.decode()
    assert str(cache) in text and "sessions" in text
    cleared = run_cli(["cache", "clear"], env=env)
    assert cleared.returncode == 0 and b"removed" in cleared.stderr
    assert json.loads(run_cli(["cache", "info", "--json"], env=env).stdout)["sessions"] == 0


def test_the_report_is_the_same(samples: Path, cache: Path, tmp_path: Path) -> None:
    env = {"CC_ANALYTICS_CACHE_DIR": str(cache)}
    outputs = []
    for index, extra in enumerate((["--no-cache"], [], [])):
        out = tmp_path / f"report{index}"
        done = run_cli(["report", str(samples), "--out", str(out), "--quiet", *extra], env=env)
        assert done.returncode == 0, done.stderr
        outputs.append({name: pl.read_parquet(out / name) for name in ("sessions.parquet", "turns.parquet")})
    for name, frame in outputs[0].items():
        assert outputs[1][name].equals(frame) and outputs[2][name].equals(frame), name


def test_the_explorer_reads_through_the_cache(samples: Path, cache: Path) -> None:
    pytest.importorskip("ipywidgets")
    from cc_analytics.views.widgets import SessionExplorer

    plain = SessionExplorer.from_source(str(samples), cache=False)
    assert not (cache / "tables").exists()
    for _ in range(2):
        explorer = SessionExplorer.from_source(str(samples))
        assert explorer.filtered().equals(plain.filtered())
    assert kept_sessions(cache) > 0


def test_packs_are_merged_when_a_format_has_too_many(
    samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tablecache, "MAX_PACKS", 2)
    api.read_tables(samples)
    files = sorted(samples.rglob("*.jsonl"))
    counts = []
    rounds = 2 * len(names()) + 1  # more than unmerged packs could stay under the bound
    for round_ in range(rounds):  # each round grows one file: a new pack, until they are merged
        grown = files[round_ % len(files)]
        with grown.open("ab") as handle:
            handle.write(grown.read_bytes().splitlines(keepends=True)[-1])
        os.utime(grown, (HOUR_AGO + 10 * (round_ + 1),) * 2)
        assert_same_as_without_cache(samples)
        counts.append(tablecache.info()["packs"])
    assert max(counts) <= 2 * len(names()) < len(names()) + rounds, counts  # merged: at most 2 a format, not 1 a run
    assert kept_sessions(cache) == api.read_sessions(samples, cache=False).height


def test_a_same_size_rewrite_keeping_the_time_is_seen_when_it_was_recent(samples: Path, cache: Path) -> None:
    # A file written just before a run may be written again within its timestamp's granularity,
    # keeping size, time and inode: neither its plan nor its tables are trusted then.
    path = next(p for p in sorted(samples.rglob("*.jsonl")) if b'"output_tokens":' in p.read_bytes())
    path.touch()  # modified just now
    stamp = path.stat()
    first = api.read_sessions(samples)
    data = path.read_bytes()
    at = data.index(b'"output_tokens":') + len(b'"output_tokens":')
    digit = data[at : at + 1]
    assert digit.isdigit()
    other = b"7" if digit != b"7" else b"3"
    with path.open("r+b") as handle:  # in place: same inode, same size
        handle.seek(at)
        handle.write(other)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_ino) == (
        stamp.st_size,
        stamp.st_mtime_ns,
        stamp.st_ino,
    )
    again = api.read_sessions(samples)
    assert again.equals(api.read_sessions(samples, cache=False))
    assert not again.equals(first)


def test_what_an_opencode_database_holds_in_its_write_ahead_log_is_seen(tmp_path: Path, cache: Path) -> None:
    # OpenCode writes through SQLite's WAL: while it runs, new messages are in opencode.db-wal and
    # the database file keeps its size and time. A unit is kept by every file read for it.
    import sqlite3

    from tests.fixtures.opencode import make_fixtures as F

    home = tmp_path / "opencode"
    database = F.write_database(home / "opencode.db", F.sample_sessions())
    settle(home)
    cold = api.read_requests(home)
    assert api.read_requests(home).equals(cold)  # kept, then read from the cache
    before = database.stat()
    writer = sqlite3.connect(database)  # open, as OpenCode is: the log is not folded back
    try:
        session = writer.execute("SELECT id FROM session ORDER BY id LIMIT 1").fetchone()[0]
        data = {"role": "assistant", "time": {"created": 1767225600000}, "modelID": "gpt-5", "providerID": "openai",
                "tokens": {"input": 700, "output": 11, "reasoning": 0, "cache": {"read": 0, "write": 0}}}  # fmt: skip
        writer.execute("INSERT INTO message VALUES ('msg_wal_1', ?, 1, 1, ?)", (session, json.dumps(data)))
        writer.commit()
        assert (database.stat().st_size, database.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        warm = api.read_requests(home)
        assert warm.equals(api.read_requests(home, cache=False))
        assert warm.height == cold.height + 1
    finally:
        writer.close()


def test_a_message_added_to_an_opencode_json_storage_session_is_seen(tmp_path: Path, cache: Path) -> None:
    # The older JSON storage keeps each message and part in a file of its own, beside the session's.
    from tests.fixtures.opencode import make_fixtures as F

    root = F.write_storage(tmp_path / "opencode" / "storage", F.sample_sessions())
    settle(root)
    cold = api.read_requests(root.parent)
    assert api.read_requests(root.parent).equals(cold)
    folder = next(path for path in (root / "message").iterdir() if path.is_dir())
    message = json.loads(next(folder.glob("*.json")).read_text())
    message.update(id="msg_added_1", role="assistant", modelID="gpt-5", providerID="openai",
                   tokens={"input": 700, "output": 11, "reasoning": 0, "cache": {"read": 0, "write": 0}})  # fmt: skip
    (folder / "msg_added_1.json").write_text(json.dumps(message))
    os.utime(folder / "msg_added_1.json", (HOUR_AGO, HOUR_AGO))
    os.utime(folder, (HOUR_AGO, HOUR_AGO))  # nothing the session's own file or its folder shows
    warm = api.read_requests(root.parent)
    assert warm.equals(api.read_requests(root.parent, cache=False))
    assert warm.height == cold.height + 1


def test_the_cache_batches_every_format_as_its_own_readers_do(
    samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table cache decodes a format's files in batches of the size its own ``iter_tables``
    uses (``FormatPlugin.batching``), and the requests alone of a lean format in those of its
    ``iter_requests`` (``FormatPlugin.requests_batching``): each size has two owners, the plugin and
    the format's readers, and this holds them equal. A format whose batches hold Python values until
    framed sets fewer bytes: a cache that used the engine's size instead took twice the memory
    (OpenCode: a 322 MB process for a 100 MB database, 170 MB once batched as its readers batch)."""
    from cc_analytics.frames import engine

    seen: dict[str, dict[str, int]] = {"plain": {}, "cached": {}}
    run = "plain"
    cut = engine.batches

    def recorded(files: list[sources.TranscriptFile], batch_bytes: int = engine.BATCH_BYTES) -> list:
        for file in files:
            seen[run][str(file.path)] = batch_bytes
        return cut(files, batch_bytes)

    monkeypatch.setattr(engine, "batches", recorded)
    api.read_tables(samples, cache=False)
    run = "cached"
    api.read_tables(samples)
    assert seen["plain"] and seen["cached"] == seen["plain"]
    assert len(set(seen["plain"].values())) > 1  # the formats do not all batch alike
    # The requests alone (usage) of the formats whose requests are read lean through the cache.
    tablecache.clear()
    lean = {str(f.path) for name, files in sources.plan(samples).items() if get(name).lean_requests for f in files}
    assert lean
    seen = {"plain": {}, "cached": {}}
    run = "plain"
    api.read_requests(samples, cache=False)
    run = "cached"
    api.read_requests(samples)
    assert {path: seen["cached"][path] for path in lean} == {path: seen["plain"][path] for path in lean}


@pytest.mark.parametrize("writable", [True, False])
def test_a_first_run_holds_its_batches_in_a_spill_file_and_gives_the_same(
    samples: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, writable: bool
) -> None:
    # Every frame spilled (the samples' are small); then a folder where no file can be made:
    # the frames are held as they are, with the same results.
    from cc_analytics.frames import memory

    monkeypatch.setattr(memory, "SPILL_MIN_BYTES", 0)
    spilled: list[object] = []
    keep = memory.Spill.keep

    def counted(self: memory.Spill, frame: pl.DataFrame) -> object:
        held = keep(self, frame)
        spilled.append(held)
        return held

    monkeypatch.setattr(memory.Spill, "keep", counted)
    if not writable:
        cache.mkdir(parents=True)
        (cache / "tables").write_text("a file where the cache's folder would be")
    plain = tables_of(samples, cache=False)
    cold = tables_of(samples)
    for name, frame in plain.items():
        assert cold[name].equals(frame), name
    on_disk = [held for held in spilled if isinstance(held, tuple)]
    assert spilled and bool(on_disk) == writable


def test_a_spill_gives_back_each_frame_as_it_was_kept(tmp_path: Path) -> None:
    from cc_analytics.frames import memory

    frames = [
        pl.DataFrame({"a": range(50_000), "b": ["x" * 20] * 50_000}),
        pl.DataFrame({"a": [1], "b": [None]}, schema={"a": pl.Int64, "b": pl.String}),
        pl.DataFrame({"a": range(70_000), "b": ["é漢"] * 70_000}),
    ]
    spill = memory.Spill(tmp_path / "new")
    held = [spill.keep(frame) for frame in frames]
    assert [isinstance(h, tuple) for h in held] == [True, False, True]
    assert list((tmp_path / "new").iterdir()) == []  # the file has no name
    assert all(spill.take(h).equals(frame) for h, frame in zip(reversed(held), reversed(frames), strict=True))
    spill.close()


def test_the_requests_without_a_price_alone_are_those_of_the_whole_read(
    samples: Path, cache: Path, tmp_path: Path
) -> None:
    from polars.testing import assert_frame_equal

    from cc_analytics.archive import update

    archive = tmp_path / "archive"
    update(samples, archive)
    unpriced = pl.col("cost_usd").is_null()
    for source, kw in ((samples, {}), (samples, {}), (samples, {"cache": False}), (archive, {})):  # cold, warm
        whole = pl.concat([t.requests for _name, t in api.iter_tables(source, turns=False, **kw)])  # type: ignore[arg-type]
        alone = api.iter_tables(source, turns=False, requests="unpriced", **kw)  # type: ignore[arg-type]
        got = pl.concat([t.requests for _name, t in alone])
        assert got.height > 0
        assert_frame_equal(got, whole.filter(unpriced), check_exact=True)
    with pytest.raises(ValueError, match="'all' or 'unpriced'"):
        next(api.iter_tables(samples, requests="priced"))  # type: ignore[arg-type]
