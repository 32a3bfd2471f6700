"""The token estimate: one definition, as a Polars expression, shared by every format.

Imports: orjson, the standard library and polars (inside the expression functions: the scalar
fast path serves the line walker of worker processes, which never import Polars). The rule
(spec ``cc-context.md`` §7): ``ceil(cjk / 1.5 + other / 4)`` where ``cjk`` counts UTF-16 units in U+4E00–U+9FA5 and
``other`` is the rest of the UTF-16 length. Non-string values are measured through
:func:`js_stringify`, which reproduces ECMAScript ``JSON.stringify``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import orjson

from cc_analytics.core.jsontext import es_float
from cc_analytics.format import well_formed as _format_well_formed

if TYPE_CHECKING:
    import polars as pl

CJK_PATTERN = "[\u4e00-\u9fa5]"
ASTRAL_PATTERN = r"[\x{10000}-\x{10FFFF}]"
NULL_CONTENT_TEXT = '""'

# Floats and integers of 16+ digits (beyond 2**53) print differently in JavaScript.
_NOT_JS_NUMBER = re.compile(rb"(?:^|[:,\[])-?[0-9]+[.eE]|(?:^|[:,\[])-?[0-9]{16}")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def estimate_tokens(expr: pl.Expr | str) -> pl.Expr:
    """Estimated tokens of each string: ``ceil(cjk / 1.5 + other / 4)``; null stays null.

    Examples:
        >>> import polars as pl
        >>> pl.select(estimate_tokens(pl.lit("你好世界"))).item()
        3
        >>> pl.select(estimate_tokens(pl.lit("👍👍👍"))).item()
        2
    """
    import polars as pl

    text = pl.col(expr) if isinstance(expr, str) else expr
    chars = text.str.len_chars()
    # Only non-ASCII strings can hold CJK or astral characters; running the two regexes on
    # those alone makes the estimate about three times cheaper on typical transcripts.
    wide = pl.when(text.str.len_bytes() != chars).then(text)
    cjk = wide.str.count_matches(CJK_PATTERN).fill_null(0).cast(pl.Float64)
    units = chars + wide.str.count_matches(ASTRAL_PATTERN).fill_null(0)
    other = units.cast(pl.Float64) - cjk
    return ((cjk / 1.5) + (other / 4.0)).ceil().cast(pl.Int64)


# UTF-16 high bytes 0x4E-0x9E are U+4E00-U+9EFF, all inside the estimator's CJK range
# U+4E00-U+9FA5; high byte 0x9F needs a look at the character (U+9FA6-U+9FFF are not CJK).
_NOT_CJK_HIGH = bytes(b for b in range(256) if not 0x4E <= b <= 0x9E)
_PAST_CJK = re.compile("[\u9fa6-\u9fff]")


def text_tokens(text: str) -> int | None:
    """Scalar fast path of :func:`estimate_tokens` for one string; None when only the expression can say.

    The estimate is ``ceil(cjk / 1.5 + other / 4)`` over UTF-16 units (:func:`estimate_tokens`). ASCII
    text has no CJK and one unit per character: ``ceil(length / 4)``. Other text is encoded
    to UTF-16 once (lone surrogates pass as one unit): units are its length, and CJK units are counted from their high bytes with
    C-speed ``bytes`` operations (the estimator's regex costs far more on CJK-dense prose).
    Decoders that measure blocks as they read them use this; ``tests/frames/test_claude_decode_lean.py``
    checks it against the expression.

    Examples:
        >>> text_tokens("abcde"), text_tokens("你好世界"), text_tokens("\u9fa6") is None
        (2, 3, True)
    """
    if text.isascii():
        return (len(text) + 3) >> 2
    units = text.encode("utf-16-be", "surrogatepass")
    high = units[::2]
    cjk = len(high.translate(None, _NOT_CJK_HIGH))
    edge = high.count(0x9F)
    if edge:
        if _PAST_CJK.search(text):
            return None
        cjk += edge
    return math.ceil(cjk / 1.5 + ((len(units) >> 1) - cjk) / 4.0)


def estimate_text_tokens(text: str) -> int:
    """Scalar form of :func:`estimate_tokens` (evaluates the same expression).

    Examples:
        >>> estimate_text_tokens("I am fine. 你好世界")
        6
        >>> estimate_text_tokens("")
        0
    """
    import polars as pl

    return int(pl.select(estimate_tokens(pl.lit(well_formed(text), dtype=pl.String))).item())


def content_text(content: Any) -> str:
    """The text a message's ``content`` is measured by (spec §7.1).

    A string is itself; any other truthy value is its ``JSON.stringify``; null, missing,
    ``false`` and ``0`` measure as the two characters ``""``.

    Examples:
        >>> content_text(None), content_text([]), content_text({"v": 1.0})
        ('""', '[]', '{"v":1}')
    """
    if isinstance(content, str):
        return content
    if content is None or content is False or (_is_number(content) and content == 0):
        return NULL_CONTENT_TEXT
    return js_stringify(content)


def js_stringify(value: Any) -> str:
    """ECMAScript ``JSON.stringify(value)`` for values decoded from JSON.

    Compact, raw non-ASCII, JavaScript number formatting (``1.0`` → ``1``, ``1e-7``,
    ``1e+21``), non-finite numbers as ``null``, lone surrogates escaped.

    Examples:
        >>> js_stringify({"zero": -0.0, "k": 1e3, "small": 1e-7, "s": "日本"})
        '{"zero":0,"k":1000,"small":1e-7,"s":"日本"}'
    """
    try:
        raw = orjson.dumps(value)
    except TypeError:
        raw = None
    if raw is not None and not _NOT_JS_NUMBER.search(raw):
        return raw.decode()
    parts: list[str] = []
    _stringify_into(value, parts)
    return "".join(parts)


def js_number(value: float | int) -> str:
    """ECMAScript ``Number.prototype.toString()`` of a double (ints are taken as doubles).

    Examples:
        >>> [js_number(x) for x in (1.0, 2.5, 1e-7, 1e21, 1e16, -0.0, 0.000001)]
        ['1', '2.5', '1e-7', '1e+21', '10000000000000000', '0', '0.000001']
    """
    try:
        x = float(value)
    except OverflowError:
        x = math.inf if value > 0 else -math.inf
    if math.isnan(x) or math.isinf(x):
        return "null"
    return es_float(x)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _js_string(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


class _Written(str):
    """Text already in JSON form, waiting on the stack of :func:`_stringify_into`."""


def _stringify_into(value: Any, out: list[str]) -> None:
    # A loop over a stack, not recursion: decoded values may nest deeper than Python's stack.
    stack: list[Any] = [value]
    while stack:
        value = stack.pop()
        if type(value) is _Written:
            out.append(value)
        elif isinstance(value, str):
            out.append(_js_string(value))
        elif value is None:
            out.append("null")
        elif value is True:
            out.append("true")
        elif value is False:
            out.append("false")
        elif isinstance(value, int | float):
            out.append(js_number(value))
        elif isinstance(value, dict):
            out.append("{")
            stack.append(_Written("}"))
            entries = list(value.items())
            for index in range(len(entries) - 1, -1, -1):
                key, item = entries[index]
                stack.append(item)
                stack.append(_Written(("," if index else "") + _js_string(str(key)) + ":"))
        elif isinstance(value, list | tuple):
            out.append("[")
            stack.append(_Written("]"))
            for index in range(len(value) - 1, -1, -1):
                stack.append(value[index])
                if index:
                    stack.append(_Written(","))
        else:
            msg = f"cannot stringify a value of type {type(value).__name__!r}"
            raise TypeError(msg)


def well_formed(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD.

    Lone surrogates cannot live in an Arrow string; U+FFFD has the same UTF-16 length and is
    not CJK, so the estimate is unchanged.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _format_well_formed(text)
    return text
