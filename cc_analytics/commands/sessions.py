"""``cc-analytics sessions [SOURCES...]``: one row per session of every format (table, JSON or Parquet).

Imports: argparse, the standard library, ``format`` and ``commands.corpus`` (the options, read
loop, notes and outputs it shares with ``usage``); ``frames`` is imported inside ``run``. Data
goes to stdout (or the Parquet file); the progress bar, notes, the count of malformed lines
and the models without a price go to stderr. Nothing is ever written inside a Claude config
folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
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
from cc_analytics.format import Painter, colour_enabled, human_int, round_half_up, usd

if TYPE_CHECKING:
    import polars as pl

TABLE_COLUMNS = (
    ("session", 8, "<"),
    ("last active", 16, "<"),
    ("project", 24, "<"),
    ("model", 18, "<"),
    ("turns", 5, ">"),
    ("context", 15, ">"),
    ("peak", 6, ">"),
    ("compact", 7, ">"),
    ("output", 6, ">"),
    ("cache hit", 9, ">"),
    ("cost", 9, ">"),
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sessions",
        help="one row per session of every agent: occupancy, window, tokens, cost, compactions",
        description=(
            "Summarise the sessions of every agent cc-analytics reads, told apart by content ("
            + agents_text()
            + "): recorded or estimated context occupancy, window, deduplicated token totals, "
            "compactions, the heuristic token buckets and what the requests cost. SOURCES are "
            "transcript files, folders or globs, or an archive; by default every agent's own store."
        ),
    )
    add_corpus_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_corpus_options(args)
    memo = Memo.of(args, "sessions")
    if memo is not None and memo.replay():
        return 0

    def reader(by_format: Any, progress: Any) -> Iterator[tuple[pl.DataFrame, ...]]:
        # Polars is imported once the files are planned and the workers are starting.
        from cc_analytics.frames.api import iter_tables

        for _format, tables in iter_tables(
            by_format, turns=False, workers=args.workers, on_progress=progress, cache=args.cache, requests="unpriced"
        ):
            yield tables.sessions, tables.requests, tables.problems

    corpus = read_corpus(args, reader, surveyed=memo.surveyed if memo else None)
    from cc_analytics.frames import schema as S

    table = corpus.frames.concat(S.SESSIONS_SCHEMA)
    table = table.sort([S.LAST_TIME, S.SESSION_ID], descending=[True, False], nulls_last=True)
    with recorded(memo if corpus.replayable else None):
        print_notes(args, corpus)
        write_output(args, table, "sessions", lambda: _print_table(table))
    return 0


def _print_table(table: Any) -> None:
    paint = Painter(colour_enabled(sys.stdout))
    header = "  ".join(cell(name, width, align) for name, width, align in TABLE_COLUMNS)
    print(paint("bold", header.rstrip()))
    for row in table.iter_rows(named=True):
        cells = _row_cells(row)
        line = "  ".join(
            cell(value, width, align) for value, (_name, width, align) in zip(cells, TABLE_COLUMNS, strict=True)
        )
        print(line.rstrip())
    footer = f"{table.height} session{'s' * (table.height != 1)}"
    if table.height and table["unpriced_requests"].sum():
        footer += " · * leaves out requests without a price"
    print(paint("gray", footer))


def _row_cells(row: dict[str, Any]) -> list[str]:
    last = row["last_time"]
    used = row["used_fraction"]
    context = "-"
    if row["last_occupancy"] is not None:
        percent = round_half_up(used * 100) if used is not None else 0
        context = f"{human_int(row['last_occupancy'])}/{human_int(row['window'])} {percent}%"
    ratio = row["cache_hit_ratio"]
    project = row["project"] or ""
    return [
        row["session_id"][:8],
        last.strftime("%Y-%m-%d %H:%M") if last is not None else "-",
        tail(project, 24),
        (row["last_model"] or "-")[:18],
        str(row["turns"]),
        context,
        human_int(row["peak_occupancy"]),
        str(row["compactions"]),
        human_int(row["output_tokens"]),
        "-" if ratio is None else f"{round_half_up(ratio * 100)}%",
        usd(row["cost_usd"], partial=bool(row["unpriced_requests"])),
    ]
