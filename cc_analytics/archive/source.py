"""The archive as a table source, as the registry lists it: whether a source names an archive
is asked of every source a command reads, before its workers start, so the plain answer (local
transcripts, no manifest in sight) is found here without importing the archive's readers
(``archive.read``: its manifest, storage and thread pool modules, about 15 ms).

Imports: the standard library and ``frames.plugin``; ``archive.read`` when a source may be an
archive (a manifest beside it or one level under it, a URL, archives opened already).

Examples:
    >>> ARCHIVE.root_of("/nonexistent") is None, ARCHIVE
    (True, <table source 'archive'>)
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

from cc_analytics.frames.plugin import Engine, TableSource

if TYPE_CHECKING:
    from cc_analytics.archive.read import Archive, Archives

MANIFEST = "manifest.json"
"""The name of an archive's manifest (``archive.manifest.NAME``; a test holds them equal)."""


class ArchiveSource(TableSource):
    """The archive as a table source: a folder or URL holding an archive manifest is read
    from its tables (``frames.registry.TABLE_SOURCES`` names :data:`ARCHIVE`)."""

    name: ClassVar[str] = "archive"
    no_events: ClassVar[str] = (
        "an archive keeps sessions, turns and problems as tables, not the events frame\n"
        "Hint: read the events of its raw copies (cc_analytics.archive.Archive.transcripts)."
    )

    def root_of(self, source: object) -> str | None:
        """``archive.read.archive_root``; None at once for local paths that hold no manifest."""
        if _plainly_transcripts(source):
            return None
        from cc_analytics.archive.read import archive_root

        return archive_root(source)

    def open(
        self, root: str, *, engine: Engine = "local", scheduler: str | None = None, workers: int | None = None
    ) -> Archive | Archives:
        """``archive.read.open_source``: the archive or archives at ``root``."""
        from cc_analytics.archive.read import open_source

        return open_source(root, engine=engine, scheduler=scheduler, workers=workers)


def manifest_folders(text: str) -> list[Path]:
    """The local folders ``text`` names that hold an archive manifest: itself, else those right
    under it (sorted), else none (not a folder, or one that cannot be listed)."""
    path = Path(text).expanduser()
    if (path / MANIFEST).is_file():
        return [path]
    try:
        names = os.listdir(path)
    except OSError:  # not a folder, or one that cannot be listed: the loaders say so
        return []
    return sorted(path / name for name in names if os.path.isfile(os.path.join(path, name, MANIFEST)))


def _plainly_transcripts(source: object) -> bool:
    """Whether ``source`` is a local path, or a list of them, with no archive manifest in sight
    (:func:`manifest_folders`): then it names no archive. Anything else (a URL, archives opened
    already, an object of another kind) is ``archive.read.archive_root``'s to tell."""
    if source is None:
        return True
    items = list(source) if isinstance(source, list | tuple) else [source]
    for item in items:
        if not (type(item) is str or isinstance(item, PurePath)):  # an ArchiveSet is a str of its own kind
            return False
        text = os.fspath(item)
        if "://" in text or manifest_folders(text):
            return False
    return True


ARCHIVE = ArchiveSource()
"""The table source ``frames.registry`` lists."""
