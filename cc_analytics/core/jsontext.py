"""JSON text in and out: the core's line decoding, and the two number layouts the wire needs.

Lines are read by the one JSON line policy (:mod:`cc_analytics.jsonline`): strict RFC 8259
(no NaN/Infinity, no lone surrogates, no raw control characters), any depth up to
``MAX_DEPTH`` and integers of any length, like the reference's native parser. Where the core
differs from the policy, it is to read as the reference does (its conformance pins it):

* a repeated key is not resolved when the line is read but when a field is: an object that
  repeats a key stays a :class:`~cc_analytics.jsonline.DupDict` (Python dict semantics, the
  last value wins, as in the tool inputs and results the reference stores as JSON) and
  :func:`fget` takes the first occurrence for the fields the reference reads directly. For
  every field read this is the policy's reading with Claude Code's rules;
* a line that breaks a rule is not a problem row: :func:`decode_line` gives ``MISSING`` (the
  reference skips the line silently) or ``TOO_DEEP`` (the reference crashes: capture warns).

Encoding offers ``compact_json`` (orjson's layout, used in tool summaries) and the
ECMAScript number layout used by the canonical digest JSON, both on one iterative writer.

Imports: standard library only, and :mod:`cc_analytics.jsonline` (standard library only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring as quote  # C-accelerated, ensure_ascii=False
from typing import Any

from cc_analytics.jsonline import MAX_DEPTH as MAX_DEPTH
from cc_analytics.jsonline import DupDict as DupDict
from cc_analytics.jsonline import LineError, LongInt, has_lone_surrogate, parse_text
from cc_analytics.jsonline import _decode as _decode  # the fuzz targets compare the two parsers
from cc_analytics.jsonline import _decode_any_depth as _decode_any_depth

MISSING: Any = object()
TOO_DEEP: Any = object()


def fget(obj: dict, key: str, default: Any = None) -> Any:
    """Read ``key`` of a decoded object, taking the first occurrence when the key repeats."""
    if type(obj) is DupDict:
        return obj.first.get(key, default)
    return obj.get(key, default)


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
        value = parse_text(text)
    except LineError as exc:
        return TOO_DEEP if exc.too_deep else MISSING
    if has_lone_surrogate(text):
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
