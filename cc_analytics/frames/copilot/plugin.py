"""GitHub Copilot CLI as a format plugin: how its session event logs are recognised, found and grouped.

Imports: the standard library and ``frames.plugin`` at import time (this module is imported to
tell files apart); ``frames.copilot.store`` when a method needs it, and the verbs module
(Polars) only through :meth:`FormatPlugin.module`.

Copilot CLI writes each session to ``~/.copilot/session-state/<session id>/events.jsonl``: one
event a line, ``{"type": ..., "data": {...}, "id": ..., "timestamp": ..., "parentId": ...}``,
the first a ``session.start`` whose ``data`` names the producer (``copilot-agent``). A file is
recognised by that first event, or by a first line that is another Copilot event (a dotted
``type`` of a known family, an object ``data`` and a ``parentId``). A file of its
OpenTelemetry file export (``frames.copilot.otel``) starts with a ``span``, ``log`` or
``metric`` record.

Examples:
    >>> PLUGIN.recognizes({"type": "session.start", "data": {"sessionId": "s", "producer": "copilot-agent"}}, b"")
    True
    >>> PLUGIN.recognizes({"type": "user.message", "data": {"content": "hi"}, "id": "e", "parentId": None}, b"")
    True
    >>> PLUGIN.recognizes({"type": "user", "message": {}}, b"")
    False
    >>> PLUGIN.recognizes({"type": "span", "traceId": "t", "attributes": {}}, b"")
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from cc_analytics.frames.plugin import FormatPlugin

BATCH_BYTES = 16 * 1024 * 1024
"""Bytes of event logs per batch, for every reader (the table cache's too: with the engine's
64 MB, a first ``sessions`` took the tree to 460-475 MB). Each batch costs Polars a fixed set of
queries, and holds its events as Python values until its frames are made: on a 1 GB home
(``sessions``, two workers, ``benchmarks/copilot_frames.py``, a loaded host) 8 MB batches took
11.4 CPU s with a process tree of 321 MB at its peak, 16 MB 10.2 s and 363 MB, 32 MB 9.2 s and
426 MB."""
REQUESTS_BATCH_BYTES = 64 * 1024 * 1024
"""Bytes of event logs per batch of the requests-only read (``usage``): it parses only the lines
requests are made of and keeps no event rows, so a batch holds little and bigger ones spare
Polars' fixed queries (1 GB home, ``usage --by day --no-cache``: 16 MB batches 1.23 s wall,
1.8 CPU s, tree 195 MB; 64 MB 0.98 s, 1.4 CPU s, 202 MB; 256 MB 0.94 s, 1.4 CPU s, 222 MB)."""
TALLY_BATCH_BYTES = 64 * 1024 * 1024
"""Bytes of event logs per batch without turns (``sessions``, ``usage`` of sessions): each log is
tallied (``events.parse``'s ``tally``), no event row is made, and a batch holds little but its
requests, so bigger batches spare Polars' fixed queries (1 GB home, one process: 16 MB batches
1.68 CPU s, 32 MB 1.22, 64 MB 1.06, 128 MB 0.92 with fewer batches to share between processes)."""
START = "session.start"
PRODUCER = "copilot"
EXPORT_TYPES = frozenset({"span", "log", "metric"})
FAMILIES = ("session.", "user.", "assistant.", "tool.", "system.", "subagent.", "hook.", "skill.")
# A first line cut by the head: the session.start event, its data first.
_CUT = re.compile(rb'\A\{"type":"session\.start","data":\{')


class CopilotPlugin(FormatPlugin):
    """GitHub Copilot CLI session events (``$COPILOT_HOME/session-state/<id>/events.jsonl``, default ``~/.copilot``)."""

    name: ClassVar[str] = "copilot"
    label: ClassVar[str] = "GitHub Copilot CLI"
    package: ClassVar[str] = "cc_analytics.frames.copilot"
    worker_module: ClassVar[str] = "cc_analytics.frames.copilot.verbs"
    store_hint: ClassVar[str] = (
        "$COPILOT_HOME/session-state/<session id>/events.jsonl and the OpenTelemetry export $COPILOT_HOME/otel, "
        "default ~/.copilot"
    )
    # its stores: ``$COPILOT_HOME/session-state`` (default ``~/.copilot/session-state``).
    store_module: ClassVar[str | None] = "cc_analytics.frames.copilot.store"
    sniff_order: ClassVar[int] = 50
    batch_bytes: ClassVar[int | None] = BATCH_BYTES
    lean_requests: ClassVar[bool] = True  # its requests are read from a few lines of each log
    requests_batch_bytes: ClassVar[int | None] = REQUESTS_BATCH_BYTES
    native_module: ClassVar[str | None] = "cc_analytics.frames.copilot._events"  # the event walk's loop (_events.c)

    def batching(self, total: int, *, turns: bool) -> tuple[int, bool]:
        """With turns, :data:`BATCH_BYTES`; without, :data:`TALLY_BATCH_BYTES`; in processes."""
        return (BATCH_BYTES if turns else TALLY_BATCH_BYTES), False

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        """A ``session.start`` of a Copilot producer, or another Copilot event (whole or cut in
        ``head``), or a record of the OpenTelemetry file export."""
        if isinstance(first, Mapping):
            kind, data = first.get("type"), first.get("data")
            if isinstance(kind, str) and kind in EXPORT_TYPES:
                return True
            if not isinstance(kind, str) or not isinstance(data, Mapping):
                return False
            if kind == START:
                producer = data.get("producer")
                return isinstance(producer, str) and PRODUCER in producer.lower()
            return kind.startswith(FAMILIES) and "parentId" in first and "id" in first
        if _CUT.match(head) is not None:
            return b'"producer":"copilot' in head
        from cc_analytics.frames.copilot.store import is_export

        return is_export(head)


PLUGIN = CopilotPlugin()
