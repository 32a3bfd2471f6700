"""The OpenAI Codex CLI format as every caller outside ``frames.codex`` sees it.

Imports: the standard library and ``frames.plugin`` at import time (this module is imported
to tell files apart); ``frames.codex.store`` (standard library, ``errors``, ``frames.sources``:
its :attr:`~FormatPlugin.store_module`) when a method first needs it, and the verbs module (Polars) only through
:meth:`FormatPlugin.module`.

A rollout is recognised by its first line, a ``session_meta`` record in Codex's envelope
(``{"timestamp":…,"type":"session_meta","payload":{…}}``), even when that line (which holds
the base instructions) is longer than the head the caller read; or, for rollouts written
before the envelope (mid 2025), by a first object of ``id``, ``timestamp`` and
``instructions`` alone.

Examples:
    >>> PLUGIN.recognizes({"timestamp": "2025-12-18T10:00:00.000Z", "type": "session_meta", "payload": {}}, b"")
    True
    >>> PLUGIN.recognizes(None, b'{"timestamp":"2025-12-18T10:00:00.000Z","type":"session_meta","payload":{"id":"x')
    True
    >>> PLUGIN.recognizes({"type": "user", "message": {}}, b"")
    False
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cc_analytics.frames.plugin import FormatPlugin, is_safe_id

if TYPE_CHECKING:
    from cc_analytics.frames.sources import TranscriptFile

ENVELOPE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
LEGACY_HEADER_KEYS = frozenset({"id", "timestamp", "instructions", "git"})
# The top of a first line cut by the head: Codex writes the timestamp, then the type.
_CUT_META = re.compile(
    rb'\A\s*\{\s*"timestamp"\s*:\s*"[^"\\]*"\s*,\s*(?:"ordinal"\s*:\s*-?[0-9]+\s*,\s*)?"type"\s*:\s*"session_meta"\s*,'
)


class CodexPlugin(FormatPlugin):
    """OpenAI Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``)."""

    name: ClassVar[str] = "codex"
    label: ClassVar[str] = "OpenAI Codex CLI"
    package: ClassVar[str] = "cc_analytics.frames.codex"
    worker_module: ClassVar[str] = "cc_analytics.frames.codex.sessions"
    store_hint: ClassVar[str] = "$CODEX_HOME/sessions and $CODEX_HOME/archived_sessions, default ~/.codex"
    store_option: ClassVar[str | None] = "--codex-home"
    native_module: ClassVar[str | None] = "cc_analytics.frames.codex._scan"  # the lean scan's loop (_scan.c)
    has_limits: ClassVar[bool] = True  # token_count events record the plan's rate limits
    store_module: ClassVar[str | None] = "cc_analytics.frames.codex.store"  # $CODEX_HOME's rollouts, grouped by session
    # Codex names every rollout so; Claude Code's "*.jsonl" still finds one renamed.
    file_names: ClassVar[tuple[str, ...]] = ("rollout-*.jsonl",)
    # Asked before the formats that take what nobody else claims: the signature is specific.
    sniff_order: ClassVar[int] = 50

    def batching(self, total: int, *, turns: bool) -> tuple[int, bool]:
        """Without turns, the lean scan's batches (:func:`lean_batch_bytes`), in threads when its
        C loop (which releases the GIL) is built."""
        if turns:
            return super().batching(total, turns=turns)
        from cc_analytics.frames import extension

        return lean_batch_bytes(total), extension.load(self.native_module) is not None

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        """A ``session_meta`` first line (whole, or cut in ``head``), or a rollout from before the envelope."""
        if isinstance(first, Mapping):
            kind, payload, stamp = first.get("type"), first.get("payload"), first.get("timestamp")
            if kind in ENVELOPE_TYPES and isinstance(payload, Mapping) and isinstance(stamp, str):
                return True
            keys = set(first)
            return (
                "type" not in keys
                and {"id", "timestamp", "instructions"} <= keys <= LEGACY_HEADER_KEYS
                and isinstance(first.get("id"), str)
                and isinstance(stamp, str)
            )
        return _CUT_META.match(head) is not None

    def find_session(self, session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
        """The rollouts of session ``session_id``: its own and those of the subagents it spawned."""
        if not is_safe_id(session_id):
            return []
        from cc_analytics.frames.codex.store import find_session

        return find_session(session_id, stores)

    def latest_session(self, stores: Sequence[Path] | None = None) -> tuple[float, str] | None:
        """(modification time, id) of the session whose own rollout was written last; only the
        heads of the newest files are read."""
        from cc_analytics.frames.codex.store import latest_session

        return latest_session(stores)


PLUGIN = CodexPlugin()


def lean_batch_bytes(total: int) -> int:
    """Batch size for the lean scan of ``total`` bytes: half of it (a batch per thread: each
    batch costs its Polars queries, some 25 ms of CPU whatever its size, and a batch's frames
    take memory in proportion to it; the engine cuts batches of equal size, so neither thread
    waits long for the other), between 64 MiB (on a 100 MB home two batches took 0.44 CPU s
    where four took 0.53) and 512 MiB. On the 1 GB home, with the queries on the in-memory
    engine, halves took 0.91–0.99 s and a 208–211 MB process where quarters took 1.02–1.06 s
    and 178–183 MB (on the default engine halves had taken the process to 300 MB).

    Examples:
        >>> lean_batch_bytes(1_000_000_000) // 2**20, lean_batch_bytes(0) // 2**20
        (476, 64)
    """
    return min(max(-(-total // 2), LEAN_BATCH_MIN), LEAN_BATCH_MAX)


LEAN_BATCH_MIN, LEAN_BATCH_MAX = 64 * 2**20, 512 * 2**20
