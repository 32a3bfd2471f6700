"""Hydration: find a window's transcript again and render its turns in full (spec §11.2, §11.3).

Imports: standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from cc_analytics.core.events import parse_events
from cc_analytics.core.ids import Budget
from cc_analytics.core.render import render_turn
from cc_analytics.core.turns import Turn, lift
from cc_analytics.core.window import ContextWindow

_MEMO: dict[tuple[str, str], str] = {}


def default_projects_root() -> Path:
    """``~/.claude/projects``, the folder Claude Code writes transcripts to."""
    return Path(os.path.expanduser("~")) / ".claude" / "projects"


def find_transcript(session_id: str, *, root: str | os.PathLike | None = None) -> str | None:
    """The newest file named ``<session_id>.jsonl`` anywhere under ``root``, or None.

    Hidden folders are searched, symlinked folders are not followed, symlinked files are
    accepted and de-duplicated by real path; on an mtime tie the first one found wins. A
    hit is remembered for the process while the file exists.

    Examples:
        >>> find_transcript("no-such-session", root="/nonexistent") is None
        True
    """
    base = os.fspath(default_projects_root() if root is None else root)
    key = (session_id, base)
    known = _MEMO.get(key)
    if known is not None and os.path.isfile(known):
        return known
    name = f"{session_id}.jsonl"
    best: tuple[float, str] | None = None
    seen: set[str] = set()
    for folder, dirs, files in os.walk(base):
        dirs.sort()
        if name not in files:
            continue
        real = os.path.realpath(os.path.join(folder, name))
        if real in seen:
            continue
        seen.add(real)
        try:
            mtime = os.stat(real).st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, real)
    if best is None:
        return None
    _MEMO[key] = best[1]
    return best[1]


@dataclass(frozen=True, slots=True)
class HydratedWindow:
    """A window whose turns were found again in the transcript, for full-fidelity rendering.

    Examples:
        >>> w = ContextWindow.from_json('{"after":[],"anchor":{"event_uuid":"u","session_id":"S",'
        ...     '"tool_use_id":null},"before":[],"fidelity":"full","preview_chars":200,'
        ...     '"schema":"cc-transcript.context/2","trigger":null}')
        >>> HydratedWindow(w, ()).render()
        ''
    """

    window: ContextWindow
    turns: tuple[Turn, ...]

    def render(self, *, budget: Budget = Budget()) -> str:  # noqa: B008 - frozen value
        """Each turn rendered with ``budget`` (prose, tool input), separated by blank lines."""
        t, k = budget.turn_chars, budget.tool_chars
        if t < 0 or k < 0:
            msg = "can't convert negative int to unsigned"
            raise OverflowError(msg)
        texts = (render_turn(turn, t, k) for turn in self.turns)
        return "\n\n".join(text for text in texts if text)


def _resolve(window: ContextWindow, turns: list[Turn], first_turn: dict[str, int]) -> HydratedWindow | None:
    resolved = []
    for ref in window.turns():
        if not ref.refs:
            return None
        indexes = [first_turn.get(r.event_uuid) if isinstance(r.event_uuid, str) else None for r in ref.refs]
        if None in indexes:
            return None
        resolved.append(turns[cast(int, indexes[0])])
    return HydratedWindow(window, tuple(resolved))


def hydrate_windows(
    windows: Iterable[ContextWindow], *, root: str | os.PathLike | None = None
) -> list[HydratedWindow | None]:
    """Hydrate many windows, reading each session's transcript once.

    A window gives None when its file is missing or unreadable, or when any of its
    TurnRefs has no refs or a ref whose uuid is no longer in the file.
    """
    windows = list(windows)
    out: list[HydratedWindow | None] = [None] * len(windows)
    groups: dict[object, list[int]] = {}
    for i, window in enumerate(windows):
        groups.setdefault(window.anchor.session_id, []).append(i)
    for session_id, members in groups.items():
        if not isinstance(session_id, str):
            continue
        path = find_transcript(session_id, root=root)
        if path is None:
            continue
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        turns = lift(parse_events(raw, source=path))
        first_turn: dict[str, int] = {}
        for turn in turns:
            for event in turn.events:
                if event.uuid is not None:
                    first_turn.setdefault(event.uuid, turn.index)
        for i in members:
            out[i] = _resolve(windows[i], turns, first_turn)
    return out
