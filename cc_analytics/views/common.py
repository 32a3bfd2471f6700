"""What every view shares, without Altair or widgets: the colours, the labels, the ``collect`` edge.

Imports: polars and ``frames.schema``. The explorer and the gauge draw with these and never
import Altair (in a Jupyter environment ``import altair`` can take over a second: jsonschema
builds its format checkers' grammars as it is imported).
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames import schema as S

Frame = pl.DataFrame | pl.LazyFrame

ZONE_COLOURS = {"green": "#2e9e44", "yellow": "#e3a500", "red": "#d1343a"}
BUCKET_LABELS = {
    S.TOKENS_SYSTEM: "system",
    S.TOKENS_USER: "user prompts",
    S.TOKENS_ASSISTANT: "assistant text",
    S.TOKENS_TOOL: "tool results",
    S.TOKENS_TOOL_CALLS: "tool calls",
}
UNATTRIBUTED = "not in transcript"
BUCKET_COLOURS = ["#6c8ebf", "#82b366", "#d6b656", "#ae4132", "#9673a6", "#c8c8c8"]
LIMIT_LABELS = {
    S.WINDOW: "window",
    S.EFFECTIVE_WINDOW: "effective window",
    S.AUTOCOMPACT_THRESHOLD: "auto-compact",
}
LIMIT_COLOURS = ["#555555", "#e3a500", "#d1343a"]
TOKEN_KINDS = {
    S.INPUT_TOKENS: "input",
    S.CACHE_CREATION_TOKENS: "cache write",
    S.CACHE_READ_TOKENS: "cache read",
    S.OUTPUT_TOKENS: "output",
}


def collect(frame: Frame) -> pl.DataFrame:
    """A DataFrame from a DataFrame or LazyFrame (the views' one ``collect`` edge)."""
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame
