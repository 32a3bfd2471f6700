"""Error types of cc_analytics: one base class, subclasses also inherit the builtin they resemble.

Imports: standard library only.
"""

from __future__ import annotations


class CCAnalyticsError(Exception):
    """Base class of every error cc_analytics raises on purpose."""


class InputError(CCAnalyticsError, ValueError):
    """Bad user input: a malformed file, an unsafe id, a wrong option value."""


class SessionNotFoundError(CCAnalyticsError, LookupError):
    """A session id that does not resolve to a transcript."""


class SchemaError(CCAnalyticsError, ValueError):
    """A wire document (ContextWindow JSON and friends) that does not match its schema."""
