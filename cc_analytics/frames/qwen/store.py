"""Where Qwen Code writes its chats, and which session each file holds.

Imports: the standard library and ``frames.chatlog.store`` (its :class:`~cc_analytics.frames.chatlog.store.Store`
finds, classifies and resolves the chats; no Polars: the plugin uses this module to plan files). Rules:

* the store is ``$QWEN_RUNTIME_DIR/projects`` (where Qwen Code keeps conversations), else
  ``$QWEN_HOME/projects``, else ``~/.qwen/projects``; chats are the ``*.jsonl`` files of its
  ``<project>/chats`` folders;
* a file's session id is its first record's ``sessionId``, else the file's stem (Qwen Code
  names the file after the session); a file is one session;
* ``project_dir`` is the folder above ``chats`` (the working directory, encoded); ``project``
  is the first ``cwd`` a record names.

Examples:
    >>> import os
    >>> os.environ["QWEN_HOME"] = "/tmp/q"
    >>> [str(p) for p in default_stores()]
    ['/tmp/q/projects']
    >>> del os.environ["QWEN_HOME"]
    >>> classify(Path("/h/.qwen/projects/-w/chats/a.jsonl"), size=3, head=b'{"uuid":"u","sessionId":"s1"}\\n').session_id
    's1'
"""

from __future__ import annotations

import os
from pathlib import Path

from cc_analytics.frames.chatlog.store import Store, header_session_id

RUNTIME_ENV = "QWEN_RUNTIME_DIR"
HOME_ENV = "QWEN_HOME"
FOLDER = ".qwen"
STORE = "projects"
PATTERNS = ("*.jsonl",)


def qwen_home() -> Path:
    """``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen`` (blank values are unset)."""
    for name in (RUNTIME_ENV, HOME_ENV):
        value = os.environ.get(name, "").strip()
        if value:
            return Path(value).expanduser()
    return Path(os.environ.get("HOME") or Path.home()) / FOLDER


def session_id_of(path: Path, head: bytes) -> str:
    """The first record's ``sessionId``, else the file's stem."""
    return header_session_id(head) or path.name.removesuffix(".jsonl")


CHAT_STORE = Store(qwen_home, STORE, PATTERNS, session_id_of)
"""Qwen Code's chats: a Qwen home (whatever its name) stands for its ``projects``."""
default_stores = CHAT_STORE.default_stores
classify = CHAT_STORE.classify
resolve = CHAT_STORE.resolve
