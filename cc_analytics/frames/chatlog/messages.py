"""The chat-log family's intermediate form: a file becomes a :class:`Chat` of
:class:`Message` rows, whatever its format; the :class:`Spec` a format gives the shared code;
and the values a parser reads (counts, usage, Gemini API parts, JSON lines, token estimates).

Imports: orjson, the standard library, ``core.jsontext`` (``compact_json``), ``frames.schema`` and
``frames.lines`` (no Polars: a worker parses here and hands rows on).

Model messages that speak the Gemini API are made of *parts* (text, a ``thought`` flag,
``functionCall``, ``functionResponse``), and their usage counts the prompt (cached input
included), the cached input, the candidates (output, thoughts not included), the thoughts and
the tool-use prompt. Rules every format of the family keeps:

* a request is a model message with usage (any count above 0); a message written again under
  the same id (a ``.jsonl`` that rewrites one as it streams; a record repeated with its
  uuid) is one request, the **last** write wins, within a session (its files in path order);
* shared-schema meaning: ``input_tokens`` = prompt − cached + tool-use prompt (the uncached
  input), ``cache_read_tokens`` = cached (at most the prompt), ``output_tokens`` = candidates
  + thoughts (what is billed as output), ``reasoning_tokens`` = thoughts; no cache writes;
* occupancy (recorded): a request's prompt (cached included) + tool-use prompt, what the model
  read; the window is the one the file records or, when none is, the window of the model's
  name (:attr:`Spec.window_of`, *inferred*);
* a user prompt opens a turn (turn 0 holds what comes before the first); messages a rewind
  removed from the history (``rewound``) stay in events and turns, and their requests count
  (the tokens were spent), but not in the context at the end;
* a file is one session; its session id comes from the file (``Spec.parse``).

Examples:
    >>> usage = Usage(prompt=1000, cached=200, output=100, thoughts=50, tool=7)
    >>> shared_tokens(usage)
    {'input_tokens': 807, 'cache_read_tokens': 200, 'output_tokens': 150, 'reasoning_tokens': 50}
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from cc_analytics.core.jsontext import compact_json
from cc_analytics.frames import schema as S
from cc_analytics.frames.lines import kind_name

if TYPE_CHECKING:
    from cc_analytics.frames.chatlog.verbs import Batches
    from cc_analytics.frames.sources import TranscriptFile

# Roles of a message (the ``role`` column of events).
USER, ASSISTANT, TOOL, SYSTEM = "user", "assistant", "tool", "system"
RECORDED, INFERRED = "recorded", "inferred"

# Problem reasons, each written here and nowhere else.
NOT_JSON = "not JSON ({}); line skipped"
NOT_JSON_FILE = "not JSON ({}); file skipped"
TRUNCATED = "truncated last line (the file may still be being written)"
NOT_OBJECT = "not a JSON object ({}); line skipped"
UNREADABLE = "unreadable: {}"
BAD_COUNT = "{} is {!r}, not a whole number of at least 0; taken as 0"

# Columns of the batch-local frames.
FILE = "file"
INDEX = "index"
TYPE = "type"
TIMESTAMP = "timestamp"
TEXT = "text"
TOOL_CALL_COUNT = "tool_call_count"
PROMPT_TOKENS = "prompt_tokens"
CACHED_TOKENS = "cached_tokens"
CANDIDATES_TOKENS = "candidates_tokens"
THOUGHTS_TOKENS = "thoughts_tokens"
TOOL_PROMPT_TOKENS = "tool_prompt_tokens"
WINDOW_SOURCE = "window_source"
REWOUND = "rewound"
COMPACTION = "compaction"
IS_PROMPT = "is_prompt"
IS_REQUEST = "is_request"
TURN = "turn"
COUNTS = (PROMPT_TOKENS, CACHED_TOKENS, CANDIDATES_TOKENS, THOUGHTS_TOKENS, TOOL_PROMPT_TOKENS)


class Usage(NamedTuple):
    """A model message's usage as the Gemini API counts it (``prompt`` includes ``cached``)."""

    prompt: int = 0
    cached: int = 0
    output: int = 0
    thoughts: int = 0
    tool: int = 0

    @property
    def used(self) -> bool:
        return any(self)


NO_USAGE = Usage()
LEAN = """What a parser may leave out when called with ``lean=True`` (the requests batch): the
text, tool names, tool errors and estimated tokens of every message, and which messages a
rewind removed; the rest (ids, roles, times, models, usage, windows, problems) is what a full
parse gives."""
NAMES_JOIN = "\x1f"  # tool names of a message, joined (the unit separator: in no tool's name)


NO_BUCKETS = (0, 0, 0, 0, 0)  # the estimate buckets of a message without any (what a lean parse makes)


