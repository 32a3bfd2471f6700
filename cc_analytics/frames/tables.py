"""The tables of a batch of sessions, whatever their format: one decode, four frames.

Imports: the standard library (Polars only for type checking).

Examples:
    >>> import polars as pl
    >>> from cc_analytics.frames import schema as S
    >>> empty = Tables.empty()
    >>> empty.sessions.schema == S.SESSIONS_SCHEMA, empty.requests.height
    (True, 0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True, slots=True)
class Tables:
    """Sessions, turns, problems and priced requests of the same sources, from one decode:
    ``SESSIONS_SCHEMA``, ``TURNS_SCHEMA``, ``PROBLEMS_SCHEMA`` and ``REQUESTS_SCHEMA``
    (``frames.schema``). ``turns`` is empty when it was not asked for; ``findings``
    (``FINDINGS_SCHEMA``) is None unless asked for (from the same decode, a format with
    ``FormatPlugin.has_findings``; empty for the others)."""

    sessions: pl.DataFrame
    turns: pl.DataFrame
    problems: pl.DataFrame
    requests: pl.DataFrame
    findings: pl.DataFrame | None = None

    @classmethod
    def empty(cls) -> Tables:
        """Four empty frames in their schemas."""
        import polars as pl

        from cc_analytics.frames import schema as S

        return cls(
            pl.DataFrame(schema=S.SESSIONS_SCHEMA),
            pl.DataFrame(schema=S.TURNS_SCHEMA),
            pl.DataFrame(schema=S.PROBLEMS_SCHEMA),
            pl.DataFrame(schema=S.REQUESTS_SCHEMA),
        )
