"""Turns of Codex rollouts, as Polars expressions over the decoded lines, items and requests.

Imports: polars, ``frames.metrics``, ``frames.estimate``, ``frames.engine``, ``frames.requests``
and the other ``frames.codex`` modules. The turn rule: **a user prompt opens a turn** — an
``event_msg`` ``user_message`` (what the person typed, as Codex shows it), not replayed from a
fork's parent. A rollout without any (written before Codex recorded them) takes instead its
``response_item`` messages of role ``user`` that are not context Codex injects (text starting
with ``<``, such as ``<environment_context>``, or ``# AGENTS.md``). The turn starts at the
``turn_context`` Codex wrote just before the prompt when there is one (nothing between them
but context: no model output, tool line, compaction or other prompt; versions differ in which
of the two comes first), else at the prompt. Every other line joins the current turn; lines
before the first turn (the header, a fork's replayed history) form turn 0. Turns are numbered
per file from 0, in file order. Codex's own ``turn_id`` (of ``turn_context`` lines) is in the
events frame.

Per turn (``TURNS_SCHEMA``):

* ``prompt``: the opener's text; ``role``: ``user``, or ``assistant`` for a turn without one;
* ``start_time``/``end_time``: the earliest and latest timestamp of its lines;
* ``tool_calls``/``tool_names``: its tool calls (``function_call``, ``custom_tool_call``,
  ``local_shell_call``, ``web_search_call``, ``tool_search_call``, ``image_generation_call``;
  named by ``name``, else by kind); ``tool_errors``: its tool outputs that say the call failed;
* ``compacted``: it holds a compaction (a ``compacted`` line, or a ``context_compacted`` event
  not just after one);
* the five buckets and ``estimated_tokens``: what its lines add to the context (messages, tool
  calls and outputs, a compaction's replacement history; not replayed lines);
* ``estimated_context``: the context at the turn's end as the estimate sees it: the base
  instructions plus every item since the last compaction (a fork's replayed history counts:
  the model sees it);
* ``occupancy``: the recorded occupancy in force at the turn's end (the last request's
  ``total_tokens``); ``window``: the recorded window in force, else the model's;
  ``used_fraction`` follows Codex's TUI (``frames.codex.windows``), ``headroom`` is window −
  occupancy, ``effective_window`` window − 12,000; ``calibration`` = occupancy / estimated
  context; ``autocompact_threshold`` and ``event_uuids`` are null (not recorded);
* ``model``: the model in force at the turn's end; ``cost_usd``/``unpriced_requests``: the
  priced requests of its lines.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Decoded, Profile, decode
from cc_analytics.frames.codex.requests import POSITION, in_force, position, priced_requests, usage_rows, utc_time
from cc_analytics.frames.codex.store import Source, resolve
from cc_analytics.frames.codex.values import INJECTED_PREFIXES
from cc_analytics.frames.codex.windows import BASELINE_TOKENS, context_used_fraction, model_window
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, scan_batches
from cc_analytics.frames.estimate import estimate_tokens
from cc_analytics.frames.requests import cost_totals
from cc_analytics.frames.sources import TranscriptFile

OPENS = "opens_turn"
IS_PROMPT = "is_prompt"
SEGMENT = "segment"
IS_COMPACTION = "is_compaction"
IS_HEADER = "is_header"
LAST_LINE = "last_line"
CONTEXT = "context"
KEYS = [S.FILE, S.TURN_INDEX]
CALL_TOOLS = {
    "function_call": None,
    "custom_tool_call": None,
    "local_shell_call": "local_shell",
    "web_search_call": "web_search",
    "tool_search_call": "tool_search",
    "image_generation_call": "image_generation",
}
BUCKET_COLUMNS = dict(zip(S.BUCKET_NAMES, S.BUCKETS, strict=True))
NULL_COLUMNS = (S.EVENT_UUIDS, S.AUTOCOMPACT_THRESHOLD)


def is_prompt() -> pl.Expr:
    """True for the prompts that open turns (see the module docstring)."""
    own = ~pl.col(S.REPLAYED)
    prompt = (pl.col(S.TYPE) == "event_msg") & (pl.col(S.PAYLOAD_TYPE) == "user_message") & own
    text = pl.col(S.TEXT).fill_null("")
    injected = pl.any_horizontal(text.str.starts_with(prefix) for prefix in INJECTED_PREFIXES)
    message = (pl.col(S.TYPE) == "response_item") & (pl.col(S.PAYLOAD_TYPE) == "message") & own
    legacy = message & (pl.col(S.ROLE) == "user") & ~injected
    return (prompt | (~prompt.any().over(S.FILE) & legacy)).fill_null(False)


def turn_start() -> pl.Expr:
    """On each prompt, the line its turn starts at: the ``turn_context`` just before it (nothing
    but context between them: no model output, tool line, compaction or earlier prompt), else
    the prompt itself; null on other lines."""
    prompt = pl.col(IS_PROMPT)
    quiet = (pl.col(S.PAYLOAD_TYPE) == "message") & pl.col(S.ROLE).is_in(["user", "developer", "system"])
    loud = ((pl.col(S.TYPE) == "response_item") & ~quiet.fill_null(False)) | (pl.col(S.TYPE) == "compacted")

    def last_line(where: pl.Expr) -> pl.Expr:
        return pl.when(where).then(pl.col(S.LINE)).forward_fill().over(S.FILE)

    context = last_line(pl.col(S.TYPE) == "turn_context")
    after = pl.max_horizontal(last_line(loud).fill_null(0), last_line(prompt).shift(1).over(S.FILE).fill_null(0))
    return pl.when(prompt & (context > after).fill_null(False)).then(context).when(prompt).then(pl.col(S.LINE))


def is_compaction() -> pl.Expr:
    """A compaction of the file's own: a ``compacted`` line, or a ``context_compacted`` event
    whose previous compaction marker is not a ``compacted`` line (the two mark one compaction)."""
    compacted = pl.col(S.TYPE) == "compacted"
    event = (pl.col(S.TYPE) == "event_msg") & (pl.col(S.PAYLOAD_TYPE) == "context_compacted")
    marker = pl.when(compacted | event).then(pl.col(S.TYPE))
    previous = marker.shift(1).forward_fill().over(S.FILE)
    return (compacted | (event & previous.ne_missing(pl.lit("compacted")))).fill_null(False) & ~pl.col(S.REPLAYED)


def tool_name() -> pl.Expr:
    """The tool a call line names (its ``name``, else its kind); null on other lines."""
    fixed = pl.col(S.PAYLOAD_TYPE).replace_strict(CALL_TOOLS, default=None, return_dtype=pl.String)
    return pl.when(is_call()).then(pl.coalesce(S.TOOL, fixed))


def is_call() -> pl.Expr:
    """A tool call of the file's own."""
    kinds = pl.col(S.PAYLOAD_TYPE).is_in(list(CALL_TOOLS))
    return ((pl.col(S.TYPE) == "response_item") & kinds & ~pl.col(S.REPLAYED)).fill_null(False)


