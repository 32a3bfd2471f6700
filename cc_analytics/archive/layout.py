"""Where things go inside an archive: the tables, their Hive partitions, the raw copies.

Imports: the standard library only (schemas are looked up by name, so planning a run that
has nothing to do loads no Polars). Layout::

    DIR/manifest.json                          the state (see ``archive.manifest``)
    DIR/sessions/format=F/month=YYYY-MM/part-RUN-TAG.parquet
    DIR/turns/…, DIR/problems/…, DIR/requests/…  the same partitions
    DIR/raw/F/PROJECT/RELATIVE.jsonl.zst       each source file as read (zstd frames)
    DIR/.lock, DIR/.staging/RUN/…              the writer's lock and its unfinished parts

``format`` and ``month`` are Hive partition columns: they are in the folder names, not in
the files, as Spark, DuckDB and Polars expect. ``month`` is the UTC month in which the
session started (for every table, so a session's rows sit in one partition of each) and
``__HIVE_DEFAULT_PARTITION__`` (null) when its start is unknown. Every part also holds a
``machine`` column: the machine whose history the archive keeps (one per archive, named in
the manifest), so that archives of several machines read together keep them apart.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

RAW = "raw"
STAGING = ".staging"
FORMAT = "format"
MONTH = "month"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
RAW_SUFFIX = ".zst"
MACHINE = "machine"  # a column of every part (the archive's machine, as its manifest names it)


@dataclass(frozen=True, slots=True)
class Table:
    """A derived table: its folder, where its schema is defined, and the column that ties each
    row to its session's unit (``session_id`` within the format, or the ``source_file``)."""

    name: str
    schema_ref: str
    key: str

    @property
    def schema(self) -> Any:
        module, _, name = self.schema_ref.partition(":")
        return getattr(importlib.import_module(module), name)


# A new frame of the pipeline is one more entry here (and a same-named attribute of the
# format packages' ``tables_batch`` result).
TABLES = (
    Table("sessions", "cc_analytics.frames.schema:SESSIONS_SCHEMA", "session_id"),
    Table("turns", "cc_analytics.frames.schema:TURNS_SCHEMA", "source_file"),
    Table("problems", "cc_analytics.frames.schema:PROBLEMS_SCHEMA", "source_file"),
    Table("requests", "cc_analytics.frames.schema:REQUESTS_SCHEMA", "session_id"),
)
TABLE_NAMES = tuple(table.name for table in TABLES)


def table(name: str) -> Table:
    for candidate in TABLES:
        if candidate.name == name:
            return candidate
    msg = f"no table {name!r} in an archive (tables: {', '.join(TABLE_NAMES)})"
    raise KeyError(msg)


def partition(format: str, month: str | None) -> str:
    """The Hive partition folder of a format and month.

    Examples:
        >>> partition("myagent", "2026-03"), partition("myagent", None)
        ('format=myagent/month=2026-03', 'format=myagent/month=__HIVE_DEFAULT_PARTITION__')
    """
    return f"{FORMAT}={format}/{MONTH}={month or NULL_PARTITION}"


def part_path(table_name: str, format: str, month: str | None, run: str, tag: str) -> str:
    """A part's path relative to the archive root."""
    return f"{table_name}/{partition(format, month)}/part-{run}-{tag}.parquet"


def raw_base(format: str, project_dir: str, layout: str, source: str) -> str:
    """The raw copy of a source, relative to the root, before its generation and ``.zst``.

    Examples:
        >>> raw_base("myagent", "-home-p", "subagents-dir", "/h/.myagent/projects/-home-p/s/subagents/agent-a.jsonl")
        'raw/myagent/-home-p/s/subagents/agent-a.jsonl'
        >>> raw_base("myagent", "sessions", "main", "s3://bucket/sessions/x.jsonl")
        'raw/myagent/sessions/x.jsonl'
    """
    parts = source.rstrip("/").split("/")
    depth = 3 if layout == "subagents-dir" else 1
    relative = "/".join(_safe(part) for part in parts[-depth:])
    return f"{RAW}/{format}/{_safe(project_dir) or '_'}/{relative}"


def raw_path(base: str, generation: int) -> str:
    """The raw copy of a generation: each replacement gets a name of its own.

    Examples:
        >>> raw_path("raw/f/p/s.jsonl", 0), raw_path("raw/f/p/s.jsonl", 2)
        ('raw/f/p/s.jsonl.zst', 'raw/f/p/s.jsonl.2.zst')
    """
    return f"{base}.{generation}{RAW_SUFFIX}" if generation else f"{base}{RAW_SUFFIX}"


def _safe(name: str) -> str:
    return "_" if name in ("", ".", "..") else name.replace("\\", "_")


def machine_name(name: str) -> str:
    """``name`` as a machine's name (stripped), or a ``ValueError`` saying why it cannot be one.

    Examples:
        >>> machine_name(" laptop-7 ")
        'laptop-7'
        >>> machine_name("a/b")
        Traceback (most recent call last):
        ValueError: a machine name is printable text of 1 to 100 characters without '/' or '\\' ('a/b')
    """
    text = name.strip()
    if not (0 < len(text) <= 100) or not text.isprintable() or "/" in text or "\\" in text:
        msg = f"a machine name is printable text of 1 to 100 characters without '/' or '\\' ({name!r})"
        raise ValueError(msg)
    return text


def default_machine() -> str:
    """This machine's name: its host name (``socket.gethostname``), ``unknown`` when it has none."""
    import socket

    try:
        return machine_name(socket.gethostname())
    except ValueError:
        return "unknown"
