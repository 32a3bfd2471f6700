"""ContextWindow and TurnRef: the ``cc-transcript.context/2`` wire document (spec §2, §3, §11.1).

``to_json`` is the one serialiser of the format; each TurnRef caches its JSON fragment so
that windows sharing a turn serialise it once.

Imports: standard library only (hydration is imported lazily).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cc_analytics.core.ids import PREVIEW_SCHEMA, SCHEMA, SUMMARY_LABEL, Budget, EventRef, clip
from cc_analytics.core.previews import (
    Preview,
    _items,
    _one_of,
    _require,
    _string,
    _strings,
    brief,
    preview_from_wire,
)
from cc_analytics.errors import SchemaError

if TYPE_CHECKING:
    from pathlib import Path

    from cc_analytics.core.hydrate import HydratedWindow

ROLES = ("user", "assistant")
FIDELITIES = ("full", "summary")
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


def _ref_wire(ref: EventRef) -> dict:
    return {"event_uuid": ref.event_uuid, "session_id": ref.session_id, "tool_use_id": ref.tool_use_id}


@dataclass(frozen=True, slots=True)
class TurnRef:
    """One turn of a window: role, the events it holds, a clipped preview and tool digests.

    ``previews`` is None for legacy windows written before typed previews existed.

    Examples:
        >>> ref = TurnRef("user", (EventRef("S", "u1"),), "user: hi", (), ())
        >>> ref.to_json()
        '{"preview":"user: hi","previews":[],"refs":[{"event_uuid":"u1","session_id":"S","tool_use_id":null}],"role":"user","tool_digests":[]}'
    """

    role: str
    refs: tuple[EventRef, ...]
    preview: str
    tool_digests: tuple[str, ...]
    previews: tuple[Preview, ...] | None = None
    _json: str | None = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in ("refs", "tool_digests", "previews"):
            value = getattr(self, name)
            if value is not None and type(value) is not tuple:
                object.__setattr__(self, name, tuple(value))

    def to_wire(self) -> dict:
        """The JSON object of this turn-ref."""
        obj: dict[str, Any] = {
            "preview": self.preview,
            "refs": [_ref_wire(r) for r in self.refs],
            "role": self.role,
            "tool_digests": list(self.tool_digests),
        }
        if self.previews is not None:
            obj["previews"] = [p.to_wire() for p in self.previews]
        return obj

    def to_json(self) -> str:
        """The canonical JSON text of this turn-ref (computed once, then reused)."""
        text = self._json
        if text is None:
            text = _dumps(self.to_wire())
            object.__setattr__(self, "_json", text)
        return text


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """The turns around an anchor event: ``before``, the ``trigger`` turn, and ``after``.

    Examples:
        >>> w = ContextWindow(EventRef("S", "u1"), (), None, (), "summary", 200)
        >>> w.to_json()
        '{"after":[],"anchor":{"event_uuid":"u1","session_id":"S","tool_use_id":null},"before":[],"fidelity":"summary","preview_chars":200,"schema":"cc-transcript.context/2","trigger":null}'
        >>> ContextWindow.from_json(w.to_json()) == w
        True
        >>> w.render_preview(budget=Budget())
        '[summary fidelity — transcript unavailable]'
    """

    anchor: EventRef
    before: tuple[TurnRef, ...]
    trigger: TurnRef | None
    after: tuple[TurnRef, ...]
    fidelity: str
    preview_chars: int
    preview_schema: str | None = None

    def __post_init__(self) -> None:
        for name in ("before", "after"):
            value = getattr(self, name)
            if type(value) is not tuple:
                object.__setattr__(self, name, tuple(value))

    def turns(self) -> tuple[TurnRef, ...]:
        """All TurnRefs in window order: before, trigger (when present), after."""
        middle = () if self.trigger is None else (self.trigger,)
        return self.before + middle + self.after

    def to_json(self) -> str:
        """Serialise as canonical ``cc-transcript.context/2`` JSON (sorted keys, no spaces)."""
        parts = [
            '{"after":[',
            ",".join([t.to_json() for t in self.after]),
            '],"anchor":',
            _dumps(_ref_wire(self.anchor)),
            ',"before":[',
            ",".join([t.to_json() for t in self.before]),
            '],"fidelity":',
            _dumps(self.fidelity),
            ',"preview_chars":',
            _dumps(self.preview_chars),
        ]
        if self.preview_schema is not None:
            parts += [',"preview_schema":', _dumps(self.preview_schema)]
        parts += [',"schema":"', SCHEMA, '","trigger":']
        parts.append("null" if self.trigger is None else self.trigger.to_json())
        parts.append("}")
        return "".join(parts)

    @classmethod
    def from_json(cls, data: str | bytes) -> ContextWindow:
        """Parse a ``cc-transcript.context/2`` document, strictly.

        Every field must have its type of the wire format (strings, arrays, objects,
        booleans, an integer ``preview_chars``; ``role`` and ``fidelity`` one of their
        values); extra keys are ignored.

        Raises:
            json.JSONDecodeError: the text is not JSON.
            SchemaError: a wrong schema, an unknown preview kind, or any missing or
                mistyped field (the message names the field and the value).

        Examples:
            >>> ContextWindow.from_json('{"schema":"cc-transcript.context/2","anchor":5}')
            Traceback (most recent call last):
            ...
            cc_analytics.errors.SchemaError: window.anchor: expected an object, got 5
        """
        try:
            obj = json.loads(data)
        except RecursionError:
            msg = "window: JSON nested too deeply"
            raise SchemaError(msg) from None
        except json.JSONDecodeError:
            raise
        except ValueError as exc:  # bytes that are not UTF-8, an integer beyond int()'s digit limit
            msg = f"window: unreadable document ({exc})"
            raise SchemaError(msg) from None
        if not isinstance(obj, dict) or obj.get("schema") != SCHEMA or not isinstance(obj["schema"], str):
            msg = f"expected schema {SCHEMA!r}, got: {str(data[:120])}"
            raise SchemaError(msg)
        preview_schema = obj.get("preview_schema")
        if preview_schema is not None and (not isinstance(preview_schema, str) or preview_schema != PREVIEW_SCHEMA):
            msg = f"expected preview schema {PREVIEW_SCHEMA!r}, got: {brief(preview_schema)}"
            raise SchemaError(msg)
        anchor = _event_ref(_require(obj, "anchor", "window"), "window.anchor")
        before = _turn_refs(_require(obj, "before", "window"), "window.before")
        trigger_obj = _require(obj, "trigger", "window")
        trigger = None if trigger_obj is None else _turn_ref(trigger_obj, "window.trigger")
        after = _turn_refs(_require(obj, "after", "window"), "window.after")
        fidelity = _one_of(obj, "fidelity", "window", FIDELITIES)
        preview_chars = _require(obj, "preview_chars", "window")
        if type(preview_chars) is not int:
            msg = f"window.preview_chars: expected an integer, got {brief(preview_chars)}"
            raise SchemaError(msg)
        return cls(anchor, before, trigger, after, fidelity, preview_chars, preview_schema)

    def render_preview(self, *, budget: Budget = Budget()) -> str:  # noqa: B008 - frozen value
        """The captured previews, each clipped to ``budget.turn_chars``, separated by blank lines.

        Never reads the transcript.
        """
        parts = [SUMMARY_LABEL] if self.fidelity == "summary" else []
        limit = budget.turn_chars
        for turn in self.turns():
            if turn.preview:
                parts.append(clip(turn.preview, limit))
        return "\n\n".join(parts)

    def hydrate(self, *, root: str | Path | None = None) -> HydratedWindow | None:
        """Re-read the transcript and resolve every turn; None when that is not possible.

        ``root`` is the projects folder searched for ``<session_id>.jsonl`` (default
        ``~/.claude/projects``).
        """
        from cc_analytics.core.hydrate import hydrate_windows

        return hydrate_windows([self], root=root)[0]


def _event_ref(obj: Any, where: str) -> EventRef:
    session_id = _string(obj, "session_id", where)
    event_uuid = _string(obj, "event_uuid", where)
    return EventRef(session_id, event_uuid, _string(obj, "tool_use_id", where, nullable=True))


def _turn_ref(obj: Any, where: str) -> TurnRef:
    role = _one_of(obj, "role", where, ROLES)
    raw_refs = _items(_require(obj, "refs", where), f"{where}.refs")
    refs = tuple(_event_ref(r, f"{where}.refs[{i}]") for i, r in enumerate(raw_refs))
    preview = _string(obj, "preview", where)
    digests = _strings(_require(obj, "tool_digests", where), f"{where}.tool_digests")
    previews = None
    if "previews" in obj:
        items = _items(obj["previews"], f"{where}.previews")
        previews = tuple(preview_from_wire(p, f"{where}.previews[{i}]") for i, p in enumerate(items))
    return TurnRef(role, refs, preview, digests, previews)


def _turn_refs(value: Any, where: str) -> tuple[TurnRef, ...]:
    return tuple(_turn_ref(t, f"{where}[{i}]") for i, t in enumerate(_items(value, where)))
