"""The OpenCode format as every caller outside ``frames.opencode`` sees it.

Imports: the standard library and ``frames.plugin`` at import time (this module is imported
to tell files apart); ``frames.opencode.store`` (standard library, ``sqlite3``, ``frames.sources``)
when a method first needs it, and the verbs module (Polars) only through
:meth:`FormatPlugin.module`.

OpenCode's files are recognised by content: a SQLite database whose schema creates the
``session``, ``message`` and ``part`` tables (its first bytes hold both the SQLite magic and the
schema's text), or a JSON storage session (an object with ``id``, ``projectID`` and ``time``
and no ``type``). Folder walks list ``opencode*.db`` and the JSON storage's ``ses_*.json``
(:attr:`file_names`); a session's messages and parts are found from it.

Examples:
    >>> PLUGIN.recognizes({"id": "ses_1", "projectID": "global", "directory": "/w", "time": {"created": 1}}, b"")
    True
    >>> PLUGIN.recognizes(None, b"SQLite format 3\\x00 CREATE TABLE `session` ( CREATE TABLE `message` ( CREATE TABLE `part` (")
    True
    >>> PLUGIN.recognizes({"type": "user", "message": {}}, b"")
    False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cc_analytics.frames.plugin import FormatPlugin, is_safe_id

if TYPE_CHECKING:
    from cc_analytics.frames.sources import TranscriptFile

# Smaller than the engine's batches: a batch's part texts are Python strings until framed (every
# reader's batches, the table cache's included: with the engine's 64 MB, a first `sessions`
# through the cache of a 100 MB database took a 322 MB process).
BATCH_BYTES = 16 * 2**20


class OpenCodePlugin(FormatPlugin):
    """OpenCode (``$XDG_DATA_HOME/opencode``: ``opencode.db``, or the older ``storage/`` JSON files)."""

    name: ClassVar[str] = "opencode"
    label: ClassVar[str] = "OpenCode"
    package: ClassVar[str] = "cc_analytics.frames.opencode"
    worker_module: ClassVar[str] = "cc_analytics.frames.opencode.tables"
    store_hint: ClassVar[str] = "$XDG_DATA_HOME/opencode (opencode.db, storage/), default ~/.local/share/opencode"
    sniff_order: ClassVar[int] = 60
    file_names: ClassVar[tuple[str, ...]] = ("opencode*.db", "ses_*.json")
    # $XDG_DATA_HOME/opencode's sessions, a sub-task's with its parent's; a database stands for
    # all its sessions, a session file for its own.
    store_module: ClassVar[str | None] = "cc_analytics.frames.opencode.store"
    # A database's writes land in its -wal file first; a session file's messages and parts are files of their own.
    files_hold_sessions: ClassVar[bool] = False
    batch_bytes: ClassVar[int | None] = BATCH_BYTES
    lean_requests: ClassVar[bool] = True  # its requests are read without the parts (texts, tools)

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        """OpenCode's database (by its first bytes), or a JSON storage session file."""
        from cc_analytics.frames.opencode.store import is_database_head, is_session_object, session_of_head

        if head.startswith(b"SQLite format 3\x00"):
            return is_database_head(head)
        if isinstance(first, Mapping):
            return is_session_object(first)  # not copied: every file of every format is offered here
        return session_of_head(head) is not None

    def unit_bytes(self, path: Path) -> bytes | None:
        """A database: a consistent snapshot (SQLite's backup API, read-only). A JSON storage
        session: its file, its messages' and their parts' in one bundle (``store.bundle``)."""
        from cc_analytics.frames.opencode.store import (
            MAGIC,
            bundle,
            read_transcript,
            snapshot,
            storage_records,
            storage_root,
        )
        from cc_analytics.frames.opencode.store import classify as classify_file

        head = read_transcript(path, 1 << 16)
        if head.startswith(MAGIC):
            return snapshot(path)
        file = classify_file(path, size=0, head=head)
        return bundle(storage_records(path, file.agent_id or file.session_id), str(storage_root(path)))

    def watched(self, path: str) -> list[str]:
        """A database and its write-ahead log; a JSON storage session's file, messages and parts."""
        from cc_analytics.frames.opencode.store import watched

        return watched(path)

    def find_session(self, session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
        """The units of session ``session_id``: its own and its sub-tasks'."""
        if not is_safe_id(session_id):
            return []
        from cc_analytics.frames.opencode.store import find_session

        return find_session(session_id, stores)

    def latest_session(self, stores: Sequence[Path] | None = None) -> tuple[float, str] | None:
        """(time, id) of the main session OpenCode updated last."""
        from cc_analytics.frames.opencode.store import latest_session

        return latest_session(stores)


PLUGIN = OpenCodePlugin()
