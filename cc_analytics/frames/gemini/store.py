"""Where Gemini CLI writes its chats, and which session each file holds.

Imports: the standard library and ``frames.chatlog.store`` (its :class:`~cc_analytics.frames.chatlog.store.Store`
finds, classifies and resolves the chats; no Polars: the plugin uses this module to plan files). Rules:

* the store is ``$GEMINI_CLI_HOME/.gemini/tmp`` (``GEMINI_CLI_HOME`` is the folder Gemini CLI
  takes for the home folder; default ``~``); chats are the ``session-*.json`` and
  ``session-*.jsonl`` files of its ``<project>/chats`` folders (other files there, logs and
  checkpoints, are not sessions);
* a file's session id is its header's ``sessionId`` (a ``.jsonl``'s first line, a document's
  first key of that name, read from the head), else the file's stem;
* ``project_dir`` is the folder above ``chats``: the project's hash (or, in later versions,
  its short name). Gemini CLI records no working directory: ``project`` is null.

Examples:
    >>> import os
    >>> os.environ["GEMINI_CLI_HOME"] = "/tmp/g"
    >>> [str(p) for p in default_stores()]
    ['/tmp/g/.gemini/tmp']
    >>> del os.environ["GEMINI_CLI_HOME"]
    >>> classify(Path("/h/.gemini/tmp/0b7d/chats/session-a.json"), size=3, head=b'{"sessionId": "s1"}').session_id
    's1'
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cc_analytics.frames.chatlog.store import Store, header_session_id

HOME_ENV = "GEMINI_CLI_HOME"
FOLDER = ".gemini"
STORE = "tmp"
PATTERNS = ("session-*.json", "session-*.jsonl")
_SESSION = re.compile(rb'"sessionId"\s*:\s*"((?:[^"\\]|\\.){1,200})"')


def gemini_home() -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` when the variable is set and not blank, else ``~/.gemini``."""
    home = os.environ.get(HOME_ENV, "").strip()
    base = Path(home).expanduser() if home else Path(os.environ.get("HOME") or Path.home())
    return base / FOLDER


def session_id_of(path: Path, head: bytes) -> str:
    """The header's ``sessionId`` (first line parsed, else the first such key in the head), else the stem."""
    found = header_session_id(head, _SESSION)
    if found is not None:
        return found
    return path.name.split(".", 1)[0] if path.name.startswith("session-") else path.stem


CHAT_STORE = Store(gemini_home, STORE, PATTERNS, session_id_of, home_name=FOLDER)
"""Gemini CLI's chats: a ``.gemini`` folder stands for its ``tmp``."""
default_stores = CHAT_STORE.default_stores
classify = CHAT_STORE.classify
resolve = CHAT_STORE.resolve
