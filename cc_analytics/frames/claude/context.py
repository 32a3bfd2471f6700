"""The ``context`` report of one Claude Code session, as the JSON-ready dict the CLI prints.

Imports: polars, ``cc_analytics.format`` and the other modules of ``frames.claude``. The
session is decoded once with the measured profile and summarised as ``sessions`` does; the
heuristic breakdown covers the current context (main chain since the last compaction).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from cc_analytics.format import fraction_4
from cc_analytics.frames import metrics
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.buckets import BUCKET, BUCKET_NAMES, TOKENS
from cc_analytics.frames.claude.decode import SESSIONS, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile, find_session
from cc_analytics.frames.claude.kept import kept_window
from cc_analytics.frames.claude.models import window_evidence
from cc_analytics.frames.claude.requests import ON_CHAIN, PROVIDER, SEGMENT
from cc_analytics.frames.claude.sessions import prepared, summarize
from cc_analytics.frames.context_report import BREAKDOWN_KEYS, context_report


def claude_context(
    session_id: str,
    *,
    roots: list[Path] | None = None,
    model: str | None = None,
    files: list[TranscriptFile] | None = None,
    contents: Sequence[bytes] | None = None,
) -> dict[str, Any] | None:
    """The ``context`` report of one Claude Code session, or None when it is not found.

    Keys, in order: the ChainlessChain ``cc context`` keys (``sessionId``, ``model``,
    ``provider``, ``contextWindow``, ``totalTokens``, ``usedFraction``, ``remainingTokens``,
    ``messageCount``, ``breakdown``, ``counts``, ``overflows``) measured with the heuristic
    buckets over the current context (main chain since the last compaction), then recorded
    fields (``recordedTokens``, ``peakTokens``, ``compactions`` …); see ``docs/claude-context.md``.
    ``model`` sizes the window for that model instead of the recorded one. ``files`` (with
    their bytes in ``contents``, e.g. an archive's raw copies) are the session's transcripts,
    instead of looking them up under ``roots``.

    Examples:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> (root / "p").mkdir()
        >>> _ = (root / "p" / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hello"}}\\n')
        >>> report = claude_context("s", roots=[root])
        >>> report["contextWindow"], report["totalTokens"], report["breakdown"]["user"]
        (200000, 2, 2)
        >>> claude_context("missing", roots=[root]) is None
        True
    """
    if files is None:
        files = find_session(session_id, roots)
    if not files:
        return None
    events, blocks = prepared(decode_files(files, SESSIONS, contents=contents))
    row = summarize(events, blocks, files).row(0, named=True)
    current = blocks.filter(
        pl.col(ON_CHAIN) & ~pl.col(S.IS_SUBAGENT_FILE) & (pl.col(SEGMENT) == pl.col(SEGMENT).max().over(S.SOURCE_FILE))
    )
    per_bucket = current.group_by(BUCKET).agg(
        pl.col(TOKENS).sum().alias("tokens"), pl.col(S.ROW).n_unique().alias("messages")
    )
    tokens = dict.fromkeys(BUCKET_NAMES, 0)
    counts = dict.fromkeys(BUCKET_NAMES, 0)
    for bucket, value, messages in per_bucket.iter_rows():
        tokens[bucket] = int(value)
        counts[bucket] = int(messages)
    breakdown = dict(zip(BREAKDOWN_KEYS, (tokens[name] for name in BUCKET_NAMES), strict=True))
    window, source = session_window(session_id, model, row, events)
    recorded = row[S.LAST_OCCUPANCY]
    history = [
        {"trigger": trigger, "preTokens": pre, "postTokens": post}
        for trigger, pre, post in zip(
            row[S.COMPACTION_TRIGGERS],
            row[S.COMPACTION_PRE_TOKENS],
            row[S.COMPACTION_POST_TOKENS],
            strict=True,
        )
    ]
    return context_report(
        session_id,
        model=model or row[S.LAST_MODEL],
        provider=PROVIDER,
        window=window,
        breakdown=breakdown,
        counts={key: counts[name] for key, name in zip(BREAKDOWN_KEYS[:4], BUCKET_NAMES[:4], strict=True)},
        message_count=current.select(pl.col(S.ROW).n_unique()).item(),
        recorded={
            "recordedTokens": recorded,
            "recordedFraction": None if recorded is None else fraction_4(metrics.used_fraction_of(recorded, window)),
            "recordedRemainingTokens": None if recorded is None else metrics.headroom_of(recorded, window),
            "peakTokens": row[S.PEAK_OCCUPANCY],
            "effectiveWindow": metrics.effective_window_of(window),
            "autoCompactThreshold": metrics.autocompact_threshold_of(window),
            "windowSource": source,
            "compactions": row[S.COMPACTIONS],
            "compactionHistory": history,
            "inputTokens": row[S.INPUT_TOKENS],
            "cacheCreationTokens": row[S.CACHE_CREATION_TOKENS],
            "cacheReadTokens": row[S.CACHE_READ_TOKENS],
            "outputTokens": row[S.OUTPUT_TOKENS],
            "cacheHitRatio": None if row[S.CACHE_HIT_RATIO] is None else fraction_4(row[S.CACHE_HIT_RATIO]),
            "requests": row[S.REQUESTS],
            "turns": row[S.TURNS],
            "models": list(row[S.MODELS]),
            "estimateCalibration": None if row[S.CALIBRATION] is None else fraction_4(row[S.CALIBRATION]),
            "project": row[S.PROJECT],
            "firstTime": _iso(row[S.FIRST_TIME]),
            "lastTime": _iso(row[S.LAST_TIME]),
            "files": row[S.FILES],
            "subagentFiles": row[S.SUBAGENT_FILES],
            "costUSD": row[S.COST_USD],
            "unpricedRequests": row[S.UNPRICED_REQUESTS],
        },
    )


STATUS_LINE_EVIDENCE = "Claude Code's status line (context_window)"


def session_window(session_id: str, model: str | None, row: dict[str, Any], events: pl.DataFrame) -> tuple[int, str]:
    """The session's window and what it rests on: ``--model``'s window when it is given, else
    the one Claude Code's status line reported for the session (``frames.claude.kept``), else
    the sessions frame's inference (the last model and Claude Code version of the main
    transcript, lifted by the peak occupancy; :func:`~.models.window_evidence`)."""
    if model:
        size, why = window_evidence(model)
        return size, f"--model {model}: {why}"
    kept = kept_window(session_id)
    if kept is not None:
        return kept, STATUS_LINE_EVIDENCE
    versions = events.filter(~pl.col(S.IS_SUBAGENT_FILE))[S.VERSION].drop_nulls()
    size, why = window_evidence(row[S.LAST_MODEL], versions[-1] if len(versions) else None, row[S.PEAK_OCCUPANCY])
    if size != row[S.WINDOW]:  # the frame's rule and its scalar twin disagree: trust the frame, say so
        return int(row[S.WINDOW]), "the sessions frame's inference"
    return size, why


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
