"""Error types of cc_analytics: one base class, subclasses also inherit the builtin they resemble.

Imports: standard library only. The CLI prints every :class:`CCAnalyticsError` as one error
line (exit 1), and a :class:`UsageError` with the command's usage (exit 2); anything else
is a bug.
"""

from __future__ import annotations


class CCAnalyticsError(Exception):
    """Base class of every error cc_analytics raises on purpose."""


class InputError(CCAnalyticsError, ValueError):
    """Bad user input: a malformed file, an unsafe id, a wrong option value."""


class UsageError(CCAnalyticsError, ValueError):
    """A command-line option used wrongly: reported with the command's usage, exit code 2."""


class SessionNotFoundError(CCAnalyticsError, LookupError):
    """A session id (or prefix) that names no session, or more than one."""


class SchemaError(CCAnalyticsError, ValueError):
    """A wire document (ContextWindow JSON and friends) that does not match its schema."""


class WorkerError(CCAnalyticsError, RuntimeError):
    """A worker process ended abruptly (killed, or out of memory) while reading a batch."""
