"""``cc-analytics sessions [SOURCES...]``: one row per Claude Code session (table, JSON or Parquet).

Imports: argparse, the standard library and ``format``; ``frames`` and orjson are imported
inside ``run``. Data goes to stdout (or the Parquet file); the progress bar, notes and the
count of malformed lines go to stderr. Nothing is ever written inside a Claude config folder.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from cc_analytics.format import Painter, ProgressBar, colour_enabled, human_int, round_half_up

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
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sessions",
        help="one row per session (Claude Code and ChainlessChain): occupancy, window, tokens, compactions",
        description=(
            "Summarise sessions of both formats, told apart by content: Claude Code (main "
            "transcript plus subagent files: recorded context occupancy, window, deduplicated token "
            "totals, compactions) and ChainlessChain (estimated occupancy), with the heuristic token "
            "buckets. SOURCES are transcript files, folders or globs; by default the projects "
            "folders of ~/.claude (or of every CLAUDE_CONFIG_DIR entry) and the ChainlessChain store."
        ),
    )
    parser.add_argument("sources", nargs="*", metavar="SOURCES", help="files, folders or globs")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON array")
    output.add_argument("--parquet", type=Path, metavar="FILE", help="write a Parquet file")
    parser.add_argument("--force", action="store_true", help="let --parquet replace FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no notes")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes that decode, this one included (default: 2 for corpora over 96 MiB, else 1)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import polars as pl

    from cc_analytics.errors import UsageError
    from cc_analytics.frames import schema as S
    from cc_analytics.frames.api import archived, iter_tables, plan
    from cc_analytics.frames.claude.discovery import default_roots

    if args.workers is not None and args.workers < 1:
        msg = f"--workers must be at least 1, got {args.workers}"
        raise UsageError(msg)
    if args.force and args.parquet is None:
        msg = "--force only applies to --parquet"
        raise UsageError(msg)
    if args.parquet is not None:
        _check_parquet_target(args.parquet, force=args.force, roots=default_roots())
    source = args.sources or None
    if archived(source) is None:
        source = by_format = plan(source)
        files = [f for found in by_format.values() for f in found]
    else:
        files = source  # an archive: its sessions table, nothing decoded
    notes = not args.quiet
    progress = ProgressBar(sys.stderr) if notes and _isatty(sys.stderr) else None
    summaries: list[pl.DataFrame] = []
    problems: list[pl.DataFrame] = []
    try:
        for _format, tables in iter_tables(source, turns=False, workers=args.workers, on_progress=progress):
            summaries.append(tables.sessions)
            if tables.problems.height:
                problems.append(tables.problems)
    finally:
        if progress:
            progress.close()
    table = pl.concat(summaries) if summaries else pl.DataFrame(schema=S.SESSIONS_SCHEMA)
    table = table.sort([S.LAST_TIME, S.SESSION_ID], descending=[True, False], nulls_last=True)
    if notes and not files:
        where = (
            ", ".join(args.sources)
            if args.sources
            else "the default stores (~/.claude/projects, ~/.chainlesschain/sessions)"
        )
        print(f"note: no transcripts found in {where}", file=sys.stderr)
    if notes and problems:
        _print_problem_notes(pl.concat(problems))
    if args.parquet is not None:
        _write_parquet(table, args.parquet, force=args.force)
        if notes:
            print(f"wrote {table.height} sessions to {args.parquet}", file=sys.stderr)
        return 0
    if args.json:
        _print_json(table)
        return 0
    _print_table(table)
    return 0


def _print_problem_notes(problems: Any) -> None:
    """One note for files that could not be read (``line`` null), one for malformed lines."""
    import polars as pl

    from cc_analytics.frames import schema as S

    unreadable = problems.filter(pl.col(S.LINE).is_null())
    if unreadable.height:
        source, _line, reason = unreadable.row(0)
        count = unreadable.height
        print(
            f"note: {count} file{'s' * (count != 1)} could not be read and {'were' if count != 1 else 'was'} "
            f"skipped (first: {source}: {reason})",
            file=sys.stderr,
        )
    lines = problems.filter(pl.col(S.LINE).is_not_null())
    if lines.height:
        source, line, reason = lines.row(0)
        count, files = lines.height, lines[S.SOURCE_FILE].n_unique()
        print(
            f"note: {count} malformed line{'s' * (count != 1)} skipped or read "
            f"in part, in {files} file{'s' * (files != 1)} (first: {source}:{line}: {reason})",
            file=sys.stderr,
        )


def _check_parquet_target(path: Path, *, force: bool, roots: list[Path]) -> None:
    from cc_analytics.errors import InputError

    target = path.expanduser().resolve()
    for root in roots:
        config = root.expanduser().resolve().parent
        if target == config or config in target.parents:
            msg = f"refusing to write inside the Claude config folder {str(config)!r}"
            raise InputError(msg)
    if target.is_dir():
        msg = f"{str(path)!r} is a folder; give a file name for --parquet"
        raise InputError(msg)
    if target.exists() and not force:
        msg = f"{str(path)!r} already exists; pass --force to replace it"
        raise InputError(msg)
    if not target.parent.is_dir():
        msg = f"folder {str(target.parent)!r} does not exist"
        raise InputError(msg)


def _write_parquet(table: Any, path: Path, *, force: bool) -> None:
    target = path.expanduser()
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    table.write_parquet(temporary)
    if force:
        os.replace(temporary, target)
        return
    try:
        os.link(temporary, target)  # fails if a file appeared meanwhile: never overwrite
    finally:
        temporary.unlink(missing_ok=True)


def _print_json(table: Any) -> None:
    import orjson

    rows = table.rows(named=True)
    options = orjson.OPT_INDENT_2 | orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS
    sys.stdout.write(orjson.dumps(rows, option=options).decode() + "\n")


def _print_table(table: Any) -> None:
    paint = Painter(colour_enabled(sys.stdout))
    header = "  ".join(_cell(name, width, align) for name, width, align in TABLE_COLUMNS)
    print(paint("bold", header.rstrip()))
    for row in table.iter_rows(named=True):
        cells = _row_cells(row)
        line = "  ".join(
            _cell(value, width, align) for value, (_name, width, align) in zip(cells, TABLE_COLUMNS, strict=True)
        )
        print(line.rstrip())
    print(paint("gray", f"{table.height} session{'s' * (table.height != 1)}"))


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
        _tail(project, 24),
        (row["last_model"] or "-")[:18],
        str(row["turns"]),
        context,
        human_int(row["peak_occupancy"]),
        str(row["compactions"]),
        human_int(row["output_tokens"]),
        "-" if ratio is None else f"{round_half_up(ratio * 100)}%",
    ]


def _cell(value: str, width: int, align: str) -> str:
    return f"{value:{align}{width}}"


def _tail(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
