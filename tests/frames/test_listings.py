"""A run lists its folders once: the quick listing that decides the workers (``workers_ahead``)
is the plan's too, and what it saw (which entries are symbolic links) spares the plan an
``lstat`` per file; a plan's files are taken as they are by every format's ``resolve``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cc_analytics.frames import sources
from cc_analytics.frames.copilot.store import resolve as copilot_resolve

START = (
    '{{"type":"session.start","data":{{"sessionId":"{0}","producer":"copilot-agent"}},"id":"a",'
    '"timestamp":"2026-03-01T10:00:00Z","parentId":null}}\n'
)


def _tree(root: Path) -> Path:
    """A Copilot CLI store with three sessions, a link to one log (the same file: planned once), a
    link to a session's folder (not followed) and a broken link named as a log; returns the store."""
    store = root / "session-state"
    for session in ("s1", "s2", "s3"):
        (store / session).mkdir(parents=True)
        (store / session / "events.jsonl").write_text(START.format(session))
    (store / "alias.jsonl").symlink_to(store / "s1" / "events.jsonl")
    (store / "linked").symlink_to(store / "s2", target_is_directory=True)
    (store / "broken.jsonl").symlink_to(root / "gone.jsonl")
    return store


def _planned(plan: dict[str, list[sources.TranscriptFile]]) -> dict[str, list[tuple[str, str, int]]]:
    return {name: [(str(f.path), f.session_id, f.size) for f in files] for name, files in plan.items()}


def test_a_plan_beside_the_quick_listing_lists_each_folder_once_and_plans_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _tree(tmp_path)
    alone = sources.plan(store)
    listed: list[str] = []
    asked: list[str] = []
    scandir, islink = os.scandir, os.path.islink

    def counted_scandir(path: str) -> object:
        listed.append(os.fspath(path))
        return scandir(path)

    def counted_islink(path: str) -> bool:
        asked.append(os.fspath(path))
        return islink(path)

    stat = os.stat
    stated: list[str] = []

    def counted_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        stated.append(os.fspath(path))  # type: ignore[arg-type]
        return stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", counted_scandir)
    monkeypatch.setattr(os.path, "islink", counted_islink)
    monkeypatch.setattr(os, "stat", counted_stat)
    with sources.workers_ahead(store, 1):  # one process: nothing is started, the listing is made
        beside = sources.plan(store)
    assert _planned(beside) == _planned(alone)
    # The logs' sizes are the listing's: no log is stat'ed again.
    assert not [path for path in stated if path.endswith("events.jsonl")]
    assert len(beside["copilot"]) == 3  # the link to s1's log is s1's log
    assert sorted(listed) == sorted([str(store), *(str(store / s) for s in ("s1", "s2", "s3"))])
    # Only the links are asked about: the listing showed the rest are not links.
    under = {path for path in asked if path.startswith(str(store) + os.sep)}
    assert under == {str(store / "alias.jsonl"), str(store / "broken.jsonl")}
    listed.clear()
    sources.plan(store)  # after the block, a plan lists again
    assert len(listed) == 4


def test_the_quick_listing_kept_gives_the_sizes_of_a_listing_made_without_them(tmp_path: Path) -> None:
    store = _tree(tmp_path)
    expected = sources.listed_size(store)
    with sources._listings_kept():
        sources.walk([store])  # listed without sizes first
        assert sources.listed_size(store) == expected == 4 * len(START.format("s1"))  # the link is counted


def test_a_plans_files_are_taken_as_they_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _tree(tmp_path)
    files = sources.plan(store)["copilot"]
    monkeypatch.setattr(os.path, "islink", lambda path: pytest.fail(f"{path} asked about again"))
    assert copilot_resolve(files) == files
    assert copilot_resolve(list(reversed(files))) == files  # in session, then path order
