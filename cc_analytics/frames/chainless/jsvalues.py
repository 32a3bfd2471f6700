"""JSON values as ECMAScript sees them: truthiness, ``String(v)``, numbers.

Imports: the standard library and ``frames.estimate`` (``JSON.stringify``). ChainlessChain is a
JavaScript program; where Python and JavaScript disagree on a decoded value (a boolean is never
a number, ``1e400`` parses to Infinity, ``String([1, null])`` is ``"1,"``), the decoder asks
here. Lines are parsed as ``JSON.parse`` would by the JSON line policy (``jsonline.ECMASCRIPT``).
"""

from __future__ import annotations

import math
from typing import Any

from cc_analytics.frames.estimate import js_stringify

_END = object()


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a decoded JSON value."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


def js_string(value: Any) -> str:
    """JavaScript ``String(value)`` for a decoded JSON value.

    Examples:
        >>> js_string([1, None, "a"]), js_string({"k": 1}), js_string(2.0)
        ('1,,a', '[object Object]', '2')
    """
    if not isinstance(value, list):
        return _scalar_string(value)
    # Array.prototype.join, nested arrays joined in place: a loop, as arrays nest deeper than
    # Python's stack (null items are empty).
    parts: list[str] = []
    stack = [iter(value)]
    first = [True]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            first.pop()
            continue
        if not first[-1]:
            parts.append(",")
        first[-1] = False
        if isinstance(item, list):
            stack.append(iter(item))
            first.append(True)
        elif item is not None:
            parts.append(_scalar_string(item))
    return "".join(parts)


def _scalar_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "[object Object]"
    return js_stringify(value)


def is_js_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number (not a boolean), else None."""
    kind = type(value)
    if kind is float:
        return value if value - value == 0.0 else None
    if kind is int:
        try:
            return float(value)
        except OverflowError:  # beyond the double range: Infinity in JavaScript
            return None
    return None


def int_or_none(value: Any) -> int | None:
    if type(value) is int or (type(value) is float and math.isfinite(value) and value == int(value)):
        return int(value) if abs(value) < 2**63 else None
    return None
