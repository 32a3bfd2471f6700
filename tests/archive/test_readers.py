"""Every reader takes an archive: report, SessionExplorer, context --archive, window --archive,
after the original transcripts are gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from cc_analytics.archive import update
from tests.archive.conftest import Corpus
from tests.conftest import run_cli

CLAUDE_SESSION = "24422850-abc3-4525-9567-e2fd4bd0adcb"  # has a subagent file
CHAINLESS_SESSION = "sample-dashscope-cjk"


@pytest.fixture
def archived(small: Corpus, tmp_path: Path) -> tuple[Corpus, Path, Path]:
    """The corpus archived, and a copy of the sources as they were (the originals are deleted)."""
    to = tmp_path / "archive"
    update(small.sources, to)
    kept = tmp_path / "kept"
    shutil.copytree(small.root, kept)
    return small, to, kept


def _gone(corpus: Corpus) -> None:
    shutil.rmtree(corpus.root)


def test_context_from_the_archive(archived: tuple[Corpus, Path, Path]) -> None:
    corpus, to, kept = archived
    claude = run_cli(["context", CLAUDE_SESSION, "--claude-root", str(kept / "claude"), "--json"])
    chainless = run_cli(["context", CHAINLESS_SESSION, "--sessions-dir", str(kept / "chainless"), "--json"])
    _gone(corpus)
    for session, expected in ((CLAUDE_SESSION, claude), (CHAINLESS_SESSION, chainless)):
        got = run_cli(["context", session, "--archive", str(to), "--json"])
        assert got.returncode == 0, got.stderr
        assert got.stdout == expected.stdout and expected.stdout
    gauge = run_cli(["context", CHAINLESS_SESSION, "--archive", str(to)])
    assert b"Context" in gauge.stdout
    missing = run_cli(["context", "no-such-session", "--archive", str(to)])
    assert missing.returncode == 1 and b"No headless transcript" in missing.stderr
    latest = run_cli(["context", "--archive", str(to), "--json"])
    assert latest.returncode == 0 and orjson.loads(latest.stdout)["sessionId"]


def test_window_from_the_archive(archived: tuple[Corpus, Path, Path]) -> None:
    corpus, to, kept = archived
    source = next(corpus.claude.glob(f"*/{CLAUDE_SESSION}.jsonl"))
    lines = [orjson.loads(line) for line in source.read_bytes().splitlines()]
    uuid = next(line["uuid"] for line in lines if line.get("type") == "assistant")
    expected = run_cli(["window", str(source), "--uuid", uuid])
    assert expected.returncode == 0, expected.stderr
    _gone(corpus)
    got = run_cli(["window", str(source), "--uuid", uuid, "--archive", str(to)])
    assert got.stdout == expected.stdout
    copy = next(to.glob(f"raw/claude-code/*/{CLAUDE_SESSION}.jsonl.zst")).relative_to(to)
    assert run_cli(["window", str(copy), "--uuid", uuid, "--archive", str(to)]).stdout == expected.stdout
    unknown = run_cli(["window", "/nowhere.jsonl", "--uuid", uuid, "--archive", str(to)])
    assert unknown.returncode == 1 and b"not in the archive" in unknown.stderr


def test_report_and_explorer_from_the_archive(archived: tuple[Corpus, Path, Path], tmp_path: Path) -> None:
    import polars as pl

    from cc_analytics.views.widgets import SessionExplorer

    corpus, to, _kept = archived
    _gone(corpus)
    result = run_cli(["report", str(to), "--out", str(tmp_path / "report"), "--quiet"])
    assert result.returncode == 0, result.stderr
    sessions = pl.read_parquet(tmp_path / "report" / "sessions.parquet")
    assert set(sessions["format"]) == {"claude-code", "chainlesschain"}
    assert (tmp_path / "report" / "report.html").stat().st_size > 0
    explorer = SessionExplorer.from_source(str(to))
    assert explorer.sessions.height == sessions.height  # every format (issue 22: it read Claude Code alone)
    assert explorer.select(CLAUDE_SESSION).turn_rows().height > 0


def test_sessions_command_from_the_archive(archived: tuple[Corpus, Path, Path]) -> None:
    corpus, to, _kept = archived
    expected = run_cli(["sessions", *corpus.sources, "--json", "--quiet"])
    _gone(corpus)
    got = run_cli(["sessions", str(to), "--json", "--quiet"])
    assert got.returncode == 0, got.stderr
    rows = orjson.loads(got.stdout)
    from cc_analytics.archive.layout import default_machine

    assert rows and {row.pop("machine") for row in rows} == {default_machine()}  # the archive's machine
    assert rows == orjson.loads(expected.stdout)


def test_a_damaged_raw_copy_is_named_by_every_reader(archived: tuple[Corpus, Path, Path]) -> None:
    from cc_analytics.archive.read import open_archive

    corpus, to, _kept = archived
    source = next(corpus.claude.glob(f"*/{CLAUDE_SESSION}.jsonl"))
    copy = to / open_archive(to).manifest.files[str(source)].copy
    copy.write_bytes(copy.read_bytes()[:-10])
    _gone(corpus)
    for args in (
        ["context", CLAUDE_SESSION, "--archive", str(to)],
        ["window", str(source), "--uuid", "u", "--archive", str(to)],
    ):
        got = run_cli(args)
        message = got.stderr.decode()
        assert got.returncode == 1, message
        assert f"cannot read the archive's copy of {str(source)!r}" in message and str(copy) in message
        assert "restore its raw/ folder from a backup" in message and "Traceback" not in message


@pytest.mark.parametrize("damage", ["cut", "missing"])
def test_a_damaged_part_is_named_by_readers_and_runs(small: Corpus, tmp_path: Path, damage: str) -> None:
    import cc_analytics.frames as frames
    from cc_analytics.archive.read import open_archive
    from cc_analytics.errors import InputError

    to = tmp_path / "archive"
    update(small.sources, to)
    part = next(p for p in open_archive(to).manifest.parts.values() if p.table == "sessions")
    path = to / part.path
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:200])
    what = "is missing" if damage == "missing" else "is not a whole Parquet file"
    with pytest.raises(InputError, match=f"Parquet part .*{part.path.rpartition('/')[2]}' {what}"):
        frames.read_sessions(to)
    got = run_cli(["report", str(to), "--out", str(tmp_path / "report")])
    assert got.returncode == 1 and b"restore it from a backup" in got.stderr and b"Traceback" not in got.stderr
    # A run that must rewrite the part (one of its sessions grew) names it too.
    session = part.units[0]
    source = next(r.source for r in open_archive(to).manifest.files.values() if r.unit == session)
    with open(source, "ab") as handle:
        handle.write(Path(source).read_bytes().splitlines()[0] + b"\n")
    with pytest.raises(InputError, match="Parquet part"):
        update(small.sources, to)


def test_an_archive_beside_other_sources_is_refused(archived: tuple[Corpus, Path, Path], tmp_path: Path) -> None:
    # Read as a folder of transcripts it holds none (its copies are .jsonl.zst): the report of
    # "archive + folder" silently left the archive out.
    import cc_analytics.frames as frames
    from cc_analytics.errors import InputError

    corpus, to, kept = archived
    with pytest.raises(
        InputError, match="is an archive: archives are read on their own or with other archives, not beside transcripts"
    ):
        frames.read_sessions([str(kept), str(to)])
    result = run_cli(["report", str(to), str(kept), "--out", str(tmp_path / "report")])
    assert result.returncode == 1 and b"give only archives" in result.stderr
    assert not (tmp_path / "report").exists()
    assert frames.read_sessions([str(to)]).height == frames.read_sessions(corpus.sources).height


def test_workers_ahead_names_an_archive_and_starts_no_worker(
    archived: tuple[Corpus, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The archive is looked for once, by workers_ahead, and its callers take the root it yields;
    # an archive holds nothing to decode, so no worker starts even when two are asked for.
    from cc_analytics.frames import engine
    from cc_analytics.frames.sources import workers_ahead

    corpus, to, _kept = archived
    with workers_ahead([str(to)], 2) as root:
        assert root is not None and Path(root) == to.resolve()
        assert not engine._started
    with workers_ahead(corpus.sources, 2) as root:
        assert root is None
        assert list(engine._started.values()) == [1]
    assert not engine._started
