"""OpenCode: its database read safely while OpenCode writes it, older schemas, the JSON storage,
broken records, sub-tasks, and the archive (``docs/opencode.md``)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from cc_analytics.frames import api
from cc_analytics.frames.opencode import read_problems, read_requests, read_sessions, read_turns, resolve
from tests.conftest import run_cli
from tests.fixtures.opencode import make_fixtures as F


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sessions_read_while_a_writer_inserts_without_error_lock_or_write(tmp_path: Path) -> None:
    database = F.write_database(tmp_path / "opencode" / "opencode.db", F.corpus_sessions(20))
    stop = threading.Event()
    written: list[int] = []
    failures: list[BaseException] = []

    def writer() -> None:
        # OpenCode's side: a WAL connection that keeps inserting, each insert its own transaction.
        connection = sqlite3.connect(database, timeout=0.2)
        try:
            count = 0
            while not stop.is_set():
                count += 1
                data = {"role": "assistant", "time": {"created": 1767225600000 + count}, "modelID": "gpt-5",
                        "providerID": "openai", "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}}  # fmt: skip
                connection.execute(
                    "INSERT INTO message VALUES (?, 'ses_c00000', ?, ?, ?)",
                    (f"msg_live_{count:06d}", count, count, json.dumps(data)),
                )
                connection.commit()  # a lock held by a reader would make this raise "database is locked"
                written.append(count)
        except BaseException as error:  # noqa: BLE001
            failures.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(written) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        before_reads = len(written)
        for _ in range(3):
            sessions = read_sessions(tmp_path / "opencode")
            assert sessions.height == 16  # 20 sessions, 4 of them sub-tasks
        assert len(written) > before_reads  # the writer went on while we read
    finally:
        stop.set()
        thread.join()
    assert failures == []
    # Our reads wrote nothing: what the writer committed is all the database holds.
    connection = sqlite3.connect(database)
    assert connection.execute("SELECT count(*) FROM message WHERE id LIKE 'msg_live_%'").fetchone()[0] == len(written)
    connection.close()


def test_an_idle_database_is_read_without_a_byte_or_file_changed(tmp_path: Path) -> None:
    database = F.write_database(tmp_path / "opencode" / "opencode.db", F.sample_sessions())
    before = (digest(database), sorted(p.name for p in database.parent.iterdir()))
    assert read_sessions(database.parent).height == 2
    done = run_cli(["sessions", str(database.parent), "--json", "--quiet"])
    assert done.returncode == 0, done.stderr
    assert (digest(database), sorted(p.name for p in database.parent.iterdir())) == before


def test_a_database_of_an_older_schema_is_refused_naming_its_version(tmp_path: Path) -> None:
    database = tmp_path / "opencode" / "opencode.db"
    F.write_database(database, F.sample_sessions())
    connection = sqlite3.connect(database)
    connection.execute("ALTER TABLE part RENAME TO part_v0")
    connection.commit()
    connection.close()
    problems = read_problems(database)
    assert problems.height == 1
    reason = problems["reason"][0]
    assert "older schema" in reason and "OpenCode 1.0.120" in reason and "7 migrations" in reason
    assert "table 'part'" in reason
    assert read_sessions(database).height == 0
    done = run_cli(["sessions", str(database), "--json"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr


def test_broken_records_are_problems_and_the_rest_is_read(tmp_path: Path) -> None:
    database = F.write_database(tmp_path / "opencode" / "opencode.db", F.sample_sessions())
    whole = read_requests(database)
    connection = sqlite3.connect(database)
    first = connection.execute("SELECT id FROM message WHERE data LIKE '%\"assistant\"%' ORDER BY id").fetchone()[0]
    connection.execute("UPDATE message SET data = '{not json' WHERE id = ?", (first,))
    connection.execute("UPDATE part SET data = '[1, 2]' WHERE id = (SELECT min(id) FROM part)")
    bad = json.dumps({"role": "assistant", "modelID": "gpt-5", "tokens": {"input": "12", "output": 1}})
    connection.execute("INSERT INTO message VALUES ('msg_zz', 'ses_sample_gpt', 1, 1, ?)", (bad,))
    connection.commit()
    connection.close()
    reasons = read_problems(database)["reason"].to_list()
    assert any(first in reason and "not JSON" in reason for reason in reasons)
    assert any("not a JSON object" in reason for reason in reasons)
    assert any("msg_zz" in reason and "tokens.input" in reason for reason in reasons)
    assert read_requests(database).height == whole.height - 1


def test_a_sub_task_is_an_agent_file_of_its_parent_and_counts_once(tmp_path: Path) -> None:
    database = F.write_database(tmp_path / "opencode" / "opencode.db", F.sample_sessions())
    files = {(f.session_id, f.agent_id) for f in resolve(database)}
    assert ("ses_sample_main", "ses_sample_task") in files
    requests = read_requests(database)
    sessions = read_sessions(database)
    main = sessions.filter(pl.col("session_id") == "ses_sample_main").row(0, named=True)
    assert main["requests"] == requests.filter(pl.col("session_id") == "ses_sample_main").height == 6
    assert (main["files"], main["subagent_files"], main["turns"], main["compactions"]) == (2, 1, 3, 1)
    assert sessions["input_tokens"].sum() == requests["input_tokens"].sum()
    task = requests.filter(pl.col("agent_id") == "ses_sample_task")
    assert task.height == 1 and task["is_sidechain"].all()


def test_turns_and_occupancy(tmp_path: Path) -> None:
    database = F.write_database(tmp_path / "opencode" / "opencode.db", F.sample_sessions())
    turns = read_turns(database).filter(pl.col("session_id") == "ses_sample_main", pl.col("agent_id").is_null())
    assert turns["prompt"].to_list() == ["Fix the failing parser test", "Now run the whole suite", "Continue"]
    assert turns["tool_errors"].to_list() == [0, 1, 0] and turns["compacted"].to_list() == [False, True, False]
    # The last request of the turn: input 40 + cache read 800 + cache write 2,600 + output 150.
    assert turns["occupancy"][-1] == 3590 and turns["window"][-1] == 200_000
    assert turns["tokens_system"][0] > 0  # the synthetic file part


def test_a_session_in_both_the_database_and_the_json_storage_is_read_once(tmp_path: Path) -> None:
    home = tmp_path / "opencode"
    F.write_database(home / "opencode.db", F.sample_sessions())
    F.write_storage(home / "storage", F.sample_sessions())
    units = resolve(home)
    assert len(units) == 3 and all(unit.path.name == "opencode.db" for unit in units)
    assert api.read_sessions(home).height == 2


def test_the_archive_keeps_a_json_storage_session_whole(tmp_path: Path) -> None:
    from cc_analytics.archive import update
    from cc_analytics.archive.read import open_archive

    home = tmp_path / "opencode"
    F.write_storage(home / "storage", F.sample_sessions())
    summary = update([str(home)], tmp_path / "archive")
    assert summary.new == 3
    archive = open_archive(tmp_path / "archive")
    direct = api.read_tables(home)
    for table in ("sessions", "requests", "turns"):
        kept = archive.scan(table, format="opencode").collect()
        assert kept["machine"].drop_nulls().n_unique() == 1  # the archive's machine on every row
        kept = kept.drop("machine").sort(pl.all().exclude(pl.List(pl.String)))
        assert_frame_equal(kept, getattr(direct, table).sort(pl.all().exclude(pl.List(pl.String))), check_exact=True)


def test_sessions_and_usage_read_an_opencode_data_folder(tmp_path: Path) -> None:
    F.write_database(tmp_path / "opencode" / "opencode.db", F.sample_sessions())
    folder = str(tmp_path / "opencode")
    sessions = run_cli(["sessions", folder, "--json", "--quiet"])
    assert sessions.returncode == 0, sessions.stderr
    assert {row["session_id"] for row in json.loads(sessions.stdout)} == {"ses_sample_main", "ses_sample_gpt"}
    usage = run_cli(["usage", folder, "--json", "--quiet"])
    assert usage.returncode == 0, usage.stderr
    assert sum(row["requests"] for row in json.loads(usage.stdout)) == read_requests(tmp_path / "opencode").height == 8


def test_context_of_an_opencode_session_leads_with_the_last_request(tmp_path: Path) -> None:
    F.write_database(tmp_path / "xdg" / "opencode" / "opencode.db", F.sample_sessions())
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    done = run_cli(["context", "ses_sample_main", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["totalTokens"], report["contextWindow"], report["model"]) == (3590, 200_000, "claude-sonnet-4-5")
    assert report["counts"]["user"] == 4 and report["messageCount"] == 9
