"""The Claude model table: which models have a 1M-token window, and since which Claude Code version.

Imports: the standard library only, so the status line can size a window without Polars.
Facts from spec ``claude-code-jsonl.md`` ("Context occupancy and windows"): 200,000 tokens by
default; 1,000,000 for the 1M-context models (Sonnet 4.6; Opus 4.6 from Claude Code 2.1.75;
Opus 4.7 from 2.1.117; Fable 5, Sonnet 5, Opus 5), and always once a recorded occupancy passed
200,000. Transcripts record the model without the ``[1m]`` suffix, so the window is inferred.
``frames.claude.windows`` holds the same rule as a Polars expression; a test keeps them equal.
"""

from __future__ import annotations

import re

DEFAULT_WINDOW = 200_000
MILLION_WINDOW = 1_000_000
VERSION_PATTERN = r"^([0-9]+)\.([0-9]+)\.([0-9]+)"

# (model name pattern, first Claude Code version with the 1M window or None for always).
MILLION_MODELS: tuple[tuple[str, tuple[int, int, int] | None], ...] = (
    (r"^claude-sonnet-4-6", None),
    (r"^claude-opus-4-6", (2, 1, 75)),
    (r"^claude-opus-4-7", (2, 1, 117)),
    (r"^claude-fable-5", None),
    (r"^claude-sonnet-5", None),
    (r"^claude-opus-5", None),
)


def version_key(major: int, minor: int, patch: int) -> int:
    """A Claude Code version as one comparable integer: 2.1.75 → 2_001_075."""
    return major * 1_000_000 + minor * 1_000 + patch


def window_for(model: str | None, version: str | None = None, observed: int | None = None) -> int:
    """The inferred window of ``model`` as written by Claude Code ``version``; ``observed`` (a
    recorded occupancy) lifts it to 1M once it passes 200,000.

    Examples:
        >>> window_for("claude-opus-4-7", "2.1.117"), window_for("claude-haiku-4-5", None, 250_000)
        (1000000, 1000000)
        >>> window_for("claude-opus-4-6", "2.1.74")
        200000
    """
    if observed is not None and observed > DEFAULT_WINDOW:
        return MILLION_WINDOW
    if model is None:
        return DEFAULT_WINDOW
    parts = re.match(VERSION_PATTERN, version) if version is not None else None
    number = version_key(*(int(p) for p in parts.groups())) if parts else None
    for pattern, since in MILLION_MODELS:
        if re.search(pattern, model) and (since is None or (number is not None and number >= version_key(*since))):
            return MILLION_WINDOW
    return DEFAULT_WINDOW