def prepare(decoded: Decoded) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Lines with ``time``, ``is_prompt``, ``opens_turn``, ``turn_index``, ``segment`` and ``is_compaction``;
    items with their tokens measured, their turn, segment and whether they are the header's."""
    marked = decoded.lines.lazy().with_columns(
        utc_time(pl.col(S.TIMESTAMP)).alias(S.TIME),
        is_prompt().alias(IS_PROMPT),
        (pl.col(S.TYPE) == "compacted").cast(pl.Int64).cum_sum().over(S.FILE).alias(SEGMENT),
        is_compaction().alias(IS_COMPACTION),
    )
    starts = (
        marked.select(S.FILE, turn_start().alias(S.LINE), pl.lit(True).alias(OPENS))
        .drop_nulls(S.LINE)
        .unique(subset=[S.FILE, S.LINE])
    )
    lines = (
        marked.join(starts, on=[S.FILE, S.LINE], how="left", maintain_order="left")
        .with_columns(pl.col(OPENS).fill_null(False))
        .with_columns(
            (pl.col(OPENS).cast(pl.Int64).cum_sum() - pl.col(OPENS).first().cast(pl.Int64))
            .over(S.FILE)
            .alias(S.TURN_INDEX)
        )
    )
    items = (
        decoded.items.lazy()
        .with_columns(pl.coalesce(S.TOKENS, estimate_tokens(S.TEXT)).fill_null(0).alias(S.TOKENS))
        .drop(S.TEXT)
        .join(
            lines.select(S.FILE, S.LINE, S.TURN_INDEX, SEGMENT, (pl.col(S.TYPE) == "session_meta").alias(IS_HEADER)),
            on=[S.FILE, S.LINE],
            how="left",
            maintain_order="left",
        )
    )
    return lines, items


