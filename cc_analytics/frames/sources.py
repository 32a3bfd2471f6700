"""Transcript files as every loader sees them, whatever their format.

Imports: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One transcript file and the session it belongs to.

    ``session_id`` is the main session the file counts towards (the parent's id for a
    Claude Code subagent file; the file stem of a ChainlessChain transcript); ``agent_id``
    is set for subagent files; ``layout`` is ``"main"``, ``"subagents-dir"`` or
    ``"agent-file"``; ``size`` is in bytes, as the batch engine weighs files.
    """

    path: Path
    session_id: str
    agent_id: str | None
    layout: str
    project_dir: str
    size: int

    @property
    def is_subagent(self) -> bool:
        return self.layout != "main"
