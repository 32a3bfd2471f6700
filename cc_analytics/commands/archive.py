"""``cc-analytics archive [SOURCES...] --to DIR``: keep transcripts and their tables after the agents delete them.

Imports: argparse, the standard library, ``errors`` and ``format``; ``cc_analytics.archive``
inside ``run``. The archive's location goes to stdout; what the run did, and the progress
bar, to stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cc_analytics.commands.corpus import add_engine_options, add_workers_option, check_scheduler, check_workers
from cc_analytics.format import ProgressBar, unread_files_note

if TYPE_CHECKING:
    from cc_analytics.archive.writer import Summary


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "archive",
        help="keep transcripts (compressed) and their sessions/turns/requests/problems as Parquet, incrementally",
        description=(
            "Bring the archive at --to up to date with SOURCES (transcript files, folders, globs or "
            "fsspec URLs such as s3://bucket/prefix; by default every format's stores). Each source "
            "file is kept compressed under raw/, and sessions/, turns/, requests/ and problems/ are "
            "Hive-partitioned Parquet datasets (format=…/month=…) that DuckDB, Spark and Polars read "
            "as they are. Unchanged files are only stat'ed; a grown or changed file's session is "
            "decoded again; files that disappeared are kept. Every reader takes the archive as a "
            "source: `report DIR`, `context ID --archive DIR`, `window FILE --archive DIR`."
        ),
    )
    parser.add_argument("sources", nargs="*", metavar="SOURCES", help="files, folders, globs or URLs")
    parser.add_argument("--to", required=True, metavar="DIR", help="the archive: a folder or an fsspec URL")
    parser.add_argument(
        "--machine",
        metavar="NAME",
        default=None,
        help="whose history the archive keeps, in its manifest and a `machine` column of every table "
        "(default: the name the archive has, or this host's name for a new one); archive each machine "
        "to an archive of its own, e.g. s3://team-archive/NAME, and read them together",
    )
    parser.add_argument(
        "--share",
        action="store_true",
        help="write what a team's bucket should hold: the tables without prompt, response or tool text "
        "(tokens, times, models, tool names, sizes, costs stay), project paths and files as stable "
        "pseudonyms, and no raw copies",
    )
    parser.add_argument("--keep-paths", action="store_true", help="with --share: keep project paths and file names")
    parser.add_argument(
        "--mask-secrets",
        action="store_true",
        help="mask well-known secret shapes (cloud keys, tokens, private keys; detect-secrets' patterns, "
        "the secrets extra) in the raw copies, and so in the tables decoded from them",
    )
    add_engine_options(
        parser,
        "local worker processes (default), or Dask tasks (the dask extra)",
        "with --engine dask: the scheduler to use (default: a LocalCluster started for the run)",
    )
    add_workers_option(parser, "worker processes (local: up to 2 for large corpora; dask LocalCluster: one per CPU)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cc_analytics.archive.writer import update

    check_workers(args)
    check_scheduler(args)
    stderr = sys.stderr
    progress = ProgressBar(stderr, label="archiving") if not args.quiet and stderr.isatty() else None
    try:
        summary = update(
            args.sources or None,
            args.to,
            engine=args.engine,
            workers=args.workers,
            scheduler=args.scheduler,
            on_progress=progress,
            machine=args.machine,
            share=args.share,
            keep_paths=args.keep_paths,
            mask_secrets=args.mask_secrets,
        )
    finally:
        if progress:
            progress.close()
    print(summary.archive)
    if not args.quiet:
        if summary.unreadable:
            note = unread_files_note(len(summary.unreadable), "not archived", summary.unreadable[0])
            stderr.write(note + "\n")
        stderr.write(describe(summary) + "\n")
    if summary.held:
        stderr.write(held_warning(summary) + "\n")
    return 0


def held_warning(summary: Summary) -> str:
    """The sessions a run left as archived before, because a raw copy they need could not be read."""
    count = len(summary.held)
    lines = [
        f"cc-analytics: warning: {count} session{'s' * (count != 1)} left as archived before: "
        "a raw copy each needs (its source is gone) could not be read",
        *(f"  {why}" for why in summary.held[:10]),
    ]
    if count > 10:
        lines.append(f"  … and {count - 10} more")
    lines.append(
        "Hint: restore the raw copy from a backup of the archive, or put the source file back; "
        "the next run decodes the session again."
    )
    return "\n".join(lines)


def describe(summary: Summary) -> str:
    """One line: what the run found and what it wrote."""
    s = summary
    found = (
        f"{s.listed} file{'s' * (s.listed != 1)} listed: {s.new} new, {s.appended} appended, "
        f"{s.rewritten} rewritten, {s.touched} touched, {s.unchanged} unchanged; {s.kept} kept from earlier runs"
    )
    if s.upgraded:
        found += f"; {s.upgraded} part{'s' * (s.upgraded != 1)} of an older archive upgraded (machine {s.machine!r})"
    if not s.sessions and not s.changed and not s.upgraded:
        return found + "; nothing to write"
    return found + (
        f"; {s.sessions} session{'s' * (s.sessions != 1)} decoded, "
        f"{s.parts_written} Parquet part{'s' * (s.parts_written != 1)} written, {s.parts_removed} removed"
    )
