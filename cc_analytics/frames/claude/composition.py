"""What filled the window, turn by turn: the composition frame of Claude Code transcripts.

Imports: polars and the modules of ``frames.claude`` (and ``frames.engine`` for batches). One
row per main transcript, turn and part of the window (``COMPOSITION_SCHEMA``), for every turn
of a main transcript's own chain. The rules:

* **The window at a turn** is what its last recorded request read: the chain's content blocks
  since the last compaction (``compact_boundary``) that come before that request's first line
  (a response split over several lines shares one usage; its own blocks are its output). A
  turn without a request is measured up to its end, and has no recorded occupancy.
* **Parts** (``category``, ``item``): ``user`` (prompts typed or queued), ``assistant`` (text),
  ``thinking``, ``tool_call`` and ``tool_result`` by tool (``item``: the tool's name, or
  ``mcp__<server>`` for every tool of one MCP server; a result is its call's tool), ``memory``
  (harness-injected text that names a ``CLAUDE.md``), ``system`` (other injected text and
  ``system`` lines), ``summary`` (the post-compaction summary: what the compaction kept) and
  ``baseline``: the system prompt, the tool definitions and the memory files Claude Code sends
  without writing them down, measured once per transcript as its first request's recorded
  occupancy less the estimate of the content that request read (never below 0). It is in the
  window from the first turn on, and only ``entered`` there.
* **Estimated** (``estimated_tokens``): the one token estimator per block, summed per part;
  ``entered_tokens`` is what a part gained since the previous turn (all of it on the first
  turn after a compaction), ``dropped_tokens`` what it held before a compaction and lost.
* **Calibrated** (``tokens``): on a turn with a recorded ``occupancy``, the baseline keeps its
  size and the other parts are scaled by ``calibration`` = (occupancy − baseline) / their
  estimated sum, rounded so that the parts of the turn sum to the occupancy exactly (the
  leftover tokens go to the largest remainders, the first part on ties; ``windowmath.scale_parts``).
  ``uncalibrated_error`` is the estimate (baseline included) less the occupancy, in tokens.

Images are not measured: the line decoder keeps text only, so an image's share is in the
calibration. Subagent transcripts (their own windows) are left out.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import FINDINGS, MEMORY_MARK, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile, resolve
from cc_analytics.frames.claude.requests import ON_CHAIN, SEGMENT
from cc_analytics.frames.claude.sessions import KEY, prepared
from cc_analytics.frames.engine import Progress, lazy_source, run_batches
from cc_analytics.frames.sources import Source

CATEGORY, ITEM, CALIBRATED, BASELINE, CALIBRATION = S.CATEGORY, S.ITEM, S.TOKENS, S.BASELINE, S.CALIBRATION
ESTIMATED, ENTERED, DROPPED, ERROR = S.ESTIMATED_TOKENS, S.ENTERED_TOKENS, S.DROPPED_TOKENS, S.UNCALIBRATED_ERROR
INPUT = S.TOOL_INPUT
TOOL = "tool"
_CUTOFF = "_cutoff"
_GROUP = "_group"


def category_of() -> pl.Expr:
    """The part of a block row (``kind``, ``is_meta``, ``is_compact_summary``, ``names_memory``)."""
    kind = pl.col(S.KIND)
    injected = (kind == "prompt") & pl.col(S.IS_META)
    return (
        pl.when((kind == "prompt") & pl.col(S.IS_COMPACT_SUMMARY))
        .then(pl.lit("summary"))
        .when(injected & pl.col(S.NAMES_MEMORY).fill_null(False))
        .then(pl.lit("memory"))
        .when(injected | (kind == "system"))
        .then(pl.lit("system"))
        .when(kind == "prompt")
        .then(pl.lit("user"))
        .when(kind == "text")
        .then(pl.lit("assistant"))
        .when(kind == "thinking")
        .then(pl.lit("thinking"))
        .when(kind == "tool_use")
        .then(pl.lit("tool_call"))
        .otherwise(pl.lit("tool_result"))
        .cast(S.CATEGORY_ENUM)
    )


def tool_item(name: pl.Expr) -> pl.Expr:
    """A tool's name as a part's ``item``: ``mcp__<server>`` for every tool of an MCP server.

    Examples:
        >>> import polars as pl
        >>> pl.select(tool_item(pl.lit("mcp__github__create_issue"))).item(), pl.select(tool_item(pl.lit("Read"))).item()
        ('mcp__github', 'Read')
    """
    return (
        pl.when(name.str.starts_with("mcp__")).then(name.str.extract(r"^(mcp__[^_]+(?:_[^_]+)*?)__", 1)).otherwise(name)
    )


def composition_rows(files: list[TranscriptFile], *, contents: list[bytes] | None = None) -> pl.DataFrame:
    """The composition frame (``COMPOSITION_SCHEMA``) of one batch of transcripts (its subagent
    files are not read: their windows are their own)."""
    mains = [index for index, file in enumerate(files) if not file.is_subagent]
    kept = None if contents is None else [contents[index] for index in mains]
    return composition_of(*prepared(decode_files([files[index] for index in mains], FINDINGS, contents=kept)))


def composition_of(events: pl.DataFrame, blocks: pl.DataFrame) -> pl.DataFrame:
    """The composition frame of prepared events and blocks (``sessions.prepared`` of a
    :data:`~cc_analytics.frames.claude.decode.FINDINGS` or
    :data:`~cc_analytics.frames.claude.decode.EVENTS` decode)."""
    events = events.filter(~pl.col(S.IS_SUBAGENT_FILE))
    return composition_from(events, block_parts(events, blocks))


def block_parts(events: pl.DataFrame, blocks: pl.DataFrame) -> pl.DataFrame:
    """The blocks of the main files' own chains, each with its part (``category``, ``item``),
    its estimate (``tokens``) and, for tool calls and results, the call's input (``tool_input``:
    compact JSON). ``events`` are the main files' prepared events; ``blocks`` carry their marks
    (a :data:`~cc_analytics.frames.claude.decode.FINDINGS` decode) or their text (``EVENTS``)."""
    if S.TEXT in blocks.columns:
        blocks = blocks.with_columns(
            pl.when(pl.col(S.KIND) == "prompt")
            .then(pl.col(S.TEXT).str.contains(MEMORY_MARK, literal=True))
            .alias(S.NAMES_MEMORY),
            pl.when(pl.col(S.KIND) == "tool_use").then(pl.col(S.TEXT)).alias(INPUT),
        )
    mine = ~pl.col(S.IS_SUBAGENT_FILE) & pl.col(ON_CHAIN)
    flags = events.select(S.ROW, S.IS_META, S.IS_COMPACT_SUMMARY, S.MESSAGE_ID)
    calls = blocks.filter(pl.col(S.KIND) == "tool_use").select(
        S.SOURCE_FILE, pl.col(S.BLOCK_ID).alias("_call"), pl.col(S.NAME).alias("_tool"), pl.col(INPUT).alias("_input")
    )
    calls = calls.unique(subset=[S.SOURCE_FILE, "_call"], keep="first", maintain_order=True)
    return (
        blocks.filter(mine)
        .join(flags, on=S.ROW, how="left")
        .join(calls, left_on=[S.SOURCE_FILE, S.BLOCK_ID], right_on=[S.SOURCE_FILE, "_call"], how="left")
        .with_columns(
            category_of().alias(CATEGORY),
            pl.when(pl.col(S.KIND) == "tool_use")
            .then(tool_item(pl.col(S.NAME)))
            .when(pl.col(S.KIND) == "tool_result")
            .then(tool_item(pl.col("_tool")).fill_null("(unknown tool)"))
            .alias(ITEM),
            pl.when(pl.col(S.KIND) == "tool_use").then(pl.col(INPUT)).otherwise(pl.col("_input")).alias(INPUT),
        )
        .select(
            S.SOURCE_FILE,
            S.ROW,
            SEGMENT,
            S.TURN_INDEX,
            CATEGORY,
            ITEM,
            pl.col("tokens").cast(pl.Int64),
            S.KIND,
            pl.col("_tool").alias(TOOL),
            INPUT,
        )
        .sort(S.SOURCE_FILE, S.ROW)
    )


def composition_from(events: pl.DataFrame, parts: pl.DataFrame) -> pl.DataFrame:
    """The composition frame of the main files' prepared events and their :func:`block_parts`."""
    parts = parts.select(S.SOURCE_FILE, S.ROW, SEGMENT, S.TURN_INDEX, CATEGORY, ITEM, "tokens")
    turns = _turns(events)
    if not turns.height:
        return pl.DataFrame(schema=S.COMPOSITION_SCHEMA)
    window = _window(turns, parts)
    return _calibrated(window, turns, _baselines(events, parts))


