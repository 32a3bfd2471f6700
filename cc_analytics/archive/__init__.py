"""A durable archive of transcripts: raw copies plus Parquet datasets, updated incrementally.

Imports: nothing at import time; public names resolve lazily (PEP 562). ``update(sources,
to)`` keeps each source file compressed under ``raw/`` and its sessions, turns and problems
as Hive-partitioned Parquet datasets (``sessions/``, ``turns/``, ``problems/``) that DuckDB,
Spark and Polars read without this package; ``frames.read_sessions(DIR)`` and the other
readers accept the archive as a source, or several (one per machine, ``update(..., machine=)``)
read as one. ``share=True`` keeps no text and no path (``archive.share``); ``mask_secrets=True``
masks secrets in the raw copies (``archive.masking``). Layout: ``archive.layout``; state:
``archive.manifest``.

Examples:
    >>> import cc_analytics.archive as archive
    >>> callable(archive.update)
    True
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "update": "writer",
    "Summary": "writer",
    "ArchiveLockedError": "storage",
    "Archive": "read",
    "open_archive": "read",
    "Archives": "read",
    "open_archives": "read",
    "is_archive": "read",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        msg = f"module 'cc_analytics.archive' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"cc_analytics.archive.{module_name}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
