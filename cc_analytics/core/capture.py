"""Capturing context windows from transcript bytes (spec §6, §7, §12).

A :class:`Session` parses and lifts a transcript once, then builds windows for any
number of anchors, rendering each turn once and sharing its TurnRef (and so its JSON
fragment) between the windows that contain it.

Imports: standard library only.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Iterable
from typing import Any, cast

from cc_analytics.core.digest import DigestError, tool_digest
from cc_analytics.core.events import ASSISTANT, USER, ToolCall, TranscriptWarning, parse_events
from cc_analytics.core.ids import PREVIEW_SCHEMA, EventRef
from cc_analytics.core.jsontext import decode_line
from cc_analytics.core.render import walk_turn
from cc_analytics.core.turns import Turn, lift
from cc_analytics.core.window import ContextWindow, TurnRef

U64_LIMIT = 2**64
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


class Session:
    """One parsed transcript, ready to capture windows.

    ``decode`` reads one line (see :func:`~cc_analytics.core.events.parse_events`).

    Examples:
        >>> raw = b'{"type":"user","uuid":"u1","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",' \\
        ...     b'"message":{"content":"hi"}}'
        >>> Session(raw).window(EventRef("S", "u1"), 6, 2, 200).trigger.preview
        'user: hi'
    """

    __slots__ = ("turns", "first_turn", "last_results", "strict", "source", "_refs", "_width")

    def __init__(
        self,
        raw: bytes,
        *,
        strict: bool = False,
        source: str = "<bytes>",
        decode: Callable[[bytes], Any] = decode_line,
    ) -> None:
        self.strict = strict
        self.source = source
        self.turns: list[Turn] = lift(parse_events(raw, strict=strict, source=source, decode=decode))
        first_turn: dict[str, int] = {}
        last_results: dict[str, Any] = {}
        for turn in self.turns:
            for event in turn.events:
                if event.uuid is not None and event.uuid not in first_turn:
                    first_turn[event.uuid] = turn.index
                if event.kind == USER:
                    for result in event.items:
                        last_results[result.tool_use_id] = result.payload
        self.first_turn = first_turn
        self.last_results = last_results
        self._refs: dict[int, TurnRef] = {}
        self._width: int | None = None

    def turn_index(self, anchor: EventRef) -> int:
        """Index of the first turn holding the anchor's uuid; ValueError when there is none."""
        index = self.first_turn.get(anchor.event_uuid)
        if index is None:
            msg = f"anchor {anchor.event_uuid} not found in session {anchor.session_id}"
            raise ValueError(msg)  # the reference's type: goldens compare 'ValueError: anchor … not found'
        return index

    def _digest(self, call: ToolCall) -> str:
        digest = call.digest
        if digest is None:
            try:
                digest = tool_digest(call.name, call.input)
            except DigestError as exc:
                if self.strict:
                    msg = f'tool input digests: "{exc}"'
                    raise DigestError(msg) from None
                warnings.warn(
                    f"{self.source}:{call.lineno}: tool input of {call.name!r} cannot be "
                    f"canonicalised ({exc}); digested with the number written as is",
                    TranscriptWarning,
                    stacklevel=5,
                )
                digest = tool_digest(call.name, call.input, lenient=True)
            call.digest = digest
        return digest

    def turn_ref(self, index: int, width: int) -> TurnRef:
        """The TurnRef of one turn at preview width ``width`` (cached per width)."""
        if width != self._width:
            self._refs.clear()
            self._width = width
        ref = self._refs.get(index)
        if ref is not None:
            return ref
        turn = self.turns[index]
        digest = self._digest
        digests: list[str] = []
        refs = []
        for event in turn.events:
            if event.uuid is not None:
                refs.append(EventRef(cast(str, event.session_id), event.uuid, None))
            if event.kind == ASSISTANT:
                digests.extend(digest(item) for item in event.items if type(item) is ToolCall)
        parts, previews = walk_turn(turn, width, width, digest=digest, last_results=self.last_results)
        ref = TurnRef(turn.role, tuple(refs), "\n".join(parts), tuple(digests), tuple(previews))
        self._refs[index] = ref
        return ref

    def window(self, anchor: EventRef, before: int, after: int, preview_chars: int) -> ContextWindow:
        """Capture the window around ``anchor`` (arguments already validated)."""
        t = self.turn_index(anchor)
        end = t + 1 + after
        if end >= U64_LIMIT:
            if self.strict:
                msg = f"slice index starts at {t + 1} but ends at {end % U64_LIMIT}"
                raise OverflowError(msg)
        end = min(len(self.turns), end)
        width = max(preview_chars, 0)
        ref = self.turn_ref
        return ContextWindow(
            anchor=anchor,
            before=tuple(ref(i, width) for i in range(max(0, t - before), t)),
            trigger=ref(t, width),
            after=tuple(ref(i, width) for i in range(t + 1, end)),
            fidelity="full",
            preview_chars=preview_chars,
            preview_schema=PREVIEW_SCHEMA,
        )