def _baselines(events: pl.DataFrame, parts: pl.DataFrame) -> pl.DataFrame:
    """Per main file: its first request's occupancy less the estimate of what that request read
    (the chain's blocks of its segment before its first line), never below 0."""
    chain = events.filter(pl.col(ON_CHAIN))
    first = (
        chain.filter(pl.col(S.OCCUPANCY).is_not_null())
        .group_by(S.SOURCE_FILE)
        .agg(pl.all().sort_by(S.ROW).first())
        .select(S.SOURCE_FILE, S.OCCUPANCY, S.MESSAGE_ID, SEGMENT, pl.col(S.ROW).alias("_request"))
    )
    lines = (
        chain.filter(pl.col(S.MESSAGE_ID).is_not_null())
        .group_by(S.SOURCE_FILE, S.MESSAGE_ID)
        .agg(pl.col(S.ROW).min().alias("_first"))
    )
    first = first.join(lines, on=[S.SOURCE_FILE, S.MESSAGE_ID], how="left").with_columns(
        pl.coalesce("_first", "_request").alias(_CUTOFF)
    )
    read = (
        parts.join(first.select(S.SOURCE_FILE, SEGMENT, _CUTOFF), on=[S.SOURCE_FILE, SEGMENT])
        .filter(pl.col(S.ROW) < pl.col(_CUTOFF))
        .group_by(S.SOURCE_FILE)
        .agg(pl.col("tokens").sum().alias("_read"))
    )
    return first.join(read, on=S.SOURCE_FILE, how="left").select(
        S.SOURCE_FILE, (pl.col(S.OCCUPANCY) - pl.col("_read").fill_null(0)).clip(lower_bound=0).alias(BASELINE)
    )


