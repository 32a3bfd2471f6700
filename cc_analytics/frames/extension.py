"""The optional C extensions of the formats: each imported once per process, or why not.

Imports: the standard library and ``frames.registry`` (which formats declare one:
``FormatPlugin.native_module``; Claude Code's line skimmer and Codex's lean scan loop), and an
extension when asked for it. ``pip install`` builds the extension where a C compiler is there; without it, or with ``CC_ANALYTICS_PURE_PYTHON`` set
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


def native_module() -> str | None:
    """The module of the formats' C extension (the first a registered format declares), if any.

    Examples:
        >>> native_module() is None or native_module().startswith("cc_analytics.")
        True
    """
    from cc_analytics.frames.registry import formats

    return next((plugin.native_module for plugin in formats() if plugin.native_module), None)


def native_modules() -> list[str]:
    """The modules of every registered format's C extension, in the registry's order.

    Examples:
        >>> all(name.startswith("cc_analytics.") for name in native_modules())
        True
    """
    from cc_analytics.frames.registry import formats

    return [plugin.native_module for plugin in formats() if plugin.native_module]


def __getattr__(name: str) -> str | None:
    if name == "MODULE":  # the extension's module name, as it was spelled here before
        return native_module()
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def pure_python_asked() -> bool:
    """Whether the environment asks for pure Python (``CC_ANALYTICS_PURE_PYTHON``)."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


@cache
def _imported(module: str | None) -> tuple[ModuleType | None, str | None]:
    if pure_python_asked() or module is None:
        return None, None
    try:
        return importlib.import_module(module), None
    except ImportError as exc:
        return None, str(exc)


def load(module: str | None = None) -> ModuleType | None:
    """The extension ``module`` (by default the first a format declares), or None: not built, or
    pure Python asked for.

    Examples:
        >>> load() is None or load().__name__ == native_module()
        True
        >>> all(load(name) is None or load(name).MAX_DEPTH == 25_000 for name in native_modules())
        True
    """
    return _imported(module or native_module())[0]


def missing(module: str | None = None) -> str | None:
    """Why the extension ``module`` could not be imported (its ImportError), or None: it was, or
    pure Python was asked for. Without ``module``: the first of every format's that could not."""
    if module is not None:
        return _imported(module)[1]
    return next((why for name in native_modules() if (why := _imported(name)[1]) is not None), None)
