"""Where an agent of the chat-log family keeps its chats (:class:`Store`) and the helpers
every format's store uses to plan its files.

Imports: the standard library and ``frames.sources``, ``frames.plugin`` (inside functions; no
Polars: the plugins plan files with this module).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cc_analytics.frames.sources import Source, TranscriptFile

BATCH_BYTES = 16 * 1024 * 1024
"""Bytes of chats per batch (the plugins' ``batch_bytes``): a batch's messages are Python objects
until its frames are made, so smaller batches than the engine's keep two workers' tree under
300 MB on a 1 GB home (with the engine's 64 MB, a first ``sessions`` through the table cache
took Gemini CLI's to 380-390 MB and GitHub Copilot CLI's to 460-475 MB)."""


CHATS = "chats"
MAIN = "main"  # the layout of every chat (no subagent files)


class Store:
    """Where an agent of the family keeps its chats: ``<home>/<folder>/<project>/chats/``, and
    which session each file holds (each format's store module makes one; standard library only:
    the plugin plans files with it).

    Examples:
        >>> store = Store(lambda: Path("/h/.toy"), "tmp", ("*.jsonl",), lambda path, head: path.stem)
        >>> store.default_stores()
        [PosixPath('/h/.toy/tmp')]
        >>> chat = store.classify(Path("/h/.toy/tmp/p1/chats/a.jsonl"), size=3, head=b"")
        >>> chat.session_id, chat.layout, chat.project_dir
        ('a', 'main', 'p1')
        >>> store.resolve([])
        []
    """

    # A plain class, not a dataclass: every run plans with it, and ``dataclasses`` (with
    # ``inspect``) is 7 ms of imports a warm run does not otherwise make.
    __slots__ = ("folder", "home", "home_name", "patterns", "session_id")

    def __init__(
        self,
        home: Callable[[], Path],
        folder: str,
        patterns: tuple[str, ...],
        session_id: Callable[[Path, bytes], str],
        home_name: str | None = None,
    ) -> None:
        self.home = home  # the agent's home folder, from its environment
        self.folder = folder  # the store in the home folder (its projects' folders are in it)
        self.patterns = patterns  # the names of chat files in a ``chats`` folder
        self.session_id = session_id  # (path, first bytes) -> the file's session id
        self.home_name = home_name  # a folder stands for its store when so named (None: any folder)

    def default_stores(self) -> list[Path]:
        """The folder the agent keeps its projects' chats in, existing or not."""
        return [self.home() / self.folder]

    def store_paths(self, stores: list[Path]) -> list[Path]:
        """The chats under existing stores (a home folder stands for its store)."""
        from cc_analytics.frames.sources import name_filter

        roots = [
            store / self.folder if (store / self.folder).is_dir() and self.home_name in (None, store.name) else store
            for store in stores
        ]
        return chat_files(roots, name_filter(self.patterns))

    def classify(self, path: Path, *, size: int, head: bytes) -> TranscriptFile:
        """A chat as the loaders see it, from its path, size and first bytes."""
        from cc_analytics.frames.sources import TranscriptFile as File
        from cc_analytics.frames.sources import shown

        return File(path, shown(self.session_id(path, head)), None, MAIN, shown(project_dir_of(path)), size)

    def transcript_file(self, path: Path) -> TranscriptFile:
        return self.classify(path, size=file_size(path), head=head_of(path))

    def resolve(self, source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
        """The chats of a file, a folder (searched recursively), a glob, TranscriptFiles or a list
        of these, one session each; None: the default stores."""
        return resolve_files(
            source,
            planned=planned,
            default_paths=lambda: self.store_paths(self.default_stores()),
            classify=self.transcript_file,
        )


def header_session_id(head: bytes, search: re.Pattern[bytes] | None = None) -> str | None:
    """The ``sessionId`` of a file's first line (when that line has none, the string ``search``
    finds first in ``head``, its group 1), if it is a safe session id; else None.

    Examples:
        >>> header_session_id(b'{"sessionId": "s1"}\\n{}'), header_session_id(b'{"sessionId": "../x"}')
        ('s1', None)
        >>> import re
        >>> header_session_id(b'{\\n "sessionId": "s2",', re.compile(rb'"sessionId"\\s*:\\s*"([^"]*)"'))
        's2'
    """
    from cc_analytics.frames.plugin import is_safe_id

    end = head.find(b"\n")
    try:
        value = json.loads(head if end < 0 else head[:end])
    except ValueError:
        value = None
    found = value.get("sessionId") if isinstance(value, dict) else None
    if not isinstance(found, str) and search is not None:
        match = search.search(head)
        if match is not None:
            try:
                found = json.loads(b'"' + match.group(1) + b'"')
            except ValueError:
                found = None
    return found if isinstance(found, str) and found.strip() and is_safe_id(found) else None


def chat_files(stores: Sequence[Path], wanted: Callable[[str], bool]) -> list[Path]:
    """The files under existing ``stores`` that lie in a ``chats`` folder and whose names
    ``wanted`` takes, sorted (the agents keep other files beside their chats)."""
    from cc_analytics.frames.sources import walk

    return [
        path
        for path in walk([store for store in stores if store.is_dir()])
        if path.parent.name == CHATS and wanted(path.name)
    ]


def project_dir_of(path: Path) -> str:
    """The folder a chat's ``chats`` folder is in (a project's hash or name), else the file's folder.

    Examples:
        >>> project_dir_of(Path("/h/agent/tmp/0b7d/chats/session-a.json")), project_dir_of(Path("a/b.jsonl"))
        ('0b7d', 'a')
    """
    parent = path.parent
    return parent.parent.name if parent.name == CHATS and parent.parent.name else parent.name


def resolve_files(
    source: Source,
    *,
    planned: bool,
    default_paths: Callable[[], list[Path]],
    classify: Callable[[Path], TranscriptFile],
) -> list[TranscriptFile]:
    """The files of ``source`` (None: ``default_paths()``), each classified once (its real path
    once), in session then path order; a list of ``TranscriptFile`` is taken as it is."""
    from cc_analytics.frames.sources import RealPaths, expand, source_list
    from cc_analytics.frames.sources import TranscriptFile as File

    files: list[TranscriptFile] = []
    paths: list[Path] = []
    given = [] if source is None or planned else source_list(source)
    if given and all(isinstance(item, File) for item in given):
        # a plan's, as every format takes one: telling 4,215 Copilot CLI logs apart again by
        # their real paths took 86 ms a run
        return sorted(given, key=lambda f: (f.session_id, str(f.path)))  # type: ignore[arg-type]
    if source is None:
        paths = default_paths()
    elif planned:
        paths = [p if isinstance(p, Path) else Path(p) for p in source]  # type: ignore[arg-type, union-attr]
    else:
        for item in given:
            if isinstance(item, File):
                files.append(item)
            else:
                paths.extend(expand(item))
    if planned:  # told apart by their real paths already (frames.sources.split_by_format)
        files.extend(classify(path) for path in paths)
    else:
        real = RealPaths()
        seen = {real(f.path) for f in files}
        for path in paths:
            key = real(path)
            if key not in seen:
                seen.add(key)
                files.append(classify(path))
    return sorted(files, key=lambda f: (f.session_id, str(f.path)))


def head_of(path: Path) -> bytes:
    """A file's first bytes (``frames.sources.SNIFF_BYTES``), b"" when it cannot be read."""
    from cc_analytics.frames.sources import SNIFF_BYTES, read_transcript

    try:
        return read_transcript(path, SNIFF_BYTES)
    except OSError:
        return b""


def file_size(path: Path) -> int:
    from cc_analytics.frames.sources import file_size as size

    return size(path)
