"""Small builders of ChainlessChain JSONL lines for the ``test_chainless*`` tests."""

from __future__ import annotations

import json
from pathlib import Path

STAMP = 1767225600000  # 2026-01-01T00:00:00Z, in milliseconds


def event(kind: object, data: object, ts: object = STAMP) -> str:
    """One event line; ``kind`` and ``ts`` may be any JSON value, to build bad lines too."""
    return json.dumps({"type": kind, "timestamp": ts, "data": data}, ensure_ascii=False)


def start(model: str = "qwen2.5:7b", provider: str = "ollama") -> str:
    return event("session_start", {"title": "t", "provider": provider, "model": model})


def msg(role: str, content: object, kind: str = "user_message", *, ts: float = STAMP, **extra: object) -> str:
    return event(kind, {"role": role, "content": content, **extra}, ts)


def usage(window: object, **extra: object) -> str:
    """A ``token_usage`` record of gpt-4o (input 5, output 2) recording ``window``."""
    data = {
        "provider": "openai",
        "model": "gpt-4o",
        "usage": {"input_tokens": 5, "output_tokens": 2},
        "contextWindow": window,
    }
    data.update(extra)
    return event("token_usage", data)


def write(tmp: Path, name: str, lines: list[str], *, newline: str = "\n") -> Path:
    path = tmp / f"{name}.jsonl"
    path.write_text(newline.join(lines) + newline, encoding="utf-8")
    return path
