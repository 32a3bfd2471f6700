"""Tool-call digests: RFC 8785 canonical JSON of ``{"input": …, "tool": name}`` and its SHA-256.

Imports: standard library only.
"""

from __future__ import annotations

import hashlib
from typing import Any

from cc_analytics.core.jsontext import LongInt, es_float, quote, write_json
from cc_analytics.errors import CCAnalyticsError

MAX_SAFE_INTEGER = 2**53 - 1


class DigestError(CCAnalyticsError, ValueError):
    """A tool input that RFC 8785 cannot represent (an integer beyond 2^53−1, an infinity)."""


def canonical_json(value: Any, *, lenient: bool = False) -> str:
    """Serialise a decoded JSON value as RFC 8785 (JCS) canonical JSON.

    Keys are sorted by UTF-16 code units, numbers use the ECMAScript layout. Integers
    beyond ±(2^53−1) and infinities raise :class:`DigestError`; with ``lenient=True``
    they are written as decimal digits and ``null`` instead.

    Examples:
        >>> canonical_json({"b": 1, "a": [1, 2.5, None, True], "c": {"z": "é", "y": "😀"}})
        '{"a":[1,2.5,null,true],"b":1,"c":{"y":"😀","z":"é"}}'
        >>> canonical_json({"f": 100.0, "g": 1e21, "j": -0.0})
        '{"f":100,"g":1e+21,"j":0}'
    """
    return write_json(value, _lenient_scalar if lenient else _strict_scalar, _utf16_order)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _utf16_order(obj: dict) -> list[str]:
    return sorted(obj, key=_utf16_key)


def _strict_scalar(value: Any) -> str:
    return _scalar(value, lenient=False)


def _lenient_scalar(value: Any) -> str:
    return _scalar(value, lenient=True)


def _scalar(value: Any, *, lenient: bool) -> str:
    if isinstance(value, str):
        return quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER or lenient:
            return int.__repr__(value)
        msg = f"integer exceeds IEEE-754 double precision: {int.__repr__(value)}"
        raise DigestError(msg)
    if isinstance(value, float):
        if value in (float("inf"), float("-inf")) or value != value:
            if not lenient:
                msg = f"number cannot canonicalize: {value}"
                raise DigestError(msg)
            return "null"
        return es_float(value)
    if type(value) is LongInt:
        if lenient:
            return value.text
        msg = f"integer exceeds IEEE-754 double precision: {value.text}"
        raise DigestError(msg)
    msg = f"not a JSON value: {value!r}"
    raise TypeError(msg)


def tool_digest(name: str, tool_input: Any, *, lenient: bool = False) -> str:
    """Lower-case hex SHA-256 of ``canonical_json({"input": tool_input, "tool": name})``.

    Examples:
        >>> tool_digest("Bash", {"command": "ls -la"})
        '473109e7df1501fda502803c08caa42dda61b300827deca7b92142b7c2b5e4f9'
    """
    body = canonical_json(tool_input, lenient=lenient)
    text = '{"input":' + body + ',"tool":' + quote(name) + "}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
