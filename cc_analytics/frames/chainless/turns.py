"""Turns of ChainlessChain transcripts, as Polars expressions over the decoded events and messages.

Imports: polars, ``frames.metrics``, ``frames.engine`` and the other ``frames.chainless``
modules. The turn rule: **a line opens a turn when it adds a message of role exactly
``"user"`` to the history by itself** — a ``user_message``, ``assistant_message`` or
``system`` event whose data is a replayable message with that role, or a completed
``ws_turn`` settlement (its user message). Checkpoint snapshots never open a turn (they
restate history). Every other line joins the current turn; lines before the first opener
(normally the ``session_start`` header and the system prompt) form turn 0. Turns are
numbered per file from 0, in file order, as Claude Code turns are.

Per turn (``TURNS_SCHEMA``):

* ``prompt``: the opener's text; ``role``: ``user``, or ``assistant`` for a turn 0 without one;
* ``start_time``/``end_time``: the smallest and largest numeric timestamp of its lines;
* ``tool_calls``/``tool_names``/``tool_errors``: its ``tool_call`` events, their ``tool``
  names, and those the compact form marks ``is_error``;
* ``compacted``: it holds a checkpoint (``compact`` or ``checkpoint_timeline_commit``);
* the five buckets and ``estimated_tokens``: the messages its lines added (a checkpoint's
  snapshot counts in the turn of the checkpoint); summed over a session's turns they are
  the session's buckets;
* ``estimated_context``: the context at the turn's end as ``cc context`` would replay it
  then (the last checkpoint's snapshot and the messages after it), so the last turn's
  equals the session's ``context_estimate``; ``occupancy`` is the same figure (nothing
  recorded measures the prompt), and ``calibration`` is null;
* ``model``: the model of the main ``token_usage`` record in force at the turn's end, else
  the recorded (header) model; ``window``: sized as ``cc context`` sizes the session, with
  that record; ``used_fraction``/``headroom`` from ``frames.metrics``;
* ``cost_usd``/``unpriced_requests``: the priced ``token_usage`` records of its lines;
* ``effective_window``/``autocompact_threshold`` (Claude Code concepts) and
  ``event_uuids`` (ChainlessChain events carry no ids) are null.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames.chainless import schema as S
from cc_analytics.frames.chainless.buckets import TOKENS, bucket_sums, with_tokens
from cc_analytics.frames.chainless.decode import Decoded, Profile, decode
from cc_analytics.frames.chainless.store import Source, resolve
from cc_analytics.frames.chainless.windows import resolved_window, shown_model
from cc_analytics.frames.engine import Progress, scan_batches
from cc_analytics.frames.requests import cost_totals
from cc_analytics.frames.sources import TranscriptFile

OPENS = "opens_turn"
CONTEXT = "context"
RECORD_ROW = "record_row"
TOOL_CALL = "tool_call"
KEYS = [S.FILE, S.TURN_INDEX]
NULL_COLUMNS = (S.AGENT_ID, S.EVENT_UUIDS, S.EFFECTIVE_WINDOW, S.AUTOCOMPACT_THRESHOLD, S.CALIBRATION)


def opens_turn() -> pl.Expr:
    """True for the messages that open a turn (see the module docstring)."""
    return ~pl.col(S.FROM_CHECKPOINT) & (pl.col(S.ROLE) == "user")


def turn_index() -> pl.Expr:
    """0-based turn number of each line within its file (turn 0 holds lines before an opener)."""
    opens = pl.col(OPENS).cast(pl.Int64)
    return (opens.cum_sum() - opens.first()).over(S.FILE)


def utc_time(milliseconds: pl.Expr) -> pl.Expr:
    """Milliseconds since the epoch as a UTC datetime; null when out of range."""
    return (milliseconds * 1000).round().cast(pl.Int64, strict=False).cast(S.UTC_TIME)


def prepare(decoded: Decoded) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Events with opener, turn and segment columns; messages with their turn and tokens."""
    messages = with_tokens(decoded.messages.lazy())
    openers = messages.filter(opens_turn()).select(S.FILE, S.LINE, pl.lit(True).alias(OPENS)).unique()
    events = (
        decoded.events.lazy()
        .join(openers, on=[S.FILE, S.LINE], how="left", maintain_order="left")
        .with_columns(pl.col(OPENS).fill_null(False))
        .with_columns(
            turn_index().alias(S.TURN_INDEX),
            pl.col(S.IS_CHECKPOINT).cast(pl.Int64).cum_sum().over(S.FILE).alias(S.SEGMENT),
        )
    )
    placed = messages.join(
        events.select(S.FILE, S.LINE, S.TURN_INDEX, OPENS), on=[S.FILE, S.LINE], how="left", maintain_order="left"
    )
    return events, placed


