"""ChainlessChain as a format plugin: how its files are recognised, found and grouped.

Imports: the standard library and ``frames.plugin`` at import time; the rest of
``frames.chainless`` when a method needs it. Store rules follow ``cc-context.md`` §2.

Examples:
    >>> PLUGIN.recognizes({"type": "session_start", "timestamp": 1, "data": {}}, b"")
    True
    >>> PLUGIN.recognizes({"type": "user", "timestamp": "2026-01-01T00:00:00Z"}, b"")
    False
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cc_analytics.frames.plugin import FormatPlugin

if TYPE_CHECKING:
    from cc_analytics.frames.sources import TranscriptFile

SUFFIX = ".jsonl"
# The start of a record as ChainlessChain writes it (compact, type, numeric timestamp, data), at a
# line's start: what tells its file when the head holds no whole object line (a long first record
# after a line that is not one).
_CUT = re.compile(rb'(?:\A|\n)\{"type":"[^"\\\n]*","timestamp":[0-9]+(?:\.[0-9]+)?,"data":\{')


class ChainlessPlugin(FormatPlugin):
    """ChainlessChain headless transcripts: ``$CHAINLESSCHAIN_HOME/sessions`` (default
    ``~/.chainlesschain/sessions``), one ``<id>.jsonl`` per session.

    Recognised by a first object line with a numeric ``timestamp`` and a ``data`` key (its
    event envelope). The ``context`` command is byte-compatible with ``cc context`` for it, so
    it is asked first there.
    """

    name = "chainlesschain"
    label = "ChainlessChain"
    package = "cc_analytics.frames.chainless"
    worker_module = "cc_analytics.frames.chainless.sessions"
    store_hint = "~/.chainlesschain/sessions (or $CHAINLESSCHAIN_HOME/sessions)"
    store_option = "--sessions-dir"
    sniff_order = 10
    context_order = 0
    store_module = "cc_analytics.frames.chainless.store"  # resolve; its store and a file's unit are named apart

    def recognizes(self, first: Mapping[str, Any] | None, head: bytes) -> bool:
        if first is None:  # no whole object line in the head: a record of its own form, cut there
            return _CUT.search(head) is not None
        stamp = first.get("timestamp")
        numeric = isinstance(stamp, int | float) and not isinstance(stamp, bool)
        return numeric and "data" in first

    def default_stores(self) -> list[Path]:
        from cc_analytics.frames.chainless.store import default_sessions_dir

        return [default_sessions_dir()]

    def classify(self, path: Path, *, size: int, head: bytes) -> TranscriptFile:
        from cc_analytics.frames.chainless.store import transcript_file

        return transcript_file(path, size=size)

    def deleted(self, source: str, exists: Callable[[str], bool], read: Callable[[str], bytes]) -> bool:
        """A ``<id>.tombstone`` beside the transcript, or a ``<id>.meta.json`` saying ``"deleted": true``."""
        import orjson

        stem = source[: -len(SUFFIX)] if source.endswith(SUFFIX) else source
        if exists(stem + ".tombstone"):
            return True
        try:
            document = orjson.loads(read(stem + ".meta.json"))
        except (OSError, orjson.JSONDecodeError):
            return False
        return isinstance(document, dict) and document.get("deleted") is True

    def find_session(self, session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
        """The live transcript ``<id>.jsonl`` of the store (the last of ``stores``), as ``cc context`` finds it."""
        from cc_analytics.frames.chainless.store import session_path, transcript_file

        path = session_path(session_id, stores[-1] if stores else None)
        return [] if path is None else [transcript_file(path)]

    def latest_session(self, stores: Sequence[Path] | None = None) -> tuple[float, str] | None:
        """(last activity in seconds, id) of the live session with the latest activity in the
        store (the last of ``stores``), as ``cc context`` picks it: by the transcripts' own
        timestamps, not the files' modification times."""
        import polars as pl

        from cc_analytics.frames.chainless.sessions import iter_context
        from cc_analytics.frames.chainless.store import live_transcripts

        paths = live_transcripts(stores[-1] if stores else None)
        if not paths:
            return None
        frame = pl.concat([rows for rows, _ in iter_context(paths, workers=None)])
        latest = frame.sort(["last_activity", "session_id"], descending=True).row(0, named=True)
        return float(latest["last_activity"]) / 1000, latest["session_id"]

    def context_report(
        self,
        session_id: str,
        files: Sequence[TranscriptFile],
        *,
        contents: Sequence[bytes] | None = None,
        model: str | None = None,
        provider: str | None = None,
    ) -> dict[str, Any] | None:
        """The ``cc context`` report of the session's transcript; an unreadable one is an
        :class:`~cc_analytics.errors.InputError` naming it."""
        from cc_analytics.errors import InputError
        from cc_analytics.frames.chainless.sessions import context_batch, report_dict

        if not files:
            return None
        rows, problems = context_batch(list(files[:1]), model=model, provider=provider, contents=contents)
        unreadable = problems.filter(problems["line"].is_null())
        if unreadable.height and contents is None:
            file, _line, reason = unreadable.row(0)
            msg = f"cannot read {file}: {reason}"
            raise InputError(msg)
        report = report_dict(rows.row(0, named=True))
        report["sessionId"] = session_id
        return report


PLUGIN = ChainlessPlugin()
