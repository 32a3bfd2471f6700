"""Rendering a turn as text, and its typed previews, in one walk (spec §8 and §10).

Imports: standard library only.
"""

from __future__ import annotations

from typing import Any

from cc_analytics.core.events import ASSISTANT, ATTACHMENT, USER, ToolCall, ToolResult
from cc_analytics.core.ids import clip
from cc_analytics.core.jsontext import MISSING, compact_json
from cc_analytics.core.previews import (
    AskUserQuestionPreview,
    Preview,
    Question,
    TextPreview,
    ToolCallPreview,
)
from cc_analytics.core.turns import Turn

SHAPE_ALIASES = {"Execute": "Bash", "Create": "Write"}
ASK_USER_QUESTION = "AskUserQuestion"


def _hunk(old: str, new: str, limit: int, out: list[str]) -> None:
    for prefix, text in (("- ", old), ("+ ", new)):
        lines = clip(text, limit).splitlines()
        if lines:
            out.extend(prefix + line for line in lines)
        else:
            out.append(prefix.rstrip())


def _spans(edits: Any) -> list[tuple[str, str]] | None:
    if edits == "" and isinstance(edits, str):
        return []
    if isinstance(edits, dict):
        return [] if not edits else None
    if not isinstance(edits, list):
        return None
    spans = []
    for span in edits:
        if not isinstance(span, dict):
            return None
        old, new = span.get("old_string"), span.get("new_string")
        if not (isinstance(old, str) and isinstance(new, str)):
            return None
        spans.append((old, new))
    return spans


def render_tool_call(name: str, tool_input: Any, limit: int) -> str:
    """One tool call as text: Bash, Edit, MultiEdit and Write get their own shape.

    Examples:
        >>> render_tool_call("Bash", {"command": "ls -la"}, 1500)
        'ls -la'
        >>> render_tool_call("Edit", {"file_path": "/a.py", "old_string": "x", "new_string": ""}, 99)
        'Edit /a.py\\n- x\\n+'
        >>> render_tool_call("Frob", {"k": "0123456789abcdef"}, 10)
        'Frob({"k":"0123…(+14ch))'
    """
    if isinstance(tool_input, dict):
        shape = SHAPE_ALIASES.get(name, name)
        get = tool_input.get
        if shape == "Bash":
            command = get("command")
            if isinstance(command, str):
                return clip(command, limit)
        elif shape == "Edit":
            path, old, new = get("file_path"), get("old_string"), get("new_string")
            if isinstance(path, str) and isinstance(old, str) and isinstance(new, str):
                lines = [f"Edit {path}"]
                _hunk(old, new, limit, lines)
                return "\n".join(lines)
        elif shape == "MultiEdit":
            path = get("file_path")
            spans = _spans(get("edits")) if isinstance(path, str) else None
            if spans is not None:
                lines = [f"MultiEdit {path}"]
                for i, (old, new) in enumerate(spans, 1):
                    lines.append(f"edit {i}/{len(spans)}")
                    _hunk(old, new, limit, lines)
                return "\n".join(lines)
        elif shape == "Write":
            path, content = get("file_path"), get("content")
            if isinstance(path, str) and isinstance(content, str):
                return f"Write {path}\n{clip(content, limit)}"
    return f"{name}({clip(compact_json(tool_input), limit)})"


def answer_lines(result: ToolResult, t: int, k: int) -> list[str]:
    """The ``user answered:`` lines of one AskUserQuestion result (spec §8.3)."""
    payload = result.payload
    if not isinstance(payload, dict):
        return [f"user answered: {clip(result.content, k)}"]
    answers = payload.get("answers")
    if not isinstance(answers, dict):
        return []
    questions = payload.get("questions")
    annotations = payload.get("annotations")
    lines = []
    for question, answer in answers.items():
        if not isinstance(answer, str):
            continue
        lines.append(f"user answered: {clip(question, t)} -> {clip(answer, t)}")
        option = None
        if isinstance(questions, list):
            for entry in questions:
                if isinstance(entry, dict) and entry.get("question") == question:
                    options = entry.get("options")
                    if isinstance(options, list):
                        for item in options:
                            if isinstance(item, dict) and item.get("label") == answer:
                                option = item
                                break
                    break
        note = annotations.get(question) if isinstance(annotations, dict) else None
        if not isinstance(note, dict):
            note = {}
        if option is not None and isinstance(option.get("description"), str):
            lines.append(f"  option: {clip(option['description'], t)}")
        preview = note.get("preview")
        if not isinstance(preview, str) and option is not None:
            preview = option.get("preview")
        if isinstance(preview, str):
            lines.append(f"  preview: {clip(preview, k)}")
        if isinstance(note.get("notes"), str):
            lines.append(f"  notes: {clip(note['notes'], t)}")
    return lines


