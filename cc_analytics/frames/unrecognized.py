"""Files no registered format recognises: each is a problem, never a session of another format.

Imports: polars (on use), the standard library, ``frames.engine`` and ``frames.plugin``. A file
whose first JSON object no plugin claims (``frames.registry.recognize``) is planned under the
name :data:`NAME`; this module gives it the verbs of a format that reads nothing: every frame
is empty but the problems frame, which has one row per such file (``line`` null) saying why.
A file whose first lines hold no JSON object at all goes to the registry's fallback format
instead, whose loader reports its lines one by one.

Examples:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "other.jsonl"
    >>> _ = path.write_text('{"kind":"something else"}\\n')
    >>> read_problems([path])["reason"].item()
    "not a transcript of any format cc-analytics reads (its first JSON object's keys: 'kind'); skipped"
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cc_analytics.frames.engine import Progress
from cc_analytics.frames.plugin import FormatPlugin
from cc_analytics.frames.sources import (
    SNIFF_BYTES,
    Source,
    TranscriptFile,
    _first_object,
    expand,
    file_size,
    open_transcript,
    shown,
    source_list,
)

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.tables import Tables

NAME = ""
"""How a plan names the files no format recognises (not a format: never in a ``format`` column)."""
MAIN = "main"


class Unrecognized(FormatPlugin):
    """The files no registered format recognises (``frames.registry.get(NAME)``)."""

    name = NAME
    label = "unrecognised files"
    package = "cc_analytics.frames.unrecognized"
    worker_module = "cc_analytics.frames.unrecognized"
    store_hint = "nowhere"

    def recognizes(self, first: Any, head: bytes) -> bool:
        return False

    def default_stores(self) -> list[Path]:
        return []

    def resolve(self, source: Source, *, planned: bool = False) -> list[TranscriptFile]:
        return files_of(source)

    def classify(self, path: Path, *, size: int, head: bytes) -> TranscriptFile:
        return _file(path, size)


PLUGIN = Unrecognized()


def files_of(source: Source) -> list[TranscriptFile]:
    """``source`` as TranscriptFiles (each file its own session, named after its stem)."""
    out: list[TranscriptFile] = []
    for item in source_list(source):
        if isinstance(item, TranscriptFile):
            out.append(item)
        else:
            out.extend(_file(path, file_size(path)) for path in expand(item))
    return out


def _file(path: Path, size: int) -> TranscriptFile:
    stem = path.name.removesuffix(".jsonl")
    return TranscriptFile(path, shown(stem), None, MAIN, shown(path.parent.name), size)


def reason(path: Path) -> str:
    """Why ``path`` is not read, naming the keys of its first JSON object."""
    try:
        with open_transcript(path) as handle:
            _head, first = _first_object(handle)
    except OSError as error:
        return f"unreadable: {error.strerror or error}"
    keys = ", ".join(repr(key) for key in list(first or {})[:8])
    return f"not a transcript of any format cc-analytics reads (its first JSON object's keys: {keys}); skipped"


def problems_batch(files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None) -> pl.DataFrame:
    """One problem row per file."""
    import io

    import polars as pl

    from cc_analytics.frames import schema as S

    reasons = []
    for index, file in enumerate(files):
        if contents is None:
            reasons.append(reason(file.path))
        else:
            _head, first = _first_object(io.BytesIO(contents[index][:SNIFF_BYTES]))
            keys = ", ".join(repr(key) for key in list(first or {})[:8])
            reasons.append(
                f"not a transcript of any format cc-analytics reads (its first JSON object's keys: {keys}); skipped"
            )
    return pl.DataFrame(
        {S.SOURCE_FILE: [file.source_file for file in files], S.LINE: [None] * len(files), S.REASON: reasons},
        schema=S.PROBLEMS_SCHEMA,
    )


def tables_batch(files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None) -> Tables:
    from cc_analytics.frames.tables import Tables

    empty = Tables.empty()
    return Tables(empty.sessions, empty.turns, problems_batch(files, contents), empty.requests)


def iter_tables(
    source: Source = None, *, turns: bool = True, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[Tables]:
    files = files_of(source)
    if files:
        yield tables_batch(files, turns=turns)
        if on_progress is not None:
            total = sum(file.size for file in files)
            on_progress(total, total)


def iter_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    for tables in iter_tables(source, turns=False, workers=workers, on_progress=on_progress):
        yield tables.requests, tables.problems


def _empty(table: str) -> pl.LazyFrame:
    import polars as pl

    from cc_analytics.frames import schema as S

    return pl.LazyFrame(schema=getattr(S, f"{table.upper()}_SCHEMA"))


def scan_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    return problems_batch(files_of(source)).lazy()


def read_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    return problems_batch(files_of(source))


def scan_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    return _empty("sessions")


def read_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    return _empty("sessions").collect()


def scan_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    return _empty("turns")


def read_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    return _empty("turns").collect()


def scan_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    return _empty("requests")


def read_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    return _empty("requests").collect()


def scan_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    from cc_analytics.errors import InputError

    names = ", ".join(os.fspath(file.path) for file in files_of(source)[:3])
    msg = f"no registered format reads {names}\nHint: `cc-analytics sessions` lists such files as problems."
    raise InputError(msg)


def read_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    return scan_events(source, workers=workers, on_progress=on_progress).collect()
