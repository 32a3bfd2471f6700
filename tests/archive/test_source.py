"""The archive as the registry's table source (``archive.source``): a local source with no
archive manifest in sight is told apart without importing the archive's readers, and every
source gets the readers' own answer (``archive.read.archive_root``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cc_analytics.archive import update
from cc_analytics.archive.manifest import NAME
from cc_analytics.archive.read import ArchiveSet, archive_root
from cc_analytics.archive.source import ARCHIVE, MANIFEST
from cc_analytics.report import SAMPLES_DIR


def test_the_manifest_is_the_archives() -> None:
    assert MANIFEST == NAME


def test_transcripts_are_told_without_the_archive_readers() -> None:
    code = (
        "import sys; from cc_analytics.frames.registry import table_sources; "
        f"print([s.root_of({str(SAMPLES_DIR)!r}) for s in table_sources()], 'cc_analytics.archive.read' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["[None]", "False"]


def test_every_source_gets_the_readers_answer(tmp_path: Path) -> None:
    team = tmp_path / "team"
    update(SAMPLES_DIR / "claude", team / "anna", machine="anna")
    update(SAMPLES_DIR / "codex", team / "ben", machine="ben")
    (tmp_path / "file.txt").write_text("x")
    sources: list[object] = [
        None,
        str(SAMPLES_DIR),
        SAMPLES_DIR,
        [SAMPLES_DIR / "claude", SAMPLES_DIR / "codex"],
        team / "anna",
        str(team / "anna"),
        [team / "anna"],
        team,  # a prefix holding archives
        [team / "anna", team / "ben"],
        ArchiveSet([str(team / "anna"), str(team / "ben")]),
        tmp_path / "file.txt",
        tmp_path / "missing",
        "~/no-such-folder-for-cc-analytics",
    ]
    for source in sources:
        assert ARCHIVE.root_of(source) == archive_root(source), source
    assert ARCHIVE.root_of(team / "anna") == str(team / "anna")
    assert isinstance(ARCHIVE.root_of(team), ArchiveSet)
