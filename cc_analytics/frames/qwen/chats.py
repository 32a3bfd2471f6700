"""A Qwen Code chat file as messages.

Imports: the standard library and ``frames.chatlog.messages`` (no Polars: a worker parses here and
hands the messages on). Rules:

* one record per line (``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``, ``type``,
  ``cwd``, ``model``, ``message`` with Gemini API ``parts``); a line that is not a JSON object
  is a problem row, the rest is read;
* ``type`` ``user`` is a prompt (its text is ``systemPayload.displayText`` when there is one:
  what the user typed, without the context hooks added), ``assistant`` the model's answer
  (thought parts are its reasoning), ``tool_result`` a tool's output (``toolCallResult``
  ``status`` ``error`` is a tool error), ``system`` a notice (``subtype``
  ``chat_compression`` is a compaction; ``ui_telemetry`` records are telemetry, not usage);
* usage is the ``usageMetadata`` of an assistant record (``promptTokenCount`` with
  ``cachedContentTokenCount`` included, ``candidatesTokenCount``, ``thoughtsTokenCount``,
  ``toolUsePromptTokenCount``); a record written again under its ``uuid`` replaces the
  earlier write in place (the last write wins);
* the window is the record's ``contextWindowSize`` when above 0 (*recorded*), else inferred
  from the model's name (:data:`WINDOWS`);
* the history is the chain of ``parentUuid`` links from the last prompt, answer or tool
  result: records before that one and off its chain were rewound (a ``rewind`` record, or an
  edit), and stay as events, ``rewound`` (their usage counts: the tokens were spent);
* a record naming another ``sessionId`` than the file's first is counted in the file's
  session, and said once as a problem of the file.

Examples:
    >>> chat = parse("s.jsonl", b'{"uuid":"a","sessionId":"s","type":"assistant","model":"m","contextWindowSize":131072,'
    ...     b'"usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4,"candidatesTokenCount":2},'
    ...     b'"message":{"role":"model","parts":[{"text":"hi"}]}}\\n')
    >>> [(m.id, m.usage.prompt, m.usage.cached, m.window, m.window_recorded) for m in chat.messages]
    [('a', 10, 4, 131072, True)]
"""

from __future__ import annotations

from typing import Any

from cc_analytics.frames.chatlog.messages import (
    ASSISTANT,
    NO_PARTS,
    SYSTEM,
    TOOL,
    USER,
    Chat,
    Message,
    buckets,
    count,
    jsonl_objects,
    read_parts,
    usage_of,
    window_by_prefix,
)

ROLES = {"user": USER, "assistant": ASSISTANT, "tool_result": TOOL, "system": SYSTEM}
CHAIN_ROLES = frozenset({USER, ASSISTANT, TOOL})
USAGE_KEYS = (
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
)
WINDOWS = (("qwen3-coder-plus", 1_000_000), ("qwen3-coder-flash", 1_000_000))
"""Context windows by model name prefix, for records without ``contextWindowSize``."""
COMPRESSION = "chat_compression"
OTHER_SESSION = "records of another session ({!r}) in this file; counted in the file's session"


def window_of(model: str | None) -> int | None:
    """The window of a model Qwen Code names, by its name (None: not known).

    Examples:
        >>> window_of("qwen3-coder-plus"), window_of("coder-model")
        (1000000, None)
    """
    return window_by_prefix(model, WINDOWS)


def parse(shown: str, data: bytes, *, lean: bool = False) -> Chat:
    """The :class:`Chat` of one ``.jsonl`` file (``lean``: no text, tool names or estimates,
    ``frames.chatlog.messages.LEAN``)."""
    chat = Chat()
    where: dict[str, int] = {}
    parents: list[str | None] = []
    others: list[str] = []
    for number, value in jsonl_objects(data, chat):
        session = value.get("sessionId")
        if isinstance(session, str):
            if chat.session_id is None:
                chat.session_id = session
            elif session != chat.session_id and session not in others:
                others.append(session)
        cwd = value.get("cwd")
        if chat.project is None and isinstance(cwd, str) and cwd.startswith(("/", "~")) or _drive(cwd):
            chat.project = cwd
        stamp = value.get("timestamp")
        if isinstance(stamp, str):
            chat.start = chat.start or stamp
        identifier = value.get("uuid")
        identifier = identifier if isinstance(identifier, str) else None
        parent = value.get("parentUuid")
        place = where.get(identifier) if identifier is not None else None
        if place is None:
            if identifier is not None:
                where[identifier] = len(chat.messages)
            chat.messages.append(message(value, number, len(chat.messages), chat, lean=lean))
            parents.append(parent if isinstance(parent, str) else None)
        else:
            chat.messages[place] = message(value, number, place, chat, lean=lean)
            parents[place] = parent if isinstance(parent, str) else None
    chat.problems.extend((None, OTHER_SESSION.format(session)) for session in others)
    if not lean:  # no request depends on it
        _mark_rewound(chat, where, parents)
    return chat


def _drive(cwd: Any) -> bool:
    return isinstance(cwd, str) and len(cwd) > 2 and cwd[1] == ":" and cwd[0].isalpha()


def _mark_rewound(chat: Chat, where: dict[str, int], parents: list[str | None]) -> None:
    """Mark the records before the last prompt, answer or tool result that are not on its chain."""
    leaf = next((i for i in range(len(chat.messages) - 1, -1, -1) if chat.messages[i].role in CHAIN_ROLES), None)
    if leaf is None:
        return
    chain: set[int] = set()
    at: int | None = leaf
    while at is not None and at not in chain:
        chain.add(at)
        parent = parents[at]
        at = where.get(parent) if parent is not None else None
    for index in range(leaf):
        if index not in chain and chat.messages[index].id is not None:
            chat.messages[index] = chat.messages[index]._replace(rewound=True)


def message(value: dict[str, Any], line: int, index: int, chat: Chat, *, lean: bool = False) -> Message:
    """One record of a chat (``lean``: without its text, tools and estimates)."""
    kind = value.get("type")
    role = ROLES.get(kind, SYSTEM) if isinstance(kind, str) else SYSTEM
    body = value.get("message")
    parts = NO_PARTS if lean else read_parts(body.get("parts") if isinstance(body, dict) else None)
    text = parts.text
    payload = value.get("systemPayload")
    if role == USER and isinstance(payload, dict) and isinstance(payload.get("displayText"), str):
        text = payload["displayText"]
    errors = parts.tool_errors
    result = value.get("toolCallResult")
    if isinstance(result, dict) and result.get("status") == "error":
        errors = max(errors, 1)
    usage = None
    metadata = value.get("usageMetadata")
    if role == ASSISTANT and isinstance(metadata, dict):
        bad: list[str] = []
        usage = usage_of(metadata, USAGE_KEYS, bad)
        if bad:
            chat.problems.extend((line, f"usageMetadata.{reason}") for reason in bad)
    model = value.get("model")
    model = model if isinstance(model, str) and model else None
    recorded = count(value.get("contextWindowSize"))
    window = recorded if recorded else window_of(model)
    stamp = value.get("timestamp")
    identifier = value.get("uuid")
    return Message(
        line,
        index,
        identifier if isinstance(identifier, str) else None,
        kind if isinstance(kind, str) else None,
        role,
        stamp if isinstance(stamp, str) else None,
        model,
        text,
        parts.tool_names,
        errors,
        usage,
        window,
        bool(recorded),
        False,
        role == SYSTEM and value.get("subtype") == COMPRESSION,
        buckets(role, parts),
    )