def bucket_sums() -> list[pl.Expr]:
    """Aggregations over item rows: the five bucket columns and their sum."""
    return [
        *(
            pl.col(S.TOKENS).filter(pl.col(S.BUCKET) == name).sum().alias(column)
            for name, column in BUCKET_COLUMNS.items()
        ),
        pl.col(S.TOKENS).sum().alias(S.ESTIMATED_TOKENS),
    ]


def instructions(items: pl.LazyFrame) -> pl.LazyFrame:
    """Per file: the tokens of its base instructions (always in the context)."""
    return items.filter(pl.col(IS_HEADER)).group_by(S.FILE).agg(pl.col(S.TOKENS).sum().alias("_instructions"))


def lift_turns(decoded: Decoded, requests: pl.LazyFrame) -> pl.LazyFrame:
    """One row per turn of every file of a batch decoded with ``Profile.TABLES``: ``TURNS_SCHEMA``.

    ``requests`` are the batch's priced requests with their ``file`` and ``line``
    (:func:`~cc_analytics.frames.codex.requests.priced_requests`): a turn's cost is theirs.
    """
    lines, items = prepare(decoded)
    files = decoded.files.lazy().select(S.FILE, S.SOURCE_FILE, S.SESSION_ID, S.AGENT_ID, S.IS_SUBAGENT_FILE)
    per_turn = lines.group_by(KEYS, maintain_order=True).agg(
        pl.col(S.TIME).min().alias(S.START_TIME),
        pl.col(S.TIME).max().alias(S.END_TIME),
        is_call().sum().cast(pl.Int64).alias(S.TOOL_CALLS),
        tool_name().drop_nulls().alias(S.TOOL_NAMES),
        (pl.col(S.IS_ERROR).fill_null(False) & ~pl.col(S.REPLAYED)).sum().cast(pl.Int64).alias(S.TOOL_ERRORS),
        pl.col(IS_COMPACTION).any().alias(S.COMPACTED),
        pl.col(S.TEXT).filter(pl.col(IS_PROMPT)).first().alias(S.PROMPT),
        pl.col(SEGMENT).last(),
        pl.col(S.LINE).max().alias(LAST_LINE),
    )
    own_items = items.filter(~pl.col(S.REPLAYED))
    per_turn_items = own_items.group_by(KEYS).agg(*bucket_sums())
    # The context at a turn's end: the running total of its segment's items at the last turn
    # (up to this one) that added to that segment; 0 when none has yet; plus the instructions.
    running = (
        items.filter(~pl.col(IS_HEADER))
        .group_by(S.FILE, SEGMENT, S.TURN_INDEX)
        .agg(pl.col(S.TOKENS).sum())
        .sort(S.FILE, SEGMENT, S.TURN_INDEX)
        .with_columns(pl.col(S.TOKENS).cum_sum().over(S.FILE, SEGMENT).alias(CONTEXT))
        .drop(S.TOKENS)
    )
    ends = per_turn.select(S.FILE, pl.col(LAST_LINE).alias(S.LINE))
    state = state_at(decoded, ends).rename({S.LINE: LAST_LINE})
    placed = requests.join(lines.select(S.FILE, S.LINE, S.TURN_INDEX), on=[S.FILE, S.LINE], how="left")
    per_turn_cost = placed.group_by(KEYS).agg(*cost_totals())
    zero_fill = [S.TOOL_CALLS, S.TOOL_ERRORS, *S.BUCKETS, S.ESTIMATED_TOKENS]
    turns = (
        per_turn.join(per_turn_items, on=KEYS, how="left", maintain_order="left")
        .sort(S.FILE, SEGMENT, S.TURN_INDEX)
        .join_asof(running, on=S.TURN_INDEX, by=[S.FILE, SEGMENT], strategy="backward", check_sortedness=False)
        .sort(KEYS)
        .join(instructions(items), on=S.FILE, how="left", maintain_order="left")
        .join(state, on=[S.FILE, LAST_LINE], how="left", maintain_order="left")
        .join(per_turn_cost, on=KEYS, how="left", maintain_order="left")
        .join(files, on=S.FILE, how="left", maintain_order="left")
        .with_columns(
            pl.col(S.UNPRICED_REQUESTS).fill_null(0),
            pl.col(zero_fill).fill_null(0),
            (pl.col(CONTEXT).fill_null(0) + pl.col("_instructions").fill_null(0)).alias(S.ESTIMATED_CONTEXT),
            pl.when(pl.col(S.PROMPT).is_null()).then(pl.lit("assistant")).otherwise(pl.lit("user")).alias(S.ROLE),
        )
        .with_columns(window_columns())
        .with_columns(pl.lit(S.CODEX).alias(S.FORMAT))
    )
    nulls = (pl.lit(None, S.TURNS_SCHEMA[name]).alias(name) for name in NULL_COLUMNS)
    return turns.with_columns(*nulls).select(list(S.TURNS_SCHEMA)).cast(S.TURNS_SCHEMA)


