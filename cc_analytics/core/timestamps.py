"""Strict RFC 3339 timestamp checking, with the reasons and quoting of the wire spec (§4.4).

Imports: standard library only.
"""

from __future__ import annotations

import re
import unicodedata

PREMATURE = "premature end of input"
INVALID = "input contains invalid characters"
OUT_OF_RANGE = "input is out of range"
TRAILING = "trailing input"
LEAP_SECOND = "leap second"

_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DIGITS = frozenset("0123456789")
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\r": "\\r", "\n": "\\n", "\0": "\\0"}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn", "Cs", "Mn", "Me"})
_COMMON = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _number(ts: str, pos: int, width: int) -> int:
    for i in range(pos, pos + width):
        if i >= len(ts):
            raise _Stop(PREMATURE)
        if ts[i] not in _DIGITS:
            raise _Stop(INVALID)
    return int(ts[pos : pos + width])


def _expect(ts: str, pos: int, allowed: str) -> None:
    if pos >= len(ts):
        raise _Stop(PREMATURE)
    if ts[pos] not in allowed:
        raise _Stop(INVALID)


def _check(ts: str) -> tuple[str | None, bool]:
    if len(ts.encode("utf-8", "surrogatepass")) < 19:
        return PREMATURE, False
    year = _number(ts, 0, 4)
    _expect(ts, 4, "-")
    month = _number(ts, 5, 2)
    if not 1 <= month <= 12:
        raise _Stop(OUT_OF_RANGE)
    _expect(ts, 7, "-")
    day = _number(ts, 8, 2)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS[month - 1]
    if not 1 <= day <= days:
        raise _Stop(OUT_OF_RANGE)
    _expect(ts, 10, "Tt ")
    hour = _number(ts, 11, 2)
    if hour > 23:
        raise _Stop(OUT_OF_RANGE)
    _expect(ts, 13, ":")
    minute = _number(ts, 14, 2)
    if minute > 59:
        raise _Stop(OUT_OF_RANGE)
    _expect(ts, 16, ":")
    second = _number(ts, 17, 2)
    if second > 60:
        raise _Stop(OUT_OF_RANGE)
    pos = 19
    if pos < len(ts) and ts[pos] == ".":
        pos += 1
        _number(ts, pos, 1)
        while pos < len(ts) and ts[pos] in _DIGITS:
            pos += 1
    _expect(ts, pos, "Zz+-")
    offset_hour = 0
    if ts[pos] in "Zz":
        pos += 1
    else:
        offset_hour = _number(ts, pos + 1, 2)
        _expect(ts, pos + 3, ":")
        if _number(ts, pos + 4, 2) > 59:
            raise _Stop(OUT_OF_RANGE)
        pos += 6
    if pos != len(ts):
        return TRAILING, False
    if offset_hour > 23:
        return OUT_OF_RANGE, False
    if second == 60:
        return LEAP_SECOND, False
    return None, year == 0


def check_timestamp(ts: str) -> tuple[str | None, bool]:
    """Check one timestamp: ``(reason it is invalid or None, whether its year is 0)``.

    Examples:
        >>> check_timestamp("2026-03-01T10:00:00.123Z")
        (None, False)
        >>> check_timestamp("2026-03-01")
        ('premature end of input', False)
        >>> check_timestamp("0000-01-01T00:00:00+01:00")
        (None, True)
    """
    match = _COMMON.fullmatch(ts)
    if match is not None:
        year, month, day, hour, minute, second, off_h, off_m = match.groups()
        if (
            "01" <= month <= "12"
            and "01" <= day <= "28"
            and hour <= "23"
            and minute <= "59"
            and second <= "59"
            and (off_h is None or (off_h <= "23" and off_m <= "59"))
        ):
            return None, year == "0000"
    try:
        return _check(ts)
    except _Stop as stop:
        return stop.reason, False


def _escape_char(ch: str) -> str:
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    if ch == " ":
        return ch
    if unicodedata.category(ch) in _ESCAPED_CATEGORIES:
        return f"\\u{{{ord(ch):x}}}"
    return ch


def debug_quote(text: str) -> str:
    """Quote a string the way Rust's ``{:?}`` does.

    Examples:
        >>> debug_quote('a"b\\n\\u00a0')
        '"a\\\\"b\\\\n\\\\u{a0}"'
    """
    return '"' + "".join(_escape_char(ch) for ch in text) + '"'


def timestamp_error(ts: str, reason: str) -> ValueError:
    """The error the reference raises for an invalid timestamp."""
    return ValueError(f"invalid timestamp {debug_quote(ts)}: {reason}")
