"""What the commands that read a corpus of transcripts into one table share (``sessions``, ``usage``).

Imports: argparse, the standard library, ``errors`` and ``format``; Polars, orjson, ``frames``
and ``atomic`` inside the functions that need them. Not a command itself: the options (sources,
``--json``/``--parquet``/``--force``, ``--quiet``, ``--workers``), the read loop with its
progress bar, the stderr notes (no transcripts, malformed lines, requests without a price)
and the two machine outputs (one JSON array on stdout, a Parquet file never written over
by accident or inside a Claude config folder).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from cc_analytics.errors import InputError, UsageError
from cc_analytics.format import ProgressBar, unpriced_name, unpriced_note, unread_files_note
from cc_analytics.frames.memory import KeptFrames

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.engine import Progress
    from cc_analytics.frames.sources import TranscriptFile
    from cc_analytics.frames.tablecache import Survey


def agents_text() -> str:
    """Every registered format with its default store, for help texts."""
    from cc_analytics.frames.registry import formats

    return "; ".join(f"{plugin.label} under {plugin.store_hint}" for plugin in formats())


def default_stores_text() -> str:
    """The default stores of every registered format, as a note names them."""
    from cc_analytics.frames.registry import formats

    return f"the default stores ({'; '.join(f'{p.label}: {p.store_hint}' for p in formats())})"


# (the planned files by format or an archive, progress) -> batches of (rows, priced requests, problems)
Reader = Callable[["dict[str, list[TranscriptFile]]", "Progress | None"], Iterator[tuple["pl.DataFrame", ...]]]


def add_corpus_options(parser: argparse.ArgumentParser) -> None:
    """Sources, the output choice, ``--force``, ``--quiet`` and ``--workers``."""
    parser.add_argument("sources", nargs="*", metavar="SOURCES", help="files, folders, globs or an archive")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON array")
    output.add_argument("--parquet", type=Path, metavar="FILE", help="write a Parquet file")
    parser.add_argument("--force", action="store_true", help="let --parquet replace FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no notes")
    add_workers_option(parser)
    add_cache_option(parser)
    add_engine_options(parser)


def add_engine_options(
    parser: argparse.ArgumentParser,
    engine_help: str = "archives only: read their tables here (default), or as Dask tasks (the dask extra)",
    scheduler_help: str = "with --engine dask: the scheduler to use (default: a LocalCluster of --workers processes)",
) -> None:
    """``--engine dask`` and ``--scheduler ADDRESS`` (checked by :func:`check_scheduler`):
    archives' Parquet parts read as Dask tasks."""
    parser.add_argument("--engine", choices=("local", "dask"), default="local", help=engine_help)
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None, help=scheduler_help)


def add_cache_option(parser: argparse.ArgumentParser) -> None:
    """``--no-cache``: decode every transcript, neither reading nor writing the kept tables."""
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="decode every transcript again, without reading or writing the cache (`cc-analytics cache info`)",
    )


def add_workers_option(
    parser: argparse.ArgumentParser,
    help: str = "processes that decode, this one included (default: 2 for corpora over 96 MiB, else 1)",
) -> None:
    """``--workers N`` (checked by :func:`check_workers`)."""
    parser.add_argument("--workers", type=int, default=None, metavar="N", help=help)


def check_workers(args: argparse.Namespace) -> None:
    """A usage error for ``--workers`` below 1."""
    if args.workers is not None and args.workers < 1:
        msg = f"--workers must be at least 1, got {args.workers}"
        raise UsageError(msg)


def check_scheduler(args: argparse.Namespace) -> None:
    """A usage error for ``--scheduler`` without ``--engine dask``."""
    if args.scheduler and args.engine != "dask":
        msg = "--scheduler only applies to --engine dask"
        raise UsageError(msg)


def check_corpus_options(args: argparse.Namespace) -> None:
    """Usage errors first, then a Parquet target we may not write to, before any reading."""
    from cc_analytics.frames.registry import formats

    check_workers(args)
    check_scheduler(args)
    if args.force and args.parquet is None:
        msg = "--force only applies to --parquet"
        raise UsageError(msg)
    if args.parquet is not None:
        guarded = [(plugin.label, root) for plugin in formats() for root in plugin.protected_roots()]
        check_parquet_target(args.parquet, force=args.force, guarded=guarded)


