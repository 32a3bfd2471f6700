"""The formats cc_analytics reads, and the sources that hold the tables already: the one list
every caller loops over.

Imports: the standard library, ``cc_analytics.errors`` and ``frames.plugin``; the plugin
modules listed below when first asked for (each format's imports the standard library only),
and ``importlib.metadata`` for the entry points of other distributions. This is the one module
that names plug-ins, by string: a table source (:data:`TABLE_SOURCES`, the archive) lives in a
layer above ``frames`` and is imported only when :func:`table_sources` is first asked.

A format is one line of :data:`BUILTIN` (``"module:attribute"`` of its plugin object), or an
entry point of the group :data:`ENTRY_POINT_GROUP` in another distribution's metadata::

    [project.entry-points."cc_analytics.formats"]
    myagent = "myagent_cc.plugin:PLUGIN"

This module and ``commands/statusline.py`` (which serves Claude Code's own hook) are the only
modules outside a format's package that name a format.

Examples:
    >>> [plugin.name for plugin in formats()][:3]
    ['claude-code', 'chainlesschain', 'codex']
    >>> get("codex").label
    'OpenAI Codex CLI'
    >>> table_sources()
    [<table source 'archive'>]
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from cc_analytics.errors import InputError
from cc_analytics.frames.plugin import FormatPlugin, TableSource

P = TypeVar("P", FormatPlugin, TableSource)

BUILTIN: tuple[str, ...] = (
    "cc_analytics.frames.claude.plugin:PLUGIN",
    "cc_analytics.frames.chainless.plugin:PLUGIN",
    "cc_analytics.frames.codex.plugin:PLUGIN",
    "cc_analytics.frames.gemini.plugin:PLUGIN",
    "cc_analytics.frames.opencode.plugin:PLUGIN",
    "cc_analytics.frames.qwen.plugin:PLUGIN",
    "cc_analytics.frames.copilot.plugin:PLUGIN",
)
"""The built-in formats, in the order frames, reports and help texts list them."""

TABLE_SOURCES: tuple[str, ...] = ("cc_analytics.archive.source:ARCHIVE",)
"""The sources that hold the tables already (``"module:attribute"`` of a
:class:`~cc_analytics.frames.plugin.TableSource`), asked in this order whether a source is theirs."""

FALLBACK = "claude-code"
"""The format of a file without a JSON object in its first lines: its loader reports each line."""
UNRECOGNIZED = ""
"""How a plan names files whose first JSON object no format recognises (``frames.unrecognized``)."""

ENTRY_POINT_GROUP = "cc_analytics.formats"
ONLY_ENV = "CC_ANALYTICS_FORMATS"
"""A comma-separated list of format names limits the registry to them (tests; a user who
wants one agent's files only)."""

_loaded: list[FormatPlugin] | None = None
_table_sources: list[TableSource] | None = None


def formats() -> list[FormatPlugin]:
    """Every registered format: the built-in ones, then those of entry points, by name once.

    A plugin that cannot be loaded is named on stderr once and left out; the others work.
    """
    global _loaded
    if _loaded is None:
        _loaded = _load()
    return _loaded


def table_sources() -> list[TableSource]:
    """Every registered table source, in the order of :data:`TABLE_SOURCES`, imported on the
    first call (no module of ``frames`` imports the archive's).

    Examples:
        >>> [source.name for source in table_sources()]
        ['archive']
    """
    global _table_sources
    if _table_sources is None:
        found = (_plugin(spec, TableSource) for spec in TABLE_SOURCES)
        _table_sources = [source for source in found if source is not None]
    return _table_sources


def names() -> list[str]:
    """The names of :func:`formats`, in order."""
    return [plugin.name for plugin in formats()]


def get(name: str) -> FormatPlugin:
    """The plugin of format ``name``, or an :class:`InputError` that lists the known ones.
    ``UNRECOGNIZED`` gives the stand-in of files no format recognises (``frames.unrecognized``).

    Examples:
        >>> get("nope")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        cc_analytics.errors.InputError: unknown format 'nope'...
    """
    for plugin in formats():
        if plugin.name == name:
            return plugin
    if name == UNRECOGNIZED:
        from cc_analytics.frames.unrecognized import PLUGIN

        return PLUGIN
    msg = f"unknown format {name!r}\nHint: use one of 'auto', {', '.join(map(repr, names()))}."
    raise InputError(msg)


def recognize(objects: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None, head: bytes) -> str:
    """The name of the format whose plugin recognises a file, from its first JSON object lines
    (``objects``: the object lines among its first few, or one of them, or None) and ``head``
    (its first bytes). The first object line a plugin recognises decides (plugins asked in
    sniff order); a file without any is offered to each plugin as None (its head may still
    show it: a first line longer than the head). When none recognises it: the fallback format
    for a file without a JSON object in its first lines (its loader reports each line), else
    :data:`UNRECOGNIZED` (the file is a problem, never another format's session).

    Examples:
        >>> recognize({"kind": "not a transcript"}, b"") == UNRECOGNIZED, recognize(None, b"junk") == fallback()
        (True, True)
    """
    if objects is None:
        found: list[Mapping[str, Any]] = []
    elif isinstance(objects, Mapping):
        found = [objects]
    else:
        found = [value for value in objects if isinstance(value, Mapping)]
    candidates: list[Mapping[str, Any] | None] = [*found] if found else [None]
    for value in candidates:
        name = recognized(value, head)
        if name is not None:
            return name
    return UNRECOGNIZED if found else fallback()


def recognized(value: Mapping[str, Any] | None, head: bytes) -> str | None:
    """The name of the first plugin (in sniff order) that recognises one object line ``value``
    of a file whose first bytes are ``head``, else None."""
    for plugin in _in_sniff_order():
        try:
            if plugin.recognizes(value, head):
                return plugin.name
        except Exception:  # noqa: BLE001  (a plugin's bug must not stop the others)
            continue
    return None


def fallback() -> str:
    """:data:`FALLBACK` when it is registered, else the first registered format."""
    known = names()
    return FALLBACK if FALLBACK in known or not known else known[0]


def order(name: str) -> int:
    """A format's place in :func:`formats` (unknown ones last): how frames are sorted."""
    known = names()
    return known.index(name) if name in known else len(known)


def reload() -> list[FormatPlugin]:
    """Read the registry again (after ``CC_ANALYTICS_FORMATS`` or the installed distributions changed)."""
    global _loaded, _table_sources
    _loaded = _table_sources = None
    return formats()


def _sniff_key(plugin: FormatPlugin) -> tuple[int, int]:
    return (plugin.sniff_order, order(plugin.name))


_sniffing: tuple[list[FormatPlugin], list[FormatPlugin]] = ([], [])  # (formats(), they in sniff order)


def _in_sniff_order() -> list[FormatPlugin]:
    """:func:`formats` in sniff order, sorted once for each loading of the registry (a plan asks
    for every file it sniffs)."""
    global _sniffing
    loaded = formats()
    if _sniffing[0] is not loaded:
        _sniffing = (loaded, sorted(loaded, key=_sniff_key))
    return _sniffing[1]


def _load() -> list[FormatPlugin]:
    out: list[FormatPlugin] = []
    seen: set[str] = set()
    for spec in (*BUILTIN, *_entry_points()):
        plugin = _plugin(spec, FormatPlugin)
        if plugin is None or plugin.name in seen:
            continue
        seen.add(plugin.name)
        out.append(plugin)
    only = os.environ.get(ONLY_ENV, "").strip()
    if only:
        wanted = {name.strip() for name in only.split(",") if name.strip()}
        out = [plugin for plugin in out if plugin.name in wanted]
    return out


def _entry_points() -> list[str]:
    """The values of the entry points of :data:`ENTRY_POINT_GROUP`, read from each installed
    distribution's ``entry_points.txt`` on ``sys.path`` (the first of a name wins, as for
    ``importlib.metadata``, whose import and scan cost every run a tenth of a second).

    Examples:
        >>> _entry_points()  # none of the distributions installed here declares a format
        []
    """
    out: list[str] = []
    seen: set[str] = set()
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:  # not a folder (a zip file), or gone
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            distribution = name.rpartition(".")[0].partition("-")[0].lower().replace("-", "_").replace(".", "_")
            if distribution in seen:
                continue
            seen.add(distribution)
            try:
                with open(os.path.join(folder or ".", name, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):  # no entry points, or broken metadata
                continue
            out += _group_values(text, ENTRY_POINT_GROUP)
    return out


def _group_values(text: str, group: str) -> list[str]:
    """The values of the entries of ``[group]`` in the INI text of an ``entry_points.txt``.

    Examples:
        >>> _group_values("[console_scripts]\\nx = a:b\\n\\n[cc_analytics.formats]\\nmine = m.plugin:PLUGIN\\n", "cc_analytics.formats")
        ['m.plugin:PLUGIN']
    """
    values: list[str] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            values.append(line.partition("=")[2].strip())
    return values


def _plugin(spec: str, kind: type[P]) -> P | None:
    module_name, _, attribute = spec.partition(":")
    try:
        value = getattr(importlib.import_module(module_name), attribute or "PLUGIN")
    except Exception as error:  # noqa: BLE001  (another distribution's plugin failing to import)
        if module_name.startswith("cc_analytics."):
            raise
        sys.stderr.write(f"cc-analytics: the format plugin {spec!r} could not be loaded ({error}); left out\n")
        return None
    plugin = value() if isinstance(value, type) else value
    if not isinstance(plugin, kind):
        sys.stderr.write(f"cc-analytics: {spec!r} is not a {kind.__name__}; left out\n")
        return None
    return plugin