def _turns(events: pl.DataFrame) -> pl.DataFrame:
    """One row per turn of each main file: its segment, the row its window is measured up to
    (``_cutoff``, exclusive), the occupancy of its last request, whether it compacted."""
    chain = events.filter(pl.col(ON_CHAIN))
    request = pl.col(S.OCCUPANCY).is_not_null()
    first_line = (
        chain.filter(pl.col(S.MESSAGE_ID).is_not_null())
        .group_by(S.SOURCE_FILE, S.MESSAGE_ID)
        .agg(pl.col(S.ROW).min().alias("_first"))
    )
    last = (
        chain.filter(request)
        .group_by(S.SOURCE_FILE, S.TURN_INDEX)
        .agg(pl.all().sort_by(S.ROW).last())
        .join(first_line, on=[S.SOURCE_FILE, S.MESSAGE_ID], how="left")
        .select(
            S.SOURCE_FILE,
            S.TURN_INDEX,
            pl.col(S.OCCUPANCY),
            pl.col(SEGMENT).alias("_request_segment"),
            pl.coalesce("_first", S.ROW).alias("_request_row"),
        )
    )
    return (
        events.group_by(S.SOURCE_FILE, S.TURN_INDEX)
        .agg(
            pl.col(KEY).first().alias(S.SESSION_ID),
            pl.col(SEGMENT).max().alias("_end_segment"),
            (pl.col(S.ROW).max() + 1).alias("_end_row"),
        )
        .join(last, on=[S.SOURCE_FILE, S.TURN_INDEX], how="left")
        .with_columns(
            pl.coalesce("_request_segment", "_end_segment").alias(SEGMENT),
            pl.coalesce("_request_row", "_end_row").alias(_CUTOFF),
        )
        .sort(S.SOURCE_FILE, S.TURN_INDEX)
        .with_columns(
            (pl.col(SEGMENT) != pl.col(SEGMENT).shift(1).over(S.SOURCE_FILE)).fill_null(False).alias(S.COMPACTED)
        )
        .select(S.SESSION_ID, S.SOURCE_FILE, S.TURN_INDEX, SEGMENT, _CUTOFF, S.OCCUPANCY, S.COMPACTED)
    )