def ask_preview(call: ToolCall, payload: Any) -> AskUserQuestionPreview:
    """The typed preview of an AskUserQuestion call, given its session-wide last result."""
    tool_input = call.input
    entries = tool_input.get("questions") if isinstance(tool_input, dict) else None
    questions = []
    if isinstance(entries, list):
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("question"), str):
                continue
            header = entry.get("header")
            options = entry.get("options")
            labels = ()
            if isinstance(options, list):
                labels = tuple(o["label"] for o in options if isinstance(o, dict) and isinstance(o.get("label"), str))
            questions.append(
                Question(
                    entry["question"],
                    header if isinstance(header, str) else None,
                    entry.get("multiSelect") is True,
                    labels,
                )
            )
    selections: dict = {}
    notes: dict = {}
    if isinstance(payload, dict):
        answers = payload.get("answers")
        if isinstance(answers, dict):
            selections = {q: a for q, a in answers.items() if isinstance(a, str)}
        annotations = payload.get("annotations")
        if isinstance(annotations, dict):
            notes = {
                q: a["notes"] for q, a in annotations.items() if isinstance(a, dict) and isinstance(a.get("notes"), str)
            }
    return AskUserQuestionPreview(tuple(questions), selections, notes)  # type: ignore[arg-type]  # mappings become sorted pairs in __post_init__


def walk_turn(
    turn: Turn,
    t: int,
    k: int,
    *,
    digest=None,
    last_results: dict[str, Any] | None = None,
) -> tuple[list[str], list[Preview]]:
    """Render a turn into parts, and (when ``digest`` is given) its typed previews.

    ``digest`` maps a ToolCall to its digest; ``last_results`` maps a tool_use id to the
    ``toolUseResult`` payload of the session's last result block for it.
    """
    parts: list[str] = []
    previews: list[Preview] = []
    typed = digest is not None
    if turn.prompt:
        text = clip(turn.prompt, t)
        parts.append("user: " + text)
        if typed:
            previews.append(TextPreview(text))
    asked: set[str] = set()
    for event in turn.events:
        kind = event.kind
        if kind == ASSISTANT:
            for item in event.items:
                if type(item) is str:
                    if item.strip():
                        text = clip(item, t)
                        parts.append("assistant: " + text)
                        if typed:
                            previews.append(TextPreview(text))
                    continue
                summary = render_tool_call(item.name, item.input, k)
                parts.append(summary)
                if item.name == ASK_USER_QUESTION:
                    asked.add(item.id)
                    if typed:
                        payload = last_results.get(item.id, MISSING) if last_results else MISSING
                        previews.append(ask_preview(item, payload))
                elif typed:
                    previews.append(ToolCallPreview(item.name, digest(item), summary))
        elif kind == USER:
            if asked:
                for result in event.items:
                    if result.tool_use_id in asked and not result.is_error:
                        parts.extend(answer_lines(result, t, k))
        elif kind == ATTACHMENT and event.items:
            label, prompt = event.items[0]
            text = clip(prompt, t)
            parts.append(f"{label}: {text}")
            if typed and label == "user":
                previews.append(TextPreview(text))
    return parts, previews


def render_turn(turn: Turn, t: int, k: int) -> str:
    """The full-fidelity text of one turn with prose budget ``t`` and tool budget ``k``."""
    return "\n".join(walk_turn(turn, t, k)[0])
