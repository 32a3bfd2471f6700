"""Typed previews of ``cc-transcript.preview/1``: text, tool call and AskUserQuestion (spec §10).

Imports: standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from cc_analytics.errors import SchemaError

Pairs = tuple[tuple[Any, Any], ...]


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


def _require(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        msg = f"{where}: expected an object, got {obj!r}"
        raise SchemaError(msg)
    if key not in obj:
        msg = f"{where}: missing key {key!r}"
        raise SchemaError(msg)
    return obj[key]


def _items(value: Any, where: str) -> list:
    if isinstance(value, str | list | dict):
        return list(value)
    msg = f"{where}: expected an array, got {value!r}"
    raise SchemaError(msg)


def _question(obj: Any, where: str) -> Question:
    question = _require(obj, "question", where)
    header = _require(obj, "header", where)
    multi = _require(obj, "multi_select", where)
    labels = _items(_require(obj, "labels", where), f"{where}.labels")
    if not isinstance(question, str):
        msg = f"{where}.question: expected a string, got {question!r}"
        raise SchemaError(msg)
    if header is not None and not isinstance(header, str):
        msg = f"{where}.header: expected a string or null, got {header!r}"
        raise SchemaError(msg)
    if not isinstance(multi, bool):
        msg = f"{where}.multi_select: expected a boolean, got {multi!r}"
        raise SchemaError(msg)
    for label in labels:
        if not isinstance(label, str):
            msg = f"{where}.labels: expected strings, got {label!r}"
            raise SchemaError(msg)
    return Question(question, header, multi, tuple(labels))


def preview_from_wire(obj: Any, where: str) -> Preview:
    """Build a typed preview from its JSON object, naming ``where`` in errors."""
    kind = _require(obj, "kind", where)
    if kind == "text" and isinstance(kind, str):
        return TextPreview(_require(obj, "text", where))
    if kind == "tool_call" and isinstance(kind, str):
        name = _require(obj, "name", where)
        digest = _require(obj, "digest", where)
        return ToolCallPreview(name, digest, _require(obj, "summary", where))
    if kind == "ask_user_question" and isinstance(kind, str):
        raw_questions = _items(_require(obj, "questions", where), f"{where}.questions")
        questions = tuple(_question(q, f"{where}.questions[{i}]") for i, q in enumerate(raw_questions))
        selections = sorted_pairs(_require(obj, "selections", where), f"{where}.selections")
        notes = sorted_pairs(_require(obj, "notes", where), f"{where}.notes")
        return AskUserQuestionPreview(questions, selections, notes)
    msg = f"unknown preview kind: {kind!r}"
    raise SchemaError(msg)
