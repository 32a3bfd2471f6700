"""The one JSON line policy: how every decoder of every format reads one line of JSONL.

Imports: the standard library only. The core reads lines with it directly; the frames
decoders read them through ``frames.lines``, which puts orjson in front and takes orjson's
reading only where :func:`agrees` proves it is this module's; the C skimmer of the Claude
Code walker holds the same two numbers (``MAX_DEPTH``, ``DUPLICATE_KEYS``, checked equal by
a test) and hands every other line to Python.

The rules, the same whatever the line's length and however deep the caller's stack:

* **Text.** UTF-8, never with a byte-order mark (it is not stripped: the line breaks). Under
  :data:`STRICT` (RFC 8259, as the Claude Code reference reads) invalid UTF-8 and a lone
  surrogate escape (``"\\ud800"``) break the line; under :data:`ECMASCRIPT` (``JSON.parse``
  of the text decoded with U+FFFD for invalid bytes, as ChainlessChain reads) both are kept.
* **Grammar.** RFC 8259: no ``NaN``/``Infinity`` literals, trailing commas, single quotes,
  raw control characters in strings, or anything after the value.
* **Depth.** At most :data:`MAX_DEPTH` nested arrays and objects; read without recursion.
* **Duplicate keys.** The first occurrence wins (:data:`DUPLICATE_KEYS`), at its position,
  as the Claude Code reference reads its fields; the last wins inside the values under a key
  of :attr:`Rules.last_wins_under` (values the reference stores as JSON, with Python dict
  semantics) and everywhere under :data:`ECMASCRIPT` (``JSON.parse``).
* **Integers** are exact at any length: an ``int``, or a :class:`LongInt` (its lexeme) past
  the digits ``int()`` converts; never a float. Under :data:`ECMASCRIPT` a :class:`LongInt`
  (at least 10^4300) is the ±infinity ``JSON.parse`` gives; its consumers read the others
  as doubles.
* **Non-finite numbers.** The literals break the line; a number beyond the double range
  (``1e400``) reads as ±infinity, as strict parsers read it.
* **A line that breaks a rule** raises :class:`LineError` with the reason (a decoder's
  problem row); nothing else is ever raised for any bytes (no RecursionError).

Examples:
    >>> decode(b'{"model":"a","model":"b","input":{"k":1,"k":2}}', Rules(last_wins_under=frozenset({"input"})))
    {'model': 'a', 'input': {'k': 2}}
    >>> decode(b'{"a":1,"a":2}', ECMASCRIPT), decode(b'[1e400, 123456789012345678901234567890]')
    ({'a': 2}, [inf, 123456789012345678901234567890])
    >>> safe_loads(b"[" * 30_000 + b"]" * 30_000) is None, safe_loads(b"NaN") is None
    (True, True)
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # C-accelerated
from typing import Any, NamedTuple

# The Claude Code reference's native parser overflows its stack (a segfault) a little beyond
# 25,000 levels on the default 8 MiB stack, and reads any line up to there: the core must read
# them too. One limit for every format keeps the frames and the core reading the same lines.
MAX_DEPTH = 25_000
FIRST = "first"
LAST = "last"
DUPLICATE_KEYS = FIRST
BOM = b"\xef\xbb\xbf"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_INFINITY = float("inf")


class Rules(NamedTuple):
    """How a format's lines are read where the formats' specifications differ.

    ``duplicate_keys``: :data:`FIRST` or :data:`LAST`; ``last_wins_under``: keys whose values
    keep the last of a repeated key at every depth (with ``FIRST``); ``ecmascript``: text as
    ``JSON.parse`` reads it (invalid UTF-8 replaced, lone surrogates kept, see the module).
    """

    duplicate_keys: str = DUPLICATE_KEYS
    last_wins_under: frozenset[str] = frozenset()
    ecmascript: bool = False


STRICT = Rules()
ECMASCRIPT = Rules(duplicate_keys=LAST, ecmascript=True)


class LineError(ValueError):
    """A line that breaks a rule of the policy; ``reason`` says which (for a problem row).

    ``too_deep`` tells the depth rule from the others (a syntax error, whatever its cause).
    """

    def __init__(self, reason: str, *, too_deep: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_deep = too_deep


class DupDict(dict):
    """A JSON object that repeated a key: dict semantics (last value wins, first position kept),
    plus ``first``, the first value of every key. :func:`parse_text` builds them; :func:`settle`
    replaces them by plain dicts as the rules say (the core reads them as they are)."""

    __slots__ = ("first",)
    first: dict[str, Any]


class LongInt:
    """A JSON integer with more digits than ``int()`` accepts (``sys.get_int_max_str_digits``).

    Kept as its lexeme: nothing a decoder reads needs its value, and converting it would
    take time quadratic in its length.

    Examples:
        >>> LongInt("9" * 5000) == LongInt("9" * 5000), len(LongInt("9" * 5000).text)
        (True, 5000)
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return type(other) is LongInt and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"LongInt({self.text[:20]!r}…, {len(self.text)} digits)"


