"""Batch report over many sessions of every format: one offline ``report.html`` plus Parquet.

Imports: polars, orjson, the standard library, ``frames`` (the format-auto front: one decode
of each transcript gives sessions, turns, priced requests and problems; ``frames.prices`` names
the requests without a price), ``format``, ``atomic`` (files are written beside their final
name); ``views.specs`` (the charts' Vega-Lite specs, as plain dicts: never Altair) inside
:func:`report_charts`, and ``vl_convert`` only inside :func:`vega_bundle` (which makes the
bundle in a child process).

The page is self-contained: the Vega, Vega-Lite and Vega-Embed libraries are inlined from
vl-convert's bundle and every chart's data is pre-aggregated, so it opens offline and stays
small whatever the corpus. ``sessions.parquet`` holds one row per session of every format
(``format`` tells which); ``turns.parquet`` one row per turn and ``requests.parquet`` one row
per priced API request, every format too.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import polars as pl

from cc_analytics.atomic import beside, open_pieces
from cc_analytics.errors import InputError
from cc_analytics.format import group_thousands, unpriced_name, usd
from cc_analytics.frames import schema as S
from cc_analytics.frames.engine import Progress
from cc_analytics.frames.metrics import zone_of
from cc_analytics.frames.prices import unpriced
from cc_analytics.frames.sources import Source, TranscriptFile

if TYPE_CHECKING:
    from cc_analytics.frames.api import Plan
    from cc_analytics.frames.plugin import Engine

REPORT_HTML = "report.html"
SESSIONS_PARQUET = "sessions.parquet"
TURNS_PARQUET = "turns.parquet"
REQUESTS_PARQUET = "requests.parquet"
OUTPUTS = (REPORT_HTML, SESSIONS_PARQUET, TURNS_PARQUET, REQUESTS_PARQUET)
MARKER = '<meta name="generator" content="cc-analytics report">'
FORMAT = S.FORMAT
OCCUPANCY_SOURCE = S.OCCUPANCY_SOURCE
SAMPLES_DIR = Path(__file__).resolve().parents[1] / "data-samples"
TOP_SESSIONS = 20
COST_HEADERS = ("format", "project", "session", "cost", "requests", "tokens", "started", "models")
TABLE_HEADERS = (
    "format",
    "project",
    "session",
    "model",
    "started",
    "turns",
    "peak",
    "window",
    "peak %",
    "compactions",
    "occupancy",
)
STYLE = """\
body {
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif;
  margin: 0;
  color: #222;
  background: #f6f7f9;
}
header, main { max-width: 1080px; margin: 0 auto; padding: 0 20px; }
header h1 { font-size: 22px; margin: 22px 0 2px; }
header p { color: #666; margin: 0 0 14px; }
.kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: 10px; }
.kpi {
  background: #fff;
  border-radius: 8px;
  padding: 10px 12px;
  box-shadow: 0 1px 2px rgba(0,0,0,.08);
}
.kpi .label { color: #666; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.kpi .value { font-size: 24px; font-weight: 600; }
.kpi .note { color: #888; font-size: 12px; }
section {
  background: #fff;
  border-radius: 8px;
  padding: 12px 16px;
  margin: 14px 0;
  box-shadow: 0 1px 2px rgba(0,0,0,.08);
  overflow-x: auto;
}
.caption { color: #555; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td {
  text-align: left;
  padding: 4px 8px;
  border-bottom: 1px solid #eee;
  white-space: nowrap;
}
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.green { color: #2e9e44; }
td.yellow { color: #b07f00; font-weight: 600; }
td.red { color: #d1343a; font-weight: 600; }
footer {
  color: #888;
  font-size: 12px;
  max-width: 1080px;
  margin: 0 auto 30px;
  padding: 0 20px;
}
"""


@dataclass(frozen=True, slots=True)
class ReportData:
    """What a report is made of: sessions, turns and priced requests of every format, problems."""

    sessions: pl.DataFrame
    turns: pl.DataFrame
    problems: pl.DataFrame
    sources: tuple[str, ...]
    requests: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=S.REQUESTS_SCHEMA))
    findings: pl.DataFrame | None = None
    """What is worth a look in the windows (``FINDINGS_SCHEMA``); None when not read (an archive
    keeps no content blocks, or ``load(findings=False)``)."""


# ------------------------------------------------------------------ loading


def sample_sources() -> list[Path]:
    """The sessions under ``data-samples/`` (present in a source checkout), every format."""
    if not any(SAMPLES_DIR.glob("*/**/*.jsonl")):
        msg = f"no samples at {SAMPLES_DIR}\nHint: run `make samples` in a source checkout."
        raise InputError(msg)
    return [SAMPLES_DIR]


def load(
    sources: Sequence[str | os.PathLike[str]] | None = None,
    *,
    samples: bool = False,
    on_progress: Progress | None = None,
    workers: int | None = None,
    meanwhile: Callable[[], object] | None = None,
    cache: bool = True,
    findings: bool = True,
    engine: Engine = "local",
    scheduler: str | None = None,
) -> ReportData:
    """Sessions, turns and problems of ``sources`` (default stores; samples when asked or empty),
    each transcript decoded once (``workers``, ``cache``, ``engine`` and ``scheduler`` as
    ``frames.read_tables`` takes them: archives may be read on a Dask cluster), with, when
    ``findings`` and the sources are transcripts, their findings (what ``frames.read_findings``
    gives) from the same decode (and kept in the cache with the tables).

    The worker processes start before the files are planned; ``meanwhile`` is called while
    they start (they take about a third of a second: work done then is not done later, when
    the workers' core would stand idle).

    Examples:
        >>> from cc_analytics.frames.registry import names
        >>> data = load(samples=True)
        >>> set(data.sessions["format"]) == set(names())
        True
    """
    from cc_analytics.frames import sources as frame_sources
    from cc_analytics.frames import tablecache
    from cc_analytics.frames.api import read_tables
    from cc_analytics.frames.sources import default_stores, workers_ahead

    given: Source = sample_sources() if samples else (sources or None)

    def plan(source: Source) -> Plan:
        planned = tablecache.plan(source) if cache else frame_sources.plan(source)
        frame_sources.import_ahead(planned)
        return planned

    with workers_ahead(given, workers, start=not (cache and tablecache.planned_before(given))) as root:
        if meanwhile is not None:
            meanwhile()
        if given is not None:
            # The archive found, or the files planned: neither is looked for again.
            chosen: Source | Plan = root if root is not None else plan(given)
            used = [os.fspath(s) for s in given]
        else:
            found = plan(None)
            chosen = found
            stores = default_stores()
            used = sorted({_store_of(f, stores) for files in found.values() for f in files})
            if not found:
                chosen = sample_sources()
                used = ["data-samples (no sessions found under the default stores)"]
        wanted = findings and root is None
        tables = read_tables(
            chosen,
            workers=workers,
            on_progress=on_progress,
            cache=cache,
            findings=wanted,
            engine=engine,
            scheduler=scheduler,
        )
    turns = tables.turns.sort(S.FORMAT, S.SESSION_ID, S.SOURCE_FILE, S.TURN_INDEX)
    return ReportData(tables.sessions, turns, tables.problems, tuple(used), tables.requests, tables.findings)


def _store_of(transcript: TranscriptFile, stores: list[Path]) -> str:
    """The default store ``transcript`` was found in (the deepest that holds it), else its folder."""
    path = transcript.path
    holding = [store for store in stores if store in path.parents]
    return str(max(holding, key=lambda store: len(store.parts)) if holding else path.parent)


def forbidden_roots() -> list[Path]:
    """Folders a report must never be written into: every agent's own (``FormatPlugin.protected_roots``)."""
    from cc_analytics.frames.sources import protected_roots

    return protected_roots()


def check_out_dir(out: Path) -> Path:
    """``out`` resolved, after refusing folders we must not write into or do not own.

    A report folder is new, empty, or holds a ``report.html`` written by us.
    """
    target = out.expanduser().resolve()
    for root in forbidden_roots():
        root = root.expanduser().resolve()
        if target == root or root in target.parents:
            msg = f"refusing to write a report inside {str(root)!r}\nHint: pass --out DIR elsewhere."
            raise InputError(msg)
    if target.exists() and not target.is_dir():
        msg = f"--out {str(out)!r} is not a folder"
        raise InputError(msg)
    if target.is_dir() and any(target.iterdir()):
        page = target / REPORT_HTML
        try:
            ours = MARKER.encode() in page.read_bytes()[:4096]
        except OSError:
            ours = False
        if not ours:
            msg = (
                f"refusing to overwrite {str(out)!r}: not empty, and no cc-analytics report in it\n"
                "Hint: pass --out with a new or empty folder."
            )
            raise InputError(msg)
    return target


def write_report(data: ReportData, out: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``report.html``, ``sessions.parquet``, ``turns.parquet`` and ``requests.parquet`` into ``out``.

    Each file is written beside its final name, and the four are renamed into place once all
    are written: a failure before that leaves the folder as it was (one made for the report
    is removed).
    The Parquet files are written on a second thread while this one draws the page (Polars
    writes without the GIL; on 1 GB of transcripts that hides about a third of a second).

    Examples:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "report"
        >>> sorted(write_report(load(samples=True), out))
        ['report.html', 'requests.parquet', 'sessions.parquet', 'turns.parquet']
    """
    target = check_out_dir(Path(out))
    made = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    frames = ((SESSIONS_PARQUET, data.sessions), (TURNS_PARQUET, data.turns), (REQUESTS_PARQUET, data.requests))
    names = [name for name, _ in frames] + [REPORT_HTML]
    try:
        with ExitStack() as stack:
            temporary = {name: stack.enter_context(beside(target / name)) for name in names}
            with ThreadPoolExecutor(1, thread_name_prefix="cc-report-parquet") as pool:
                written = pool.submit(_write_parquet, [(frame, temporary[name]) for name, frame in frames])
                try:
                    page = render_html(data)
                finally:
                    written.result()  # waits, and raises what the writing raised
            temporary[REPORT_HTML].write_text(page, encoding="utf-8")
            for name in names:
                os.replace(temporary[name], target / name)
    except BaseException:
        if made:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return {name: target / name for name in names}


def _write_parquet(jobs: list[tuple[pl.DataFrame, Path]]) -> None:
    for frame, path in jobs:
        with open_pieces(path) as out:
            frame.write_parquet(out)


# ------------------------------------------------------------------ the page


def report_charts(data: ReportData) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, caption, Vega-Lite spec) for every chart of the page, in page order.

    The specs come from ``views.specs`` as plain dicts, embedded as they are: the report never
    imports Altair (importing it and building the charts' objects cost a warm report on 1 GB
    about 1.4 CPU seconds). ``views.charts`` draws the same specs as Altair charts.
    """
    from cc_analytics.views import specs

    sessions, turns = data.sessions, data.turns
    out: list[tuple[str, str, dict[str, Any]]] = [
        (
            "peak-distribution",
            "How full windows get: each session's peak occupancy over its window.",
            specs.peak_distribution(sessions),
        ),
        (
            "occupancy-over-turns",
            "Recorded occupancy per turn for the sessions with the highest peaks; dashed rules show the window, the effective window (minus the output reserve) and the auto-compact threshold; red triangles mark compactions.",
            specs.occupancy_over_turns(turns),
        ),
        (
            "bucket-breakdown",
            "What fills the context, by the heuristic estimate (the same rule for every format).",
            specs.bucket_breakdown(sessions),
        ),
        (
            "daily-trend",
            "Tokens per day (each API request counted once), sessions started and compactions.",
            specs.daily_trend(sessions),
        ),
        (
            "cost-per-day",
            "What the requests cost per day, by model: each request priced offline (genai-prices) at its own date, cache writes at their 5-minute or 1-hour rate.",
            specs.cost_per_day(data.requests),
        ),
        (
            "cost-by-project",
            "Cost per project (ChainlessChain sessions record no project: they are grouped by format).",
            specs.cost_by(data.requests, by="project"),
        ),
        (
            "cost-by-model",
            "Cost per model.",
            specs.cost_by(data.requests, by="model"),
        ),
        (
            "by-model",
            "Sessions, tokens and peak occupancy per model.",
            specs.comparison(sessions, by="model"),
        ),
        (
            "by-project",
            "The same per project (ChainlessChain sessions are grouped together).",
            specs.comparison(sessions, by="project"),
        ),
        (
            "calibration",
            "The heuristic estimate against the recorded occupancy, per Claude Code turn. Points above the line are context the transcript text does not explain: system prompt, tool schemas, outputs saved to disk.",
            specs.calibration(turns),
        ),
    ]
    return out


def _kpis(data: ReportData) -> list[tuple[str, str]]:
    s = data.sessions
    fraction = (s[S.PEAK_OCCUPANCY] / s[S.WINDOW]).drop_nulls()
    token_cols = [S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    tokens = int(s.select(pl.sum_horizontal(token_cols).sum()).item() or 0) if s.height else 0
    cost = s[S.COST_USD].sum() if s[S.COST_USD].null_count() < s.height else None
    unpriced = int(s[S.UNPRICED_REQUESTS].sum() or 0)
    cost_note = f"{unpriced} request(s) without a price left out" if unpriced else "every request priced, offline"
    return [
        (
            "sessions",
            f"{s.height}",
            _by_format(s),
        ),
        (
            "turns",
            group_thousands(data.turns.filter(~pl.col(S.IS_SUBAGENT_FILE)).height),
            "main transcripts",
        ),
        ("tokens", f"{tokens / 1e6:.1f}M", "input + cache + output, deduplicated"),
        ("cost", usd(cost, partial=bool(unpriced)), cost_note),
        ("compactions", f"{int(s[S.COMPACTIONS].sum() or 0)}", "auto and manual"),
        ("median peak", f"{(fraction.median() or 0) * 100:.0f}%", "of the window"),
        ("above 90%", f"{int((fraction > 0.9).sum())}", f"{int((fraction > 0.7).sum())} above 70%"),
    ]


def _by_format(sessions: pl.DataFrame) -> str:
    """``12 Claude Code · 3 OpenAI Codex CLI``: the sessions of each format, in the registry's order."""
    from cc_analytics.frames.registry import formats

    counts = dict(sessions.group_by(FORMAT).len().iter_rows())
    return " · ".join(f"{counts[p.name]} {p.label}" for p in formats() if counts.get(p.name)) or "none"


def _cell(value: object, *, css: str = "") -> str:
    text = "" if value is None else html.escape(str(value))
    return f"<td class='{css}'>{text}</td>" if css else f"<td>{text}</td>"


def _top_table(data: ReportData) -> str:
    fraction = (pl.col(S.PEAK_OCCUPANCY) / pl.col(S.WINDOW)).alias("peak_fraction")
    rows = (
        data.sessions.with_columns(fraction)
        .sort("peak_fraction", S.SESSION_ID, descending=[True, False], nulls_last=True)
        .head(TOP_SESSIONS)
    )
    body = []
    for r in rows.iter_rows(named=True):
        peak = r["peak_fraction"] or 0.0
        started = r[S.FIRST_TIME] or r[S.LAST_TIME]
        cells = [
            _cell(r[FORMAT]),
            _cell(r[S.PROJECT]),
            f"<td><code>{html.escape(r[S.SESSION_ID])}</code></td>",
            _cell(r[S.LAST_MODEL]),
            _cell(started and f"{started:%Y-%m-%d}"),
            _cell(r[S.TURNS], css="num"),
            _cell(group_thousands(r[S.PEAK_OCCUPANCY] or 0), css="num"),
            _cell(group_thousands(r[S.WINDOW] or 0), css="num"),
            _peak_cell(peak, r[OCCUPANCY_SOURCE]),
            _cell(r[S.COMPACTIONS], css="num"),
            _cell(r[OCCUPANCY_SOURCE]),
        ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    head = "".join(f"<th>{h}</th>" for h in TABLE_HEADERS)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


ABOVE_WINDOW = {
    "recorded": "the request held more than the window the session was taken to have: its window was larger",
    "estimated": "the estimate of the session's text is above its model's window: the estimate overshoots",
}


def _peak_cell(peak: float, source: str | None) -> str:
    """The peak's share of the window; above 100 % a sign, and a title saying why."""
    if peak <= 1:
        return _cell(f"{peak * 100:.1f}%", css=f"num {zone_of(peak)}")
    why = ABOVE_WINDOW.get(source or "", "above the window")
    return f"<td class='num red' title='{html.escape(why)}'>{peak * 100:.1f}% \u26a0</td>"


def _cost_table(data: ReportData) -> str:
    rows = (
        data.sessions.filter(pl.col(S.COST_USD).is_not_null())
        .sort(S.COST_USD, S.SESSION_ID, descending=[True, False])
        .head(TOP_SESSIONS)
    )
    token_cols = [S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    body = []
    for r in rows.iter_rows(named=True):
        started = r[S.FIRST_TIME] or r[S.LAST_TIME]
        tokens = sum(r[c] or 0 for c in token_cols)
        cells = [
            _cell(r[FORMAT]),
            _cell(r[S.PROJECT]),
            f"<td><code>{html.escape(r[S.SESSION_ID])}</code></td>",
            _cell(usd(r[S.COST_USD], partial=bool(r[S.UNPRICED_REQUESTS])), css="num"),
            _cell(r[S.REQUESTS], css="num"),
            _cell(group_thousands(tokens), css="num"),
            _cell(started and f"{started:%Y-%m-%d}"),
            _cell(", ".join(r[S.MODELS])),
        ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    head = "".join(f"<th>{h}</th>" for h in COST_HEADERS)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


WINDOW_PARTS = 12
IDLE_GAPS = 10
PART_HEADERS = ("what", "sessions", "tokens at the fullest", "share")
PROJECT_HEADERS = (
    "project",
    "sessions",
    "tokens at the fullest",
    "largest part",
    "share",
    "read again",
    "cache rebuilt",
    "rebuild cost",
)
GAP_HEADERS = ("project", "session", "turn", "idle", "cache", "tokens rewritten", "cost", "uuid")


def _what() -> pl.Expr:
    """What a part is called in the report: its tool (or MCP server), else its category."""
    from cc_analytics.format import PART_LABELS

    return pl.coalesce(pl.col(S.ITEM), pl.col(S.CATEGORY).cast(pl.String).replace(PART_LABELS)).alias("what")


def _table(headers: Sequence[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(cells)}</tr>" for cells in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def windows_tables(findings: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The "What fills the windows" section's tables, across sessions, from their findings:
    ``parts`` (each tool, MCP server or other part: the tokens it held in the sessions' windows
    at their fullest, summed, and its share of them), ``projects`` (per project: those tokens,
    the largest part and its share, the tokens of files read again, the cache rebuilt after an
    idle gap and what that cost) and ``gaps`` (the costliest cache rebuilds).

    Examples:
        >>> from cc_analytics.frames.api import read_findings
        >>> tables = windows_tables(read_findings(SAMPLES_DIR))
        >>> tables["parts"].columns, round(tables["parts"]["share"].sum(), 9)
        (['what', 'sessions', 'tokens', 'share'], 1.0)
    """
    peak = findings.filter(pl.col(S.FINDING_KIND) == "peak_window").with_columns(_what())
    parts = (
        peak.group_by("what")
        .agg(pl.col(S.SESSION_ID).n_unique().cast(pl.Int64).alias("sessions"), pl.col(S.TOKENS).sum())
        .with_columns((pl.col(S.TOKENS) / pl.col(S.TOKENS).sum()).alias("share"))
        .sort(S.TOKENS, "what", descending=[True, False])
    )
    by_project = (
        peak.group_by(S.PROJECT, "what")
        .agg(pl.col(S.TOKENS).sum())
        .sort(S.TOKENS, "what", descending=[True, False])
        .group_by(S.PROJECT, maintain_order=True)
        .agg(
            pl.col("what").first().alias("largest"), (pl.col(S.TOKENS).first() / pl.col(S.TOKENS).sum()).alias("share")
        )
    )
    kinds = pl.col(S.FINDING_KIND)
    projects = (
        findings.group_by(S.PROJECT)
        .agg(
            pl.col(S.SESSION_ID).n_unique().cast(pl.Int64).alias("sessions"),
            pl.col(S.TOKENS).filter(kinds == "peak_window").sum().alias(S.TOKENS),
            pl.col(S.TOKENS).filter(kinds == "repeated_read").sum().alias("read_again"),
            (kinds == "cache_rebuild").sum().cast(pl.Int64).alias("rebuilds"),
            pl.col(S.COST_USD).filter(kinds == "cache_rebuild").sum().alias("rebuild_cost"),
        )
        .join(by_project, on=S.PROJECT, how="left")
        .sort(S.TOKENS, S.PROJECT, descending=[True, False], nulls_last=True)
        .select(S.PROJECT, "sessions", S.TOKENS, "largest", "share", "read_again", "rebuilds", "rebuild_cost")
    )
    gaps = (
        findings.filter(kinds == "cache_rebuild")
        .sort(S.COST_USD, S.TOKENS, S.SESSION_ID, descending=[True, True, False], nulls_last=True)
        .head(IDLE_GAPS)
        .select(S.PROJECT, S.SESSION_ID, S.TURN_INDEX, S.SECONDS, S.ITEM, S.TOKENS, S.COST_USD, S.UUID)
    )
    return {"parts": parts, "projects": projects, "gaps": gaps}


def _windows_section(data: ReportData) -> str:
    """What fills the windows, across sessions: by tool, by project, the costliest idle gaps."""
    title = "<h2>What fills the windows</h2>"
    if data.findings is None or not data.findings.height:
        why = (
            "read without findings (an archive keeps no content blocks; --no-findings leaves them out)"
            if data.findings is None
            else "no session of a format whose transcripts say"
        )
        return f"<section>{title}<p class=caption>Not measured: {html.escape(why)}.</p></section>"
    tables = windows_tables(data.findings)
    parts = [
        [
            _cell(r["what"]),
            _cell(r["sessions"], css="num"),
            _cell(group_thousands(r[S.TOKENS]), css="num"),
            _cell(f"{r['share'] * 100:.1f}%", css="num"),
        ]
        for r in tables["parts"].head(WINDOW_PARTS).iter_rows(named=True)
    ]
    projects = [
        [
            _cell(r[S.PROJECT]),
            _cell(r["sessions"], css="num"),
            _cell(group_thousands(r[S.TOKENS]), css="num"),
            _cell(r["largest"]),
            _cell(None if r["share"] is None else f"{r['share'] * 100:.0f}%", css="num"),
            _cell(group_thousands(r["read_again"]), css="num"),
            _cell(r["rebuilds"], css="num"),
            _cell(usd(r["rebuild_cost"]), css="num"),
        ]
        for r in tables["projects"].head(TOP_SESSIONS).iter_rows(named=True)
    ]
    gaps = [
        [
            _cell(r[S.PROJECT]),
            f"<td><code>{html.escape(r[S.SESSION_ID])}</code></td>",
            _cell(r[S.TURN_INDEX], css="num"),
            _cell(f"{r[S.SECONDS] / 60:.0f} min", css="num"),
            _cell(r[S.ITEM]),
            _cell(group_thousands(r[S.TOKENS]), css="num"),
            _cell(usd(r[S.COST_USD]), css="num"),
            f"<td><code>{html.escape(r[S.UUID] or '')}</code></td>",
        ]
        for r in tables["gaps"].iter_rows(named=True)
    ]
    gap_table = _table(GAP_HEADERS, gaps) if gaps else "<p>No cache was rebuilt after an idle gap.</p>"
    return (
        f"<section id=windows>{title}"
        "<p class=caption>By tool: what the windows held at their fullest turn (the highest recorded occupancy of "
        "each main transcript), summed over the sessions; estimated parts calibrated to the recorded occupancy, "
        "the baseline being the system prompt, tool definitions and memory files.</p>"
        f"{_table(PART_HEADERS, parts)}"
        "<p class=caption>By project: the same, the part that held the most, the tokens of files read again, "
        "and the cache rebuilt after an idle gap longer than its lifetime.</p>"
        f"{_table(PROJECT_HEADERS, projects)}"
        "<p class=caption>The costliest idle gaps: the requests that rewrote the cache after it expired (5 minutes, "
        "or 1 hour after a 1-hour write); open one with <code>cc-analytics window TRANSCRIPT --uuid UUID --render</code>.</p>"
        f"{gap_table}</section>"
    )


MACHINE_HEADERS = ("Machine", "Sessions", "Requests", "Tokens", "Cost", "First", "Last")


def _machines_section(data: ReportData) -> str:
    """Sessions, requests, tokens and cost per machine, when the data came from the archives of
    more than one (``archive --machine``); else nothing.

    Examples:
        >>> _machines_section(load(samples=True))  # transcripts: no machine column
        ''
    """
    sessions = data.sessions
    if "machine" not in sessions.columns or sessions["machine"].n_unique() < 2:
        return ""
    tokens = [S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    rows = (
        sessions.group_by("machine")
        .agg(
            pl.len().alias("sessions"),
            pl.col(S.REQUESTS).sum(),
            pl.sum_horizontal(pl.col(tokens).fill_null(0)).sum().alias("tokens"),
            pl.col(S.COST_USD).sum(),
            pl.col(S.FIRST_TIME).min(),
            pl.col(S.LAST_TIME).max(),
        )
        .sort(S.COST_USD, "machine", descending=[True, False], nulls_last=True)
    )
    body = []
    for r in rows.iter_rows(named=True):
        cells = [
            _cell(r["machine"] or "(unnamed)"),
            _cell(r["sessions"], css="num"),
            _cell(r[S.REQUESTS], css="num"),
            _cell(group_thousands(r["tokens"]), css="num"),
            _cell(usd(r[S.COST_USD]), css="num"),
            _cell(r[S.FIRST_TIME] and f"{r[S.FIRST_TIME]:%Y-%m-%d}"),
            _cell(r[S.LAST_TIME] and f"{r[S.LAST_TIME]:%Y-%m-%d}"),
        ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    head = "".join(f"<th>{h}</th>" for h in MACHINE_HEADERS)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    caption = "Per machine (archives read together; a session found in several is counted once)."
    return f"<section><p class=caption>{caption}</p>{table}</section>"


def _unpriced_caption(data: ReportData) -> str:
    missing = unpriced(data.requests)
    if missing.is_empty():
        return "Every request has a price."
    named = ", ".join(
        f"{unpriced_name(model, mode)} ({count})" for _provider, model, mode, count in missing.iter_rows()
    )
    return f"Requests without a price, left out of every cost (* marks a partial cost): {named}."


def _script_json(value: object) -> str:
    """JSON safe inside a ``<script>`` element."""
    return orjson.dumps(value).decode().replace("</", "<\\/").replace("<!--", "<\\!--")


def vega_bundle() -> str:
    """The Vega libraries as one script, from ``vl_convert``, kept in the user's cache folder.

    Bundling costs about 2.5 CPU seconds and 170 MB of memory on every report, yet only
    depends on the ``vl_convert`` version: it is made once per version and read back after
    that (a cache that cannot be read or written only costs the time).
    """
    import vl_convert

    from cc_analytics.cache import cache_dir

    cache = cache_dir()
    path = cache / f"vega-bundle-{vl_convert.__version__}.js"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    bundle = _bundle_in_child() or vl_convert.javascript_bundle()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with beside(path) as temporary:
            temporary.write_text(bundle, encoding="utf-8")
            os.replace(temporary, path)
    except OSError:
        pass
    return bundle


def _bundle_in_child() -> str | None:
    """``vl_convert.javascript_bundle()`` made in a child process (None if that fails).

    Making it holds the GIL for seconds, during which Ctrl-C could not be handled; a child is
    killed instead. It runs in a session of its own, so the terminal's Ctrl-C goes to us only.
    """
    code = "import sys, vl_convert; sys.stdout.buffer.write(vl_convert.javascript_bundle().encode())"
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
        )
    except OSError:
        return None
    try:
        while True:
            try:  # in slices, so that the main thread runs its signal handlers (see frames.engine)
                bundle, _ = child.communicate(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                continue
    except BaseException:
        child.kill()
        child.wait()
        raise
    return bundle.decode("utf-8") if child.returncode == 0 and bundle else None


def render_html(data: ReportData, *, title: str = "cc-analytics report") -> str:
    """The self-contained page: KPIs, every chart (Vega-Embed, inlined), the top sessions."""
    charts = report_charts(data)
    specs = {chart_id: spec for chart_id, _, spec in charts}
    bundle = vega_bundle()
    cards = "".join(
        f"<div class=kpi><div class=label>{html.escape(k)}</div>"
        f"<div class=value>{html.escape(v)}</div><div class=note>{html.escape(n)}</div></div>"
        for k, v, n in _kpis(data)
    )
    sections = "".join(
        f"<section><p class=caption>{html.escape(caption)}</p><div class=chart id='{chart_id}'></div></section>"
        for chart_id, caption, _ in charts
    )
    problems = data.problems.height
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sources = ", ".join(html.escape(s) for s in data.sources) or "(none)"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{MARKER}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
{STYLE}
</style>
<script type="text/javascript">{bundle}</script>
</head>
<body>
<header><h1>{html.escape(title)}</h1>
<p>Context-window usage and cost of {data.sessions.height} sessions · generated {generated}</p></header>
<main>
<div class=kpis>{cards}</div>
{sections}
<section><p class=caption>Sessions with the highest peak occupancy
(ChainlessChain occupancy is the heuristic estimate).</p>{_top_table(data)}</section>
<section><p class=caption>The costliest sessions (subagents included). {html.escape(_unpriced_caption(data))}</p>{_cost_table(data)}</section>
{_windows_section(data)}
{_machines_section(data)}
</main>
<footer>Sources: {sources} · {problems} unreadable line(s) skipped
· data files: sessions.parquet, turns.parquet, requests.parquet</footer>
<script type="text/javascript">
const specs = {_script_json(specs)};
const opts = {{renderer: "svg", actions: false}};
for (const [id, spec] of Object.entries(specs)) {{
  vegaEmbed("#" + id, spec, opts).catch((error) => {{
    console.error(error);
    document.getElementById(id).textContent = "chart failed to render: " + error;
  }});
}}
</script>
</body>
</html>
"""


__all__ = [
    "OUTPUTS",
    "ReportData",
    "check_out_dir",
    "load",
    "render_html",
    "report_charts",
    "write_report",
]
