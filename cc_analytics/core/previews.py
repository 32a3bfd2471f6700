"""Typed previews of ``cc-transcript.preview/1``: text, tool call and AskUserQuestion (spec §10).

Imports: standard library only.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, overload

from cc_analytics.errors import SchemaError

Pairs = tuple[tuple[Any, Any], ...]
_BRIEF = reprlib.Repr()
_BRIEF.maxlevel = 3
_BRIEF.maxstring = _BRIEF.maxother = 60


def sorted_pairs(value: Mapping | Iterable, field: str) -> Pairs:
    """A map given as a mapping or as (key, value) pairs, as a key-sorted tuple of pairs."""
    try:
        return tuple(sorted(dict(value).items(), key=lambda kv: kv[0]))
    except (TypeError, ValueError) as exc:
        msg = f"{field}: expected an object of strings, got {value!r} ({exc})"
        raise SchemaError(msg) from None


@dataclass(frozen=True, slots=True)
class TextPreview:
    """A prompt, an assistant text or a human queued prompt, clipped, without role prefix.

    Examples:
        >>> TextPreview("hi").to_wire()
        {'kind': 'text', 'text': 'hi'}
    """

    text: str
    kind: ClassVar[str] = "text"

    def to_wire(self) -> dict:
        """The JSON object of this preview."""
        return {"kind": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ToolCallPreview:
    """A tool call: the name as invoked, its digest and its rendered summary.

    Examples:
        >>> ToolCallPreview("Bash", "ab12", "ls").to_wire()["summary"]
        'ls'
    """

    name: str
    digest: str
    summary: str
    kind: ClassVar[str] = "tool_call"

    def to_wire(self) -> dict:
        """The JSON object of this preview."""
        return {"digest": self.digest, "kind": "tool_call", "name": self.name, "summary": self.summary}


@dataclass(frozen=True, slots=True)
class Question:
    """One question of an AskUserQuestion call.

    Examples:
        >>> Question("Which DB?", "DB", False, ("Postgres", "SQLite")).labels
        ('Postgres', 'SQLite')
    """

    question: str
    header: str | None
    multi_select: bool
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        if type(self.labels) is not tuple:
            object.__setattr__(self, "labels", tuple(self.labels))

    def to_wire(self) -> dict:
        """The JSON object of this question."""
        return {
            "header": self.header,
            "labels": list(self.labels),
            "multi_select": self.multi_select,
            "question": self.question,
        }


@dataclass(frozen=True, slots=True)
class AskUserQuestionPreview:
    """An AskUserQuestion call: its questions, and the answers and notes of its last result.

    ``selections`` and ``notes`` may be given as mappings; they are kept as key-sorted
    tuples of pairs so that previews stay hashable.

    Examples:
        >>> p = AskUserQuestionPreview((), {"b": "1", "a": "2"}, {})
        >>> p.selections
        (('a', '2'), ('b', '1'))
    """

    questions: tuple[Question, ...]
    selections: Pairs
    notes: Pairs
    kind: ClassVar[str] = "ask_user_question"

    def __post_init__(self) -> None:
        if type(self.questions) is not tuple:
            object.__setattr__(self, "questions", tuple(self.questions))
        for name in ("selections", "notes"):
            value = getattr(self, name)
            if type(value) is not tuple:
                object.__setattr__(self, name, sorted_pairs(value, name))

    def to_wire(self) -> dict:
        """The JSON object of this preview."""
        return {
            "kind": "ask_user_question",
            "notes": dict(self.notes),
            "questions": [q.to_wire() for q in self.questions],
            "selections": dict(self.selections),
        }


Preview = TextPreview | ToolCallPreview | AskUserQuestionPreview


def brief(value: Any) -> str:
    """A short repr of a wire value for error messages (long or deep values are cut).

    Examples:
        >>> brief("x" * 200)[:12], brief([[[[[1]]]]])
        ("'xxxxxxxxxxx", '[[[[...]]]]')
    """
    return _BRIEF.repr(value)


def _require(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        msg = f"{where}: expected an object, got {brief(obj)}"
        raise SchemaError(msg)
    if key not in obj:
        msg = f"{where}: missing key {key!r}"
        raise SchemaError(msg)
    return obj[key]


@overload
def _string(obj: Any, key: str, where: str, *, nullable: Literal[False] = False) -> str: ...
@overload
def _string(obj: Any, key: str, where: str, *, nullable: bool) -> str | None: ...
def _string(obj: Any, key: str, where: str, *, nullable: bool = False) -> str | None:
    value = _require(obj, key, where)
    if isinstance(value, str) or (nullable and value is None):
        return value
    msg = f"{where}.{key}: expected a string{' or null' if nullable else ''}, got {brief(value)}"
    raise SchemaError(msg)


def _one_of(obj: Any, key: str, where: str, allowed: tuple[str, ...]) -> str:
    value = _require(obj, key, where)
    if isinstance(value, str) and value in allowed:
        return value
    msg = f"{where}.{key}: expected {' or '.join(map(repr, allowed))}, got {brief(value)}"
    raise SchemaError(msg)


def _items(value: Any, where: str) -> list:
    if isinstance(value, list):
        return value
    msg = f"{where}: expected an array, got {brief(value)}"
    raise SchemaError(msg)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    items = _items(value, where)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            msg = f"{where}[{i}]: expected a string, got {brief(item)}"
            raise SchemaError(msg)
    return tuple(items)


def _string_map(value: Any, where: str) -> Pairs:
    if not isinstance(value, dict):
        msg = f"{where}: expected an object of strings, got {brief(value)}"
        raise SchemaError(msg)
    for key, item in value.items():
        if not isinstance(item, str):
            msg = f"{where}[{key!r}]: expected a string, got {brief(item)}"
            raise SchemaError(msg)
    return tuple(sorted(value.items()))


def _question(obj: Any, where: str) -> Question:
    question = _string(obj, "question", where)
    header = _string(obj, "header", where, nullable=True)
    multi = _require(obj, "multi_select", where)
    if not isinstance(multi, bool):
        msg = f"{where}.multi_select: expected a boolean, got {brief(multi)}"
        raise SchemaError(msg)
    labels = _strings(_require(obj, "labels", where), f"{where}.labels")
    return Question(question, header, multi, labels)


def preview_from_wire(obj: Any, where: str) -> Preview:
    """Build a typed preview from its JSON object, naming ``where`` in errors."""
    kind = _require(obj, "kind", where)
    if kind == "text" and isinstance(kind, str):
        return TextPreview(_string(obj, "text", where))
    if kind == "tool_call" and isinstance(kind, str):
        name = _string(obj, "name", where)
        digest = _string(obj, "digest", where)
        return ToolCallPreview(name, digest, _string(obj, "summary", where))
    if kind == "ask_user_question" and isinstance(kind, str):
        raw_questions = _items(_require(obj, "questions", where), f"{where}.questions")
        questions = tuple(_question(q, f"{where}.questions[{i}]") for i, q in enumerate(raw_questions))
        selections = _string_map(_require(obj, "selections", where), f"{where}.selections")
        notes = _string_map(_require(obj, "notes", where), f"{where}.notes")
        return AskUserQuestionPreview(questions, selections, notes)
    msg = f"unknown preview kind: {brief(kind)}"
    raise SchemaError(msg)
