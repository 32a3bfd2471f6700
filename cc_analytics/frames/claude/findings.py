"""What is worth a look in Claude Code windows: the findings frame.

Imports: polars, ``frames.engine``, ``frames.prices`` and the modules of ``frames.claude``.
One row per finding (``FINDINGS_SCHEMA``), each naming its session, file, turn, line and
``uuid`` (``cc-analytics window --uuid`` captures the context around it), from one decode that
also gives the composition (``composition``). ``rank`` orders the findings of one kind in one
file (1: the one to look at first; a subagent's file is ranked apart from its session's main
file). The kinds:

* ``largest_item``: the :data:`LARGEST` largest blocks of a main transcript's own chain (a
  prompt, a text, thinking, a tool call or result), by their estimate (``tokens``: the one
  token estimator, not calibrated); ``category`` and ``item`` are the block's part in the
  composition, ``target`` what its tool call named (:data:`TARGET_KEYS`, cut to
  :data:`TARGET_CHARS` characters), the line its block is on.
* ``repeated_read``: a file the ``Read`` tool read more than once in a main chain (``target``:
  its ``file_path``; ``count``: its reads; ``tokens``: the estimate of every result after the
  first, whether or not the file changed or a compaction came between), at its second read.
* ``window_jump``: the :data:`JUMPS` largest rises of the recorded occupancy from one turn
  with a request to the next in one context segment (``tokens``), at the turn's last request,
  one row for each of the :data:`CAUSES` parts that entered the most at that turn
  (``category``, ``item``, ``part_tokens``: the composition's ``entered_tokens``, calibrated
  like its parts, the baseline as it is: where the turn's calibration is lower than the turn
  before's, a part may exceed the jump); a jump with no part entering is one row without.
* ``peak_window``: the parts of a main transcript's window at its fullest turn (the highest
  recorded occupancy; the first of them on ties), calibrated (``tokens``), at its last request.
* ``tool_definitions``: the baseline of a main transcript (its system prompt, tool
  definitions and memory files: the composition's ``baseline``), at its first request.
* ``mcp_server``: the tool calls and results of one MCP server (``item``: ``mcp__<server>``):
  the most of the window they held at one turn (``tokens``, calibrated) and its calls
  (``count``), at its first call.
* ``cache_rebuild``: a request of a transcript's own chain (subagents' too) sent after an
  idle gap (``seconds``) longer than the lifetime of the cache its chain last wrote
  (``item``: ``5m``, 300 s, or ``1h``, 3,600 s when that write was ``ephemeral_1h``) that
  wrote the cache again: ``tokens`` is what it rewrote (its cache writes, at most what the
  cache held after the request before: that request's reads and writes), ``cost_usd`` what
  writing those tokens cost (the 1-hour writes first).
* ``cache_hit``: per turn of a main chain with requests, the share of their prompts read from
  the cache (``ratio``), the tokens read (``tokens``), the requests (``count``) and their cost,
  at its first request; ranked lowest ratio first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.composition import INPUT, TOOL, block_parts, composition_from
from cc_analytics.frames.claude.decode import FINDINGS, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile, resolve
from cc_analytics.frames.claude.requests import ON_CHAIN, SEGMENT, request_rows, session_projects
from cc_analytics.frames.claude.sessions import KEY, prepared
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, lazy_source, run_batches
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.sources import Source

LARGEST: Final = 10
JUMPS: Final = 5
CAUSES: Final = 3
LIFETIMES: Final = {"5m": 300.0, "1h": 3600.0}
READ_TOOL: Final = "Read"
TARGET_KEYS: Final = ("file_path", "notebook_path", "path", "url", "pattern", "command", "query", "description")
TARGET_CHARS: Final = 200
_WRITES = [S.CACHE_CREATION_5M_TOKENS, S.CACHE_CREATION_1H_TOKENS]


def findings_rows(files: list[TranscriptFile], *, contents: list[bytes] | None = None) -> pl.DataFrame:
    """The findings frame (``FINDINGS_SCHEMA``) of one batch of transcripts, decoded once with the
    :data:`~cc_analytics.frames.claude.decode.FINDINGS` profile (no text: the blocks' marks)."""
    return findings_of_decoded(*prepared(decode_files(files, FINDINGS, contents=contents)), files)


def findings_of_decoded(events: pl.DataFrame, blocks: pl.DataFrame, files: Sequence[TranscriptFile]) -> pl.DataFrame:
    """The findings of a batch's prepared events and blocks, main and subagent files together
    (``sessions.prepared`` of a ``FINDINGS`` decode): the subagents' requests count, their
    blocks do not (their windows are their own)."""
    main = events.filter(~pl.col(S.IS_SUBAGENT_FILE))
    parts = block_parts(main, blocks)
    composition = composition_from(main, parts)
    lines = events.select(S.ROW, S.LINE, S.UUID, pl.col(S.TIMESTAMP).alias(S.TIME))
    requests = _requests(events, files)
    last = _last_requests(main)
    found = [
        _largest_items(parts),
        _repeated_reads(parts),
        _window_jumps(last, composition),
        _peak_windows(last, composition),
        _tool_definitions(composition, requests),
        _mcp_servers(parts, composition),
        _cache_rebuilds(requests),
        _cache_hits(requests),
    ]
    sessions = events.group_by(S.SOURCE_FILE).agg(pl.col(KEY).first().alias(S.SESSION_ID))
    projects = session_projects(events.lazy(), files).select(pl.col(KEY).alias(S.SESSION_ID), S.PROJECT)
    anchored = [frame if S.LINE in frame.columns else frame.join(lines, on=S.ROW, how="left") for frame in found]
    rows = pl.concat(anchored, how="diagonal_relaxed")
    return (
        rows.join(sessions, on=S.SOURCE_FILE, how="left")
        .join(projects.collect(engine=BATCH_ENGINE), on=S.SESSION_ID, how="left")
        .with_columns(pl.lit(S.CLAUDE).alias(S.FORMAT))
        .select(list(S.FINDINGS_SCHEMA))
        .cast(S.FINDINGS_SCHEMA)
        .sort(
            [S.SESSION_ID, S.SOURCE_FILE, S.FINDING_KIND, S.RANK, S.PART_TOKENS, S.CATEGORY, S.ITEM],
            descending=[False, False, False, False, True, False, False],
            nulls_last=True,
        )
    )


def _requests(events: pl.DataFrame, files: Sequence[TranscriptFile]) -> pl.DataFrame:
    """The priced requests of a decode's own chains, with their file, turn, row, line and uuid."""
    keep = (S.SOURCE_FILE, S.TURN_INDEX, S.ROW, S.IS_SUBAGENT_FILE)
    rows = request_rows(events.lazy().filter(pl.col(ON_CHAIN)), files, keep=keep).collect(engine=BATCH_ENGINE)
    return price_requests(rows).join(events.select(S.ROW, S.LINE, S.UUID), on=S.ROW, how="left")


def _finding(
    frame: pl.DataFrame,
    kind: str,
    *,
    by: str | None,
    limit: int | None = None,
    descending: bool = True,
    **columns: Any,
) -> pl.DataFrame:
    """``frame``'s rows as findings of ``kind``, ranked per file by the column ``by`` (None: by
    the ``rank`` it has, see :func:`_top`), the first ``limit`` of them: ``rank`` and the named
    columns (expressions or names) beside ``source_file``, ``turn_index`` and ``row`` (or
    ``line``, ``uuid``, ``time``)."""
    if by is not None:
        frame = _top(frame, by, limit, descending=descending)
    anchor = [S.LINE, S.UUID, S.TIME] if S.LINE in frame.columns else [S.ROW]
    return frame.select(
        S.SOURCE_FILE,
        S.TURN_INDEX,
        *anchor,
        pl.lit(kind).cast(S.FINDING_KIND_ENUM).alias(S.FINDING_KIND),
        S.RANK,
        *(
            pl.col(value).alias(name) if isinstance(value, str) else value.alias(name)
            for name, value in columns.items()
        ),
    )


def rank_in(by: str, over: Sequence[str] = (S.SOURCE_FILE,), *, descending: bool = True) -> pl.Expr:
    """Each row's place by the column ``by`` within its ``over`` group: 1 for the largest (the
    smallest when not ``descending``), ties to the earlier row.

    Examples:
        >>> frame = pl.DataFrame({"source_file": ["a", "a", "a", "b"], "tokens": [5, 9, 5, 1]})
        >>> frame.select(rank_in("tokens")).to_series().to_list()
        [2, 1, 3, 1]
    """
    return pl.col(by).rank("ordinal", descending=descending).over(over).cast(pl.Int64)


def _top(frame: pl.DataFrame, by: str, limit: int | None, *, descending: bool = True) -> pl.DataFrame:
    """``frame`` (in row order within each file) with ``rank`` per file by ``by`` (:func:`rank_in`),
    its first ``limit`` rows (None: all)."""
    ranked = frame.with_columns(rank_in(by, descending=descending).alias(S.RANK))
    return ranked if limit is None else ranked.filter(pl.col(S.RANK) <= limit)


def target_of(call: pl.Expr) -> pl.Expr:
    """What a tool call's input (compact JSON) names: its first :data:`TARGET_KEYS` value, cut to
    :data:`TARGET_CHARS` characters.

    Examples:
        >>> pl.select(target_of(pl.lit('{"file_path":"/w/a.py","limit":5}'))).item()
        '/w/a.py'
    """
    return pl.coalesce([call.str.json_path_match(f"$.{key}") for key in TARGET_KEYS]).str.slice(0, TARGET_CHARS)


def _largest_items(parts: pl.DataFrame) -> pl.DataFrame:
    return _finding(
        parts.filter(pl.col("tokens") > 0),
        "largest_item",
        by="tokens",
        limit=LARGEST,
        category=S.CATEGORY,
        item=S.ITEM,
        target=target_of(pl.col(INPUT)),
        tokens="tokens",
    )


def _repeated_reads(parts: pl.DataFrame) -> pl.DataFrame:
    path = pl.col(INPUT).str.json_path_match("$.file_path")
    reads = parts.filter((pl.col(S.KIND) == "tool_result") & (pl.col(TOOL) == READ_TOOL)).with_columns(
        path.alias(S.TARGET)
    )
    nth = pl.int_range(pl.len()).over(S.SOURCE_FILE, S.TARGET)
    repeats = (
        reads.filter(pl.col(S.TARGET).is_not_null())
        .with_columns(nth.alias("_nth"))
        .group_by(S.SOURCE_FILE, S.TARGET)
        .agg(
            pl.len().cast(pl.Int64).alias(S.COUNT),
            pl.col("tokens").filter(pl.col("_nth") > 0).sum().alias(S.TOKENS),
            pl.col(S.ROW).filter(pl.col("_nth") == 1).first(),
            pl.col(S.TURN_INDEX).filter(pl.col("_nth") == 1).first(),
            pl.col(S.CATEGORY).first(),
            pl.col(S.ITEM).first(),
        )
        .filter(pl.col(S.COUNT) > 1)
        .sort(S.SOURCE_FILE, S.ROW)
    )
    return _finding(
        repeats,
        "repeated_read",
        by=S.TOKENS,
        category=S.CATEGORY,
        item=S.ITEM,
        target=S.TARGET,
        tokens=S.TOKENS,
        count=S.COUNT,
    )


def _last_requests(main: pl.DataFrame) -> pl.DataFrame:
    """Per turn of a main file with a request: the row, occupancy and segment of its last one."""
    return (
        main.filter(pl.col(S.OCCUPANCY).is_not_null())
        .group_by(S.SOURCE_FILE, S.TURN_INDEX)
        .agg(pl.col(S.ROW, S.OCCUPANCY, SEGMENT).sort_by(S.ROW).last())
        .sort(S.SOURCE_FILE, S.TURN_INDEX)
    )


def _peak_windows(last: pl.DataFrame, composition: pl.DataFrame) -> pl.DataFrame:
    """The parts of each main file's window at its fullest turn (the first of the fullest)."""
    peaks = (
        last.sort(S.SOURCE_FILE, S.TURN_INDEX)
        .filter(rank_in(S.OCCUPANCY) == 1)
        .select(S.SOURCE_FILE, S.TURN_INDEX, S.ROW)
    )
    parts = (
        composition.join(peaks, on=[S.SOURCE_FILE, S.TURN_INDEX])
        .filter(pl.col(S.TOKENS) > 0)
        .sort(S.SOURCE_FILE, S.CATEGORY, S.ITEM, nulls_last=True)
    )
    return _finding(parts, "peak_window", by=S.TOKENS, category=S.CATEGORY, item=S.ITEM, tokens=S.TOKENS)


def _window_jumps(last: pl.DataFrame, composition: pl.DataFrame) -> pl.DataFrame:
    """The largest rises of the recorded occupancy, at each turn's last request, with their causes."""
    before = pl.col(S.OCCUPANCY).shift(1).over(S.SOURCE_FILE, SEGMENT)
    rises = last.with_columns((pl.col(S.OCCUPANCY) - before).alias(S.TOKENS)).filter(pl.col(S.TOKENS) > 0)
    jumps = _top(rises, S.TOKENS, JUMPS)
    scale = pl.when(pl.col(S.CALIBRATION).is_null() | (pl.col(S.CATEGORY) == "baseline"))
    entered = (
        scale.then(pl.col(S.ENTERED_TOKENS))
        .otherwise((pl.col(S.ENTERED_TOKENS) * pl.col(S.CALIBRATION)).round().cast(pl.Int64))
        .alias(S.PART_TOKENS)
    )
    causes = (
        composition.join(jumps.select(S.SOURCE_FILE, S.TURN_INDEX), on=[S.SOURCE_FILE, S.TURN_INDEX])
        .filter(pl.col(S.ENTERED_TOKENS) > 0)
        .select(S.SOURCE_FILE, S.TURN_INDEX, S.CATEGORY, S.ITEM, entered)
    )
    causes = causes.filter(rank_in(S.PART_TOKENS, (S.SOURCE_FILE, S.TURN_INDEX)) <= CAUSES)
    return _finding(
        jumps.join(causes, on=[S.SOURCE_FILE, S.TURN_INDEX], how="left"),
        "window_jump",
        by=None,
        category=S.CATEGORY,
        item=S.ITEM,
        tokens=S.TOKENS,
        part_tokens=S.PART_TOKENS,
    )


def _tool_definitions(composition: pl.DataFrame, requests: pl.DataFrame) -> pl.DataFrame:
    first = (
        requests.filter(~pl.col(S.IS_SUBAGENT_FILE))
        .group_by(S.SOURCE_FILE)
        .agg(pl.col(S.TURN_INDEX, S.LINE, S.UUID, S.TIME).sort_by(S.ROW).first())
    )
    baselines = (
        composition.filter((pl.col(S.CATEGORY) == "baseline") & (pl.col(S.ENTERED_TOKENS) > 0))
        .select(S.SOURCE_FILE, S.CATEGORY, S.BASELINE)
        .join(first, on=S.SOURCE_FILE)
    )
    return _finding(baselines, "tool_definitions", by=S.BASELINE, category=S.CATEGORY, tokens=S.BASELINE)


def _mcp_servers(parts: pl.DataFrame, composition: pl.DataFrame) -> pl.DataFrame:
    server = pl.col(S.ITEM).str.starts_with("mcp__")
    held = (
        composition.filter(server)
        .group_by(S.SOURCE_FILE, S.ITEM, S.TURN_INDEX)
        .agg(pl.coalesce(S.TOKENS, S.ESTIMATED_TOKENS).sum().alias(S.TOKENS))
        .group_by(S.SOURCE_FILE, S.ITEM)
        .agg(pl.col(S.TOKENS).max())
    )
    calls = (
        parts.filter(server & (pl.col(S.KIND) == "tool_use"))
        .group_by(S.SOURCE_FILE, S.ITEM)
        .agg(pl.len().cast(pl.Int64).alias(S.COUNT), pl.col(S.ROW, S.TURN_INDEX).sort_by(S.ROW).first())
    )
    servers = held.join(calls, on=[S.SOURCE_FILE, S.ITEM]).sort(S.SOURCE_FILE, S.ROW)
    return _finding(
        servers,
        "mcp_server",
        by=S.TOKENS,
        item=S.ITEM,
        tokens=S.TOKENS,
        count=S.COUNT,
    )


def _cache_rebuilds(requests: pl.DataFrame) -> pl.DataFrame:
    ordered = requests.sort(S.SOURCE_FILE, S.ROW)
    written = pl.sum_horizontal(_WRITES)
    lifetime = (
        pl.when(pl.col(S.CACHE_CREATION_1H_TOKENS) > 0)
        .then(pl.lit("1h"))
        .when(pl.col(S.CACHE_CREATION_5M_TOKENS) > 0)
        .then(pl.lit("5m"))
    )
    previous = [S.SOURCE_FILE]
    steps = ordered.with_columns(
        lifetime.forward_fill().shift(1).over(previous).alias(S.ITEM),
        (pl.col(S.CACHE_READ_TOKENS) + written).shift(1).over(previous).alias("_held"),
        ((pl.col(S.TIME) - pl.col(S.TIME).shift(1).over(previous)).dt.total_microseconds() / 1e6).alias(S.SECONDS),
    )
    expired = pl.col(S.SECONDS) > pl.col(S.ITEM).replace_strict(LIFETIMES, return_dtype=pl.Float64, default=None)
    rebuilds = steps.filter(expired & (written > 0) & (pl.col("_held") > 0))
    rewritten = pl.min_horizontal(written, pl.col("_held"))
    one_hour = pl.min_horizontal(rewritten, pl.col(S.CACHE_CREATION_1H_TOKENS))
    rewrites = rebuilds.with_columns(
        rewritten.alias(S.TOKENS),
        one_hour.alias(S.CACHE_CREATION_1H_TOKENS),
        (rewritten - one_hour).alias(S.CACHE_CREATION_5M_TOKENS),
        *(pl.lit(0, pl.Int64).alias(name) for name in (S.INPUT_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS)),
        pl.lit(0, pl.Int64).alias(S.WEB_SEARCH_REQUESTS),
    )
    priced = price_requests(rewrites)
    return _finding(
        priced,
        "cache_rebuild",
        by=S.TOKENS,
        item=S.ITEM,
        tokens=S.TOKENS,
        cost_usd=S.COST_USD,
        seconds=S.SECONDS,
    )


def _cache_hits(requests: pl.DataFrame) -> pl.DataFrame:
    prompt = pl.col(S.INPUT_TOKENS) + pl.sum_horizontal(_WRITES) + pl.col(S.CACHE_READ_TOKENS)
    turns = (
        requests.filter(~pl.col(S.IS_SUBAGENT_FILE))
        .sort(S.SOURCE_FILE, S.ROW)
        .group_by(S.SOURCE_FILE, S.TURN_INDEX, maintain_order=True)
        .agg(
            pl.col(S.CACHE_READ_TOKENS).sum().alias(S.TOKENS),
            prompt.sum().alias("_prompt"),
            pl.len().cast(pl.Int64).alias(S.COUNT),
            pl.col(S.COST_USD).sum().alias(S.COST_USD),
            pl.col(S.COST_USD).is_null().any().alias("_unpriced"),
            pl.col(S.LINE, S.UUID, S.TIME).first(),
        )
        .with_columns(
            pl.when(pl.col("_prompt") > 0).then(pl.col(S.TOKENS) / pl.col("_prompt")).alias(S.RATIO),
            pl.when(~pl.col("_unpriced")).then(pl.col(S.COST_USD)).alias(S.COST_USD),
        )
    )
    return _finding(
        turns,
        "cache_hit",
        by=S.RATIO,
        descending=False,
        tokens=S.TOKENS,
        cost_usd=S.COST_USD,
        count=S.COUNT,
        ratio=S.RATIO,
    )


def findings_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The findings of one batch of transcripts (run in a worker process)."""
    return findings_rows(files)


def scan_findings(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what is worth a look in each transcript's windows (``S.FINDINGS_SCHEMA``; the
    kinds are the module's).

    Examples:
        >>> import tempfile, pathlib, json
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> line = lambda kind, **rest: json.dumps({"type": kind, "sessionId": "s", "uuid": str(len(rest)) + kind,
        ...     "timestamp": "2026-03-01T10:00:00Z", **rest})
        >>> usage = {"input_tokens": 5000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
        >>> _ = (folder / "s.jsonl").write_text(line("user", message={"role": "user", "content": "a" * 400}) + "\\n"
        ...     + line("assistant", message={"id": "m1", "model": "claude-opus-4-5", "role": "assistant",
        ...            "content": [{"type": "text", "text": "ok"}], "usage": usage}) + "\\n")
        >>> frame = scan_findings(folder).select("kind", "category", "tokens").collect()
        >>> frame.filter(pl.col("kind") != "largest_item").rows()
        [('peak_window', 'baseline', 4900), ('peak_window', 'user', 100), ('tool_definitions', 'baseline', 4900), ('cache_hit', None, 0)]
    """
    files = resolve(source)

    def produce() -> Iterator[pl.DataFrame]:
        yield from run_batches(findings_batch, files, workers=workers, on_progress=on_progress)

    return lazy_source(produce, S.FINDINGS_SCHEMA, "claude_findings")


def read_findings(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_findings`."""
    return scan_findings(source, workers=workers, on_progress=on_progress).collect()
