"""Claude Code as a format plugin: how its files are recognised, found and grouped.

Imports: the standard library and ``frames.plugin`` at import time (a process that only
tells files apart never loads Polars); the rest of ``frames.claude`` when a method needs it.

Examples:
    >>> PLUGIN.name, PLUGIN.recognizes({"type": "user", "sessionId": "s"}, b"")
    ('claude-code', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cc_analytics.frames.plugin import FormatPlugin

if TYPE_CHECKING:
    from cc_analytics.frames.sources import TranscriptFile


# Keys of Claude Code's line envelopes (spec ``claude-code-jsonl.md``): one of them is on every
# line type it writes (messages, summaries, snapshots, queue operations, metadata lines).
ENVELOPE_KEYS = frozenset(
    (
        "sessionId", "uuid", "parentUuid", "leafUuid", "logicalParentUuid", "messageId", "message",
        "isSidechain", "userType", "cwd", "version", "requestId", "summary", "snapshot", "operation",
        "subtype", "isMeta", "content", "toolUseResult", "agentId", "gitBranch", "slug", "level",
        "isCompactSummary", "permissionMode", "customTitle", "isSnapshotUpdate",
    )
)  # fmt: skip
# The line types Claude Code writes: a line of one of them is Claude Code's even when bare.
LINE_TYPES = frozenset(
    (
        "user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
        "permission-mode", "attachment", "progress", "custom-title", "result",
    )
)  # fmt: skip


class ClaudePlugin(FormatPlugin):
    """Claude Code transcripts: ``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude/projects``),
    one file per session plus its subagents' files (spec ``claude-code-jsonl.md``).

    Recognised by an object line with a string ``type`` that is one of its line types
    (:data:`LINE_TYPES`) or beside one of the envelope's own keys (:data:`ENVELOPE_KEYS`), and no
    ``timestamp`` other than text; it is also the registry's fallback for files whose first lines hold
    no JSON object: its loader reports whatever it cannot read. A line in the Gemini API's shape is
    not one (an ``id`` without ``uuid`` or ``message``, a ``message`` made of ``parts``, a
    ``systemPayload``): Gemini
    CLI and Qwen Code write such lines, which stay theirs, or unrecognised, when their formats
    are not registered.
    """

    name = "claude-code"
    label = "Claude Code"
    package = "cc_analytics.frames.claude"
    worker_module = "cc_analytics.frames.claude.tables"
    store_hint = "~/.claude/projects (or each CLAUDE_CONFIG_DIR entry's projects folder)"
    store_option = "--claude-root"
    has_limits = True  # from the history the status line keeps (frames.claude.kept)
    has_composition = True
    has_findings = True
    sniff_order = 1000  # asked last: any object with a string type
    previews_windows = True
    native_module = "cc_analytics.frames.claude._skim"  # the line skimmer (_skim.c)
    store_module = "cc_analytics.frames.claude.discovery"  # resolve and classify; its stores are its roots

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        if first is None or not isinstance(first.get("type"), str):
            return False
        if "timestamp" in first and not isinstance(first["timestamp"], str):
            return False  # Claude Code writes ISO 8601 text
        message = first.get("message")
        if isinstance(message, Mapping) and isinstance(message.get("parts"), list):
            return False  # the Gemini API's content (Qwen Code); Claude Code's is ``content``
        if "systemPayload" in first:
            return False  # a Qwen Code record's payload: Claude Code writes none
        if "id" in first and "uuid" not in first and "message" not in first:
            return False  # a Gemini CLI message: Claude Code's lines carry a ``uuid`` or a ``message``
        return first["type"] in LINE_TYPES or not ENVELOPE_KEYS.isdisjoint(first)

    def default_stores(self) -> list[Path]:
        from cc_analytics.frames.claude.discovery import default_roots

        return default_roots()

    def protected_roots(self) -> list[Path]:
        """The config folders (each ``CLAUDE_CONFIG_DIR`` entry, and ``~/.claude`` always), not only
        their projects folders."""
        from cc_analytics.frames.claude.discovery import DEFAULT_CONFIG

        roots = [root.parent for root in self.default_stores()]
        home = DEFAULT_CONFIG.expanduser()
        return roots if home in roots else [*roots, home]

    def find_session(self, session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
        from cc_analytics.frames.claude.discovery import find_session
        from cc_analytics.frames.plugin import is_safe_id

        return find_session(session_id, list(stores) if stores else None) if is_safe_id(session_id) else []

    def context_report(
        self,
        session_id: str,
        files: Sequence[TranscriptFile],
        *,
        contents: Sequence[bytes] | None = None,
        model: str | None = None,
        provider: str | None = None,
    ) -> dict[str, Any] | None:
        from cc_analytics.frames.claude.context import claude_context

        return claude_context(session_id, model=model, files=list(files), contents=contents)


PLUGIN = ClaudePlugin()
