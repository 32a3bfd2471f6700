"""A Gemini CLI chat file as messages: the ``.json`` document and the ``.jsonl`` log.

Imports: orjson, the standard library and ``frames.chatlog.messages`` (no Polars: a worker parses
here and hands the messages on). Rules:

* a ``.json`` file is one document: ``sessionId``, ``projectHash``, ``startTime``,
  ``lastUpdated`` and ``messages``; a file that is not JSON, or not an object, is one problem
  row (``line`` null), and a message that is not an object is skipped;
* a ``.jsonl`` file is read line by line: the first object without ``id`` and ``type`` (and
  without ``$set``/``$rewindTo``) is the header; ``{"$set": {...}}`` patches the header;
  ``{"$rewindTo": id}`` removes the message of that id and every later one from the history
  (they stay as events, ``rewound``; their requests count: the tokens were spent); a message
  written again under its id replaces the earlier write in place (the last write wins);
* each message: ``type`` ``user`` is a prompt, ``gemini`` (``model`` in older files) the
  model's answer, ``info``/``error``/``warning`` notices; ``content`` (a string or parts;
  ``parts`` in older files) its text; ``toolCalls`` its tool calls (name, ``args``,
  ``result`` parts, ``status`` ``error`` counted as a tool error); ``thoughts`` its
  reasoning summaries; ``tokens`` (``input`` with ``cached`` included, ``output``,
  ``cached``, ``thoughts``, ``tool``, ``total``) its usage; ``model`` its model;
* the window is inferred from the model's name (:data:`WINDOWS`): Gemini CLI records none.

Examples:
    >>> chat = parse("s.jsonl", b'{"sessionId":"s","projectHash":"h"}\\n'
    ...     b'{"id":"a","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":10,"cached":4,"output":2}}\\n'
    ...     b'{"id":"a","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":12,"cached":4,"output":3}}\\n')
    >>> [(m.id, m.usage.prompt, m.window) for m in chat.messages]
    [('a', 12, 1048576)]
"""

from __future__ import annotations

from typing import Any

import orjson

from cc_analytics.frames.chatlog.messages import (
    ASSISTANT,
    NO_BUCKETS,
    NO_PARTS,
    NOT_JSON_FILE,
    SYSTEM,
    USER,
    Chat,
    Message,
    Parts,
    buckets,
    jsonl_objects,
    read_parts,
    usage_of,
    value_tokens,
    window_by_prefix,
)
from cc_analytics.frames.lines import kind_name

ROLES = {"user": USER, "gemini": ASSISTANT, "model": ASSISTANT}
TOKEN_KEYS = ("input", "cached", "output", "thoughts", "tool")
WINDOWS = (
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.0", 32_760),
    ("gemini-pro", 32_760),
    ("gemini-", 1_048_576),
)
"""Context windows by model name prefix (first match): what Gemini's model pages state."""
NOT_A_CHAT = "not a Gemini CLI chat (a JSON document is {}, not an object with messages); file skipped"
NO_MESSAGES = "no messages array (its keys: {}); file read as a chat without messages"
BAD_MESSAGE = "message {} is {}, not an object; skipped"
SET_ = "$set"
REWIND = "$rewindTo"


def window_of(model: str | None) -> int | None:
    """The window of a Gemini model, by its name (None: not a Gemini model).

    Examples:
        >>> window_of("gemini-3-flash-preview"), window_of("gemini-1.5-pro-002"), window_of("gpt-5")
        (1048576, 2097152, None)
    """
    return window_by_prefix(model, WINDOWS)


def parse(shown: str, data: bytes, *, lean: bool = False) -> Chat:
    """The :class:`Chat` of one file: a ``.jsonl`` log when its name says so, else a document
    (``lean``: no text, tool names or estimates, ``frames.chatlog.messages.LEAN``)."""
    if shown.endswith(".jsonl"):
        return parse_log(data, lean=lean)
    return parse_document(data, lean=lean)


def _header(chat: Chat, value: dict[str, Any]) -> None:
    session = value.get("sessionId")
    if isinstance(session, str):
        chat.session_id = session
    start, updated = value.get("startTime"), value.get("lastUpdated")
    if isinstance(start, str):
        chat.start = start
    if isinstance(updated, str):
        chat.updated = updated


