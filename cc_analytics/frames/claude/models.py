"""The Claude model table: which models have a 1M-token window, and since which Claude Code version.

Imports: the standard library only, so the status line can size a window without Polars.
Facts from spec ``claude-code-jsonl.md`` ("Context occupancy and windows"): 200,000 tokens by
default; 1,000,000 for the 1M-context models (Sonnet 4.6; Opus 4.6 from Claude Code 2.1.75;
Opus 4.7 from 2.1.117; Fable 5, Sonnet 5, Opus 5), and always once a recorded occupancy passed
200,000. Transcripts record the model without the ``[1m]`` suffix, so the window is inferred;
a model name that carries the marker (``claude-opus-4-6[1m]``, as Claude Code's ``/model`` and
status line name it, or given with ``--model``) has the 1M window. :func:`window_evidence` says
which of these rules sized a window. ``frames.claude.windows`` holds the same rule as a Polars
expression; a test keeps them equal.
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
# The 1M marker Claude Code appends to a model's id (``sonnet[1m]``); transcripts leave it out.
MILLION_MARKER = r"(?i)\[1m\]"

# Why a window has its size (:func:`window_evidence`), as the ``context`` report's ``windowSource`` says.
OBSERVED_EVIDENCE = "a request above 200,000 tokens"
MARKER_EVIDENCE = "the [1m] marker of the model name"
MODEL_EVIDENCE = "the model's default"
DEFAULT_EVIDENCE = "the 200,000-token default"


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
    return window_evidence(model, version, observed)[0]


def window_evidence(model: str | None, version: str | None = None, observed: int | None = None) -> tuple[int, str]:
    """:func:`window_for`'s window and the evidence it rests on, in the order the rules are
    asked: a recorded occupancy above 200,000 (:data:`OBSERVED_EVIDENCE`), the ``[1m]`` marker
    (:data:`MARKER_EVIDENCE`), a 1M-context model of a version that has it
    (:data:`MODEL_EVIDENCE`, naming the model), else the 200,000 default.

    Examples:
        >>> window_evidence("claude-haiku-4-5", None, 250_000)
        (1000000, 'a request above 200,000 tokens')
        >>> window_evidence("claude-opus-4-5[1m]")
        (1000000, 'the [1m] marker of the model name')
        >>> window_evidence("claude-opus-4-6", "2.1.75")
        (1000000, "the model's default (claude-opus-4-6 from Claude Code 2.1.75)")
        >>> window_evidence("claude-opus-4-6", "2.1.74")
        (200000, 'the 200,000-token default')
    """
    if observed is not None and observed > DEFAULT_WINDOW:
        return MILLION_WINDOW, OBSERVED_EVIDENCE
    if model is None:
        return DEFAULT_WINDOW, DEFAULT_EVIDENCE
    if re.search(MILLION_MARKER, model):
        return MILLION_WINDOW, MARKER_EVIDENCE
    parts = re.match(VERSION_PATTERN, version) if version is not None else None
    number = version_key(*(int(p) for p in parts.groups())) if parts else None
    for pattern, since in MILLION_MODELS:
        if re.search(pattern, model) and (since is None or (number is not None and number >= version_key(*since))):
            family = pattern.lstrip("^")
            gate = "" if since is None else f" from Claude Code {'.'.join(map(str, since))}"
            return MILLION_WINDOW, f"{MODEL_EVIDENCE} ({family}{gate})"
    return DEFAULT_WINDOW, DEFAULT_EVIDENCE
