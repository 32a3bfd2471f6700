"""ChainlessChain session stores as Polars frames: events, replayed messages, problems.

Imports: polars, the standard library, ``frames.chainless_decode``. Loaders come in pairs:
``scan_*`` returns a LazyFrame that decodes on collect, ``read_*`` a DataFrame.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import polars as pl

from cc_analytics.errors import InputError
from cc_analytics.frames.chainless.decode import (
    EVENT_SCHEMA,
    MESSAGE_SCHEMA,
    PROBLEM_SCHEMA,
    ColumnBuffer,
    ContextBuffer,
)

Source = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]

TRANSCRIPT_SUFFIX = ".jsonl"
# The context decoder hands its message strings to Polars after about this much input.
CONTEXT_FLUSH_BYTES = 8 * 1024 * 1024


def default_sessions_dir() -> Path:
    """``$CHAINLESSCHAIN_HOME/sessions`` when set, else ``~/.chainlesschain/sessions``."""
    home = os.environ.get("CHAINLESSCHAIN_HOME")
    if home:
        return Path(home) / "sessions"
    return Path(os.environ.get("HOME") or Path.home()) / ".chainlesschain" / "sessions"


def is_safe_id(session_id: str) -> bool:
    """Whether an id may be used as a file stem: non-empty, no ``/``, ``\\`` or ``..``.

    Examples:
        >>> is_safe_id("notes..v2"), is_safe_id("a/b"), is_safe_id("typical-ollama-qwen")
        (False, False, True)
    """
    return bool(session_id) and "/" not in session_id and "\\" not in session_id and ".." not in session_id


def is_deleted(transcript: Path) -> bool:
    """A transcript is deleted when a ``.tombstone`` sits beside it or its ``.meta.json`` says so."""
    stem = transcript.name[: -len(TRANSCRIPT_SUFFIX)]
    if transcript.with_name(stem + ".tombstone").exists():
        return True
    meta = transcript.with_name(stem + ".meta.json")
    try:
        document = orjson.loads(meta.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(document, dict) and document.get("deleted") is True


def session_path(session_id: str, sessions_dir: Path | None = None) -> Path | None:
    """The live transcript of ``session_id`` in the store, or None (unsafe id, missing, deleted)."""
    if not is_safe_id(session_id):
        return None
    path = (sessions_dir or default_sessions_dir()) / (session_id + TRANSCRIPT_SUFFIX)
    if not path.is_file() or is_deleted(path):
        return None
    return path


def live_transcripts(sessions_dir: Path | None = None) -> list[Path]:
    """Every live ``<id>.jsonl`` in the store, sorted by id; an absent store has none."""
    folder = sessions_dir or default_sessions_dir()
    try:
        entries = sorted(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [p for p in entries if p.name.endswith(TRANSCRIPT_SUFFIX) and p.is_file() and not is_deleted(p)]


@dataclass(frozen=True, slots=True)
class ChainlessFrames:
    """The three frames decoded from a batch of transcripts."""

    events: pl.DataFrame
    messages: pl.DataFrame
    problems: pl.DataFrame


def session_id_of(path: Path) -> str:
    """The session id of a transcript: its file name without ``.jsonl``."""
    name = path.name
    return name[: -len(TRANSCRIPT_SUFFIX)] if name.endswith(TRANSCRIPT_SUFFIX) else path.stem


def resolve_sources(source: Source | None) -> list[Path]:
    """Transcript paths from a file, a folder (its ``*.jsonl``), a glob, or a list of those.

    ``None`` means the default store. A path that does not exist raises InputError.
    """
    if source is None:
        return live_transcripts()
    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    paths: list[Path] = []
    for item in items:
        path = Path(item)
        text = str(item)
        if any(ch in text for ch in "*?["):
            anchor = Path(path.anchor or ".")
            pattern = str(path.relative_to(anchor)) if path.is_absolute() else text
            paths.extend(sorted(p for p in anchor.glob(pattern) if p.is_file()))
        elif path.is_dir():
            paths.extend(live_transcripts(path))
        elif path.is_file():
            paths.append(path)
        else:
            msg = f"no such transcript or folder: {text!r}\nHint: pass a <id>.jsonl file or a sessions folder."
            raise InputError(msg)
    return paths


def decode_files(paths: Iterable[Path]) -> ChainlessFrames:
    """Decode transcripts into events, replay candidates and problems (unreadable files are problems)."""
    buffer = ColumnBuffer()
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as exc:
            buffer.problems["file"].append(str(path))
            buffer.problems["line"].append(None)
            buffer.problems["reason"].append(f"unreadable: {exc.strerror or exc}")
            continue
        buffer.add_file(path, session_id_of(path), data)
    return ChainlessFrames(*buffer.frames())


def decode_context_files(paths: Iterable[Path]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """What the context report reads of transcripts: headers (one row per path, in order),
    replayed messages (keyed by the header's ``file`` index) and problems."""
    buffer = ContextBuffer()
    pending = 0
    for path in paths:
        session_id = session_id_of(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            buffer.unreadable(path, session_id, f"unreadable: {exc.strerror or exc}")
            continue
        buffer.add_file(path, session_id, data)
        pending += len(data)
        if pending >= CONTEXT_FLUSH_BYTES:
            buffer.flush()
            pending = 0
    return buffer.frames()


def iter_batches(paths: list[Path], *, batch_bytes: int = 64 * 1024 * 1024) -> Iterator[list[Path]]:
    """Group paths into batches of about ``batch_bytes`` of input, so memory stays bounded."""
    batch: list[Path] = []
    size = 0
    for path in paths:
        try:
            size += path.stat().st_size
        except OSError:
            pass
        batch.append(path)
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def replayed(messages: pl.DataFrame | pl.LazyFrame, events: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Messages as replayed by ``cc context``: the last checkpoint's snapshot, then later messages.

    Examples:
        >>> import polars as pl
        >>> frames = decode_files([])
        >>> replayed(frames.messages, frames.events).collect().height
        0
    """
    checkpoints = (
        events.lazy()
        .filter(pl.col("is_checkpoint"))
        .group_by("session_id")
        .agg(pl.col("line").max().alias("checkpoint_line"))
    )
    line, checkpoint = pl.col("line"), pl.col("checkpoint_line")
    keep = (
        pl.when(checkpoint.is_null())
        .then(~pl.col("from_checkpoint"))
        .otherwise(
            (pl.col("from_checkpoint") & (line == checkpoint)) | (~pl.col("from_checkpoint") & (line > checkpoint))
        )
    )
    return (
        messages.lazy()
        .join(checkpoints, on="session_id", how="left")
        .filter(keep)
        .drop("checkpoint_line")
        .sort("session_id", "line", "position", maintain_order=True)
    )


def scan_chainless(source: Source | None = None) -> pl.LazyFrame:
    """Lazily decode ChainlessChain transcripts into the events frame (one row per parsed line).

    Examples:
        >>> scan_chainless([]).collect().columns[:3]
        ['session_id', 'line', 'type']
    """
    paths = resolve_sources(source)
    return pl.defer(lambda: decode_files(paths).events, schema=EVENT_SCHEMA)


def read_chainless(source: Source | None = None) -> pl.DataFrame:
    """Eager :func:`scan_chainless`."""
    return decode_files(resolve_sources(source)).events


def scan_chainless_messages(source: Source | None = None) -> pl.LazyFrame:
    """Lazily decode transcripts into replayed messages (session_id, line, position, role, text, tool_calls_text)."""
    paths = resolve_sources(source)

    def build() -> pl.DataFrame:
        frames = decode_files(paths)
        return replayed(frames.messages, frames.events).collect()

    return pl.defer(build, schema=MESSAGE_SCHEMA)


def read_chainless_problems(source: Source | None = None) -> pl.DataFrame:
    """Lines that could not be decoded: (file, line, reason)."""
    return decode_files(resolve_sources(source)).problems


__all__ = [
    "PROBLEM_SCHEMA",
    "ChainlessFrames",
    "decode_context_files",
    "decode_files",
    "default_sessions_dir",
    "is_safe_id",
    "live_transcripts",
    "read_chainless",
    "read_chainless_problems",
    "replayed",
    "resolve_sources",
    "scan_chainless",
    "scan_chainless_messages",
    "session_path",
]
