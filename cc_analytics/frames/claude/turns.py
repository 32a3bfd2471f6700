"""Turns of Claude Code transcripts: the reference's turn partition, as Polars expressions.

Imports: polars, ``frames.engine`` and the other modules of ``frames.claude``. Turns are
lifted from the measured decode (:data:`~cc_analytics.frames.claude.decode.TURNS`): block
tokens, tool names and errors, prompts and line uuids, no block text. A user line opens a turn exactly
when (spec ``context-window.md`` §5) it has an envelope, is not meta, sidechain, compact
summary, interrupted (a top-level string ``interruptedMessageId`` or text starting with
``[Request interrupted by user``) or agent-injected, and its text is not blank by Python's
rules. Every other line joins the current turn; lines before the first opener form turn 0.
Turns are numbered per file from 0, in file order.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.buckets import (
    SYSTEM_LIKE,
    TOKENS,
    bucket_sums,
    with_buckets,
)
from cc_analytics.frames.claude.decode import TURNS, Decoded, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.claude.events import Source, resolve
from cc_analytics.frames.claude.requests import IS_COMPACTION, ON_CHAIN, SEGMENT, annotate_chain, priced_requests
from cc_analytics.frames.claude.windows import context_window, window_columns
from cc_analytics.frames.engine import Progress, scan_batches
from cc_analytics.frames.requests import cost_totals

# Python's str.isspace() set (what lstrip()/strip() remove), as a regex class.
PY_SPACE = (
    r"[\t\n\x0B\x0C\r\x1C-\x1F \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}"
    r"\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]"
)
# (?i) folds case the Unicode simple way: ſ matches s and K (Kelvin) matches k, ı and İ do
# not match i. \s is Unicode White_Space, the set the markers' followers are tested with.
INTERRUPT_PATTERN = rf"(?i)^{PY_SPACE}*\[request interrupted by user"
INJECTED_PATTERN = (
    rf"(?i)^{PY_SPACE}*(?:"
    r"<(?:teammate-message|scheduled-task|agent-message|cross-session-message)(?:\s|/|>|$)"
    r"|another claude session sent a message:"
    r"|# augment agent(?:\s|$)"
    r"|\[role reminder(?:\s|:|\]|$))"
)
BLANK_PATTERN = rf"^{PY_SPACE}*$"
OPENS = "opens_turn"


def opens_turn() -> pl.Expr:
    """True for the user lines that open a turn (see the module docstring)."""
    text = pl.col(S.PROMPT_TEXT)
    typed = (
        text.is_not_null()
        & ~text.str.contains(BLANK_PATTERN)
        & ~text.str.contains(INTERRUPT_PATTERN)
        & ~text.str.contains(INJECTED_PATTERN)
    )
    return (
        (pl.col(S.TYPE) == "user")
        & pl.col(S.HAS_ENVELOPE)
        & ~pl.col(S.IS_META)
        & ~pl.col(S.IS_SIDECHAIN)
        & ~pl.col(S.IS_COMPACT_SUMMARY)
        & ~pl.col(S.HAS_INTERRUPTED_ID)
        & typed.fill_null(False)
    )


def turn_index() -> pl.Expr:
    """0-based turn number of each line within its file (turn 0 holds lines before an opener)."""
    opens = pl.col(OPENS).cast(pl.Int64)
    return (opens.cum_sum() - opens.first()).over(S.SOURCE_FILE)


def prepare(decoded: Decoded) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Events with row, opener, turn and usage columns; blocks with turn, bucket and tokens."""
    events = annotate_chain(
        decoded.events.lazy()
        .with_row_index(S.ROW)
        .with_columns(pl.col(S.ROW).cast(pl.Int64), opens_turn().alias(OPENS))
        .with_columns(turn_index().alias(S.TURN_INDEX))
    )
    attributes = events.select(
        S.ROW,
        S.SOURCE_FILE,
        S.TURN_INDEX,
        ON_CHAIN,
        SEGMENT,
        (pl.col(S.IS_META) | pl.col(S.IS_COMPACT_SUMMARY)).alias(SYSTEM_LIKE),
    )
    blocks = with_buckets(decoded.blocks.lazy().join(attributes, on=S.ROW, how="left", maintain_order="left"))
    return events, blocks


