"""The optional C extension (``frames/claude/_skim.c``): imported once per process, or why not.

Imports: the standard library only (and the extension, when asked for it). ``pip install`` builds
the extension where a C compiler is there; without it, or with ``CC_ANALYTICS_PURE_PYTHON`` set
to anything but an empty string or ``0``, every reader runs in pure Python with the same results,
more slowly. This is the one place that reads the variable: the Claude Code line walker takes the
extension from here (worker processes inherit the variable), and so does the command line's note
that it runs without it.
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from types import ModuleType

PURE_PYTHON_ENV = "CC_ANALYTICS_PURE_PYTHON"
MODULE = "cc_analytics.frames.claude._skim"


def pure_python_asked() -> bool:
    """Whether the environment asks for pure Python (``CC_ANALYTICS_PURE_PYTHON``)."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


@cache
def _imported() -> tuple[ModuleType | None, str | None]:
    if pure_python_asked():
        return None, None
    try:
        return importlib.import_module(MODULE), None
    except ImportError as exc:
        return None, str(exc)


def load() -> ModuleType | None:
    """The extension module, or None: not built, or pure Python asked for.

    Examples:
        >>> load() is None or load().__name__ == MODULE
        True
    """
    return _imported()[0]


def missing() -> str | None:
    """Why the extension could not be imported (its ImportError), or None: it was, or pure Python
    was asked for."""
    return _imported()[1]
