"""The ``context`` report of one OpenCode session, as the JSON-ready dict the CLI prints.

Imports: polars, ``frames.context_report`` and the other modules of ``frames.opencode``. The
session is decoded once (``tables.tables_batch``). The report leads with the occupancy taken
from the last request's recorded usage (input, cache read and write, output and reasoning:
OpenCode's own "context" figure) against the window inferred from the model's name
(``tables.MODEL_WINDOWS``; :data:`DEFAULT_WINDOW` when unknown); the heuristic ``breakdown``
covers the session's own turns since its last compaction. A session without usage is
reported on the estimate. After the ``cc context`` keys: ``estimatedTokens``,
``reasoningTokens`` of the last request, and ``recordedCostUsd`` (what OpenCode itself
recorded for the session, beside our ``costUsd``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from cc_analytics.frames.context_report import context_report as build_report
from cc_analytics.frames.opencode import schema as S
from cc_analytics.frames.opencode.decode import decode
from cc_analytics.frames.opencode.tables import MODEL_WINDOWS, lift_turns, priced_requests, summarize
from cc_analytics.frames.sources import TranscriptFile

DEFAULT_WINDOW = 200_000
BREAKDOWN = {
    "system": S.TOKENS_SYSTEM,
    "user": S.TOKENS_USER,
    "assistant": S.TOKENS_ASSISTANT,
    "tool": S.TOKENS_TOOL,
    "toolCalls": S.TOKENS_TOOL_CALLS,
}


def context_report(
    session_id: str,
    files: Sequence[TranscriptFile],
    *,
    contents: Sequence[bytes] | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> dict[str, Any] | None:
    """The ``context`` report of session ``session_id`` from its units (None: nothing of it read).

    Examples:
        >>> context_report("none", []) is None
        True
    """
    own = [file for file in files if file.session_id == session_id]
    if not own:
        return None
    decoded = decode(own, contents=contents)
    requests = priced_requests(decoded)
    turns = lift_turns(decoded, requests)
    sessions = summarize(decoded, turns, requests).filter(pl.col(S.SESSION_ID) == session_id)
    if not sessions.height:
        return None
    row = sessions.row(0, named=True)
    main = decoded.files.filter(~pl.col(S.IS_SUBAGENT_FILE))[S.FILE].to_list() or decoded.files[S.FILE].to_list()
    mine = turns.filter(pl.col(S.FILE).is_in(main))
    segment = mine.with_columns(pl.col(S.COMPACTED).cast(pl.Int64).cum_sum().over(S.FILE).alias("_segment"))
    current = segment.filter(pl.col("_segment") == pl.col("_segment").max())
    breakdown = {key: int(current[name].sum()) for key, name in BREAKDOWN.items()}
    roles = decoded.messages.filter(pl.col(S.FILE).is_in(main))[S.ROLE]
    counts = {
        "system": 0,
        "user": int((roles == "user").sum()),
        "assistant": int((roles == "assistant").sum()),
        "tool": 0,
    }
    chosen = model or row[S.LAST_MODEL]
    window = next((size for prefix, size in MODEL_WINDOWS if chosen and chosen.startswith(prefix)), DEFAULT_WINDOW)
    last = requests.filter(pl.col(S.FILE).is_in(main)).tail(1)
    recorded_cost = decoded.messages[S.RECORDED_COST].sum()
    return build_report(
        session_id,
        model=chosen,
        provider=provider or row[S.PROVIDER] or "opencode",
        window=window,
        breakdown=breakdown,
        counts=counts,
        message_count=roles.len(),
        total=row[S.LAST_OCCUPANCY],
        recorded={
            "estimatedTokens": sum(breakdown.values()),
            "reasoningTokens": int(last[S.REASONING_TOKENS][0]) if last.height else None,
            "costUsd": row[S.COST_USD],
            "recordedCostUsd": recorded_cost if decoded.messages[S.RECORDED_COST].is_not_null().any() else None,
        },
    )
