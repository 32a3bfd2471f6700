"""Gemini CLI as a format plugin: how its chats are recognised, found and grouped.

Imports: the standard library and ``frames.plugin`` at import time (this module is imported to
tell files apart); ``frames.gemini.store`` when a method needs it, and the verbs module
(Polars) only through :meth:`FormatPlugin.module`.

Gemini CLI writes each session under ``~/.gemini/tmp/<project>/chats/``: ``session-*.json``,
one JSON document (usually written over many lines), and since 0.40 ``session-*.jsonl``, a
header line then one line per message and the ``$set``/``$rewindTo`` lines that patch the
history. A file is recognised by its header: an object with a ``sessionId`` and a
``projectHash`` or ``messages`` (a first object line, or the first bytes of a document).

Examples:
    >>> PLUGIN.recognizes({"sessionId": "s", "projectHash": "h", "startTime": "t"}, b"")
    True
    >>> PLUGIN.recognizes(None, b'{\\n  "kind": "chat",\\n  "sessionId": "s",\\n  "messages": [')
    True
    >>> PLUGIN.recognizes({"type": "user", "message": {}}, b"")
    False
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from cc_analytics.frames.chatlog.store import BATCH_BYTES
from cc_analytics.frames.plugin import FormatPlugin

if TYPE_CHECKING:
    pass

HEADER_KEYS = ("projectHash", "messages")
# A document's first bytes: an object whose keys, before the first message, include these.
_DOCUMENT = re.compile(rb'\A\s*\{\s*"')
_SESSION_KEY = re.compile(rb'"sessionId"\s*:\s*"')
_HEADER_KEY = re.compile(rb'"(?:projectHash|messages)"\s*:')


class GeminiPlugin(FormatPlugin):
    """Gemini CLI chats (``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.json[l]``)."""

    name: ClassVar[str] = "gemini"
    label: ClassVar[str] = "Gemini CLI"
    package: ClassVar[str] = "cc_analytics.frames.gemini"
    worker_module: ClassVar[str] = "cc_analytics.frames.gemini.verbs"
    store_hint: ClassVar[str] = "$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats, default ~/.gemini/tmp"
    store_option: ClassVar[str | None] = None
    # its stores: ``$GEMINI_CLI_HOME/.gemini/tmp`` (``GEMINI_CLI_HOME``: the home folder).
    store_module: ClassVar[str | None] = "cc_analytics.frames.gemini.store"
    sniff_order: ClassVar[int] = 40
    batch_bytes: ClassVar[int | None] = BATCH_BYTES  # its chats are Python objects until a batch is framed
    lean_requests: ClassVar[bool] = True  # its requests need no texts nor estimates
    file_names: ClassVar[tuple[str, ...]] = ("*.jsonl", "session-*.json")

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        """A header object (``sessionId`` with ``projectHash`` or ``messages``), whole or in ``head``."""
        if isinstance(first, Mapping):
            return isinstance(first.get("sessionId"), str) and any(key in first for key in HEADER_KEYS)
        return (
            _DOCUMENT.match(head) is not None
            and _SESSION_KEY.search(head) is not None
            and _HEADER_KEY.search(head) is not None
        )


PLUGIN = GeminiPlugin()
