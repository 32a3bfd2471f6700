"""The ``context`` JSON report of one session, for every format: built here and nowhere else.

Imports: the standard library, ``format`` (half-up rounding) and ``frames.metrics``. The keys
and their order are ChainlessChain's ``cc context --json`` (spec ``cc-context.md``), which the
ChainlessChain report must match byte for byte; a format whose transcripts record the
occupancy leads with it (``total``) and appends what they recorded after them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cc_analytics.format import fraction_4
from cc_analytics.frames import metrics

BREAKDOWN_KEYS = ("system", "user", "assistant", "tool", "toolCalls")
COUNT_KEYS = ("system", "user", "assistant", "tool")


def context_report(
    session_id: str,
    *,
    model: str | None,
    provider: str,
    window: int,
    breakdown: Mapping[str, int],
    counts: Mapping[str, int],
    message_count: int,
    recorded: Mapping[str, Any] | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """The report dict: ``cc context`` keys in order, then the ``recorded`` keys as given.

    ``breakdown`` holds the estimated tokens of the five buckets (:data:`BREAKDOWN_KEYS`),
    ``counts`` the messages of the first four; the total (``total`` when the transcript
    recorded the occupancy, else the breakdown's sum), used fraction (half-up to 4 places),
    remaining tokens and overflow come from :mod:`frames.metrics`.

    Examples:
        >>> r = context_report("s", model=None, provider="ollama", window=32768,
        ...     breakdown={"system": 0, "user": 1024, "assistant": 0, "tool": 0, "toolCalls": 0},
        ...     counts={"system": 0, "user": 1, "assistant": 0, "tool": 0}, message_count=1)
        >>> r["totalTokens"], r["usedFraction"], r["remainingTokens"], r["overflows"]
        (1024, 0.0313, 31744, False)
    """
    tokens = {key: int(breakdown[key]) for key in BREAKDOWN_KEYS}
    total = sum(tokens.values()) if total is None else int(total)
    report: dict[str, Any] = {
        "sessionId": session_id,
        "model": model,
        "provider": provider,
        "contextWindow": window,
        "totalTokens": total,
        "usedFraction": fraction_4(metrics.used_fraction_of(total, window)),
        "remainingTokens": metrics.headroom_of(total, window),
        "messageCount": message_count,
        "breakdown": tokens,
        "counts": {key: int(counts[key]) for key in COUNT_KEYS},
        "overflows": metrics.overflows_of(total, window),
    }
    report.update(recorded or {})
    return report