class Corpus:
    """What one read of the sources gave: the rows, the requests and what went wrong.

    A plain class, not a dataclass: ``dataclasses`` imports ``inspect`` (about 8 ms), which a
    command that prints its kept output (``commands.memo``) otherwise never needs.
    """

    def __init__(self, files: int = 0, *, replayable: bool = False) -> None:
        self.files = files
        # Read from transcripts whose stamps stand for their sessions (not from an archive's
        # tables, nor from a format that reads beside its files): the output may be kept whole.
        self.replayable = replayable
        self.frames = KeptFrames()
        self.unpriced: dict[str, int] = {}  # model [mode] -> requests without a price
        self.problems: list[pl.DataFrame] = []


def read_corpus(args: argparse.Namespace, reader: Reader, *, surveyed: Survey | None = None) -> Corpus:
    """Every batch of ``reader`` over the sources of ``args``, with a progress bar on a terminal
    (``surveyed``: the sources as this run stat'ed them already, ``frames.tablecache.survey``)."""
    from cc_analytics.frames import sources, tablecache
    from cc_analytics.frames.sources import workers_ahead

    source: Any = args.sources or None
    cache = getattr(args, "cache", True)
    # The workers start before the files are planned, from the size of a quick listing: they
    # import Polars while this process plans (a third of a second on 2,700 files) and imports it.
    # A run that asks for another number of them (a corpus whose formats are mixed, near the
    # threshold) starts its own, and these end unused. None is started for sources read before:
    # their tables are likely kept, and the engine starts workers if much has changed.
    # Both readers (sessions, usage) read no turns: lean=True.
    start = not (cache and tablecache.planned_before(source))
    with workers_ahead(source, args.workers, start=start, lean=True) as root:
        stored: Any = None
        check_engine_source(args, root)
        if root is None:
            # The files by format, found once (Polars is not imported yet).
            source = tablecache.plan(source, surveyed=surveyed) if cache else sources.plan(source)
            sources.import_ahead(source)
            files = sum(len(found) for found in source.values())
        else:
            stored = open_for_engine(root, args)  # an archive: its tables, nothing decoded
            source = stored.root  # read as opened (the readers do not open it again)
            files = stored.file_count
        progress = ProgressBar(sys.stderr) if not args.quiet and _isatty(sys.stderr) else None
        corpus = Corpus(files=files, replayable=stored is None and _files_hold_sessions(source))
        try:
            for rows, requests, problems in reader(source, progress):
                corpus.frames.append(rows)
                _count_unpriced(corpus.unpriced, requests)
                if problems.height:
                    corpus.problems.append(problems)
        finally:
            if progress:
                progress.close()
            if stored is not None:
                stored.close()  # the Dask cluster started for the read, if one was
    return corpus


def _files_hold_sessions(by_format: dict[str, list[TranscriptFile]]) -> bool:
    """Whether every format planned reads its sessions from their files alone (an unrecognised
    file is reported from its own stat)."""
    from cc_analytics.frames.registry import formats

    plugins = {plugin.name: plugin for plugin in formats()}
    return all(plugins[name].files_hold_sessions for name, files in by_format.items() if files and name in plugins)


def check_engine_source(args: argparse.Namespace, root: str | None) -> None:
    """A usage error for ``--engine dask`` over transcripts (``root`` None: the sources name no archive)."""
    if getattr(args, "engine", "local") == "dask" and root is None:
        msg = (
            "--engine dask reads archives (their Parquet parts as Dask tasks), not transcripts\n"
            "Hint: give archives (or the prefix that holds them), or leave out --engine."
        )
        raise UsageError(msg)


def open_for_engine(root: str, args: argparse.Namespace) -> Any:
    """The archives at ``root``, opened for ``--engine`` (and ``--scheduler``, ``--workers``)."""
    from cc_analytics.frames.sources import open_stored

    engine = getattr(args, "engine", "local")
    return open_stored(root, engine=engine, scheduler=getattr(args, "scheduler", None), workers=args.workers)


