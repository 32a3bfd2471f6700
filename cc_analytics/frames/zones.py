"""Time zones and the bounds of a period, without Polars: what ``usage`` checks before it reads.

Imports: the standard library and the error types only (``commands.usage`` checks its options
with these before the files are planned and Polars is imported; ``frames.usage`` uses them too).
"""

from __future__ import annotations

import os
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cc_analytics.errors import InputError


def local_timezone() -> str:
    """The machine's IANA timezone: ``$TZ`` if it names one, else where ``/etc/localtime``
    points, else ``/etc/timezone``, else ``UTC``.

    Examples:
        >>> isinstance(local_timezone(), str)
        True
    """
    candidates = [os.environ.get("TZ", "").removeprefix(":")]
    localtime = Path("/etc/localtime")
    if localtime.is_symlink():
        target = str(localtime.resolve())
        candidates.append(target.partition("zoneinfo/")[2])
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    return next((name for name in candidates if _is_zone(name)), "UTC")


def resolve_timezone(timezone: str | None) -> str:
    """``timezone`` checked as an IANA name, or the local one when None.

    Examples:
        >>> resolve_timezone("Europe/Paris")
        'Europe/Paris'
    """
    if timezone is None:
        return local_timezone()
    if not _is_zone(timezone):
        msg = f"unknown timezone {timezone!r}\nHint: use an IANA name such as 'UTC' or 'Europe/Paris'"
        raise InputError(msg)
    return timezone


def _is_zone(name: str) -> bool:
    if not name:
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def day_or_instant(value: date | datetime | str) -> date | datetime:
    """A ``since``/``until`` bound: a calendar day (``YYYY-MM-DD``, ``YYYYMMDD``), else an instant.

    Examples:
        >>> day_or_instant("20260105"), day_or_instant("2026-01-05T10:00:00+00:00").hour
        (datetime.date(2026, 1, 5), 10)
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if len(text) == 8 and text.isdigit():
            return date(int(text[:4]), int(text[4:6]), int(text[6:]))
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        msg = f"not a date: {value!r}\nHint: write YYYY-MM-DD (or YYYYMMDD)"
        raise InputError(msg) from None
