"""Small builders of Claude Code JSONL lines for the ``claude_*`` frame tests."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

SESSION = "11111111-2222-4333-8444-555555555555"
_counter = itertools.count(1)


def _stamp(second: int) -> str:
    return f"2026-03-01T10:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def envelope(
    kind: str, *, uuid: str | None = None, session: str = SESSION, second: int = 0, **extra: Any
) -> dict[str, Any]:
    line: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/demo",
        "sessionId": session,
        "version": "2.1.40",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid or f"uuid-{next(_counter)}",
        "timestamp": _stamp(second),
    }
    line.update(extra)
    return line


def user(text: Any, **extra: Any) -> dict[str, Any]:
    return envelope("user", message={"role": "user", "content": text}, **extra)


def tool_result(tool_id: str, content: Any, *, is_error: bool = False, **extra: Any) -> dict[str, Any]:
    block = {
        "type": "tool_result",
        "tool_use_id": tool_id,
        "content": content,
        "is_error": is_error,
    }
    return envelope("user", message={"role": "user", "content": [block]}, **extra)


def usage(inp: int = 10, create: int = 100, read: int = 1000, out: int = 5) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "output_tokens": out,
    }


def assistant(
    blocks: list[dict[str, Any]],
    *,
    model: str = "claude-opus-4-5",
    message_id: str | None = None,
    request_id: str | None = None,
    tokens: dict[str, int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    number = next(_counter)
    message = {
        "model": model,
        "id": message_id or f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": None,
        "usage": tokens if tokens is not None else usage(),
    }
    return envelope("assistant", message=message, requestId=request_id or f"req_{number}", **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "c2lnbmF0dXJl" * 20}


def tool_use(tool_id: str, name: str, payload: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": payload}


def compact_boundary(pre_tokens: int, trigger: str = "auto", **extra: Any) -> dict[str, Any]:
    return envelope(
        "system",
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": trigger, "preTokens": pre_tokens},
        **extra,
    )


def jsonl(*lines: dict[str, Any] | str | bytes) -> bytes:
    out = bytearray()
    for line in lines:
        if isinstance(line, bytes):
            out += line + b"\n"
        elif isinstance(line, str):
            out += line.encode() + b"\n"
        else:
            out += json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    return bytes(out)


def write(path: Path, *lines: dict[str, Any] | str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jsonl(*lines))
    return path