class Message(NamedTuple):
    """One message of a chat, whatever file it came from (the parsers' output)."""

    line: int | None  # the line of a .jsonl (null in a JSON document)
    position: int  # its place among the file's messages, from 0
    id: str | None
    type: str | None  # as written (its format names its types)
    role: str  # USER, ASSISTANT, TOOL or SYSTEM
    time: str | None  # RFC 3339 text as written
    model: str | None
    text: str | None  # a prompt's or an answer's visible text
    tool_names: tuple[str, ...] = ()
    tool_errors: int = 0
    usage: Usage | None = None
    window: int | None = None  # recorded by the file, else inferred from the model
    window_recorded: bool = False
    rewound: bool = False
    compaction: bool = False
    buckets: tuple[int, int, int, int, int] = NO_BUCKETS  # system, user, assistant, tool, tool calls


@dataclass(slots=True)
class Chat:
    """What a parser makes of one file: its session, messages and problems."""

    session_id: str | None = None
    project: str | None = None
    start: str | None = None  # the header's start and last update (RFC 3339 text)
    updated: str | None = None
    messages: list[Message] = field(default_factory=list)
    problems: list[tuple[int | None, str]] = field(default_factory=list)
    events: int = 0  # JSON objects read (lines of a .jsonl; the messages of a document)


def no_window(model: str | None) -> int | None:
    """No window known by the model's name (what a :class:`Spec` assumes unless told)."""
    return None


@dataclass(frozen=True, slots=True)
class Spec:
    """What one format gives the shared code: all that differs between the formats' frames
    (module-level functions: batches are pickled).

    Examples:
        >>> spec = Spec("toy", "Toy", parse=lambda shown, data: Chat(), resolve=lambda source, planned=False: [])
        >>> spec.provider, spec.window_of("toy-1"), spec.default_window
        (None, None, 1048576)
    """

    format: str  # the frames' ``format`` value
    label: str  # what people call the agent (in the verbs' docstrings)
    parse: Callable[..., Chat]  # (shown path, bytes, *, lean=False) -> Chat; lean: requests only (LEAN)
    resolve: Callable[..., list[TranscriptFile]]  # (source, planned=False) -> files
    provider: str | None = None  # the ``provider`` of its requests (None: not recorded)
    window_of: Callable[[str | None], int | None] = no_window  # the window of a model's name
    default_window: int = 1_048_576  # what ``context`` assumes when no window is recorded or known
    batches: Batches | None = None  # its own batch functions (None: the family's, of ``parse``)


# ------------------------------------------------------------------ values


def count(value: Any) -> int | None:
    """A token count as written: a whole number ≥ 0, else None (a float that is whole counts).

    Examples:
        >>> count(12), count(3.0), count(-1), count("7"), count(True)
        (12, 3, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def usage_of(values: dict[str, Any], keys: Sequence[str], problems: list[str]) -> Usage:
    """A :class:`Usage` from the counts named by ``keys`` (prompt, cached, output, thoughts,
    tool); a count that is not a whole number ≥ 0 is 0 and named in ``problems``.

    Examples:
        >>> usage_of({"input": 10, "cached": 4, "output": "x"}, ("input", "cached", "output", "thoughts", "tool"), [])
        Usage(prompt=10, cached=4, output=0, thoughts=0, tool=0)
    """
    out = []
    for key in keys:
        value = values.get(key)
        if value.__class__ is int and value >= 0:  # nearly every count: no call (not a bool)
            out.append(value)
            continue
        number = count(value)
        if number is None and value is not None:
            problems.append(BAD_COUNT.format(key, value))
        out.append(number or 0)
    return Usage(*out)


def shared_tokens(usage: Usage) -> dict[str, int]:
    """The shared requests schema's token columns of one usage (see the module docstring)."""
    cached = min(usage.cached, usage.prompt)
    return {
        S.INPUT_TOKENS: usage.prompt - cached + usage.tool,
        S.CACHE_READ_TOKENS: cached,
        S.OUTPUT_TOKENS: usage.output + usage.thoughts,
        S.REASONING_TOKENS: usage.thoughts,
    }


def parse_line(line: bytes) -> tuple[Any, str | None]:
    """A line's value and None, or None and the reason it is not JSON (orjson first; what it
    refuses is read by the JSON line policy, ``frames.lines.read_line``).

    Examples:
        >>> parse_line(b'{"a":1}')
        ({'a': 1}, None)
        >>> parse_line(b"{not json")[1]
        'not JSON (unexpected character, expected a string key); line skipped'
    """
    try:
        return orjson.loads(line), None
    except orjson.JSONDecodeError:
        pass
    from cc_analytics.frames.lines import read_line
    from cc_analytics.jsonline import LineError

    try:
        return read_line(line), None
    except LineError as error:
        return None, NOT_JSON.format(error)