def _window(turns: pl.DataFrame, parts: pl.DataFrame) -> pl.DataFrame:
    """Per turn and part of its file: the estimated tokens in the window, entered and dropped."""
    keys = [S.SOURCE_FILE, CATEGORY, ITEM]
    parts = parts.with_columns(pl.col(ITEM).fill_null(""))  # joins never match a null key
    # Each (file, part) is one integer group: the as-of join and the turn-to-turn steps below
    # then compare integers, not strings (on 1 GB, less than half the time).
    groups = parts.select(keys).unique(maintain_order=True).with_row_index(_GROUP)
    running = parts.join(groups, on=keys, how="left").select(
        _GROUP, SEGMENT, S.ROW, pl.col("tokens").cum_sum().over(_GROUP, SEGMENT).alias("_sum")
    )
    grid = turns.select(S.SOURCE_FILE, S.TURN_INDEX, SEGMENT, _CUTOFF).join(groups, on=S.SOURCE_FILE)
    probe = grid.with_columns((pl.col(_CUTOFF) - 1).alias(S.ROW)).sort(S.ROW)
    found = probe.join_asof(
        running.sort(S.ROW),
        on=S.ROW,
        by=[_GROUP, SEGMENT],
        strategy="backward",
        check_sortedness=False,  # sorted by row above; Polars cannot check it with groups
    ).sort(_GROUP, S.TURN_INDEX)
    held = pl.col("_sum").fill_null(0)
    same_part = pl.col(_GROUP) == pl.col(_GROUP).shift(1)  # the row before is the part's turn before
    before = pl.when(same_part).then(held.shift(1))
    same_segment = (same_part & (pl.col(SEGMENT) == pl.col(SEGMENT).shift(1))).fill_null(False)
    return (
        found.with_columns(held.alias(ESTIMATED), pl.col(ITEM).replace("", None))
        .with_columns(
            pl.when(same_segment)
            .then((pl.col(ESTIMATED) - before).clip(lower_bound=0))
            .otherwise(pl.col(ESTIMATED))
            .alias(ENTERED),
            pl.when(same_segment).then(0).otherwise(before.fill_null(0)).alias(DROPPED),
        )
        .drop(_GROUP)
    )


