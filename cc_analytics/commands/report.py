"""``cc-analytics report [SOURCES...] [--out DIR]``: the offline HTML report and Parquet files.

Imports: argparse, ``format``, ``errors``; ``cc_analytics.report`` (Polars, vl-convert; never
Altair: the report embeds its charts' specs as plain dicts), and ``frames.sources`` for
``--engine dask``, are imported inside ``run`` so ``cc-analytics --help`` stays light.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cc_analytics.commands.corpus import (
    add_cache_option,
    add_engine_options,
    add_workers_option,
    agents_text,
    check_engine_source,
    check_scheduler,
    check_workers,
)
from cc_analytics.errors import InputError
from cc_analytics.format import ProgressBar


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="an offline HTML report over many sessions, plus sessions/turns/requests Parquet",
        description=(
            "Read every session of every agent ("
            + agents_text()
            + "; the samples in data-samples/ when asked or when none has sessions) and write report.html "
            "(self-contained, works offline), sessions.parquet, turns.parquet and requests.parquet "
            "into --out. SOURCES may also name an archive (see `archive`)."
        ),
    )
    parser.add_argument("sources", nargs="*", metavar="SOURCES", help="transcript files, folders, globs or an archive")
    parser.add_argument("--out", type=Path, default=Path("report"), help="output folder (default: ./report)")
    parser.add_argument("--samples", action="store_true", help="report on the sessions in data-samples/")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--no-findings",
        dest="findings",
        action="store_false",
        help="leave out 'What fills the windows' (it reads the transcripts again, with their text)",
    )
    add_workers_option(parser)
    add_cache_option(parser)
    add_engine_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_workers(args)
    check_scheduler(args)
    if args.engine == "dask":  # archives only (the samples and the default stores are transcripts)
        from cc_analytics.frames.sources import table_source_of

        found = None if args.samples else table_source_of(args.sources or None)
        check_engine_source(args, found and found[1])
    from cc_analytics.report import check_out_dir, load, write_report

    stderr = sys.stderr
    progress = ProgressBar(stderr, label="reading transcripts") if not args.quiet and stderr.isatty() else None
    try:
        check_out_dir(args.out)
        data = load(
            args.sources or None,
            samples=args.samples,
            on_progress=progress,
            workers=args.workers,
            cache=args.cache,
            findings=args.findings,
            engine=args.engine,
            scheduler=args.scheduler,
        )
    finally:
        if progress:
            progress.close()
    try:
        written = write_report(data, args.out)
    except OSError as exc:
        msg = f"cannot write the report into {str(args.out)!r}: {exc.strerror or exc}"
        raise InputError(msg) from exc
    for path in written.values():
        print(path)
    if not args.quiet:
        files = data.problems["line"].null_count()
        lines = data.problems.height - files
        problems = f", {lines} unreadable line(s) skipped" if lines else ""
        problems += f", {files} unreadable file(s) skipped" if files else ""
        stderr.write(f"{data.sessions.height} sessions, {data.turns.height} turns{problems}\n")
    return 0
