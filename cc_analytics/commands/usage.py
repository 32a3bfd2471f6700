"""``cc-analytics usage [SOURCES...]``: tokens, cost and requests over time, per session, model,
project or 5-hour block (table, JSON or Parquet).

Imports: argparse, the standard library, ``errors``, ``format`` and ``commands.corpus`` (the
options, read loop, notes and outputs it shares with ``sessions``); ``frames`` is imported
inside ``run``. Every API request of every format is read once (deduplicated as the sessions'
totals are), priced offline, and grouped by :func:`cc_analytics.frames.usage.usage`. Data
goes to stdout (or the Parquet file); the progress bar and notes (malformed lines, the models
of the requests without a price) go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from cc_analytics.commands.corpus import (
    add_corpus_options,
    agents_text,
    cell,
    check_corpus_options,
    print_notes,
    read_corpus,
    tail,
    write_output,
)
from cc_analytics.commands.memo import Memo, recorded
from cc_analytics.errors import InputError, UsageError
from cc_analytics.format import Painter, colour_enabled, human_int, usd

if TYPE_CHECKING:
    import polars as pl

BY = ("day", "week", "month", "session", "model", "project", "block", "machine")
# The key cells of each grouping: (header, width, align).
KEY_COLUMNS: dict[str, tuple[tuple[str, int, str], ...]] = {
    "day": (("day", 10, "<"),),
    "week": (("week of", 10, "<"),),
    "month": (("month", 7, "<"),),
    "session": (("session", 8, "<"), ("project", 24, "<")),
    "model": (),
    "project": (("project", 32, "<"),),
    "block": (("block start", 16, "<"), ("", 6, "<")),
    "machine": (("machine", 24, "<"),),
}
MODELS_COLUMN = ("models", 26, "<")
FIGURE_COLUMNS = (
    ("input", 7, ">"),
    ("output", 7, ">"),
    ("cache write", 11, ">"),
    ("cache read", 10, ">"),
    ("total", 7, ">"),
    ("cost", 10, ">"),
    ("requests", 8, ">"),
)
BLOCK_COLUMNS = (("$/hour", 8, ">"), ("projected", 10, ">"))
BRANCH = "└ "


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "usage",
        help="tokens, cost and requests by day, week, month, session, model, project, 5-hour block or machine (archives)",
        description=(
            "Read every API request of every agent ("
            + agents_text()
            + "; each format deduplicates its records as its docs say), price each "
            "offline at its own date with genai-prices, and sum tokens, cost and requests per group. "
            "Days, weeks (Monday first) and months are calendar periods in --timezone; 5-hour blocks "
            "start at a request's hour and are cut as ccusage cuts them. A request whose model has "
            "no price is left out of the costs and named on stderr. SOURCES are transcript files, "
            "folders or globs, or an archive (default: every agent's own store)."
        ),
    )
    parser.add_argument("--by", choices=BY, default="day", help="how to group the requests (default: day)")
    parser.add_argument("--since", metavar="DATE", help="first day kept (YYYY-MM-DD or YYYYMMDD, in --timezone)")
    parser.add_argument("--until", metavar="DATE", help="last day kept, inclusive")
    parser.add_argument("--timezone", metavar="TZ", help="IANA timezone for days and times (default: local)")
    parser.add_argument("--breakdown", action="store_true", help="add a row per model under each group")
    add_corpus_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_corpus_options(args)
    # The active block, and what it is projected to cost, follow the wall clock: never replayed.
    memo = Memo.of(args, "usage") if args.by != "block" else None
    if memo is not None and memo.replay():
        return 0
    # Polars is imported once the files are planned and the workers are starting (as `sessions`
    # does): imported first, it delayed the workers' start by its own time (on 100 MB, the
    # second batch came 240 ms after the first, against 94 for `sessions`).
    from cc_analytics.frames.zones import day_or_instant, resolve_timezone

    bounds = {}
    for option, value in (("--since", args.since), ("--until", args.until), ("--timezone", args.timezone)):
        try:
            if option == "--timezone":
                zone = resolve_timezone(value)
            elif value is not None:
                bounds[option] = day_or_instant(value)
        except InputError as exc:
            raise UsageError(f"{option}: {exc}") from None
    if _after(bounds.get("--since"), bounds.get("--until")):
        msg = f"--since {args.since} is after --until {args.until}: no request could be kept"
        raise UsageError(msg)
    if args.breakdown and args.by == "model":
        msg = "--breakdown adds a row per model: it does not apply to --by model"
        raise UsageError(msg)

    def reader(by_format: Any, progress: Any) -> Iterator[tuple[pl.DataFrame, ...]]:
        from cc_analytics.frames.api import iter_requests

        for _format, requests, problems in iter_requests(
            by_format, workers=args.workers, on_progress=progress, cache=args.cache
        ):
            yield requests, requests, problems

    corpus = read_corpus(args, reader, surveyed=memo.surveyed if memo else None)
    from cc_analytics.frames import schema as S
    from cc_analytics.frames.usage import usage

    requests = corpus.frames.concat(S.REQUESTS_SCHEMA)
    # A block is active when it has not ended yet, by the wall clock (as ccusage decides it).
    now = datetime.now(UTC)
    table = usage(
        requests, args.by, timezone=zone, breakdown=args.breakdown, since=args.since, until=args.until, now=now
    )
    with recorded(memo if corpus.replayable else None):
        print_notes(args, corpus)
        write_output(args, table, _plural(args.by, table.height), lambda: _print_table(table, args.by, zone))
    return 0


def _plural(noun: str, count: int) -> str:
    return noun + "s" * (count != 1)


def _columns(by: str) -> tuple[tuple[str, int, str], ...]:
    models = () if by == "model" else (MODELS_COLUMN,)
    keys = KEY_COLUMNS[by] if by != "model" else (("model", 26, "<"),)
    return (*keys, *models, *FIGURE_COLUMNS, *(BLOCK_COLUMNS if by == "block" else ()))


def _print_table(table: pl.DataFrame, by: str, zone: str) -> None:
    import polars as pl

    paint = Painter(colour_enabled(sys.stdout))
    columns = _columns(by)
    header = "  ".join(cell(name, width, align) for name, width, align in columns)
    print(paint("bold", header.rstrip()))
    groups = table.filter(pl.col("model").is_null()) if "model" in table.columns and by != "model" else table
    for row in table.iter_rows(named=True):
        under = by != "model" and row.get("model") is not None
        cells = _row_cells(row, by, zone, under=under)
        line = "  ".join(cell(value, width, align) for value, (_n, width, align) in zip(cells, columns, strict=True))
        print(paint("gray", line.rstrip()) if under else line.rstrip())
    if groups.height > 1:
        print(paint("bold", _total_line(groups, columns, by)))
    footer = f"{groups.height} {_plural(by, groups.height)}"
    if groups.height and groups["unpriced_requests"].sum():
        footer += " · * leaves out requests without a price"
    print(paint("gray", footer))


def _row_cells(row: dict[str, Any], by: str, zone: str, *, under: bool) -> list[str]:
    keys = _key_cells(row, by, zone)
    if under:
        keys = [""] * len(keys)
    models = [] if by == "model" else [_models_cell(row, under=under)]
    cells = [*keys, *models, *_figures(row)]
    if by == "block":
        cells += [usd(row["cost_per_hour"]), usd(row["projected_cost_usd"]) if row["is_active"] else ""]
    return cells


def _key_cells(row: dict[str, Any], by: str, zone: str) -> list[str]:
    if by in ("day", "week"):
        return [_date(row[by])]
    if by == "month":
        return [_date(row["month"])[:7]]
    if by == "session":
        return [str(row["session_id"] or "-")[:8], tail(row["project"] or "", 24)]
    if by == "model":
        return [_head(row["model"] or "(no model)", 26)]
    if by == "project":
        return [tail(row["project"] or "(none)", 32)]
    if by == "machine":
        return [_head(row["machine"] or "(unnamed)", 24)]
    start = row["block_start"]
    local = start.astimezone(_zone(zone)) if start is not None else None
    return [local.strftime("%Y-%m-%d %H:%M") if local else "-", "active" if row["is_active"] else ""]


def _models_cell(row: dict[str, Any], *, under: bool) -> str:
    if under:
        return _head(BRANCH + (row["model"] or "(no model)"), 26)
    return _head(", ".join(row["models"]) or "-", 26)


def _figures(row: dict[str, Any]) -> list[str]:
    return [
        human_int(row["input_tokens"]),
        human_int(row["output_tokens"]),
        human_int(row["cache_creation_tokens"]),
        human_int(row["cache_read_tokens"]),
        human_int(row["total_tokens"]),
        usd(row["cost_usd"], partial=bool(row["unpriced_requests"])),
        str(row["requests"]),
    ]


def _total_line(groups: pl.DataFrame, columns: tuple[tuple[str, int, str], ...], by: str) -> str:
    sums = groups.select(
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
        "total_tokens",
        "cost_usd",
        "requests",
        "unpriced_requests",
    ).sum()
    row = sums.row(0, named=True)
    if groups["cost_usd"].null_count() == groups.height:
        row["cost_usd"] = None
    leading = len(columns) - len(FIGURE_COLUMNS) - (len(BLOCK_COLUMNS) if by == "block" else 0)
    cells = ["total", *[""] * (leading - 1), *_figures(row), *([""] * len(BLOCK_COLUMNS) if by == "block" else [])]
    return "  ".join(
        cell(value, width, align) for value, (_n, width, align) in zip(cells, columns, strict=True)
    ).rstrip()


def _date(value: date | datetime | None) -> str:
    return value.isoformat()[:10] if value is not None else "-"


def _head(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _zone(name: str) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def _after(since: object, until: object) -> bool:
    """Whether the bound ``since`` falls after ``until`` (two days, or two instants)."""
    if since is None or until is None or type(since) is not type(until):
        return False
    try:
        return bool(since > until)  # type: ignore[operator]
    except TypeError:  # an instant with a zone against one without
        return False