def _calibrated(window: pl.DataFrame, turns: pl.DataFrame, first: pl.DataFrame) -> pl.DataFrame:
    turn_keys = [S.SOURCE_FILE, S.TURN_INDEX]
    content = window.group_by(turn_keys).agg(pl.col(ESTIMATED).sum().alias("_content"))
    measured = turns.join(content, on=turn_keys, how="left").with_columns(pl.col("_content").fill_null(0))
    target = (pl.col(S.OCCUPANCY) - pl.col(BASELINE)).clip(lower_bound=0)
    measured = measured.join(first, on=S.SOURCE_FILE, how="left").with_columns(
        pl.col(BASELINE).fill_null(0),
    )
    measured = measured.with_columns(
        target.alias("_target"),
        pl.when(pl.col(S.OCCUPANCY).is_not_null() & (pl.col("_content") > 0))
        .then(target.cast(pl.Float64) / pl.col("_content"))
        .alias(CALIBRATION),
        (pl.col(BASELINE) + pl.col("_content") - pl.col(S.OCCUPANCY)).alias(ERROR),
    )
    per_turn = [S.SESSION_ID, S.OCCUPANCY, BASELINE, CALIBRATION, ERROR, S.COMPACTED, "_target", "_content", SEGMENT]
    rows = window.join(measured.select(*turn_keys, *per_turn), on=[*turn_keys, SEGMENT], how="left")
    rows = rows.filter((pl.col(ESTIMATED) > 0) | (pl.col(ENTERED) > 0) | (pl.col(DROPPED) > 0))
    # Largest remainders, in integers: floor(e·T/S), then one more token to the first
    # (T − Σ floors) parts by remainder (ties: the earlier part).
    rows = rows.sort(*turn_keys, CATEGORY, ITEM, nulls_last=True)
    product = pl.col(ESTIMATED) * pl.col("_target")
    share = product // pl.col("_content")
    remainder = product % pl.col("_content")
    rank = remainder.rank("ordinal", descending=True).over(turn_keys)
    leftover = pl.col("_target") - share.sum().over(turn_keys)
    scaled = pl.when(pl.col("_content") > 0).then(share + (rank <= leftover).cast(pl.Int64)).otherwise(0)
    rows = rows.with_columns(pl.when(pl.col(S.OCCUPANCY).is_not_null()).then(scaled).alias(CALIBRATED))
    baseline = measured.filter(pl.col(BASELINE) > 0).select(
        *turn_keys,
        *per_turn,
        pl.lit("baseline").cast(S.CATEGORY_ENUM).alias(CATEGORY),
        pl.lit(None, pl.String).alias(ITEM),
        pl.col(BASELINE).alias(ESTIMATED),
        pl.when(pl.col(S.TURN_INDEX) == pl.col(S.TURN_INDEX).min().over(S.SOURCE_FILE))
        .then(pl.col(BASELINE))
        .otherwise(0)
        .alias(ENTERED),
        pl.lit(0, pl.Int64).alias(DROPPED),
        pl.when(pl.col(S.OCCUPANCY).is_null())
        .then(None)
        .when(pl.col("_content") == 0)  # nothing else to hold what was recorded
        .then(pl.col(S.OCCUPANCY))
        .otherwise(pl.min_horizontal(pl.col(BASELINE), pl.col(S.OCCUPANCY)))
        .alias(CALIBRATED),
    )
    return (
        pl.concat([rows.select(baseline.columns), baseline], how="vertical_relaxed")
        .with_columns(pl.lit(S.CLAUDE).alias(S.FORMAT), pl.col(SEGMENT).alias(S.COMPACTIONS))
        .sort(*turn_keys, CATEGORY, ITEM, nulls_last=True)
        .select(list(S.COMPOSITION_SCHEMA))
        .cast(S.COMPOSITION_SCHEMA)
    )


def composition_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The composition of one batch of transcripts (run in a worker process)."""
    return composition_rows(files)


def scan_composition(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what filled each main transcript's window at each turn (``S.COMPOSITION_SCHEMA``;
    the rules are the module's).

    Examples:
        >>> import tempfile, pathlib, json
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> line = lambda kind, **rest: json.dumps({"type": kind, "sessionId": "s", "uuid": str(len(rest)) + kind,
        ...     "timestamp": "2026-03-01T10:00:00Z", **rest})
        >>> usage = {"input_tokens": 5000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
        >>> _ = (folder / "s.jsonl").write_text(line("user", message={"role": "user", "content": "a" * 400}) + "\\n"
        ...     + line("assistant", message={"id": "m1", "model": "claude-opus-4-5", "role": "assistant",
        ...            "content": [{"type": "text", "text": "ok"}], "usage": usage}) + "\\n")
        >>> scan_composition(folder).select("category", "estimated_tokens", "tokens", "calibration").collect().rows()
        [('baseline', 4900, 4900, 1.0), ('user', 100, 100, 1.0)]
    """
    files = resolve(source)

    def produce() -> Iterator[pl.DataFrame]:
        yield from run_batches(composition_batch, files, workers=workers, on_progress=on_progress)

    return lazy_source(produce, S.COMPOSITION_SCHEMA, "claude_composition")


def read_composition(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_composition`."""
    return scan_composition(source, workers=workers, on_progress=on_progress).collect()