def lift_turns(events: pl.LazyFrame, blocks: pl.LazyFrame, requests: pl.LazyFrame) -> pl.LazyFrame:
    """One row per turn of every file in ``events`` (see :func:`prepare`): ``TURNS_SCHEMA``.

    ``requests`` are the batch's priced requests with their line's file and turn
    (:func:`~cc_analytics.frames.claude.requests.priced_requests`): a turn's cost is theirs.
    """
    keys = [S.SOURCE_FILE, S.TURN_INDEX]
    per_turn_cost = requests.group_by(keys).agg(*cost_totals())
    first_session = pl.col(S.SESSION_ID).drop_nulls().first()
    per_turn = events.group_by(keys, maintain_order=True).agg(
        pl.coalesce(first_session, pl.col(S.FILE_SESSION_ID).first()).alias(S.SESSION_ID),
        pl.col(S.AGENT_ID).drop_nulls().first(),
        pl.col(S.IS_SUBAGENT_FILE).first(),
        pl.col(S.UUID).filter(pl.col(S.HAS_ENVELOPE)).alias(S.EVENT_UUIDS),
        pl.col(S.PROMPT_TEXT).filter(pl.col(OPENS)).first().alias(S.PROMPT),
        pl.col(S.TIMESTAMP).min().alias(S.START_TIME),
        pl.col(S.TIMESTAMP).max().alias(S.END_TIME),
        pl.col(S.MODEL).filter(pl.col(ON_CHAIN) & ~pl.col(S.IS_API_ERROR)).drop_nulls().last(),
        pl.col(S.VERSION).drop_nulls().last(),
        pl.col(S.OCCUPANCY).drop_nulls().last(),
        pl.col(IS_COMPACTION).any().alias(S.COMPACTED),
        pl.col(SEGMENT).max().alias(SEGMENT),
    )
    tool_use = pl.col(S.KIND) == "tool_use"
    per_block = blocks.group_by(keys).agg(
        tool_use.sum().cast(pl.Int64).alias(S.TOOL_CALLS),
        pl.col(S.NAME).filter(tool_use).alias(S.TOOL_NAMES),
        (pl.col(S.IS_ERROR).fill_null(False) & (pl.col(S.KIND) == "tool_result"))
        .sum()
        .cast(pl.Int64)
        .alias(S.TOOL_ERRORS),
        *bucket_sums(pl.col(ON_CHAIN)),
    )
    before_segment = (
        blocks.filter(pl.col(ON_CHAIN))
        .group_by(S.SOURCE_FILE, SEGMENT)
        .agg(pl.col(TOKENS).sum().alias("_segment_tokens"))
        .sort(S.SOURCE_FILE, SEGMENT)
        .with_columns(
            (pl.col("_segment_tokens").cum_sum() - pl.col("_segment_tokens")).over(S.SOURCE_FILE).alias("_before")
        )
        .select(S.SOURCE_FILE, SEGMENT, "_before")
    )
    zero_fill = [S.TOOL_CALLS, S.TOOL_ERRORS, *S.BUCKETS, S.ESTIMATED_TOKENS]
    turns = (
        per_turn.join(per_block, on=keys, how="left", maintain_order="left")
        .with_columns(
            pl.col(zero_fill).fill_null(0),
            pl.col(S.TOOL_NAMES).fill_null([]),
            pl.when(pl.col(S.PROMPT).is_null()).then(pl.lit("assistant")).otherwise(pl.lit("user")).alias(S.ROLE),
        )
        .join(before_segment, on=[S.SOURCE_FILE, SEGMENT], how="left", maintain_order="left")
        .join(per_turn_cost, on=keys, how="left", maintain_order="left")
        .with_columns(
            pl.col(S.UNPRICED_REQUESTS).fill_null(0),
            (pl.col(S.ESTIMATED_TOKENS).cum_sum().over(S.SOURCE_FILE) - pl.col("_before").fill_null(0)).alias(
                S.ESTIMATED_CONTEXT
            ),
            pl.col(S.MODEL).forward_fill().over(S.SOURCE_FILE),
            pl.col(S.VERSION).forward_fill().over(S.SOURCE_FILE),
            pl.col(S.OCCUPANCY).cum_max().over(S.SOURCE_FILE).alias("_peak"),
        )
        .with_columns(context_window(S.MODEL, S.VERSION, "_peak").alias(S.WINDOW))
        .with_columns(
            *window_columns(),
            pl.when(pl.col(S.ESTIMATED_CONTEXT) > 0)
            .then(pl.col(S.OCCUPANCY).cast(pl.Float64) / pl.col(S.ESTIMATED_CONTEXT))
            .alias(S.CALIBRATION),
        )
    )
    return turns.with_columns(pl.lit(S.CLAUDE).alias(S.FORMAT)).select(list(S.TURNS_SCHEMA)).cast(S.TURNS_SCHEMA)


def turns_of(decoded: Decoded, files: Sequence[TranscriptFile]) -> pl.DataFrame:
    """Eager turns of the batch ``files`` decoded (any profile that keeps the line identity)."""
    events, blocks = prepare(decoded)
    frame = events.collect()
    return lift_turns(frame.lazy(), blocks, priced_requests(frame, files).lazy()).collect()


def turns_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """Turns of one batch of files (run in a worker process)."""
    return turns_of(decode_files(files, TURNS), files)


def scan_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per turn of every transcript file of ``source`` (``TURNS_SCHEMA``).

    ``source`` is a transcript file, a folder, a glob, a list of these (or of
    ``TranscriptFile``), or None for the Claude Code projects folders. ``turn_index``
    numbers the turns of each file from 0 as the reference does; a subagent file is one
    turn 0 of role ``assistant``. ``occupancy`` is the recorded prompt size of the turn's
    last main-chain request; buckets and ``estimated_context`` use the shared token
    estimator; ``calibration`` = occupancy / estimated context.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"summary","summary":"t"}\\n'
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n')
        >>> scan_turns(folder).select("turn_index", "role", "event_uuids").collect().rows()
        [(0, 'assistant', []), (1, 'user', ['u1'])]
    """
    return scan_batches(
        turns_batch,
        resolve(source),
        S.TURNS_SCHEMA,
        "claude_turns",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=TURNS.batch_bytes,
    )


def read_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_turns`.

    Examples:
        >>> read_turns([]).schema == S.TURNS_SCHEMA
        True
    """
    return scan_turns(source, workers=workers, on_progress=on_progress).collect()