def lift_turns(decoded: Decoded, requests: pl.LazyFrame) -> pl.LazyFrame:
    """One row per turn of every file of a batch decoded with ``Profile.EVENTS``: ``TURNS_SCHEMA``.

    ``requests`` are the batch's priced requests with their ``file`` and ``line``
    (:func:`~cc_analytics.frames.chainless.requests.priced_requests`): a turn's cost is theirs.
    """
    events, messages = prepare(decoded)
    placed_requests = requests.join(
        events.select(S.FILE, S.LINE, S.TURN_INDEX), on=[S.FILE, S.LINE], how="left", maintain_order="left"
    )
    per_turn_cost = placed_requests.group_by(KEYS).agg(*cost_totals())
    main_usage = (pl.col(S.TYPE) == "token_usage") & pl.col(S.IS_MAIN_USAGE).fill_null(False)
    tool_call = pl.col(S.TYPE) == TOOL_CALL
    per_line = events.with_row_index(RECORD_ROW).with_columns(
        pl.when(main_usage).then(pl.col(RECORD_ROW)).forward_fill().over(S.FILE).alias(RECORD_ROW),
        utc_time(pl.col(S.TIMESTAMP)).alias(S.START_TIME),
    )
    per_turn = per_line.group_by(KEYS, maintain_order=True).agg(
        pl.col(S.SOURCE_FILE).first(),
        pl.col(S.SESSION_ID).first(),
        pl.col(S.START_TIME).min(),
        pl.col(S.START_TIME).max().alias(S.END_TIME),
        tool_call.sum().cast(pl.Int64).alias(S.TOOL_CALLS),
        pl.col(S.TOOL).filter(tool_call).drop_nulls().alias(S.TOOL_NAMES),
        (tool_call & pl.col(S.IS_ERROR).fill_null(False)).sum().cast(pl.Int64).alias(S.TOOL_ERRORS),
        pl.col(S.IS_CHECKPOINT).any().alias(S.COMPACTED),
        pl.col(S.SEGMENT).last(),
        pl.col(RECORD_ROW).last(),
    )
    records = per_line.filter(main_usage).select(
        RECORD_ROW,
        pl.col(S.RECORDED_WINDOW).alias(S.RECORD_WINDOW),
        pl.col(S.MODEL).alias(S.RECORD_MODEL),
        pl.col(S.PROVIDER).alias(S.RECORD_PROVIDER),
    )
    per_turn_messages = messages.group_by(KEYS).agg(
        *bucket_sums(), pl.col(S.TEXT).filter(pl.col(OPENS) & opens_turn()).first().alias(S.PROMPT)
    )
    # The context at a turn's end: the running total of its segment at the last turn (up to
    # this one) that added messages to that segment; 0 when none has yet.
    running = (
        messages.group_by(S.FILE, S.SEGMENT, S.TURN_INDEX)
        .agg(pl.col(TOKENS).sum())
        .sort(S.FILE, S.SEGMENT, S.TURN_INDEX)
        .with_columns(pl.col(TOKENS).cum_sum().over(S.FILE, S.SEGMENT).alias(CONTEXT))
        .drop(TOKENS)
    )
    headers = decoded.files.lazy().select(S.FILE, S.RECORDED_MODEL, S.RECORDED_PROVIDER)
    zero_fill = [S.TOOL_CALLS, S.TOOL_ERRORS, *S.BUCKETS, S.ESTIMATED_TOKENS]
    turns = (
        per_turn.join(per_turn_messages, on=KEYS, how="left", maintain_order="left")
        .join(records, on=RECORD_ROW, how="left", maintain_order="left")
        .join(headers, on=S.FILE, how="left", maintain_order="left")
        .sort(S.FILE, S.SEGMENT, S.TURN_INDEX)
        # Both sides sorted by file, segment and turn: each group by turn (which Polars cannot
        # check when groups are given, and says so on stderr).
        .join_asof(running, on=S.TURN_INDEX, by=[S.FILE, S.SEGMENT], strategy="backward", check_sortedness=False)
        .sort(KEYS)
        .join(per_turn_cost, on=KEYS, how="left", maintain_order="left")
        .with_columns(
            pl.col(S.UNPRICED_REQUESTS).fill_null(0),
            pl.col(zero_fill).fill_null(0),
            pl.col(CONTEXT).fill_null(0).alias(S.ESTIMATED_CONTEXT),
            pl.when(pl.col(S.PROMPT).is_null()).then(pl.lit("assistant")).otherwise(pl.lit("user")).alias(S.ROLE),
            pl.coalesce(S.RECORD_MODEL, shown_model()).alias(S.MODEL),
            resolved_window().alias(S.WINDOW),
        )
        .with_columns(pl.col(S.ESTIMATED_CONTEXT).alias(S.OCCUPANCY))
        .with_columns(
            metrics.used_fraction(S.OCCUPANCY, S.WINDOW).alias(S.USED_FRACTION),
            metrics.headroom(S.OCCUPANCY, S.WINDOW).alias(S.HEADROOM),
            pl.lit(S.CHAINLESS).alias(S.FORMAT),
            pl.lit(False).alias(S.IS_SUBAGENT_FILE),
        )
    )
    nulls = (pl.lit(None, S.TURNS_SCHEMA[name]).alias(name) for name in NULL_COLUMNS)
    return turns.with_columns(*nulls).select(list(S.TURNS_SCHEMA)).cast(S.TURNS_SCHEMA)


def turns_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """Turns of one batch of transcripts (run in a worker process)."""
    from cc_analytics.frames.chainless.requests import priced_requests

    decoded = decode(files, Profile.EVENTS)
    return lift_turns(decoded, priced_requests(decoded).lazy()).collect()


def scan_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per turn of every transcript of ``source`` (``TURNS_SCHEMA``).

    A user prompt opens a turn; the exact rule and every column are in the module docstring.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"session_start","timestamp":1767225600000,"data":{"model":"gpt-4o"}}\\n'
        ...     '{"type":"user_message","timestamp":1767225601000,"data":{"role":"user","content":"hi"}}\\n'
        ...     '{"type":"assistant_message","timestamp":1767225602000,"data":{"role":"assistant","content":"hello"}}\\n')
        >>> scan_turns(folder).select("turn_index", "role", "prompt", "estimated_context").collect().rows()
        [(0, 'assistant', None, 0), (1, 'user', 'hi', 3)]
    """
    return scan_batches(
        turns_batch, resolve(source), S.TURNS_SCHEMA, "chainless_turns", workers=workers, on_progress=on_progress
    )


def read_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_turns`.

    Examples:
        >>> read_turns([]).height
        0
    """
    return scan_turns(source, workers=workers, on_progress=on_progress).collect()