def print_notes(args: argparse.Namespace, corpus: Corpus) -> None:
    """The stderr notes: no transcripts found, malformed lines, requests without a price."""
    if args.quiet:
        return
    if not corpus.files:
        where = ", ".join(args.sources) if args.sources else default_stores_text()
        print(f"note: no transcripts found in {where}", file=sys.stderr)
    if corpus.problems:
        _print_problem_notes(corpus.problems)
    if corpus.unpriced:
        missing = sorted(corpus.unpriced.items(), key=lambda item: (-item[1], item[0]))
        print(unpriced_note(missing), file=sys.stderr)


def _count_unpriced(counts: dict[str, int], requests: pl.DataFrame) -> None:
    """Add a batch's requests without a price to ``counts``, by model and mode."""
    from cc_analytics.frames.prices import unpriced

    for _provider, model, mode, count in unpriced(requests).iter_rows():
        name = unpriced_name(model, mode)
        counts[name] = counts.get(name, 0) + count


def _print_problem_notes(batches: list[pl.DataFrame]) -> None:
    """One note for files that could not be read (``line`` null), one for malformed lines."""
    import polars as pl

    from cc_analytics.frames import schema as S

    problems = pl.concat(batches)
    unreadable = problems.filter(pl.col(S.LINE).is_null())
    if unreadable.height:
        source, _line, reason = unreadable.select(S.SOURCE_FILE, S.LINE, S.REASON).row(0)
        count = unreadable.height
        print(unread_files_note(count, "skipped", f"{source}: {reason}"), file=sys.stderr)
    lines = problems.filter(pl.col(S.LINE).is_not_null())
    if lines.height:
        source, line, reason = lines.select(S.SOURCE_FILE, S.LINE, S.REASON).row(0)
        count, files = lines.height, lines[S.SOURCE_FILE].n_unique()
        print(
            f"note: {count} malformed line{'s' * (count != 1)} skipped or read "
            f"in part, in {files} file{'s' * (files != 1)} (first: {source}:{line}: {reason})",
            file=sys.stderr,
        )


def write_output(args: argparse.Namespace, table: pl.DataFrame, noun: str, print_table: Callable[[], None]) -> None:
    """The table to ``--parquet FILE``, as ``--json``, or through ``print_table``."""
    if args.parquet is not None:
        write_parquet(table, args.parquet, force=args.force)
        if not args.quiet:
            print(f"wrote {table.height} {noun} to {args.parquet}", file=sys.stderr)
    elif args.json:
        print_json(table)
    else:
        print_table()


def check_parquet_target(path: Path, *, force: bool, guarded: list[tuple[str, Path]]) -> None:
    """Refuse a Parquet target inside an agent's own folder (``guarded``: (agent, folder) pairs),
    a folder, or an existing file."""
    target = path.expanduser().resolve()
    for label, root in guarded:
        folder = root.expanduser().resolve()
        if target == folder or folder in target.parents:
            msg = f"refusing to write inside {label}'s own folder {str(folder)!r}\nHint: write the Parquet file elsewhere."
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


def write_parquet(table: Any, path: Path, *, force: bool) -> None:
    """Write beside the target, then move it in place (``--force``) or link it (never over a file)."""
    from cc_analytics.atomic import beside, open_pieces

    target = path.expanduser()
    with beside(target) as temporary:
        with open_pieces(temporary) as out:
            table.write_parquet(out)
        if force:
            os.replace(temporary, target)
        else:
            os.link(temporary, target)  # fails if a file appeared meanwhile: never overwrite


def print_json(table: Any) -> None:
    """One JSON array of the rows, times in UTC with ``Z``, on stdout."""
    import orjson

    rows = table.rows(named=True)
    options = orjson.OPT_INDENT_2 | orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS
    sys.stdout.write(orjson.dumps(rows, option=options).decode() + "\n")


def cell(value: str, width: int, align: str) -> str:
    """``value`` padded to ``width`` (``<`` left, ``>`` right)."""
    return f"{value:{align}{width}}"


def tail(text: str, width: int) -> str:
    """The end of ``text`` in ``width`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
