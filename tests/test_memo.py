"""The outputs ``sessions`` and ``usage`` keep (``commands.memo``): printed again, byte for byte,
while nothing they read changed; made again when a file grew, was added, removed or touched,
when the entry is damaged; never with ``--no-cache``, nor for ``usage --by block`` (its active
block follows the clock); gone with ``cache clear``.

The commands run in this process (``cli.main``) with the decoders watched: a replayed output
decodes nothing. The sources are copies of ``data-samples`` (every format), dated an hour back
(an entry is kept only for sources not modified in the last seconds).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cc_analytics.cli import main
from cc_analytics.commands import memo
from cc_analytics.frames import api, registry, sources, tablecache
from cc_analytics.report import SAMPLES_DIR

HOUR_AGO = time.time() - 3600


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CC_ANALYTICS_CACHE_DIR", str(folder))
    monkeypatch.setenv("TZ", "UTC")
    return folder


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    """The samples of every format whose files hold their sessions (``files_hold_sessions``)."""
    out = tmp_path / "samples"
    shutil.copytree(SAMPLES_DIR, out, ignore=shutil.ignore_patterns("*.py"))
    for name, files in sources.plan(out).items():
        if not registry.get(name).files_hold_sessions:
            for file in files:
                file.path.unlink(missing_ok=True)
    settle(out)
    return out


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The readers the commands called (none when an output was replayed)."""
    calls: list[str] = []

    def watched(name: str, read: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return read(*args, **kwargs)

        return call

    for name in ("iter_tables", "iter_requests"):
        monkeypatch.setattr(api, name, watched(name, getattr(api, name)))
    return calls


def settle(folder: Path, moment: float = HOUR_AGO) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (moment, moment))


def run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[str, str]:
    code = main(list(words))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob(f"tables/*/{tablecache.OUTPUTS}/*{memo.SUFFIX}"))


COMMANDS = {
    "sessions --json": ["sessions", "--json"],
    "sessions table": ["sessions"],
    "usage --by day": ["usage", "--by", "day", "--json"],
    "usage --by model, notes": ["usage", "--by", "model"],
}


@pytest.mark.parametrize("words", COMMANDS.values(), ids=COMMANDS.keys())
def test_nothing_changed_prints_the_same_bytes_without_decoding(
    samples: Path, cache: Path, decodes: list[str], capsys: pytest.CaptureFixture[str], words: list[str]
) -> None:
    plain = run(capsys, *words, str(samples), "--no-cache")
    assert decodes and not entries(cache)  # --no-cache keeps nothing
    decodes.clear()
    assert run(capsys, *words, str(samples)) == plain  # cold: decoded, kept
    assert decodes and len(entries(cache)) == 1
    decodes.clear()
    assert run(capsys, *words, str(samples)) == plain  # warm: replayed
    assert decodes == []
    run(capsys, *words, str(samples), "--no-cache")
    assert decodes  # --no-cache never replays


@pytest.mark.parametrize(
    "change",
    ["grown", "added", "removed", "touched", "folder touched", "other options", "another timezone"],
)
def test_any_change_runs_again(
    samples: Path,
    cache: Path,
    decodes: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    change: str,
) -> None:
    words = ["usage", "--by", "session", "--json", str(samples)]
    run(capsys, *words)
    run(capsys, *words)
    decodes.clear()
    first = sorted(samples.rglob("*.jsonl"))[0]
    if change == "grown":
        line = first.read_bytes().splitlines(keepends=True)[-1]
        with first.open("ab") as handle:
            handle.write(line)
        settle(samples, HOUR_AGO + 60)
    elif change == "added":
        shutil.copy(first, first.with_name("copied-" + first.name))
        settle(samples)
    elif change == "removed":
        first.unlink()
        settle(samples)
    elif change == "touched":
        settle(samples, HOUR_AGO - 60)
    elif change == "folder touched":  # a sidecar or tombstone beside the transcripts
        settle(first.parent, HOUR_AGO + 60)
    elif change == "other options":
        words[2] = "day"
    else:
        monkeypatch.setenv("TZ", "Asia/Tokyo")
    out, err = run(capsys, *words)
    assert decodes == ["iter_requests"]
    assert (out, err) == run(capsys, *words, "--no-cache")
    decodes.clear()
    assert run(capsys, *words) == (out, err)  # the new entry
    assert decodes == []


