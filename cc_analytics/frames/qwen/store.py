"""Where Qwen Code writes its chats, and which session each file holds.

Imports: the standard library, ``frames.sources`` and ``frames.gemini_family`` (no Polars: the
plugin uses this module to plan files). Rules:

* the store is ``$QWEN_RUNTIME_DIR/projects`` (where Qwen Code keeps conversations), else
  ``$QWEN_HOME/projects``, else ``~/.qwen/projects``; chats are the ``*.jsonl`` files of its
  ``<project>/chats`` folders;
* a file's session id is its first record's ``sessionId``, else the file's stem (Qwen Code
  names the file after the session); a file is one session;
* ``project_dir`` is the folder above ``chats`` (the working directory, encoded); ``project``
  is the first ``cwd`` a record names.

Examples:
    >>> classify(Path("/h/.qwen/projects/-w/chats/a.jsonl"), size=3, head=b'{"uuid":"u","sessionId":"s1"}\\n').session_id
    's1'
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cc_analytics.frames.gemini_family import chat_files, file_size, head_of, project_dir_of, resolve_files
from cc_analytics.frames.sources import Source, TranscriptFile, name_filter, shown

RUNTIME_ENV = "QWEN_RUNTIME_DIR"
HOME_ENV = "QWEN_HOME"
FOLDER = ".qwen"
STORE = "projects"
PATTERNS = ("*.jsonl",)
MAIN = "main"


def qwen_home() -> Path:
    """``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen`` (blank values are unset)."""
    for name in (RUNTIME_ENV, HOME_ENV):
        value = os.environ.get(name, "").strip()
        if value:
            return Path(value).expanduser()
    return Path(os.environ.get("HOME") or Path.home()) / FOLDER


def default_stores() -> list[Path]:
    """The folder Qwen Code keeps its projects' chats in, existing or not.

    Examples:
        >>> import os
        >>> os.environ["QWEN_HOME"] = "/tmp/q"
        >>> [str(p) for p in default_stores()]
        ['/tmp/q/projects']
        >>> del os.environ["QWEN_HOME"]
    """
    return [qwen_home() / STORE]


def store_paths(stores: list[Path]) -> list[Path]:
    """The chats under existing stores (a Qwen home stands for its ``projects``)."""
    roots = [store / STORE if (store / STORE).is_dir() else store for store in stores]
    return chat_files(roots, name_filter(PATTERNS))


def session_id_of(path: Path, head: bytes) -> str:
    """The first record's ``sessionId``, else the file's stem."""
    end = head.find(b"\n")
    try:
        value = json.loads(head if end < 0 else head[:end])
    except ValueError:
        value = None
    found = value.get("sessionId") if isinstance(value, dict) else None
    if isinstance(found, str) and found.strip() and _safe(found):
        return found
    return path.name.removesuffix(".jsonl")


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
