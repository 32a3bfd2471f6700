"""API requests of Claude Code sessions: occupancy per request, deduplication, the requests frame.

Imports: polars, the standard library, ``frames.engine``, ``frames.prices``, ``frames.requests``
and the other modules of ``frames.claude``. Rules (spec ``claude-code-jsonl.md``):

* a request is an assistant line with recorded usage that is not an API error (``<synthetic>``
  model or ``isApiErrorMessage``);
* occupancy of a request = input + cache creation + cache read tokens of its usage;
* the main chain of a file is its own chain: non-sidechain lines in a main file, sidechain
  lines in a subagent file;
* requests count each (message id, request id) once per session, keeping the last of the
  split lines; lines without a message id are each counted;
* a ``compact_boundary`` system line opens a new context segment of its file.

The requests frame (``REQUESTS_SCHEMA``) has one row per deduplicated request of a session's
files, main chain and subagents alike: ``agent_id`` is the subagent file's agent (null in a
main transcript), ``provider`` is ``anthropic`` (a hint: the model name decides when the
price list files it elsewhere), and the cache writes are split by lifetime from
``usage.cache_creation`` — the 1-hour part as recorded, the rest of
``cache_creation_input_tokens`` at 5 minutes (all of it when only the total is recorded).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from operator import itemgetter

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import SESSIONS, Walked, frames_of, walk_files
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.claude.events import Source, resolve
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, run_batches, scan_batches
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.requests import cache_creation_tokens, cost_totals

ON_CHAIN = "on_chain"
IS_COMPACTION = "is_compaction"
SEGMENT = "segment"
PROVIDER = "anthropic"
TOKEN_COLUMNS = (S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS)
_FILE_AGENT = "_file_agent"


def on_chain() -> pl.Expr:
    """Lines of the file's own chain: main lines of a main file, sidechain lines of a subagent."""
    return pl.col(S.IS_SIDECHAIN) == pl.col(S.IS_SUBAGENT_FILE)


def is_request() -> pl.Expr:
    """Assistant lines with recorded usage that are not API errors."""
    return (pl.col(S.TYPE) == "assistant") & pl.col(S.INPUT_TOKENS).is_not_null() & ~pl.col(S.IS_API_ERROR)


def request_occupancy() -> pl.Expr:
    """Prompt size of a request: input + cache creation + cache read (output not included)."""
    return pl.col(S.INPUT_TOKENS) + pl.col(S.CACHE_CREATION_TOKENS) + pl.col(S.CACHE_READ_TOKENS)


