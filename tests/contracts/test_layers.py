"""Import contracts: the package's layers, low to high. A module imports its own block or a
block of a lower layer; the blocks of one layer never import one another; so no cycle runs
between blocks.

Every import counts, wherever it is written (inside a function, under ``TYPE_CHECKING``), and
so do a lazy package's name map (``_EXPORTS``) and a string that names a module of ours
(``"cc_analytics.frames.schema:SESSIONS_SCHEMA"``, which ``importlib`` imports). Only the
registry (``frames.registry``) may name a module of a higher layer by string: that is how
plug-ins (the archive, a table source) plug in from above. The root package is the one lazy
map that spans the layers (the public names of each), so a name taken through it
(``from cc_analytics import read_sessions``, ``cc_analytics.read_sessions``) counts as an import
of the module it lives in, not of the root; the root itself (``__version__``, the front's names
from ``frames.plugin``) sits just above ``frames``. Inside ``frames`` the rule holds one
level down: each format's package is a block above the shared modules, and no format imports
another. Besides ours, a block imports the standard library and the distributions
:data:`THIRD_PARTY` grants it. ``make lint`` runs this file; ``make test`` too.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import cc_analytics.frames.registry as registry
from tests.conftest import ROOT

PACKAGE = ROOT / "cc_analytics"
TOP = "cc_analytics"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "lazy", "jsonline", "cache", "windowmath", "atomic", "cleanup"),  # the leaves
    ("core",),  # the ContextWindow wire contract: standard library only, never Polars
    ("format",),  # the one human formatter
    ("frames",),  # the Polars layer; formats and table sources plug in through its registry
    ("",),  # the root: __version__, and the lazy map of the public names (counted where taken)
    ("archive", "views"),  # the archive (a table source), the charts and widgets
    ("report",),
    ("commands", "interrupts"),  # the CLI's commands, and its signal handling
    ("cli",),
    ("__main__",),  # `python -m cc_analytics`
)
"""The layers, low to high, as blocks named relative to ``cc_analytics``."""

THIRD_PARTY: dict[str, frozenset[str]] = {
    "frames": frozenset({"polars", "orjson", "genai_prices"}),
    "archive": frozenset({"polars", "orjson", "pyarrow", "fsspec", "distributed", "detect_secrets"}),
    "views": frozenset({"polars", "altair", "ipywidgets", "anywidget", "traitlets", "ipykernel"}),
    "report": frozenset({"polars", "orjson", "vl_convert"}),
    "commands": frozenset({"polars", "orjson"}),
}
"""The distributions each block may import; the blocks not named here (the leaves, core,
format, interrupts, cli, the root) import the standard library only."""

BY_NAME = frozenset({"cc_analytics.frames.registry", TOP})
"""The modules that may name a module of a higher layer by string: the registry (the plug-ins)
and the root (its lazy map, counted where a name is taken through it)."""

MODULE_PATH = re.compile(r"cc_analytics(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")
STANDARD = frozenset(sys.stdlib_module_names) | {"__future__"}


class Edge(NamedTuple):
    """One dependency of a module: a module of ours, or the top-level name of a distribution."""

    target: str
    how: str  # "import", "string" (a module path in a string) or "lazy" (a lazy package's map)
    line: int


Graph = dict[str, list[Edge]]


def dotted(name: str) -> str:
    return f"{TOP}.{name}" if name else TOP


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def our_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def owner(name: str, known: set[str]) -> str:
    """The module of ours that ``name`` is or lies in (``a.b.NAME`` → ``a.b``; a compiled
    extension → its package)."""
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def edges_of(
    tree: ast.Module, module: str, *, package: bool, known: set[str], maps: Mapping[str, Mapping[str, str]]
) -> list[Edge]:
    """Every import of ``tree`` wherever it is (``from a import b`` is the module a lazy map
    ``maps`` gives ``b``, else ``a.b`` when that is a module, else ``a``; ``cc_analytics.b`` is
    the module the root's map gives ``b``), and every string that is a module path of ours
    (docstrings aside)."""
    here = module if package else module.rpartition(".")[0]
    root_map = maps.get(TOP, {})
    found: list[Edge] = []
    statements = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Edge(alias.name, "import", node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                child = f"{source}.{alias.name}"
                mapped = maps.get(source, {}).get(alias.name)
                found.append(Edge(mapped or (child if child in known else source), "import", node.lineno))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == TOP:
            if node.attr in root_map:
                found.append(Edge(root_map[node.attr], "import", node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in statements:
            if MODULE_PATH.fullmatch(node.value):
                target = node.value.partition(":")[0]
                if owner(target, known) != TOP:  # "cc_analytics.formats" (an entry-point group) names no module
                    found.append(Edge(target, "string", node.lineno))
    return sorted(set(found), key=lambda edge: (edge.line, edge.target))


def lazy_map(tree: ast.Module, module: str) -> dict[str, str]:
    """Name → module of a lazy package's ``_EXPORTS`` (relative modules are its own), if it has one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            exports: Mapping[str, str] = importlib.import_module(module)._EXPORTS
            return {name: where if where.startswith(TOP) else f"{module}.{where}" for name, where in exports.items()}
    return {}


@functools.cache
def import_graph() -> Graph:
    modules = our_modules()
    trees = {module: ast.parse(path.read_text(encoding="utf-8")) for module, path in modules.items()}
    maps = {module: found for module, tree in trees.items() if (found := lazy_map(tree, module))}
    graph: Graph = {}
    for module, tree in trees.items():
        package = modules[module].name == "__init__.py"
        graph[module] = edges_of(tree, module, package=package, known=set(modules), maps=maps)
        if module != TOP:  # the root's map counts where its names are taken (see the docstring)
            graph[module] += [Edge(where, "lazy", 0) for where in sorted(set(maps.get(module, {}).values()))]
    return graph


def block_of(module: str, blocks: list[str]) -> str | None:
    """The deepest of ``blocks`` (dotted names) holding ``module``; the root holds only itself."""
    holding = [b for b in blocks if module == b or (b != TOP and module.startswith(f"{b}."))]
    return max(holding, key=len, default=None)


def layer_violations(graph: Graph, layers: tuple[tuple[str, ...], ...], *, within: str | None = None) -> list[str]:
    """What in ``graph`` breaks ``layers`` (dotted block names, low to high); with ``within``,
    only the modules of that package and the imports between them count."""
    rank = {block: index for index, layer in enumerate(layers) for block in layer}
    blocks = list(rank)
    known = set(graph)
    found = []
    for module, edges in sorted(graph.items()):
        if within is not None and block_of(module, [within]) is None:
            continue
        mine = block_of(module, blocks)
        if mine is None:
            found.append(f"{module} is in no layer")
            continue
        for edge in edges:
            if edge.target.partition(".")[0] != TOP or (edge.how == "string" and module in BY_NAME):
                continue
            target = owner(edge.target, known)
            theirs = block_of(target, blocks)
            if theirs in (None, mine) or (within is not None and block_of(target, [within]) is None):
                continue
            assert theirs is not None
            where = f"{module}:{edge.line} {'names' if edge.how == 'string' else 'imports'} {edge.target}"
            if rank[theirs] > rank[mine]:
                found.append(f"{where}: {theirs} is a layer above {mine}")
            elif rank[theirs] == rank[mine]:
                found.append(f"{where}: {theirs} and {mine} are independent blocks of one layer")
    return found


def third_party_violations(graph: Graph, allowed: Mapping[str, frozenset[str]]) -> list[str]:
    """The imports of other distributions that ``allowed`` (block → names) does not grant."""
    blocks = [dotted(name) for layer in LAYERS for name in layer]
    found = []
    for module, edges in sorted(graph.items()):
        block = block_of(module, blocks)
        granted = allowed.get(block.removeprefix(TOP).removeprefix(".") if block else "", frozenset())
        for edge in edges:
            top = edge.target.partition(".")[0]
            if edge.how == "import" and top not in STANDARD and top != TOP and top not in granted:
                found.append(f"{module}:{edge.line} imports {edge.target}")
    return found


def format_packages() -> list[str]:
    """Each built-in format's package (its verbs module)."""
    return [plugin.package for plugin in registry.formats() if plugin.package.startswith(f"{TOP}.frames.")]


DOTTED_LAYERS = tuple(tuple(dotted(name) for name in layer) for layer in LAYERS)


def test_every_module_keeps_to_its_layer() -> None:
    assert layer_violations(import_graph(), DOTTED_LAYERS) == []


def test_formats_stand_above_the_shared_frames_modules_and_apart_from_each_other() -> None:
    packages = format_packages()
    assert len(packages) >= 3
    frames = (("cc_analytics.frames",), tuple(packages))
    assert layer_violations(import_graph(), frames, within="cc_analytics.frames") == []


def test_each_block_imports_only_the_distributions_it_may() -> None:
    # core, the leaves and format are standard library only; no Polars below frames, no chart or
    # widget library below views.
    assert third_party_violations(import_graph(), THIRD_PARTY) == []


def test_the_contracts_would_see_a_broken_layering() -> None:
    def graph(module: str, *edges: Edge) -> Graph:
        known = {module, *(e.target for e in edges if e.target.startswith(TOP))}
        return {name: list(edges) if name == module else [] for name in known}

    up = graph("cc_analytics.frames.api", Edge("cc_analytics.archive.read", "import", 1))
    assert layer_violations(up, DOTTED_LAYERS) == [
        "cc_analytics.frames.api:1 imports cc_analytics.archive.read: cc_analytics.archive is a layer above "
        "cc_analytics.frames"
    ]
    sideways = graph("cc_analytics.archive.read", Edge("cc_analytics.views.charts", "import", 2))
    assert "independent" in layer_violations(sideways, DOTTED_LAYERS)[0]
    leaf = graph("cc_analytics.jsonline", Edge("cc_analytics.errors", "import", 3))
    assert layer_violations(leaf, DOTTED_LAYERS)
    by_string = graph("cc_analytics.frames.sources", Edge("cc_analytics.archive.read", "string", 4))
    assert layer_violations(by_string, DOTTED_LAYERS)
    registry_lists = graph("cc_analytics.frames.registry", Edge("cc_analytics.archive.read", "string", 5))
    assert layer_violations(registry_lists, DOTTED_LAYERS) == []
    assert layer_violations({"cc_analytics.newcomer": []}, DOTTED_LAYERS) == ["cc_analytics.newcomer is in no layer"]
    across = graph("cc_analytics.frames.codex.turns", Edge("cc_analytics.frames.claude.turns", "import", 6))
    formats = (("cc_analytics.frames",), ("cc_analytics.frames.claude", "cc_analytics.frames.codex"))
    assert layer_violations(across, formats, within="cc_analytics.frames")
    polars_in_core = graph("cc_analytics.core.window", Edge("polars", "import", 7))
    assert third_party_violations(polars_in_core, THIRD_PARTY) == ["cc_analytics.core.window:7 imports polars"]


def test_imports_are_found_wherever_they_are_written() -> None:
    source = '''
"""A module that mentions "cc_analytics.views" in its docstring only."""
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from cc_analytics.archive.read import Archive
def later():
    import cc_analytics.report
    from cc_analytics import windowmath
SPEC = "cc_analytics.archive.read:ARCHIVE"
'''
    known = {"cc_analytics", "cc_analytics.archive.read", "cc_analytics.report", "cc_analytics.windowmath"}
    edges = edges_of(ast.parse(source), "cc_analytics.frames.x", package=False, known=known, maps={})
    assert sorted((e.target, e.how) for e in edges if e.target.startswith(TOP)) == [
        ("cc_analytics.archive.read", "import"),
        ("cc_analytics.archive.read", "string"),
        ("cc_analytics.report", "import"),
        ("cc_analytics.windowmath", "import"),
    ]


def test_a_name_taken_through_the_root_counts_where_it_lives() -> None:
    source = """
import cc_analytics
from cc_analytics import __version__, read_sessions
cc_analytics.SAMPLES_DIR
"""
    maps = {TOP: {"read_sessions": "cc_analytics.frames.api", "SAMPLES_DIR": "cc_analytics.report"}}
    edges = edges_of(ast.parse(source), "cc_analytics.core.x", package=False, known={TOP}, maps=maps)
    assert sorted(e.target for e in edges) == [TOP, TOP, "cc_analytics.frames.api", "cc_analytics.report"]
    graph: Graph = {TOP: [], "cc_analytics.frames.api": [], "cc_analytics.report": [], "cc_analytics.core.x": edges}
    assert [v.split(": ")[1] for v in layer_violations(graph, DOTTED_LAYERS)] == [
        "cc_analytics is a layer above cc_analytics.core",
        "cc_analytics is a layer above cc_analytics.core",
        "cc_analytics.frames is a layer above cc_analytics.core",
        "cc_analytics.report is a layer above cc_analytics.core",
    ]
