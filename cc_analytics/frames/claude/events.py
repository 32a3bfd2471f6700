"""Claude Code events as frames, and the bounded batch engine every Claude loader runs on.

Imports: polars, the standard library and the other ``claude_*`` frame modules. Files are
grouped by session (a session's main file and subagent files always share a batch) into
batches of about ``BATCH_BYTES``; each batch is decoded and reduced on its own, in worker
processes when the corpus is large, and at most ``2 × workers`` batches are in flight, so
memory stays flat whatever the corpus size.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import TypeVar

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import Decoded, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile, discover

BATCH_BYTES = 32 * 1024 * 1024
PARALLEL_MIN_BYTES = 96 * 1024 * 1024
MAX_WORKERS = 2

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[TranscriptFile] | None
Progress = Callable[[int, int], None]
T = TypeVar("T")


def resolve(source: Source) -> list[TranscriptFile]:
    """Transcript files of ``source``: None (default roots), a path, glob, or a list of them."""
    if source is None:
        return discover(None)
    if isinstance(source, str | os.PathLike):
        return discover([source])
    items = list(source)
    if items and all(isinstance(item, TranscriptFile) for item in items):
        return items  # type: ignore[return-value]
    return discover(items)  # type: ignore[arg-type]


def batches(files: Sequence[TranscriptFile], batch_bytes: int = BATCH_BYTES) -> list[list[TranscriptFile]]:
    """Files cut into batches of about ``batch_bytes``, never splitting a session."""
    out: list[list[TranscriptFile]] = []
    current: list[TranscriptFile] = []
    size = 0
    index = 0
    while index < len(files):
        session = files[index].session_id
        group = []
        while index < len(files) and files[index].session_id == session:
            group.append(files[index])
            index += 1
        group_size = sum(f.size for f in group)
        if current and size + group_size > batch_bytes:
            out.append(current)
            current, size = [], 0
        current.extend(group)
        size += group_size
    if current:
        out.append(current)
    return out


def run_batches(
    work: Callable[[list[TranscriptFile]], T],
    files: Sequence[TranscriptFile],
    *,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    batch_bytes: int = BATCH_BYTES,
) -> Iterator[T]:
    """``work(batch)`` for every batch, results in batch order, in processes when worthwhile.

    ``workers=1`` (the loaders' default) runs in-process; ``workers=None`` picks up to two
    processes for corpora over ``PARALLEL_MIN_BYTES``. Worker processes are spawned, so a
    script that asks for them needs the ``if __name__ == "__main__":`` guard. Batches hold
    about ``batch_bytes`` of transcripts each (sessions are never split).
    """
    plan = batches(files, batch_bytes)
    total = sum(f.size for f in files)
    sizes = [sum(f.size for f in batch) for batch in plan]
    if workers is None:
        workers = min(MAX_WORKERS, os.cpu_count() or 1) if total > PARALLEL_MIN_BYTES else 1
    workers = max(1, min(workers, len(plan)))
    done = 0
    if on_progress:
        on_progress(0, total)
    if workers == 1:
        for batch, size in zip(plan, sizes, strict=True):
            result = work(batch)
            done += size
            if on_progress:
                on_progress(done, total)
            yield result
        return
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        pending: deque[tuple[Future[T], int]] = deque()
        queue = iter(zip(plan, sizes, strict=True))
        for batch, size in queue:
            pending.append((pool.submit(work, batch), size))
            if len(pending) >= 2 * workers:
                break
        while pending:
            future, size = pending.popleft()
            result = future.result()
            for batch, next_size in queue:
                pending.append((pool.submit(work, batch), next_size))
                break
            done += size
            if on_progress:
                on_progress(done, total)
            yield result


def events_of(decoded: Decoded) -> pl.DataFrame:
    """The events frame of a decoded batch: scalar columns plus the per-line block lists."""
    kind = pl.col(S.KIND)
    tool_use = kind == "tool_use"
    tool_result = kind == "tool_result"
    lists = (
        decoded.blocks.lazy()
        .group_by(S.ROW)
        .agg(
            pl.col(S.NAME).filter(tool_use).alias(S.TOOL_USE_NAMES),
            pl.col(S.BLOCK_ID).filter(tool_use).alias(S.TOOL_USE_IDS),
            pl.col(S.TEXT).filter(tool_use).alias(S.TOOL_USE_INPUTS),
            pl.col(S.BLOCK_ID).filter(tool_result).alias(S.TOOL_RESULT_IDS),
            pl.col(S.IS_ERROR).filter(tool_result).alias(S.TOOL_RESULT_ERRORS),
            pl.col(S.IS_ERROR).filter(tool_result).any().alias(S.IS_ERROR),
            pl.col(S.TEXT).filter(tool_result).str.join("\n").alias(S.TOOL_RESULT_TEXT),
        )
    )
    empty_text = pl.col(S.TOOL_RESULT_TEXT)
    frame = (
        decoded.events.lazy()
        .with_row_index(S.ROW)
        .with_columns(pl.col(S.ROW).cast(pl.Int64))
        .join(lists, on=S.ROW, how="left", maintain_order="left")
        .with_columns(pl.when(empty_text != "").then(empty_text).alias(S.TOOL_RESULT_TEXT))
        .select(list(S.EVENTS_SCHEMA))
    )
    return frame.collect().cast(dict(S.EVENTS_SCHEMA))


def events_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Events and problems of one batch (run in a worker process)."""
    decoded = decode_files(files)
    return events_of(decoded), decoded.problems


def problems_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """Problem rows of one batch (run in a worker process)."""
    return decode_files(files).problems


def lazy_source(produce: Callable[[], Iterator[pl.DataFrame]], schema: pl.Schema, name: str) -> pl.LazyFrame:
    """A LazyFrame whose batches come from ``produce()``, with projection and filters applied."""
    from polars.io.plugins import register_io_source

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        _batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        left = n_rows
        for frame in produce():
            if predicate is not None:
                frame = frame.filter(predicate)
            if with_columns is not None:
                frame = frame.select(with_columns)
            if left is not None:
                frame = frame.head(left)
                left -= frame.height
            yield frame
            if left is not None and left <= 0:
                return

    return register_io_source(source, schema=schema, explain_name=name)


def scan_events(source: Source = None, *, workers: int | None = 1) -> pl.LazyFrame:
    """Lazily, one row per usable JSONL line of every transcript of ``source``.

    ``source`` is a transcript file, a folder, a glob, a list of these, or None for the
    Claude Code projects folders (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). Malformed lines
    are left out; :func:`problems` lists them.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n')
        >>> scan_events(folder).select("type", "prompt_text").collect().row(0)
        ('user', 'hi')
    """
    files = resolve(source)

    def produce() -> Iterator[pl.DataFrame]:
        for events, _problems in run_batches(events_batch, files, workers=workers):
            yield events

    return lazy_source(produce, S.EVENTS_SCHEMA, "claude_events")


def read_events(source: Source = None, *, workers: int | None = 1) -> pl.DataFrame:
    """Eager :func:`scan_events`."""
    return scan_events(source, workers=workers).collect()


def problems(source: Source = None, *, workers: int | None = 1) -> pl.DataFrame:
    """One row (file, line, reason) per line that was left out or read only in part.

    Line 0 stands for the file as a whole (for example a file that cannot be read).
    """
    files = resolve(source)
    frames = list(run_batches(problems_batch, files, workers=workers))
    if not frames:
        return pl.DataFrame(schema=S.PROBLEMS_SCHEMA)
    return pl.concat(frames, how="vertical")