def _pairs_to_dict(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    dup = DupDict(obj)
    first: dict[str, Any] = {}
    for key, value in pairs:
        first.setdefault(key, value)
    dup.first = first
    return dup


def _reject_constant(name: str) -> Any:
    msg = f"non-standard JSON constant {name!r}"
    raise ValueError(msg)


def _int_or_long(lexeme: str) -> int | LongInt:
    try:
        return int(lexeme)
    except ValueError:
        return LongInt(lexeme)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_to_dict, parse_constant=_reject_constant)
_decode = _DECODER.decode
_scan_scalar = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_int_or_long).scan_once  # type: ignore[attr-defined]


class _TooDeep(Exception):
    pass


def _skip(text: str, idx: int) -> int:
    """The index of the first non-whitespace character at or after ``idx``."""
    match = _WHITESPACE.match(text, idx)  # ``[ \t\n\r]*`` matches everywhere, even empty
    assert match is not None
    return match.end()


def _object_key(text: str, idx: int) -> tuple[str, int]:
    if text[idx : idx + 1] != '"':
        msg = f"expected a key at {idx}"
        raise ValueError(msg)
    key, idx = scanstring(text, idx + 1, True)
    idx = _skip(text, idx)
    if text[idx : idx + 1] != ":":
        msg = f"expected ':' at {idx}"
        raise ValueError(msg)
    return key, _skip(text, idx + 1)


def _decode_any_depth(text: str) -> Any:
    """``_decode`` without recursion and without ``int()``'s digit limit.

    Containers are kept on an explicit stack (at most ``MAX_DEPTH`` deep, else ``_TooDeep``);
    scalars are read by the C scanner, so every value is the one ``json`` would build.
    Raises ValueError when the text is not strict JSON.
    """
    skip = _skip
    stack: list[list] = []  # [items, is_object, pending key]
    idx = skip(text, 0)
    while True:
        ch = text[idx : idx + 1]
        if ch == "[" or ch == "{":
            if len(stack) >= MAX_DEPTH:
                raise _TooDeep
            idx = skip(text, idx + 1)
            if text[idx : idx + 1] == ("]" if ch == "[" else "}"):
                value: Any = [] if ch == "[" else {}
                idx += 1
            elif ch == "[":
                stack.append([[], False, None])
                continue
            else:
                key, idx = _object_key(text, idx)
                stack.append([[], True, key])
                continue
        else:
            try:
                value, idx = _scan_scalar(text, idx)
            except StopIteration:
                msg = f"expected a value at {idx}"
                raise ValueError(msg) from None
        while stack:  # hand the finished value to its container, closing those that end here
            frame = stack[-1]
            items, is_object, key = frame
            items.append((key, value) if is_object else value)
            idx = skip(text, idx)
            ch = text[idx : idx + 1]
            if ch == ",":
                idx = skip(text, idx + 1)
                if is_object:
                    frame[2], idx = _object_key(text, idx)
                break
            if ch != ("}" if is_object else "]"):
                msg = f"expected ',' or a closing bracket at {idx}"
                raise ValueError(msg)
            idx += 1
            stack.pop()
            value = _pairs_to_dict(items) if is_object else items
        else:
            if skip(text, idx) != len(text):
                msg = f"extra data at {idx}"
                raise ValueError(msg)
            return value


