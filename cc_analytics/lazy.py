"""Lazy package attributes (PEP 562): a name → module map resolved on first use.

Imports: the standard library only. Each lazy package (the root, ``frames``, the format
packages, ``views``) declares what it exports and where it lives; this module supplies the
``__getattr__`` and ``__dir__`` that import the owner only when a name is first read, so
importing a package stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose names live in the modules ``exports``
    maps them to (relative to ``package``, or absolute when they start with ``cc_analytics``).
    A name that is itself a module of the map (``views.charts``) resolves to that module.

    Examples:
        >>> ns = {}
        >>> get, names = lazy_exports("cc_analytics", {"InputError": "errors"}, ns)
        >>> get("InputError").__name__, "InputError" in names(), "InputError" in ns
        ('InputError', True, True)
    """

    def __getattr__(name: str) -> Any:
        owner = exports.get(name)
        if owner is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        module = importlib.import_module(owner if owner.startswith("cc_analytics") else f"{package}.{owner}")
        value = module if module.__name__.endswith(f".{name}") else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