def lines_of(data: bytes) -> Iterator[bytes]:
    """The lines of ``data`` without their line feed (and trailing CRs), one at a time: a list
    of them all would be a second copy of the file.

    Examples:
        >>> list(lines_of(b"a\\r\\n\\nb"))
        [b'a', b'', b'b']
    """
    start, size = 0, len(data)
    while start <= size:
        end = data.find(b"\n", start)
        if end < 0:
            end = size
        yield data[start:end].rstrip(b"\r")
        start = end + 1


def jsonl_objects(data: bytes, chat: Chat) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every line of a ``.jsonl`` that is a JSON object; the other
    lines become problems of ``chat`` (a last line without its newline that does not parse is
    a truncated line, the agent may be writing it)."""
    torn = 0 if data.endswith(b"\n") else data.count(b"\n") + 1
    for number, line in enumerate(lines_of(data), start=1):
        if not line.strip():
            continue
        value, reason = parse_line(line)
        if reason is not None:
            chat.problems.append((number, TRUNCATED if number == torn else reason))
            continue
        if not isinstance(value, dict):
            chat.problems.append((number, NOT_OBJECT.format(kind_name(value))))
            continue
        chat.events += 1
        yield number, value


def text_tokens(text: str | None) -> int:
    """Estimated tokens of a text (``frames.estimate``), 0 for none."""
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) >> 2
    from cc_analytics.frames.estimate import estimate_text_tokens
    from cc_analytics.frames.estimate import text_tokens as fast

    found = fast(text)
    return estimate_text_tokens(text) if found is None else found


def value_tokens(value: Any) -> int:
    """Estimated tokens of a JSON value (a string as text, anything else as its JSON)."""
    if value is None:
        return 0
    if isinstance(value, str):
        return text_tokens(value)
    try:
        written = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        if written.isascii():  # as many characters as bytes: text_tokens without the decode
            return (len(written) + 3) >> 2
        return text_tokens(written.decode())
    except orjson.JSONEncodeError:  # nested deeper than orjson writes (255 levels), or an integer beyond 64 bits
        return text_tokens(compact_json(value))  # what orjson would write, without those limits


class Parts(NamedTuple):
    """What a list of Gemini API parts holds."""

    text: str | None  # the visible text (thought parts left out)
    tool_names: tuple[str, ...]
    tool_errors: int
    text_tokens: int  # of the visible text and the thoughts
    call_tokens: int  # of the function calls (name and arguments)
    result_tokens: int  # of the function responses


NO_PARTS = Parts(None, (), 0, 0, 0, 0)  # of no parts (and what a lean parse reads)


def read_parts(parts: Any) -> Parts:
    """The text, tool calls and estimated tokens of Gemini API ``parts`` (a list of objects;
    a string counts as one text part).

    Examples:
        >>> read_parts([{"text": "hi"}, {"text": "hmm", "thought": True}, {"functionCall": {"name": "ls", "args": {}}}])[:3]
        ('hi', ('ls',), 0)
    """
    if isinstance(parts, str):
        return Parts(parts, (), 0, text_tokens(parts), 0, 0)
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        return NO_PARTS
    texts: list[str] = []
    names: list[str] = []
    errors = tokens = calls = results = 0
    for part in parts:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str):
            tokens += text_tokens(text)
            if part.get("thought") is not True:
                texts.append(text)
        call = part.get("functionCall")
        if isinstance(call, dict):
            name = call.get("name")
            names.append(name if isinstance(name, str) else "")
            calls += value_tokens(name) + value_tokens(call.get("args"))
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            results += value_tokens(body)
            if isinstance(body, dict) and "error" in body:
                errors += 1
    return Parts("\n".join(texts) if texts else None, tuple(names), errors, tokens, calls, results)


def buckets(role: str, parts: Parts, *, extra_tool: int = 0, extra_calls: int = 0) -> tuple[int, int, int, int, int]:
    """The five estimate buckets (system, user, assistant, tool, tool calls) of one message."""
    system = parts.text_tokens if role == SYSTEM else 0
    user = parts.text_tokens if role == USER else 0
    assistant = parts.text_tokens if role == ASSISTANT else 0
    tool = parts.result_tokens + extra_tool + (parts.text_tokens if role == TOOL else 0)
    return (system, user, assistant, tool, parts.call_tokens + extra_calls)


@functools.lru_cache(maxsize=256)
def window_by_prefix(model: str | None, table: tuple[tuple[str, int], ...]) -> int | None:
    """The window of the first entry of ``table`` whose prefix starts the model's name
    (a provider prefix, ``models/`` or ``google/``, is left out), else None.

    Examples:
        >>> window_by_prefix("models/gemini-2.5-pro", (("gemini-1.5-pro", 2), ("gemini-", 1)))
        1
    """
    if not model:
        return None
    name = model.rsplit("/", 1)[-1].lower()
    return next((window for prefix, window in table if name.startswith(prefix)), None)
