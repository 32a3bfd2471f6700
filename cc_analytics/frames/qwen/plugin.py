"""Qwen Code as a format plugin: how its chats are recognised, found and grouped.

Imports: the standard library and ``frames.plugin`` at import time (this module is imported to
tell files apart); ``frames.qwen.store`` when a method needs it, and the verbs module (Polars)
only through :meth:`FormatPlugin.module`.

Qwen Code (a Gemini CLI fork) writes one ``.jsonl`` per session under
``~/.qwen/projects/<project>/chats/``: records with ``uuid``, ``parentUuid``, ``sessionId``,
``timestamp`` and ``type`` (``user``, ``assistant``, ``tool_result``, ``system``), whose
``message`` holds Gemini API ``parts``. A file is recognised by such a record among its first
lines: a ``message`` made of ``parts``, or a ``systemPayload``, or ``usageMetadata``.

Examples:
    >>> PLUGIN.recognizes({"uuid": "u", "sessionId": "s", "type": "user", "message": {"role": "user", "parts": []}}, b"")
    True
    >>> PLUGIN.recognizes({"uuid": "u", "sessionId": "s", "type": "user", "message": {"role": "user", "content": "x"}}, b"")
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

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
QWEN_KEYS = ("systemPayload", "usageMetadata", "contextWindowSize")
# A first record cut by the head: Qwen Code writes uuid, parentUuid, then sessionId.
_CUT = re.compile(rb'\A\{"uuid":"[^"\\]*","parentUuid":(?:null|"[^"\\]*"),"sessionId":"')


class QwenPlugin(FormatPlugin):
    """Qwen Code chats (``$QWEN_RUNTIME_DIR`` or ``$QWEN_HOME``, default ``~/.qwen``: ``projects/<project>/chats/*.jsonl``)."""

    name: ClassVar[str] = "qwen"
    label: ClassVar[str] = "Qwen Code"
    package: ClassVar[str] = "cc_analytics.frames.qwen"
    worker_module: ClassVar[str] = "cc_analytics.frames.qwen.verbs"
    store_hint: ClassVar[str] = "$QWEN_RUNTIME_DIR/projects or $QWEN_HOME/projects, default ~/.qwen/projects"
    # its stores: ``$QWEN_RUNTIME_DIR/projects``, else ``$QWEN_HOME/projects``, else ``~/.qwen/projects``.
    store_module: ClassVar[str | None] = "cc_analytics.frames.qwen.store"
    sniff_order: ClassVar[int] = 45
    batch_bytes: ClassVar[int | None] = BATCH_BYTES  # its chats are Python objects until a batch is framed
    lean_requests: ClassVar[bool] = True  # its requests need no texts nor estimates

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        """A Qwen Code record (whole, or the start of one cut in ``head``)."""
        if isinstance(first, Mapping):
            if first.get("type") not in RECORD_TYPES or not isinstance(first.get("sessionId"), str):
                return False
            message = first.get("message")
            if isinstance(message, Mapping) and isinstance(message.get("parts"), list):
                return True
            return any(key in first for key in QWEN_KEYS)
        return _CUT.match(head) is not None and b'"parts":' in head


PLUGIN = QwenPlugin()
