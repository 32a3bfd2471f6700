"""JSON text in and out: strict line decoding, and the two number layouts the wire needs.

Decoding follows RFC 8259 strictly (no NaN/Infinity, no lone surrogates, no raw control
characters) and remembers, for objects with repeated keys, the first value of each key.
Like the reference's native parser it reads any depth (up to ``MAX_DEPTH``) and integers
of any length; both are rare, so they take a slower path only after the C decoder gave up.
Encoding offers ``compact_json`` (orjson's layout, used in tool summaries) and the
ECMAScript number layout used by the canonical digest JSON, both on one iterative writer.

Imports: standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]  # C-accelerated
from json.encoder import encode_basestring as quote  # C-accelerated, ensure_ascii=False
from typing import Any

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
MISSING: Any = object()
TOO_DEEP: Any = object()
# The reference's native parser overflows its stack (a segfault) a little beyond 25,000 levels
# on the default 8 MiB stack; deeper lines are skipped with a warning (docs/core-differences.md).
MAX_DEPTH = 25_000


class DupDict(dict):
    """A JSON object that repeated a key: dict semantics (last value wins, first position kept),
    plus ``first``, the first value of every key, for fields the transcript parser reads."""

    __slots__ = ("first",)
    first: dict[str, Any]


class LongInt:
    """A JSON integer with more digits than ``int()`` accepts (``sys.get_int_max_str_digits``).

    Kept as its lexeme: nothing the parser reads needs its value, and converting it would
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


def fget(obj: dict, key: str, default: Any = None) -> Any:
    """Read ``key`` of a decoded object, taking the first occurrence when the key repeats."""
    if type(obj) is DupDict:
        return obj.first.get(key, default)
    return obj.get(key, default)


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


def _has_lone_surrogate(text: str) -> bool:
    """Whether a string literal of valid JSON text escapes half a surrogate pair.

    Read from the text, so that a shadowed duplicate key's value counts too.
    """
    for match in _STRING_LITERAL.finditer(text):
        literal = match.group()
        if _SURROGATE_ESCAPE.search(literal) and _SURROGATE.search(scanstring(literal, 1, True)[0]):
            return True
    return False


def decode_line(line: bytes) -> Any:
    """Decode one transcript line as strict RFC 8259 JSON, or return ``MISSING``.

    Any depth and any integer length is read; a line nested more than ``MAX_DEPTH``
    levels gives ``TOO_DEEP``. Integers too long for ``int()`` become :class:`LongInt`.

    Examples:
        >>> decode_line(b'{"a": 1}')
        {'a': 1}
        >>> decode_line(b'NaN') is MISSING, decode_line(b'"\\\\ud800"') is MISSING
        (True, True)
        >>> len(decode_line(b"[" * 3000 + b"]" * 3000)), decode_line(b"[" * 30000) is TOO_DEEP
        (1, True)
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return MISSING
    try:
        value = _decode(text)
    except json.JSONDecodeError:
        return MISSING
    except (RecursionError, ValueError):  # deep nesting, a long integer (or NaN, rejected again)
        try:
            value = _decode_any_depth(text)
        except ValueError:
            return MISSING
        except _TooDeep:
            return TOO_DEEP
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(text):
        return MISSING
    return value


def float_digits(x: float) -> tuple[str, int]:
    """Shortest round-trip digits and exponent of a finite, positive float.

    Examples:
        >>> float_digits(100.0), float_digits(0.00123), float_digits(1e-7)
        (('1', 2), ('123', -3), ('1', -7))
    """
    text = repr(x)
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    exponent += len(whole) - 1
    stripped = digits.lstrip("0")
    exponent -= len(digits) - len(stripped)
    return stripped.rstrip("0") or "0", exponent


def orjson_float(x: float) -> str:
    """A float as orjson writes it (``null`` for infinities).

    Examples:
        >>> [orjson_float(v) for v in (100.0, 1e16, 1e-5, 1e-6, -0.0, 1.5)]
        ['100.0', '1e+16', '0.00001', '1e-6', '-0.0', '1.5']
    """
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign = "-" if x < 0 else ""
    digits, e = float_digits(abs(x))
    if -6 < e < 16:
        if e >= 0:
            whole = digits[: e + 1].ljust(e + 1, "0")
            frac = digits[e + 1 :] or "0"
            return f"{sign}{whole}.{frac}"
        return f"{sign}0.{'0' * (-e - 1)}{digits}"
    tail = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{tail}e{'+' if e >= 0 else '-'}{abs(e)}"


def es_float(x: float) -> str:
    """A finite float as ECMAScript's Number::toString writes it (RFC 8785 numbers).

    Examples:
        >>> [es_float(v) for v in (100.0, 1e21, 1e-7, 0.1, -0.0, 123456789.123456789)]
        ['100', '1e+21', '1e-7', '0.1', '0', '123456789.12345679']
    """
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    digits, e = float_digits(abs(x))
    k = len(digits)
    n = e + 1
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return f"{sign}{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return f"{sign}0.{'0' * -n}{digits}"
    tail = f".{digits[1:]}" if k > 1 else ""
    return f"{sign}{digits[0]}{tail}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def compact_json(value: Any) -> str:
    """Serialise a decoded JSON value as orjson does: no spaces, keys in input order.

    Examples:
        >>> compact_json({"zeta": 1, "alpha": "β", "n": 1e-7, "arr": [True, None, 2.0]})
        '{"zeta":1,"alpha":"β","n":1e-7,"arr":[true,null,2.0]}'
    """
    return write_json(value, _compact_scalar, iter)


def _compact_scalar(value: Any) -> str:
    if isinstance(value, str):
        return quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return orjson_float(value)
    if type(value) is LongInt:
        return value.text
    msg = f"not a JSON value: {value!r}"
    raise TypeError(msg)


_CONTAINERS = (dict, list, tuple)


def write_json(value: Any, scalar: Callable[[Any], str], keys: Callable[[dict], Iterable[str]]) -> str:
    """JSON text without spaces of a decoded value, at any depth (no recursion).

    ``keys`` gives the key order of each object; strings are quoted as ``json.dumps`` does
    (``ensure_ascii=False``) and ``scalar`` writes every other value that is neither an
    object nor an array (list or tuple).

    Examples:
        >>> write_json({"b": [1, {}], "a": []}, repr, sorted)
        '{"a":[],"b":[1,{}]}'
    """
    if not isinstance(value, _CONTAINERS):
        return scalar(value)
    out: list[str] = []
    append = out.append
    stack: list[tuple[Iterator, dict | None]] = []  # the open containers: (keys or items left, object)
    while True:
        if isinstance(value, dict):
            append("{")
            rest, obj = iter(keys(value)), value
        else:
            append("[")
            rest, obj = iter(value), None
        sep = ""
        while True:
            for item in rest:
                append(sep)
                sep = ","
                if obj is not None:
                    append(quote(item))
                    append(":")
                    item = obj[item]
                if type(item) is str:
                    append(quote(item))
                elif isinstance(item, _CONTAINERS):
                    stack.append((rest, obj))
                    value = item
                    break
                else:
                    append(scalar(item))
            else:
                append("]" if obj is None else "}")
                if not stack:
                    return "".join(out)
                rest, obj = stack.pop()
                sep = ","
                continue
            break  # descend into ``value``
