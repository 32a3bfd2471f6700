"""The JSON line policy made faster by orjson, for every frames decoder and the core's callers.

Imports: orjson, :mod:`cc_analytics.jsonline` and ``cc_analytics.core.jsontext`` (the core's
decoder, imported when :func:`decode_line` is first called; no Polars). This module holds no
rule: orjson reads each line first, and its reading is taken only where it is provably the
policy's (the bytes orjson writes back are the line's own, or :func:`~cc_analytics.jsonline.agrees`
holds); any other line is read by :mod:`cc_analytics.jsonline` itself. So a line reads the same
whatever its length, and a line orjson refuses (deeper than its 1,024 levels, ``1e400``, a lone
surrogate for ``JSON.parse``) is read or refused by the policy, not by orjson.

* :func:`read_line`: the policy's reading under a format's :class:`~cc_analytics.jsonline.Rules`,
  or :class:`~cc_analytics.jsonline.LineError` (a problem row). Every format's walker calls it.
* :func:`decode_line`: the core's reading (:func:`cc_analytics.core.jsontext.decode_line`), for
  callers outside the core that parse whole transcripts (the explorer's previews, ``window``,
  capture at scale), in about a third of the time.
"""

from __future__ import annotations

from typing import Any

import orjson

from cc_analytics.jsonline import STRICT, LineError, Rules, agrees, decode

_loads = orjson.loads
_dumps = orjson.dumps
_DecodeError = orjson.JSONDecodeError
_EncodeError = orjson.JSONEncodeError


def read_value(line: bytes | memoryview, rules: Rules = STRICT) -> tuple[Any, bool]:
    """:func:`read_line`, and whether orjson's reading was taken (then every string of the
    value is well-formed UTF-8 and every number finite: orjson refuses the others).

    Examples:
        >>> read_value(b'{"a":1}'), read_value(b'{"a":1e400}')
        (({'a': 1}, True), ({'a': inf}, False))
    """
    try:
        value = _loads(line)
    except _DecodeError as exc:
        raw = bytes(line)
        try:
            return decode(raw, rules), False
        except LineError as error:
            # orjson's wording for a syntax error (it names the fault more precisely); the
            # policy's for what orjson does not decide (its depth limit is not the policy's).
            reason = str(exc).split(":", 1)[0]
            if error.too_deep or reason.startswith("depth limit"):
                raise
            raise LineError(reason) from None
    raw = line if type(line) is bytes else bytes(line)  # memoryview == bytes compares item by item
    try:
        if _dumps(value) == raw:
            return value, True
    except _EncodeError:  # nested deeper than orjson writes (255 levels)
        pass
    if agrees(raw, value, rules):
        return value, True
    return decode(raw, rules), False


def read_line(line: bytes | memoryview, rules: Rules = STRICT) -> Any:
    """The JSON line policy's reading of one line (:func:`cc_analytics.jsonline.decode`), faster.

    Raises :class:`~cc_analytics.jsonline.LineError` (with the reason for a problem row) for a
    line that breaks a rule, and nothing else for any bytes.

    Examples:
        >>> read_line(b'{"model":"a","model":"b"}'), len(read_line(b"[" * 3000 + b"]" * 3000))
        ({'model': 'a'}, 1)
        >>> read_line(b"[" * 30_000)
        Traceback (most recent call last):
        cc_analytics.jsonline.LineError: nested deeper than 25,000 levels
    """
    return read_value(line, rules)[0]


def decode_line(line: bytes) -> Any:
    """:func:`cc_analytics.core.jsontext.decode_line`, about three times faster on Claude Code's lines.

    orjson reads the line and writes the value back. When that gives the line's own bytes, the
    line is strict JSON written the one way both parsers read alike: no repeated key (orjson
    would have written one fewer), no lone surrogate or integer beyond 64 bits (orjson refuses
    them), no whitespace, and every float in its shortest form (so both parsers round it to
    the same double). The value is then exactly the core's. Any other line is left to the core.

    Examples:
        >>> decode_line(b'{"a":[1,2.5,"x"]}')
        {'a': [1, 2.5, 'x']}
        >>> decode_line(b'{"a":1,"a":2}').first  # a repeated key: the core's reading
        {'a': 1}
    """
    from cc_analytics.core.jsontext import decode_line as core_decode_line

    try:
        value = _loads(line)
    except _DecodeError:
        return core_decode_line(line)
    try:
        same = _dumps(value) == line
    except _EncodeError:
        same = False
    return value if same else core_decode_line(line)


def kind_name(value: Any) -> str:
    """How a JSON value is named in a problem reason (every format's decoder says it alike).

    Examples:
        >>> kind_name([1]), kind_name("x"), kind_name(None), kind_name(2), kind_name(True)
        ('an array', 'a string', 'null', 'a number', 'a boolean')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a number"