def has_lone_surrogate(text: str) -> bool:
    """Whether a string literal of valid JSON text escapes half a surrogate pair.

    Read from the text, so that a shadowed duplicate key's value counts too.

    Examples:
        >>> has_lone_surrogate('["\\\\ud83d\\\\ude00"]'), has_lone_surrogate('{"a":"\\\\ud800","a":1}')
        (False, True)
    """
    if "\\u" not in text or not _SURROGATE_ESCAPE.search(text):
        return False
    for match in _STRING_LITERAL.finditer(text):
        literal = match.group()
        if _SURROGATE_ESCAPE.search(literal) and _SURROGATE.search(scanstring(literal, 1, True)[0]):
            return True
    return False


def parse_text(text: str) -> Any:
    """The JSON value of decoded text, objects that repeat a key as :class:`DupDict`.

    The grammar, depth and number rules of the policy (not the text rules: see
    :func:`decode`). The standard library's C decoder reads most lines; a line it gives up
    on (nested deeper than the interpreter's stack, an integer past ``int()``'s digits) is
    read again without recursion. Raises :class:`LineError`.

    Examples:
        >>> parse_text('{"a": [1, 2.5]}'), parse_text('{"a":1,"a":2}').first
        ({'a': [1, 2.5]}, {'a': 1})
    """
    try:
        return _decode(text)
    except json.JSONDecodeError as exc:
        raise LineError(exc.msg) from None
    except (RecursionError, ValueError):  # deep nesting, a long integer (or NaN, rejected again)
        try:
            return _decode_any_depth(text)
        except _TooDeep:
            msg = f"nested deeper than {MAX_DEPTH:,} levels"
            raise LineError(msg, too_deep=True) from None
        except json.JSONDecodeError as exc:
            raise LineError(exc.msg) from None
        except ValueError as exc:
            raise LineError(str(exc)) from None


def decode(line: bytes, rules: Rules = STRICT) -> Any:
    """The policy's reading of one line (without its line feed), or :class:`LineError`.

    The exact reading, with the standard library alone; ``frames.lines.read_line`` gives the
    same value faster. A repeated key is resolved as ``rules`` say (see :func:`settle`).

    Examples:
        >>> decode(b'{"k":"\\\\ud800"}', ECMASCRIPT), decode(b'{"k":"\\xff"}', ECMASCRIPT)
        ({'k': '\\ud800'}, {'k': '�'})
        >>> decode(b'{"k":"\\\\ud800"}')
        Traceback (most recent call last):
        cc_analytics.jsonline.LineError: lone surrogate escape
    """
    if line[:3] == BOM:
        msg = "starts with a UTF-8 byte-order mark"
        raise LineError(msg)
    try:
        text = line.decode("utf-8", "replace" if rules.ecmascript else "strict")
    except UnicodeDecodeError as exc:
        msg = f"invalid UTF-8 at byte {exc.start}"
        raise LineError(msg) from None
    value = parse_text(text)
    if not rules.ecmascript and has_lone_surrogate(text):
        msg = "lone surrogate escape"
        raise LineError(msg)
    return settle(value, rules)