def parse_document(data: bytes, *, lean: bool = False) -> Chat:
    """A ``session-*.json`` document."""
    chat = Chat()
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        chat.problems.append((None, NOT_JSON_FILE.format(error.msg)))
        return chat
    if not isinstance(value, dict):
        chat.problems.append((None, NOT_A_CHAT.format(kind_name(value))))
        return chat
    _header(chat, value)
    messages = value.get("messages")
    if not isinstance(messages, list):
        chat.problems.append((None, NO_MESSAGES.format(", ".join(map(repr, list(value)[:8])))))
        return chat
    for position, item in enumerate(messages):
        if not isinstance(item, dict):
            chat.problems.append((None, BAD_MESSAGE.format(position + 1, kind_name(item))))
            continue
        chat.events += 1
        chat.messages.append(message(item, None, len(chat.messages), chat, lean=lean))
    return chat


def parse_log(data: bytes, *, lean: bool = False) -> Chat:
    """A ``session-*.jsonl`` log (0.40 and later)."""
    chat = Chat()
    where: dict[str, int] = {}  # message id -> its place in chat.messages
    for number, value in jsonl_objects(data, chat):
        if SET_ in value:
            patch = value[SET_]
            if isinstance(patch, dict):
                _header(chat, patch)
            continue
        if REWIND in value:
            target = value[REWIND]
            place = where.get(target) if isinstance(target, str) else None
            if place is not None:
                for index in range(place, len(chat.messages)):
                    chat.messages[index] = chat.messages[index]._replace(rewound=True)
                where = {key: at for key, at in where.items() if at < place}
            continue
        if "type" not in value and "id" not in value:
            _header(chat, value)
            continue
        identifier = value.get("id")
        place = where.get(identifier) if isinstance(identifier, str) else None
        if place is None:
            built = message(value, number, len(chat.messages), chat, lean=lean)
            if isinstance(identifier, str):
                where[identifier] = len(chat.messages)
            chat.messages.append(built)
        else:
            chat.messages[place] = message(value, number, place, chat, lean=lean)
    return chat


def _spoken(value: dict[str, Any], role: str) -> tuple[Parts, list[str], int, tuple[int, int, int, int, int]]:
    """A message's parts, tool names, tool errors and estimate buckets (its calls and thoughts counted)."""
    parts = read_parts(value.get("content", value.get("parts")))
    names = list(parts.tool_names)
    errors = parts.tool_errors
    call_tokens = result_tokens = thought_tokens = 0
    calls = value.get("toolCalls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                continue
            name = call.get("name")
            names.append(name if isinstance(name, str) else "")
            errors += call.get("status") == "error"
            call_tokens += value_tokens(name) + value_tokens(call.get("args"))
            result = call.get("result")
            result_tokens += read_parts(result).result_tokens if isinstance(result, list) else value_tokens(result)
    thoughts = value.get("thoughts")
    if isinstance(thoughts, list):
        for thought in thoughts:
            if isinstance(thought, dict):
                thought_tokens += value_tokens(thought.get("subject")) + value_tokens(thought.get("description"))
    bucketed = buckets(role, parts, extra_tool=result_tokens, extra_calls=call_tokens)
    if thought_tokens:
        bucketed = (bucketed[0], bucketed[1], bucketed[2] + thought_tokens, bucketed[3], bucketed[4])
    return parts, names, errors, bucketed


def message(value: dict[str, Any], line: int | None, index: int, chat: Chat, *, lean: bool = False) -> Message:
    """One message of a chat (``lean``: without its text, tools and estimates)."""
    kind = value.get("type")
    role = ROLES.get(kind, SYSTEM) if isinstance(kind, str) else SYSTEM
    names: list[str]
    if lean:  # no text, tools nor estimates (most of a message's walk)
        parts, names, errors, bucketed = NO_PARTS, [], 0, NO_BUCKETS
    else:
        parts, names, errors, bucketed = _spoken(value, role)
    usage = None
    tokens = value.get("tokens")
    if isinstance(tokens, dict):
        bad: list[str] = []
        usage = usage_of(tokens, TOKEN_KEYS, bad)
        if bad:
            chat.problems.extend((line, f"tokens.{reason}") for reason in bad)
    model = value.get("model")
    model = model if isinstance(model, str) and model else None
    stamp = value.get("timestamp")
    identifier = value.get("id")
    window = window_of(model)
    return Message(
        line,
        index,
        identifier if isinstance(identifier, str) else None,
        kind if isinstance(kind, str) else None,
        role,
        stamp if isinstance(stamp, str) else None,
        model,
        parts.text,
        tuple(names),
        errors,
        usage,
        window,
        False,
        False,
        False,
        bucketed,
    )