def window_columns() -> list[pl.Expr]:
    """Window, effective window, used fraction, headroom and calibration of rows with
    ``occupancy``, the recorded ``window`` (null: none recorded), ``model`` and ``estimated_context``."""
    window = pl.coalesce(S.WINDOW, model_window(pl.col(S.MODEL)))
    occupancy = pl.col(S.OCCUPANCY)
    return [
        window.alias(S.WINDOW),
        (window - BASELINE_TOKENS).alias(S.EFFECTIVE_WINDOW),
        context_used_fraction(occupancy, window).alias(S.USED_FRACTION),
        metrics.headroom(occupancy, window).alias(S.HEADROOM),
        pl.when(pl.col(S.ESTIMATED_CONTEXT) > 0)
        .then(occupancy.cast(pl.Float64) / pl.col(S.ESTIMATED_CONTEXT))
        .alias(S.CALIBRATION),
    ]


def state_at(
    decoded: Decoded, targets: pl.LazyFrame, *, usage: pl.LazyFrame | None = None, model: bool = True
) -> pl.LazyFrame:
    """Per (``file``, ``line``) of ``targets``: the recorded ``occupancy`` and ``window`` in force
    there (the latest recorded in its file at or before the line, a fork's replayed ones
    included) and (``model``) the ``model`` in force; ``usage``: ``usage_rows`` of the batch,
    when already made."""
    recorded = (
        (usage_rows(decoded) if usage is None else usage)
        .select(S.FILE, S.LINE, S.OCCUPANCY, S.WINDOW)
        .with_columns(pl.col(S.OCCUPANCY).forward_fill().over(S.FILE))
        .select(position(), pl.col(S.FILE).alias("_state_file"), S.OCCUPANCY, S.WINDOW)
        .sort(POSITION)
    )
    # One sorted key over the batch: a match from an earlier file is no state of this one.
    joined = (
        targets.unique()
        .with_columns(position())
        .sort(POSITION)
        .join_asof(recorded, on=POSITION, strategy="backward")
        .with_columns(
            pl.when(pl.col("_state_file") == pl.col(S.FILE)).then(pl.col(name)).alias(name)
            for name in (S.OCCUPANCY, S.WINDOW)
        )
        .drop(POSITION, "_state_file")
    )
    if not model:
        return joined
    return in_force(decoded.settings.lazy(), joined).rename({"_model": S.MODEL}).drop("_tier")


def turns_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """Turns of one batch of rollouts (run in a worker process)."""
    decoded = decode(files, Profile.TABLES)
    return lift_turns(decoded, priced_requests(decoded).lazy()).collect(engine=BATCH_ENGINE)


def scan_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per turn of every rollout of ``source`` (``TURNS_SCHEMA``).

    A user prompt opens a turn; the exact rule and every column are in the module docstring.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"a"}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:02Z","type":"response_item","payload":{"type":"message",'
        ...     '"role":"assistant","content":[{"type":"output_text","text":"hello"}]}}\\n')
        >>> scan_turns(folder).select("turn_index", "role", "prompt", "tokens_assistant").collect().rows()
        [(0, 'assistant', None, 0), (1, 'user', 'hi', 2)]
    """
    return scan_batches(
        turns_batch, resolve(source), S.TURNS_SCHEMA, "codex_turns", workers=workers, on_progress=on_progress
    )


def read_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_turns`.

    Examples:
        >>> read_turns([]).height
        0
    """
    return scan_turns(source, workers=workers, on_progress=on_progress).collect()