def safe_loads(line: bytes, rules: Rules = STRICT) -> Any:
    """:func:`decode`, with None for a line that breaks a rule: for callers that only look.

    Examples:
        >>> safe_loads(b'{"type":"user"}'), safe_loads(b"[" * 1633 + b"]" * 1633) is not None
        ({'type': 'user'}, True)
        >>> safe_loads(b'{"a":1,}'), safe_loads(b"\\xef\\xbb\\xbf{}")
        (None, None)
    """
    try:
        return decode(line, rules)
    except LineError:
        return None


def settle(value: Any, rules: Rules = STRICT) -> Any:
    """``value`` from :func:`parse_text` with every :class:`DupDict` replaced by the plain dict
    ``rules`` read (and, under ``ecmascript``, every :class:`LongInt` by ±infinity), in place.

    Examples:
        >>> settle(parse_text('{"a":{"b":1,"b":2},"a":3}'))
        {'a': {'b': 1}}
    """
    under = rules.last_wins_under
    ecmascript = rules.ecmascript
    root = [value]
    stack: list[tuple[Any, bool]] = [(root, rules.duplicate_keys == FIRST)]
    while stack:
        container, first = stack.pop()
        pairs = container.items() if type(container) is dict else enumerate(container)
        for key, item in pairs:  # values are replaced, never keys: the iteration holds
            kind = type(item)
            if kind is DupDict:
                child_first = first and key not in under
                item = container[key] = dict(item.first) if child_first else dict(item)
                stack.append((item, child_first))
            elif kind is dict or kind is list:
                stack.append((item, first and key not in under))
            elif kind is LongInt and ecmascript:
                container[key] = -_INFINITY if item.text.startswith("-") else _INFINITY
    return root[0]


def agrees(line: bytes, value: Any, rules: Rules = STRICT) -> bool:
    """Whether ``value``, what a faster parser read of ``line``, is the policy's reading of it.

    For a parser that refuses every line the policy refuses and reads the others as
    :func:`decode` does (orjson), except that it may keep the last of a repeated key and read
    an integer beyond 64 bits as a float. No float of ``value`` may be that far from zero,
    and under first-wins rules no key may repeat: each member of an object has one colon in
    the text, so the text's colons are the members plus the colons inside strings exactly
    when no member was dropped (a colon escaped as ``\\u003a`` is not counted: such a line
    is not vouched for). False sends the line to :func:`decode`.

    Examples:
        >>> agrees(b'{"t":"10:00","a":{"b":1}}', {"t": "10:00", "a": {"b": 1}})
        True
        >>> agrees(b'{"a":1,"a":2}', {"a": 2}), agrees(b'{"a":1,"a":2}', {"a": 2}, ECMASCRIPT)
        (False, True)
        >>> agrees(b"[18446744073709551616]", [1.8446744073709552e19], ECMASCRIPT)
        False
    """
    keys = rules.duplicate_keys == FIRST
    members = colons = 0
    low, high = INT64_MIN, INT64_MAX
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        container = pop()
        if type(container) is dict:
            members += len(container)
            if keys:
                for key in container:
                    if ":" in key:
                        colons += key.count(":")
            items: Any = container.values()
        elif type(container) is list:
            items = container
        else:
            items = (container,)
        for item in items:
            kind = type(item)
            if kind is str:
                if keys and ":" in item:
                    colons += item.count(":")
            elif kind is dict or kind is list:
                push(item)
            elif kind is float and not low < item < high:
                return False
    if not keys:
        return True
    if b"\\u003" in line and (b"\\u003a" in line or b"\\u003A" in line):
        return False
    return line.count(b":") == members + colons


def may_be_object(line: bytes) -> bool:
    """Whether ``line`` ends with a brace (trailing white space aside): only such a line can be
    an object, so the others are not parsed (a first line cut short by a partial read, a
    pretty-printed document's lines, would each fail slowly).

    Examples:
        >>> may_be_object(b'{"a": 1}  '), may_be_object(b'{"a": [1,'), may_be_object(b"")
        (True, False, False)
    """
    return line.rstrip()[-1:] == b"}"
