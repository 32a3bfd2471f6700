"""JSON text in and out: strict line decoding, and the two number layouts the wire needs.

Decoding follows RFC 8259 strictly (no NaN/Infinity, no lone surrogates, no raw control
characters) and remembers, for objects with repeated keys, the first value of each key.
Encoding offers ``compact_json`` (orjson's layout, used in tool summaries) and the
ECMAScript number layout used by the canonical digest JSON.

Imports: standard library only.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring as quote  # C-accelerated, ensure_ascii=False
from typing import Any

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
MISSING: Any = object()


class DupDict(dict):
    """A JSON object that repeated a key: dict semantics (last value wins, first position kept),
    plus ``first``, the first value of every key, for fields the transcript parser reads."""

    __slots__ = ("first",)


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


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_to_dict, parse_constant=_reject_constant)
_decode = _DECODER.decode


def fget(obj: dict, key: str, default: Any = None) -> Any:
    """Read ``key`` of a decoded object, taking the first occurrence when the key repeats."""
    if type(obj) is DupDict:
        return obj.first.get(key, default)
    return obj.get(key, default)


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def decode_line(line: bytes) -> Any:
    """Decode one transcript line as strict RFC 8259 JSON, or return ``MISSING``.

    Examples:
        >>> decode_line(b'{"a": 1}')
        {'a': 1}
        >>> decode_line(b'NaN') is MISSING, decode_line(b'"\\\\ud800"') is MISSING
        (True, True)
    """
    try:
        text = line.decode("utf-8")
        value = _decode(text)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are both ValueErrors
        return MISSING
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
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
    parts: list[str] = []
    _compact_into(value, parts)
    return "".join(parts)


def _compact_into(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(orjson_float(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        sep = "{"
        for key, item in value.items():
            out.append(sep)
            out.append(quote(key))
            out.append(":")
            _compact_into(item, out)
            sep = ","
        out.append("}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        sep = "["
        for item in value:
            out.append(sep)
            _compact_into(item, out)
            sep = ","
        out.append("]")
    else:
        msg = f"not a JSON value: {value!r}"
        raise TypeError(msg)