def annotate_chain(events: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``on_chain``, ``occupancy`` (main-chain requests), ``is_compaction``, ``segment``."""
    compaction = (pl.col(S.TYPE) == "system") & (pl.col(S.SUBTYPE) == "compact_boundary") & on_chain()
    return events.with_columns(
        on_chain().alias(ON_CHAIN),
        pl.when(is_request() & on_chain()).then(request_occupancy()).alias(S.OCCUPANCY),
        compaction.alias(IS_COMPACTION),
    ).with_columns(
        pl.col(IS_COMPACTION).cast(pl.Int64).cum_sum().over(S.SOURCE_FILE).alias(SEGMENT),
    )


def deduplicated_requests(events: pl.LazyFrame, key: str = S.FILE_SESSION_ID) -> pl.LazyFrame:
    """One row per (``key``, message id, request id): the last split line of each response."""
    row_key = pl.concat_str(pl.lit("line:"), pl.col(S.SOURCE_FILE), pl.lit(":"), pl.col(S.LINE))
    message = pl.coalesce(pl.col(S.MESSAGE_ID), row_key)
    return (
        events.filter(is_request())
        .with_columns(message.alias("_message"), pl.col(S.REQUEST_ID).fill_null("").alias("_req"))
        .unique(subset=[key, "_message", "_req"], keep="last", maintain_order=True)
        .drop("_message", "_req")
    )


def session_projects(events: pl.LazyFrame, files: Sequence[TranscriptFile]) -> pl.LazyFrame:
    """Per session (``file_session_id``): ``project`` (its first ``cwd``, else the folder name)
    and ``project_dir`` (the folder of its main transcript)."""
    places = pl.LazyFrame(
        {
            S.FILE_SESSION_ID: [f.session_id for f in files],
            S.PROJECT_DIR: [f.project_dir for f in files],
            "_sub": [f.is_subagent for f in files],
        },
        schema={S.FILE_SESSION_ID: pl.String, S.PROJECT_DIR: pl.String, "_sub": pl.Boolean},
    )
    project_dirs = places.sort("_sub").group_by(S.FILE_SESSION_ID).agg(pl.col(S.PROJECT_DIR).first())
    cwd = events.group_by(S.FILE_SESSION_ID).agg(pl.col(S.CWD).drop_nulls().first().alias(S.PROJECT))
    return project_dirs.join(cwd, on=S.FILE_SESSION_ID, how="left").with_columns(
        pl.col(S.PROJECT).fill_null(pl.col(S.PROJECT_DIR))
    )


def request_rows(events: pl.LazyFrame, files: Sequence[TranscriptFile], *, keep: Sequence[str] = ()) -> pl.LazyFrame:
    """The deduplicated requests of decoded ``events`` in ``REQUESTS_SCHEMA`` (not priced yet:
    ``cost_usd`` null), followed by the event columns named in ``keep``."""
    agents = pl.LazyFrame(
        {S.SOURCE_FILE: [f.source_file for f in files], _FILE_AGENT: [f.agent_id for f in files]},
        schema={S.SOURCE_FILE: pl.String, _FILE_AGENT: pl.String},
    )
    creation = pl.col(S.CACHE_CREATION_TOKENS)
    one_hour = pl.min_horizontal(pl.col(S.CACHE_CREATION_1H_TOKENS).fill_null(0), creation)
    columns = {
        S.FORMAT: pl.lit(S.CLAUDE),
        S.SESSION_ID: pl.col(S.FILE_SESSION_ID),
        S.PROJECT: pl.col(S.PROJECT),
        S.AGENT_ID: pl.col(_FILE_AGENT),
        S.IS_SIDECHAIN: pl.col(S.IS_SIDECHAIN),
        S.REQUEST_ID: pl.col(S.REQUEST_ID),
        S.MESSAGE_ID: pl.col(S.MESSAGE_ID),
        S.TIME: pl.col(S.TIMESTAMP),
        S.MODEL: pl.col(S.MODEL),
        S.PROVIDER: pl.lit(PROVIDER),
        S.INPUT_TOKENS: pl.col(S.INPUT_TOKENS),
        S.CACHE_CREATION_5M_TOKENS: creation - one_hour,
        S.CACHE_CREATION_1H_TOKENS: one_hour,
        S.CACHE_READ_TOKENS: pl.col(S.CACHE_READ_TOKENS),
        S.OUTPUT_TOKENS: pl.col(S.OUTPUT_TOKENS),
        S.REASONING_TOKENS: pl.lit(None, pl.Int64),
        S.WEB_SEARCH_REQUESTS: pl.col(S.WEB_SEARCH_REQUESTS).fill_null(0),
        S.SERVICE_TIER: pl.col(S.SERVICE_TIER),
        S.SPEED: pl.col(S.SPEED),
        S.COST_USD: pl.lit(None, pl.Float64),
    }
    projects = session_projects(events, files).select(S.FILE_SESSION_ID, S.PROJECT)
    return (
        deduplicated_requests(events)
        .join(agents, on=S.SOURCE_FILE, how="left", maintain_order="left")
        .join(projects, on=S.FILE_SESSION_ID, how="left", maintain_order="left")
        .select(*(expr.alias(name) for name, expr in columns.items()), *keep)
        .cast(S.REQUESTS_SCHEMA)
    )


def priced_requests(events: pl.DataFrame, files: Sequence[TranscriptFile]) -> pl.DataFrame:
    """The priced requests of prepared events (``turns.prepare``), each with the
    ``source_file`` and ``turn_index`` of its line: what sessions and turns sum their cost over."""
    rows = request_rows(events.lazy(), files, keep=(S.SOURCE_FILE, S.TURN_INDEX))
    return price_requests(rows.collect(engine=BATCH_ENGINE))


def request_totals() -> list[pl.Expr]:
    """Aggregations over requests-frame rows: the four token sums, requests, hit ratio, cost."""
    prompt = pl.col(S.INPUT_TOKENS) + cache_creation_tokens() + pl.col(S.CACHE_READ_TOKENS)
    ratio = pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt.sum()
    return [
        pl.col(S.INPUT_TOKENS).sum(),
        cache_creation_tokens().sum().alias(S.CACHE_CREATION_TOKENS),
        pl.col(S.CACHE_READ_TOKENS).sum(),
        pl.col(S.OUTPUT_TOKENS).sum(),
        pl.len().alias(S.REQUESTS),
        ratio.alias(S.CACHE_HIT_RATIO),
        *cost_totals(),
    ]


def compaction_columns() -> list[pl.Expr]:
    """Per file or session: count, triggers, pre-tokens and the first occupancy after each."""
    after = pl.col(S.OCCUPANCY).backward_fill()
    boundary = pl.col(IS_COMPACTION)
    return [
        boundary.sum().cast(pl.Int64).alias(S.COMPACTIONS),
        pl.col(S.COMPACT_TRIGGER).filter(boundary).alias(S.COMPACTION_TRIGGERS),
        pl.col(S.COMPACT_PRE_TOKENS).filter(boundary).alias(S.COMPACTION_PRE_TOKENS),
        after.filter(boundary).alias(S.COMPACTION_POST_TOKENS),
    ]


# ------------------------------------------------------------------ the verbs


def requests_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The priced requests and the problems of one batch of files."""
    return requests_of(walk_files(files, SESSIONS))


def requests_of(walked: Walked) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`requests_batch` from a batch's walk (what a worker process hands back)."""
    decoded = frames_of(walked)
    rows = request_rows(decoded.events.lazy(), walked.files).collect(engine=BATCH_ENGINE)
    return price_requests(rows), decoded.problems


def iter_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(priced requests, problems) of ``source`` batch by batch: what the ``usage`` command reads.

    Worker processes only walk the lines; the frames are made and priced here (so only this
    process ever loads Polars, or genai-prices when its price book lacks a model).
    """
    files = resolve(source)
    yield from run_batches(
        partial(walk_files, profile=SESSIONS),
        files,
        workers=workers,
        on_progress=on_progress,
        batch_bytes=SESSIONS.batch_bytes,
        finish=requests_of,
    )


def scan_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per API request of ``source`` (``REQUESTS_SCHEMA``), priced.

    ``source`` is a transcript file, a folder, a glob, a list of these (or of
    ``TranscriptFile``), or None for the Claude Code projects folders. Each (message id,
    request id) counts once per session, main chain and subagents alike, as the sessions'
    token totals do; ``cost_usd`` is from :func:`~cc_analytics.frames.prices.price_requests`
    (null for a model the price list does not know).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> line = ('{"type":"assistant","uuid":"a%d","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...         '"requestId":"req_1","message":{"id":"msg_1","model":"claude-opus-4-5","content":[],'
        ...         '"usage":{"input_tokens":1000000,"cache_creation_input_tokens":0,'
        ...         '"cache_read_input_tokens":0,"output_tokens":%d}}}\\n')
        >>> _ = (folder / "s.jsonl").write_text(line % (1, 0) + line % (2, 40000))
        >>> scan_requests(folder).select("session_id", "input_tokens", "output_tokens", "cost_usd").collect().row(0)
        ('s', 1000000, 40000, 6.0)
    """
    return scan_batches(
        partial(walk_files, profile=SESSIONS),
        resolve(source),
        S.REQUESTS_SCHEMA,
        "claude_requests",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=SESSIONS.batch_bytes,
        finish=requests_of,
        pick=itemgetter(0),
    )


def read_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_requests`, in session and file order.

    Examples:
        >>> read_requests([]).schema == S.REQUESTS_SCHEMA
        True
    """
    return scan_requests(source, workers=workers, on_progress=on_progress).collect()
