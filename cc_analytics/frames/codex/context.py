"""The ``context`` report of one Codex session, as the JSON-ready dict the CLI prints.

Imports: polars, ``format``, ``frames.metrics``, ``frames.context_report`` and the other modules
of ``frames.codex``. The session is decoded once with the tables profile and summarised as
``sessions`` does. The report leads with the **recorded** occupancy (the last request's
``total_tokens``, what Codex's TUI counts): ``totalTokens``, ``usedFraction`` (of the whole
window, as the gauge draws it), ``remainingTokens`` and ``overflows`` are the recorded
figures; the heuristic ``breakdown`` (and its sum, ``estimatedTokens``) covers the current
context of the main rollout: its base instructions and every item since its last compaction.
A session with no recorded usage is reported on the estimate. After the ``cc context`` keys
come the recorded fields, as for Claude Code, plus ``contextLeftPercent`` (the "% context
left" Codex shows, baseline taken off), ``reasoningTokens`` and the latest ``rateLimits``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import polars as pl

from cc_analytics.format import fraction_4
from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Profile, decode
from cc_analytics.frames.codex.ratelimits import rate_limit_rows
from cc_analytics.frames.codex.requests import priced_requests
from cc_analytics.frames.codex.sessions import PRIMARY, current_context, primary_files, summarize
from cc_analytics.frames.codex.turns import lift_turns, prepare
from cc_analytics.frames.codex.windows import BASELINE_TOKENS, DEFAULT_WINDOW, context_left_percent, window_of_model
from cc_analytics.frames.context_report import BREAKDOWN_KEYS
from cc_analytics.frames.context_report import context_report as build_report
from cc_analytics.frames.sources import TranscriptFile

DEFAULT_PROVIDER = "openai"
# Bucket name → the report's breakdown key.
BREAKDOWN = dict(zip(S.BUCKET_NAMES, BREAKDOWN_KEYS, strict=True))


def context_report(
    session_id: str,
    files: Sequence[TranscriptFile],
    *,
    contents: Sequence[bytes] | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> dict[str, Any] | None:
    """The ``context`` report of session ``session_id`` from its rollouts (None: no rollout).

    ``contents`` holds the files' bytes when they were read elsewhere (an archive); ``model``
    sizes the window for that model instead of the recorded one; ``provider`` replaces the
    recorded provider.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.codex.store import resolve
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> usage = '{"input_tokens":16341,"cached_input_tokens":3584,"output_tokens":81,"total_tokens":16422}'
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"a"}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:01Z","type":"response_item","payload":{"type":"message",'
        ...     '"role":"user","content":[{"type":"input_text","text":"List the files"}]}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:09Z","type":"event_msg","payload":{"type":"token_count",'
        ...     '"info":{"total_token_usage":%s,"last_token_usage":%s,"model_context_window":258400}}}\\n' % (usage, usage))
        >>> report = context_report("a", resolve(folder))
        >>> report["totalTokens"], report["contextWindow"], report["breakdown"]["user"], report["contextLeftPercent"]
        (16422, 258400, 4, 98)
    """
    files = list(files)
    if not files:
        return None
    decoded = decode(files, Profile.TABLES, contents=contents)
    requests = priced_requests(decoded)
    turns = lift_turns(decoded, requests.lazy()).collect()
    sessions = summarize(decoded, turns, requests).filter(pl.col(S.SESSION_ID) == session_id)
    if not sessions.height:
        return None
    row = sessions.row(0, named=True)
    mine = primary_files(decoded).filter(pl.col(PRIMARY) & (pl.col(S.SESSION_ID) == session_id)).select(S.FILE)
    lines, items = prepare(decoded)
    current = current_context(items.join(mine, on=S.FILE), lines.join(mine, on=S.FILE))
    per_bucket = current.group_by(S.BUCKET).agg(pl.col(S.TOKENS).sum(), pl.len().alias("_items")).collect()
    tokens = dict.fromkeys(S.BUCKET_NAMES, 0)
    counts = dict.fromkeys(S.BUCKET_NAMES, 0)
    for bucket, value, number in per_bucket.iter_rows():
        tokens[bucket] = int(value)
        counts[bucket] = int(number)
    window = (window_of_model(model) or DEFAULT_WINDOW) if model else (row[S.WINDOW] or DEFAULT_WINDOW)
    recorded = row[S.LAST_OCCUPANCY]
    estimated = sum(tokens.values())
    mine_requests = requests.filter(pl.col(S.SESSION_ID) == session_id)
    report = build_report(
        session_id,
        model=model or row[S.LAST_MODEL],
        provider=provider or row[S.PROVIDER] or DEFAULT_PROVIDER,
        window=window,
        breakdown={BREAKDOWN[name]: tokens[name] for name in S.BUCKET_NAMES},
        counts={BREAKDOWN[name]: counts[name] for name in S.BUCKET_NAMES[:4]},
        message_count=sum(counts.values()),
        total=recorded,  # lead with what Codex recorded
        recorded={
            "occupancySource": "recorded" if recorded is not None else "estimated",
            "estimatedTokens": estimated,
            "recordedTokens": recorded,
            "contextLeftPercent": None if recorded is None else context_left_percent(recorded, window),
            "peakTokens": row[S.PEAK_OCCUPANCY],
            "effectiveWindow": window - BASELINE_TOKENS,
            "autoCompactThreshold": None,
            "compactions": row[S.COMPACTIONS],
            "compactionHistory": [
                {"trigger": trigger, "preTokens": pre, "postTokens": post}
                for trigger, pre, post in zip(
                    row[S.COMPACTION_TRIGGERS], row[S.COMPACTION_PRE_TOKENS], row[S.COMPACTION_POST_TOKENS], strict=True
                )
            ],
            "inputTokens": row[S.INPUT_TOKENS],
            "cacheCreationTokens": row[S.CACHE_CREATION_TOKENS],
            "cacheReadTokens": row[S.CACHE_READ_TOKENS],
            "outputTokens": row[S.OUTPUT_TOKENS],
            "reasoningTokens": int(mine_requests[S.REASONING_TOKENS].sum()),
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
            "rateLimits": latest_limits(rate_limit_rows(decoded).filter(pl.col(S.SESSION_ID) == session_id)),
            "windowSource": window_source(model, row[S.WINDOW]),
        },
    )
    return report


def window_source(model: str | None, recorded: int | None) -> str:
    """What the report's window rests on: ``--model``, the window Codex recorded, or the default.

    Examples:
        >>> window_source(None, 258_400), window_source("o3", None)
        ('what Codex recorded (model_context_window)', "--model o3: the model's window")
    """
    default = f"the {DEFAULT_WINDOW:,}-token default"
    if model:
        return f"--model {model}: " + ("the model's window" if window_of_model(model) else default)
    return "what Codex recorded (model_context_window)" if recorded else default + " (Codex recorded no window)"


def latest_limits(limits: pl.DataFrame) -> list[dict[str, Any]]:
    """The last recorded state of each rate-limit window, as report entries."""
    latest = limits.group_by(S.LIMIT_WINDOW, maintain_order=True).last().sort(S.LIMIT_WINDOW)
    return [
        {
            "window": row[S.LIMIT_WINDOW],
            "usedPercent": row[S.USED_PERCENT],
            "windowMinutes": row[S.WINDOW_MINUTES],
            "resetsAt": _iso(row[S.RESETS_AT]),
            "planType": row[S.PLAN_TYPE],
        }
        for row in latest.iter_rows(named=True)
    ]


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
