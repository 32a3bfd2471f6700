"""Turn lifting: the one definition of what a turn is (spec §5).

A user line opens a turn when it is not meta, sidechain, compact summary, interrupted or
agent-injected and its text is not blank; every other line joins the current turn, and
lines before the first opener form turn 0 with an empty prompt. The Polars turns frame
must give the same partition as :func:`lift_turns`.

Imports: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from cc_analytics.core.events import USER, Event, parse_events
from cc_analytics.core.ids import EventRef

# Rust's char::is_whitespace (Unicode White_Space), which differs from Python's str.isspace.
UNICODE_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
INTERRUPT_PHRASE = "[request interrupted by user"
# (marker in folded form, characters allowed right after it; None: anything may follow)
INJECTION_MARKERS = (
    ("<teammate-message", "/>"),
    ("<scheduled-task", "/>"),
    ("<agent-message", "/>"),
    ("<cross-session-message", "/>"),
    ("another claude session sent a message:", None),
    ("# augment agent", ""),
    ("[role reminder", ":]"),
)
_FOLD = {"\u017f": "s", "\u212a": "k"}


def _fold_prefix(text: str, length: int) -> str:
    """Simple case folding of the first ``length`` characters, for ASCII comparisons only."""
    head = text[:length]
    if head.isascii():
        return head.lower()
    return "".join(_FOLD.get(ch, ch.lower() if ch.isascii() else ch) for ch in head)


def is_interrupt(text: str) -> bool:
    """Whether a user text is an interrupt notice (``[Request interrupted by user…``).

    Examples:
        >>> is_interrupt("  [Request interrupted by user for tool use]"), is_interrupt("stop")
        (True, False)
    """
    body = text.lstrip()
    return _fold_prefix(body, len(INTERRUPT_PHRASE)) == INTERRUPT_PHRASE


def is_injected(text: str) -> bool:
    """Whether a user text was relayed from another agent rather than typed.

    Examples:
        >>> is_injected("<teammate-message from=x>hi"), is_injected("<teammate-messages>")
        (True, False)
    """
    body = text.lstrip()
    if not body:
        return False
    for marker, followers in INJECTION_MARKERS:
        n = len(marker)
        if _fold_prefix(body, n) != marker:
            continue
        if followers is None or len(body) == n:
            return True
        nxt = body[n]
        if nxt in UNICODE_WHITE_SPACE or nxt in followers:
            return True
    return False


def opens_turn(event: Event) -> bool:
    """Whether an event opens a new turn."""
    if event.kind != USER or not event.opens:
        return False
    text = event.text
    if not text.strip():
        return False
    return not (is_interrupt(text) or is_injected(text))


class Turn:
    """Consecutive events: the opener's prompt (``""`` for turn 0 without one) and the events."""

    __slots__ = ("index", "prompt", "events")

    def __init__(self, index: int, prompt: str, events: list[Event]) -> None:
        self.index = index
        self.prompt = prompt
        self.events = events

    @property
    def role(self) -> str:
        return "user" if self.prompt else "assistant"


def lift(events: list[Event]) -> list[Turn]:
    """Cut parsed events into turns (spec §5)."""
    turns: list[Turn] = []
    current: list[Event] | None = None
    for event in events:
        if opens_turn(event):
            current = [event]
            turns.append(Turn(len(turns), event.text, current))
        elif current is None:
            current = [event]
            turns.append(Turn(0, "", current))
        else:
            current.append(event)
    return turns


@dataclass(frozen=True, slots=True)
class TurnSummary:
    """One turn as the frames layer sees it.

    Attributes:
        index: 0-based position of the turn in the file.
        role: ``"user"`` when a prompt opened the turn, ``"assistant"`` for a turn 0 without one.
        prompt: the opener's text as written (``""`` for such a turn 0).
        refs: one EventRef per enveloped event (user, assistant, system, attachment lines)
            in file order, each with the line's own ``sessionId`` and ``tool_use_id=None``;
            mode and other lines are left out, so a turn 0 can have no refs.
    """

    index: int
    role: str
    prompt: str
    refs: tuple[EventRef, ...]


def lift_turns(raw: bytes, *, strict: bool = False, source: str = "<bytes>") -> list[TurnSummary]:
    """Parse a transcript and cut it into turns: the contract the Polars turns frame follows.

    The partition is exactly that of captured windows: ``turn_index`` counts from 0 in file
    order, a turn's refs are the ``refs`` of its TurnRef in any window, and an event uuid
    that appears twice belongs to the first turn holding it when anchoring. Lines that are
    not strict JSON objects and year-0 lines are dropped; malformed lines warn and are
    skipped or normalised unless ``strict=True`` (then the reference's error is raised).

    Examples:
        >>> raw = (b'{"type":"permission-mode","permissionMode":"default","sessionId":"S"}\\n'
        ...        b'{"type":"user","uuid":"u1","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",'
        ...        b'"message":{"content":"hi"}}\\n')
        >>> [(t.index, t.role, [r.event_uuid for r in t.refs]) for t in lift_turns(raw)]
        [(0, 'assistant', []), (1, 'user', ['u1'])]
    """
    summaries = []
    for turn in lift(parse_events(raw, strict=strict, source=source)):
        refs = tuple(EventRef(cast(str, e.session_id), e.uuid, None) for e in turn.events if e.uuid is not None)
        summaries.append(TurnSummary(turn.index, turn.role, turn.prompt, refs))
    return summaries
