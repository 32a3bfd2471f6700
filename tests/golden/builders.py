"""Small builders for Claude Code transcript lines, written as exact JSON text.

Values are plain Python data, plus two helpers for what ``json.dumps`` cannot say:
:class:`Raw` (a verbatim lexeme such as ``1e400`` or ``-0``) and :class:`Obj` (an object
given as pairs, so keys may repeat). Used by ``make_claude_goldens.py`` and by the
differential test's hypothesis strategies.
"""

from __future__ import annotations

import json
from typing import Any

SESSION = "S"
T0 = "2026-03-01T10:00:00.000Z"


class Raw(str):
    """A JSON lexeme written verbatim."""


class Obj(list):
    """A JSON object given as (key, value) pairs; keys may repeat."""


def dump(value: Any) -> str:
    """JSON text without spaces; Raw and Obj are written as they are."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Obj):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + dump(v) for k, v in value) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + dump(v) for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def ts(i: int) -> str:
    return f"2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def envelope(kind: str, uuid: str, i: int, session: str = SESSION, **extra: Any) -> dict:
    line = {"type": kind, "uuid": uuid, "sessionId": session, "timestamp": ts(i)}
    line.update(extra)
    return line


def user(uuid: str, i: int, content: Any, session: str = SESSION, **extra: Any) -> dict:
    return envelope("user", uuid, i, session, message={"role": "user", "content": content}, **extra)


def assistant(
    uuid: str, i: int, blocks: list, session: str = SESSION, model: str = "claude-opus-4-7", **extra: Any
) -> dict:
    message = {"model": model, "content": blocks}
    if "usage" in extra:
        message["usage"] = extra.pop("usage")
    return envelope("assistant", uuid, i, session, message=message, **extra)


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str, tool_input: Any) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def tool_result(tool_id: str, content: Any, *, is_error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def result_line(uuid: str, i: int, blocks: list, payload: Any = None, session: str = SESSION) -> dict:
    line = user(uuid, i, blocks, session)
    if payload is not None:
        line["toolUseResult"] = payload
    return line


def queued(uuid: str, i: int, prompt: Any, mode: Any = "prompt", origin: Any = None, session: str = SESSION) -> dict:
    attachment: dict = {"type": "queued_command", "prompt": prompt, "commandMode": mode}
    if origin is not None:
        attachment["origin"] = origin
    return envelope("attachment", uuid, i, session, attachment=attachment)


def system(uuid: str, i: int, subtype: str = "compact_boundary", session: str = SESSION) -> dict:
    return envelope("system", uuid, i, session, subtype=subtype, content="Conversation compacted")


def usage(n: Any = 10) -> dict:
    return {"input_tokens": n, "output_tokens": n, "cache_read_input_tokens": n, "cache_creation_input_tokens": n}


def jsonl(lines: list[Any]) -> bytes:
    """Lines (dicts, Obj, or already-written str/bytes) as JSONL bytes, LF-terminated."""
    out = []
    for line in lines:
        if isinstance(line, bytes):
            out.append(line)
        elif isinstance(line, str) and not isinstance(line, Raw):
            out.append(line.encode("utf-8", "surrogatepass"))
        else:
            out.append(dump(line).encode("utf-8", "surrogatepass"))
    return b"\n".join(out) + b"\n"