@pytest.mark.parametrize("damage", ["flipped", "cut", "empty", "not json", "another layout"])
def test_a_damaged_entry_is_ignored_and_written_again(
    samples: Path, cache: Path, decodes: list[str], capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    words = ["sessions", "--json", str(samples)]
    plain = run(capsys, *words)
    (entry,) = entries(cache)
    data = entry.read_bytes()
    header, _newline, body = data.partition(b"\n")
    damaged = {
        "flipped": header + b"\n" + body[:-2] + bytes([body[-2] ^ 1]) + body[-1:],
        "cut": data[: len(data) // 2],
        "empty": b"",
        "not json": b"{" + data,
        "another layout": header.replace(b'"layout":1', b'"layout":0') + b"\n" + body,
    }[damage]
    entry.write_bytes(damaged)
    decodes.clear()
    assert run(capsys, *words) == plain
    assert decodes == ["iter_tables"] and entry.read_bytes() == data
    decodes.clear()
    assert run(capsys, *words) == plain
    assert decodes == []


def test_what_is_never_kept(
    samples: Path, cache: Path, decodes: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The active 5-hour block and its projection follow the wall clock.
    run(capsys, "usage", "--by", "block", "--json", str(samples))
    # A Parquet file is written, not printed.
    run(capsys, "sessions", "--parquet", str(tmp_path / "s.parquet"), "--quiet", str(samples))
    # Sources modified in the last seconds may change again within their timestamps' granularity.
    fresh = tmp_path / "fresh"
    shutil.copytree(samples / "claude", fresh, copy_function=shutil.copyfile)  # dated now
    run(capsys, "sessions", "--json", str(fresh))
    assert entries(cache) == []


@pytest.mark.parametrize("name", [p.name for p in registry.formats() if not p.files_hold_sessions] or ["none"])
def test_formats_that_read_beside_their_files_are_never_kept(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    planned = sources.plan(SAMPLES_DIR).get(name)
    if not planned:
        pytest.skip(f"no sample of a format that reads beside its files ({name})")
    out = tmp_path / "copy"
    shutil.copytree(SAMPLES_DIR, out, ignore=shutil.ignore_patterns("*.py"))
    settle(out)
    run(capsys, "sessions", "--json", str(out))
    assert entries(cache) == []


def test_cache_clear_removes_the_entries(samples: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "sessions", "--json", str(samples))
    assert entries(cache) and tablecache.info()["outputs"] == 1
    run(capsys, "cache", "clear")
    assert entries(cache) == []


def test_the_entries_are_bounded(
    samples: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memo, "MAX_ENTRIES", 2)
    for by in ("day", "week", "month"):
        run(capsys, "usage", "--by", by, "--json", str(samples))
    assert len(entries(cache)) == 2


def test_an_archive_is_neither_kept_nor_listed(
    samples: Path, cache: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An archive's reads are its tables: no output is kept for it, and its files (thousands of
    # raw copies in a real one) are not surveyed for an entry's key.
    from cc_analytics.archive import update

    archive = tmp_path / "archive"
    update(samples, archive)
    settle(archive)
    surveyed: list[object] = []
    survey = tablecache.survey
    monkeypatch.setattr(
        tablecache, "survey", lambda source, *a, **k: surveyed.append(source) or survey(source, *a, **k)
    )
    for words in COMMANDS.values():
        first, _ = run(capsys, *words, str(archive))
        again, _ = run(capsys, *words, str(archive))
        assert first == again and first
    assert surveyed == [] and entries(cache) == []
