"""Masking well-known secret shapes in raw copies (``archive --mask-secrets``).

Imports: the standard library; ``detect_secrets`` (the ``secrets`` extra: ``pip install
'cc_analytics[secrets]'``) when a run masks. The shapes are not ours: they are the regular
expressions of detect-secrets' (Yelp) regex-based detectors (cloud keys, tokens of GitHub,
GitLab, Slack, Stripe, OpenAI, PyPI, npm …, JSON web tokens, private keys, passwords in URLs),
less its public-IP detector (an address is no secret) and its entropy and keyword heuristics
(they flag hashes and ids, which the tables need). A secret is masked in place, byte for byte:
its letters and digits become ``*`` and everything else stays (quotes, backslashes, the
character after a backslash), so each line stays the JSON it was, the copy keeps its size, and
the tables decoded from it are those of the masked copy (an archive's tables can always be
decoded again from its copies). A match is masked to the end of its token (a pattern that
stops early, a JSON web token's signature), a private key from its ``BEGIN`` line to its
``END`` line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

# detect-secrets' detectors left out, by class name (see the module's docstring).
LEFT_OUT = {"IPPublicDetector"}
MASK = ord("*")
_END_OF_KEY = re.compile(rb"END[A-Z ]{0,20} PRIVATE KEY")
_MAX_KEY = 16_384  # how far a private key's END line is looked for
_TOKEN_REST = re.compile(rb"[A-Za-z0-9_+/=.-]+")


class MaskingUnavailableError(ImportError):
    """detect-secrets is not installed."""


@cache
def patterns() -> tuple[tuple[str, re.Pattern[bytes]], ...]:
    """(detector, pattern) of every regex-based detect-secrets detector but :data:`LEFT_OUT`, as bytes patterns.

    Examples:
        >>> names = {name for name, _ in patterns()}
        >>> {"AWSKeyDetector", "PrivateKeyDetector", "GitHubTokenDetector"} <= names
        True
    """
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        msg = (
            "--mask-secrets uses detect-secrets' patterns, which is not installed\n"
            "Hint: pip install 'cc_analytics[secrets]' (or pip install detect-secrets)."
        )
        raise MaskingUnavailableError(msg) from None
    out: list[tuple[str, re.Pattern[bytes]]] = []
    detector: Any
    for detector in get_mapping_from_secret_type_to_class().values():
        if not issubclass(detector, RegexBasedDetector) or detector.__name__ in LEFT_OUT:
            continue
        denylist: Iterable[re.Pattern[str]] = detector.denylist  # a class attribute: the detector's patterns
        for pattern in denylist:
            source = pattern.pattern
            if not isinstance(source, str) or not source.isascii():
                continue
            out.append((detector.__name__, re.compile(source.encode(), pattern.flags & ~re.UNICODE)))
    return tuple(out)


def mask_secrets(data: bytes) -> bytes:
    """``data`` with every secret the patterns find masked in place (same length).

    Examples:
        >>> line = b'{"text": "key AKIAIOSFODNN7EXAMPLE ok"}'
        >>> mask_secrets(line)
        b'{"text": "key ******************** ok"}'
    """
    spans: list[tuple[int, int]] = []
    for name, pattern in patterns():
        for match in pattern.finditer(data):
            start, end = match.span()
            if name == "PrivateKeyDetector":
                tail = _END_OF_KEY.search(data, end, end + _MAX_KEY)
                end = tail.end() if tail else _line_end(data, end)
            elif (rest := _TOKEN_REST.match(data, end)) is not None:  # a lazy pattern's token, whole
                end = rest.end()
            if end > start:
                spans.append((start, end))
    if not spans:
        return data
    masked = bytearray(data)
    for start, end in spans:
        _mask(masked, start, end)
    return bytes(masked)


def _line_end(data: bytes, start: int) -> int:
    """Where the JSON string (or line) holding ``start`` ends, as far as can be told cheaply."""
    for stop in (data.find(b'"', start), data.find(b"\n", start)):
        if stop != -1:
            return stop
    return len(data)


def _mask(buffer: bytearray, start: int, end: int) -> None:
    keep = 1 if start > 0 and buffer[start - 1] == ord("\\") else 0
    for index in range(start, end):
        byte = buffer[index]
        if keep:  # an escape's characters (``\\n``; ``\\u`` and its four digits) stay: the JSON stays valid
            keep -= 1
            if byte == ord("u") and keep == 0 and buffer[index - 1] == ord("\\"):
                keep = 4
            continue
        if byte == ord("\\"):
            keep = 1
        elif (48 <= byte <= 57) or (65 <= byte <= 90) or (97 <= byte <= 122) or byte in b"+/=_-.":
            buffer[index] = MASK
