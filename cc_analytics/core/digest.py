"""Tool-call digests: RFC 8785 canonical JSON of ``{"input": …, "tool": name}`` and its SHA-256.

Imports: standard library only.
"""

from __future__ import annotations

import hashlib
from typing import Any

from cc_analytics.core.jsontext import es_float, quote

MAX_SAFE_INTEGER = 2**53 - 1


class DigestError(ValueError):
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
    out: list[str] = []
    _canonical_into(value, out, lenient)
    return "".join(out)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _canonical_into(value: Any, out: list[str], lenient: bool) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER or lenient:
            out.append(int.__repr__(value))
        else:
            msg = f"integer exceeds IEEE-754 double precision: {int.__repr__(value)}"
            raise DigestError(msg)
    elif isinstance(value, float):
        if value in (float("inf"), float("-inf")) or value != value:
            if not lenient:
                msg = f"number cannot canonicalize: {value}"
                raise DigestError(msg)
            out.append("null")
        else:
            out.append(es_float(value))
    elif isinstance(value, dict):
        out.append("{")
        sep = ""
        for key in sorted(value, key=_utf16_key):
            out.append(sep)
            out.append(quote(key))
            out.append(":")
            _canonical_into(value[key], out, lenient)
            sep = ","
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        sep = ""
        for item in value:
            out.append(sep)
            _canonical_into(item, out, lenient)
            sep = ","
        out.append("]")
    else:
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
