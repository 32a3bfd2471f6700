"""Lazy package attributes (PEP 562): a name → module map resolved on first use.

Imports: the standard library only. Each lazy package (the root, ``frames``, the format
packages, ``views``) declares what it exports and where it lives; this module supplies the
``__getattr__`` and ``__dir__`` that import the owner only when a name is first read, so
importing a package stays cheap. :class:`LazyModule` does the same for one module a module
uses (``frames.api``'s Polars), and :class:`Exported` names a package's export as a callable
that a worker process can be handed before this process imports it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


class LazyModule:
    """A module imported when one of its attributes is first read: a module whose functions all
    need it, but whose callers need not wait for it (the command line plans its files and hands
    the first batches to the workers before it imports Polars).

    Examples:
        >>> json = LazyModule("json")
        >>> json.dumps([1])
        '[1]'
    """

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


class Exported:
    """A package's export (a format package's ``tables_batch``) as a
    callable, imported when first called: handed to a worker process (pickled by its two names),
    it does not make this process import the module that defines it.

    Examples:
        >>> import pickle
        >>> dumps = pickle.loads(pickle.dumps(Exported("json", "dumps")))
        >>> dumps({"a": 1})
        '{"a": 1}'
    """

    __slots__ = ("package", "name")

    def __init__(self, package: str, name: str) -> None:
        self.package = package
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(self.package), self.name)(*args, **kwargs)

    def __reduce__(self) -> tuple[type[Exported], tuple[str, str]]:
        return (Exported, (self.package, self.name))

    def __repr__(self) -> str:
        return f"Exported({self.package!r}, {self.name!r})"


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
