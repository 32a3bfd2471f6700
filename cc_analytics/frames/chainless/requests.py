"""API requests of ChainlessChain sessions: one per ``token_usage`` record, priced.

Imports: polars, the standard library, ``frames.engine``, ``frames.prices`` and the other
``frames.chainless`` modules. Every ``token_usage`` line is a request (main model, sub-agents
and semantic compaction alike, as the sessions' token totals count them), in
``REQUESTS_SCHEMA``:

* ``provider``: the record's, else the session header's (``session_start``); it picks the
  price list's provider (a local one — ``ollama`` and the like — costs 0), and when the price
  list does not know it, the model name decides;
* ``agent_id``: the record's ``attribution.subagentId``; ``is_sidechain``: a ``subagent``
  source or an agent id;
* ``time``: the record's numeric timestamp; ``project``, ``request_id`` and ``message_id``
  are null (the records carry none), as are ``service_tier`` and ``speed``;
* tokens as recorded, ``input_tokens`` being the uncached input (the records use Anthropic's
  names); cache writes are all 5-minute ones; no web searches.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import itemgetter

import polars as pl

from cc_analytics.frames.chainless import schema as S
from cc_analytics.frames.chainless.decode import Decoded, Profile, decode
from cc_analytics.frames.chainless.store import Source, resolve
from cc_analytics.frames.chainless.turns import utc_time
from cc_analytics.frames.engine import Progress, run_batches, scan_batches
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.sources import TranscriptFile

TOKEN_USAGE = "token_usage"
SUBAGENT_SOURCE = "subagent"


def request_rows(decoded: Decoded, *, keep: Sequence[str] = ()) -> pl.LazyFrame:
    """The ``token_usage`` records of a batch decoded with ``Profile.EVENTS`` in
    ``REQUESTS_SCHEMA`` (not priced yet), followed by the event columns named in ``keep``."""
    headers = decoded.files.lazy().select(
        S.FILE, pl.when(pl.col(S.RECORDED_PROVIDER) != "").then(pl.col(S.RECORDED_PROVIDER)).alias("_header")
    )
    agent = pl.col(S.ATTRIBUTION).str.json_path_match("$.subagentId")
    columns = {
        S.FORMAT: pl.lit(S.CHAINLESS),
        S.SESSION_ID: pl.col(S.SESSION_ID),
        S.PROJECT: pl.lit(None, pl.String),
        S.AGENT_ID: agent,
        S.IS_SIDECHAIN: (pl.col(S.USAGE_SOURCE) == SUBAGENT_SOURCE).fill_null(False) | agent.is_not_null(),
        S.REQUEST_ID: pl.lit(None, pl.String),
        S.MESSAGE_ID: pl.lit(None, pl.String),
        S.TIME: utc_time(pl.col(S.TIMESTAMP)),
        S.MODEL: pl.col(S.MODEL),
        S.PROVIDER: pl.coalesce(pl.when(pl.col(S.PROVIDER) != "").then(pl.col(S.PROVIDER)), pl.col("_header")),
        S.INPUT_TOKENS: pl.col(S.INPUT_TOKENS),
        S.CACHE_CREATION_5M_TOKENS: pl.col(S.CACHE_CREATION_TOKENS),
        S.CACHE_CREATION_1H_TOKENS: pl.lit(0),
        S.CACHE_READ_TOKENS: pl.col(S.CACHE_READ_TOKENS),
        S.OUTPUT_TOKENS: pl.col(S.OUTPUT_TOKENS),
        S.REASONING_TOKENS: pl.lit(None, pl.Int64),
        S.WEB_SEARCH_REQUESTS: pl.lit(0),
        S.SERVICE_TIER: pl.lit(None, pl.String),
        S.SPEED: pl.lit(None, pl.String),
        S.COST_USD: pl.lit(None, pl.Float64),
    }
    return (
        decoded.events.lazy()
        .filter(pl.col(S.TYPE) == TOKEN_USAGE)
        .join(headers, on=S.FILE, how="left", maintain_order="left")
        .select(*(expr.alias(name) for name, expr in columns.items()), *keep)
        .cast(S.REQUESTS_SCHEMA)
    )


def priced_requests(decoded: Decoded) -> pl.DataFrame:
    """The priced requests of a decoded batch, each with its line's ``file`` and ``line``
    (what turns and sessions sum their cost over)."""
    return price_requests(request_rows(decoded, keep=(S.FILE, S.LINE)).collect())


def requests_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The priced requests and the problems of one batch of transcripts (run in a worker process)."""
    decoded = decode(files, Profile.EVENTS)
    return price_requests(request_rows(decoded).collect()), decoded.problems


def iter_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(priced requests, problems) of ``source`` batch by batch: what the ``usage`` command reads."""
    yield from run_batches(requests_batch, resolve(source), workers=workers, on_progress=on_progress)


def scan_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per ``token_usage`` record of ``source`` (``REQUESTS_SCHEMA``), priced.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"token_usage","timestamp":1767225600000,"data":{"provider":"openai","model":"gpt-4o",'
        ...     '"usage":{"input_tokens":1000000,"output_tokens":100000}}}\\n'
        ...     '{"type":"token_usage","timestamp":1767225601000,"data":{"provider":"ollama","model":"qwen3:8b",'
        ...     '"usage":{"input_tokens":1000,"output_tokens":10}}}\\n')
        >>> scan_requests(folder).select("provider", "model", "cost_usd").collect().rows()
        [('openai', 'gpt-4o', 3.5), ('ollama', 'qwen3:8b', 0.0)]
    """
    return scan_batches(
        requests_batch,
        resolve(source),
        S.REQUESTS_SCHEMA,
        "chainless_requests",
        workers=workers,
        on_progress=on_progress,
        pick=itemgetter(0),
    )


def read_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_requests`, in session and line order.

    Examples:
        >>> read_requests([]).schema == S.REQUESTS_SCHEMA
        True
    """
    return scan_requests(source, workers=workers, on_progress=on_progress).collect()