def _what(value: Any) -> str:
    return "'None'" if value is None else f"'{type(value).__name__}' object"


def _unsigned(name: str, value: Any) -> int:
    try:
        number = operator.index(value)
    except TypeError:
        msg = f"argument {name!r}: '{type(value).__name__}' object cannot be interpreted as an integer"
        raise TypeError(msg) from None
    if number < 0:
        msg = "can't convert negative int to unsigned"
        raise OverflowError(msg)
    if number >= U64_LIMIT:
        msg = "int too big to convert"
        raise OverflowError(msg)
    return number


def _signed(name: str, value: Any) -> int:
    try:
        number = operator.index(value)
    except TypeError:
        msg = f"argument {name!r}: '{type(value).__name__}' object cannot be interpreted as an integer"
        raise TypeError(msg) from None
    if not I64_MIN <= number <= I64_MAX:
        msg = "Python int too large to convert to C long"
        raise OverflowError(msg)
    return number


def _anchors(anchors: Iterable[Any], raw: Any) -> list[EventRef]:
    fields = [(a.session_id, a.event_uuid, a.tool_use_id) for a in anchors]
    if not isinstance(raw, bytes):
        msg = f"argument 'raw': {_what(raw)} is not an instance of 'bytes'"
        raise TypeError(msg)
    refs = []
    for anchor, (session_id, event_uuid, tool_use_id) in zip(anchors, fields, strict=True):
        fields_of = (session_id, event_uuid, tool_use_id)
        for value in (session_id, event_uuid) if tool_use_id is None else fields_of:
            if not isinstance(value, str):
                msg = f"argument 'anchors': {_what(value)} is not an instance of 'str'"
                raise TypeError(msg)
        if type(anchor) is EventRef:
            refs.append(anchor)
        else:
            refs.append(EventRef(session_id, event_uuid, tool_use_id))
    return refs


def capture_windows(
    raw: bytes,
    anchors: Iterable[EventRef],
    *,
    before: int = 6,
    after: int = 2,
    preview_chars: int = 200,
    strict: bool = False,
    source: str = "<bytes>",
) -> list[ContextWindow]:
    """Capture one window per anchor from a transcript, parsing it once.

    Args:
        raw: the transcript's bytes.
        anchors: EventRefs (or objects with ``session_id``, ``event_uuid``, ``tool_use_id``).
        before: how many turns to keep before the anchor's turn.
        after: how many turns to keep after it.
        preview_chars: clip width of each turn preview (negative means 0 and is kept as given).
        strict: raise the reference library's error on malformed lines instead of warning.
        source: the file name used in warnings.

    Returns:
        The windows, in anchor order (duplicates included); ``[]`` for no anchors,
        without parsing.

    Raises:
        ValueError: an anchor's uuid is not in the transcript (the first such anchor).
        TypeError, OverflowError, AttributeError: bad arguments, before anything is parsed.

    Examples:
        >>> raw = b'{"type":"user","uuid":"u1","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",' \\
        ...     b'"message":{"content":"hi"}}'
        >>> [w.trigger.preview for w in capture_windows(raw, [EventRef("S", "u1")] * 2)]
        ['user: hi', 'user: hi']
    """
    anchors = list(anchors)
    refs = _anchors(anchors, raw)
    before = _unsigned("before", before)
    after = _unsigned("after", after)
    preview_chars = _signed("preview_chars", preview_chars)
    if not refs:
        return []
    session = Session(raw, strict=strict, source=source)
    return [session.window(ref, before, after, preview_chars) for ref in refs]


def capture_window(
    raw: bytes,
    anchor: EventRef,
    *,
    before: int = 6,
    after: int = 2,
    preview_chars: int = 200,
    strict: bool = False,
    source: str = "<bytes>",
) -> ContextWindow:
    """Capture the window around one anchor: ``capture_windows(raw, [anchor], ...)[0]``.

    Examples:
        >>> raw = b'{"type":"user","uuid":"u1","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",' \\
        ...     b'"message":{"content":"Fix add() in calc.py"}}'
        >>> capture_window(raw, EventRef("S", "u1"), preview_chars=12).trigger.preview
        'user: Fix add() in…(+8ch)'
    """
    return capture_windows(
        raw,
        (anchor,),
        before=before,
        after=after,
        preview_chars=preview_chars,
        strict=strict,
        source=source,
    )[0]
