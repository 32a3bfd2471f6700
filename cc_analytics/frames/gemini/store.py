"""Where Gemini CLI writes its chats, and which session each file holds.

Imports: the standard library, ``frames.sources`` and ``frames.gemini_family`` (no Polars: the
plugin uses this module to plan files). Rules:

* the store is ``$GEMINI_CLI_HOME/.gemini/tmp`` (``GEMINI_CLI_HOME`` is the folder Gemini CLI
  takes for the home folder; default ``~``); chats are the ``session-*.json`` and
  ``session-*.jsonl`` files of its ``<project>/chats`` folders (other files there, logs and
  checkpoints, are not sessions);
* a file's session id is its header's ``sessionId`` (a ``.jsonl``'s first line, a document's
  first key of that name, read from the head), else the file's stem;
* ``project_dir`` is the folder above ``chats``: the project's hash (or, in later versions,
  its short name). Gemini CLI records no working directory: ``project`` is null.

Examples:
    >>> classify(Path("/h/.gemini/tmp/0b7d/chats/session-a.json"), size=3, head=b'{"sessionId": "s1"}').session_id
    's1'
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from cc_analytics.frames.gemini_family import chat_files, file_size, head_of, project_dir_of, resolve_files
from cc_analytics.frames.sources import Source, TranscriptFile, name_filter, shown

HOME_ENV = "GEMINI_CLI_HOME"
FOLDER = ".gemini"
STORE = "tmp"
PATTERNS = ("session-*.json", "session-*.jsonl")
MAIN = "main"
_SESSION = re.compile(rb'"sessionId"\s*:\s*"((?:[^"\\]|\\.){1,200})"')


def gemini_home() -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` when the variable is set and not blank, else ``~/.gemini``."""
    home = os.environ.get(HOME_ENV, "").strip()
    base = Path(home).expanduser() if home else Path(os.environ.get("HOME") or Path.home())
    return base / FOLDER


def default_stores() -> list[Path]:
    """The folder Gemini CLI keeps its projects' chats in, existing or not.

    Examples:
        >>> import os
        >>> os.environ["GEMINI_CLI_HOME"] = "/tmp/g"
        >>> [str(p) for p in default_stores()]
        ['/tmp/g/.gemini/tmp']
        >>> del os.environ["GEMINI_CLI_HOME"]
    """
    return [gemini_home() / STORE]


def store_paths(stores: list[Path]) -> list[Path]:
    """The chats under existing stores (a ``.gemini`` folder stands for its ``tmp``)."""
    roots = [store / STORE if (store / STORE).is_dir() and store.name == FOLDER else store for store in stores]
    return chat_files(roots, name_filter(PATTERNS))


def session_id_of(path: Path, head: bytes) -> str:
    """The header's ``sessionId`` (first line parsed, else the first such key in the head), else the stem."""
    end = head.find(b"\n")
    try:
        value = json.loads(head if end < 0 else head[:end])
    except ValueError:
        value = None
    found = value.get("sessionId") if isinstance(value, dict) else None
    if not isinstance(found, str):
        match = _SESSION.search(head)
        if match is not None:
            try:
                found = json.loads(b'"' + match.group(1) + b'"')
            except ValueError:
                found = None
    if isinstance(found, str) and found.strip() and _safe(found):
        return found
    return path.name.split(".", 1)[0] if path.name.startswith("session-") else path.stem


def _safe(identifier: str) -> bool:
    from cc_analytics.frames.plugin import is_safe_id

    return is_safe_id(identifier)


def classify(path: Path, *, size: int, head: bytes) -> TranscriptFile:
    """A chat as the loaders see it, from its path, size and first bytes."""
    return TranscriptFile(path, shown(session_id_of(path, head)), None, MAIN, shown(project_dir_of(path)), size)


def transcript_file(path: Path) -> TranscriptFile:
    return classify(path, size=file_size(path), head=head_of(path))


def resolve(source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
    """The chats of a file, a folder (searched recursively), a glob, TranscriptFiles or a list
    of these, one session each; None: the default stores.

    Examples:
        >>> resolve([])
        []
    """
    return resolve_files(
        source, planned=planned, default_paths=lambda: store_paths(default_stores()), classify=transcript_file
    )
