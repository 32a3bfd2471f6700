"""A format is a plugin: outside its own package, only the registry (and the status line, which
serves Claude Code's own hook) names it; the registry takes formats from other distributions.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

import cc_analytics.frames.registry as registry
from cc_analytics.frames.plugin import FormatPlugin
from cc_analytics.frames.sources import sniff_head
from tests.conftest import ROOT

PACKAGE = ROOT / "cc_analytics"
ALLOWED = {"frames/registry.py", "commands/statusline.py"}


def format_folders() -> list[Path]:
    """Each registered format's package folder (its verbs module's folder)."""
    folders = []
    for plugin in registry.formats():
        module = sys.modules.get(plugin.package) or plugin.module()
        assert module.__file__ is not None
        folders.append(Path(module.__file__).parent)
    return folders


def names_a_format(text: str) -> list[str]:
    """What in ``text`` names a registered format: its ``format`` value as a token, or an import
    of its package."""
    found = []
    for plugin in registry.formats():
        if re.search(rf"(?<![\w-]){re.escape(plugin.name)}(?![\w-])", text):
            found.append(plugin.name)
        dotted = plugin.package.removeprefix("cc_analytics.")
        parent, _, leaf = dotted.rpartition(".")
        if re.search(rf"\b{re.escape(dotted)}\b", text) or re.search(
            rf"from cc_analytics\.{parent} import .*\b{leaf}\b", text
        ):
            found.append(plugin.package)
    return found


def test_only_the_registry_and_the_status_line_name_a_format() -> None:
    folders = format_folders()
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(folder in path.parents for folder in folders):
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        found = names_a_format(path.read_text(encoding="utf-8"))
        if found and relative not in ALLOWED:
            offenders[relative] = sorted(set(found))
    assert offenders == {}, "modules outside a format's package that name a format"


def test_the_check_would_see_a_module_naming_a_format() -> None:
    name = registry.formats()[0].name
    assert names_a_format(f'frame.filter(pl.col("format") == "{name}")')
    assert names_a_format(f"from {registry.formats()[0].package} import x")
    assert not names_a_format("a format-agnostic module")


class ToyPlugin(FormatPlugin):
    """A format of another distribution: files whose first object has a ``toy`` key."""

    name = "toy-agent"
    label = "Toy Agent"
    package = "cc_analytics.frames.unrecognized"  # reads nothing: enough to be listed and sniffed
    worker_module = "cc_analytics.frames.unrecognized"
    store_hint = "~/.toy"

    def recognizes(self, first: Any, head: bytes) -> bool:
        return first is not None and "toy" in first

    def default_stores(self) -> list[Path]:
        return [Path("~/.toy").expanduser()]


TOY = ToyPlugin()


def test_an_entry_point_adds_a_format(monkeypatch: pytest.MonkeyPatch) -> None:
    module = type(sys)("toy_agent_plugin")
    module.PLUGIN = TOY  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toy_agent_plugin", module)
    monkeypatch.setattr(registry, "_entry_points", lambda: ["toy_agent_plugin:PLUGIN"])
    try:
        assert registry.reload()[-1] is TOY
        assert registry.get("toy-agent") is TOY
        assert sniff_head(b'{"toy": 1}\n') == "toy-agent"
        assert sniff_head(b'{"kind": 1}\n') == registry.UNRECOGNIZED
    finally:
        monkeypatch.undo()
        registry.reload()
    assert "toy-agent" not in registry.names()


def test_entry_points_are_read_from_the_installed_distributions_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What pip writes for a distribution that declares a format, found on sys.path; the same
    # distribution further down the path is shadowed, as importlib.metadata has it.
    for folder, value in (("first", "toy_agent_plugin:PLUGIN"), ("second", "shadowed:PLUGIN")):
        info = tmp_path / folder / "toy_agent-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "entry_points.txt").write_text(
            f"[console_scripts]\ntoy = toy:main\n\n[cc_analytics.formats]\ntoy-agent = {value}\n"
        )
    other = tmp_path / "first" / "other-2.0.dist-info"
    other.mkdir()
    (other / "entry_points.txt").write_text("[cc_analytics.formats]\n# a comment\nother = other.plugin:PLUGIN\n")
    (tmp_path / "first" / "plain-1.0.dist-info").mkdir()  # no entry points
    monkeypatch.setattr(sys, "path", [str(tmp_path / "first"), str(tmp_path / "second"), str(tmp_path / "absent")])
    assert sorted(registry._entry_points()) == ["other.plugin:PLUGIN", "toy_agent_plugin:PLUGIN"]


def test_a_broken_entry_point_is_named_and_left_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(registry, "_entry_points", lambda: ["no_such_module_xyz:PLUGIN", "json:dumps"])
    try:
        loaded = registry.reload()
    finally:
        monkeypatch.undo()
        registry.reload()
    assert [p.name for p in loaded] == registry.names()
    err = capsys.readouterr().err
    assert "no_such_module_xyz:PLUGIN" in err and "could not be loaded" in err
    assert "'json:dumps' is not a FormatPlugin" in err


def test_the_environment_limits_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    first = registry.names()[0]
    monkeypatch.setenv(registry.ONLY_ENV, first)
    try:
        assert registry.reload() and registry.names() == [first]
    finally:
        monkeypatch.delenv(registry.ONLY_ENV)
        registry.reload()
    assert len(registry.names()) > 1


def test_a_format_with_an_optional_verb_group_exposes_it_and_the_front_reads_only_those() -> None:
    import polars as pl

    import cc_analytics.frames as ccf
    from cc_analytics.frames.plugin import COMPOSITION_VERBS, FINDINGS_VERBS, LIMIT_VERBS

    groups = {"has_limits": LIMIT_VERBS, "has_composition": COMPOSITION_VERBS, "has_findings": FINDINGS_VERBS}
    for plugin in registry.formats():
        module = plugin.module()
        for flag, verbs in groups.items():
            if getattr(plugin, flag):
                assert all(callable(getattr(module, verb, None)) for verb in verbs), (plugin.name, flag)
    with_findings = {plugin.name for plugin in registry.formats() if plugin.has_findings}
    # The samples hold every format: the front skips those without findings, naming none.
    found = ccf.read_findings(ROOT / "data-samples")
    assert set(found["format"]) == with_findings and found.filter(pl.col("format").is_null()).height == 0


def test_a_store_module_gives_the_three_store_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A format names the module that finds its files instead of writing three methods that call it.
    store = type(sys)("toy_agent_store")
    store.default_stores = lambda: [tmp_path]  # type: ignore[attr-defined]
    store.resolve = lambda source, *, planned=False: [("resolved", source, planned)]  # type: ignore[attr-defined]
    store.classify = lambda path, *, size, head: ("classified", path, size, head)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toy_agent_store", store)

    class Stored(FormatPlugin):
        name, label, package, worker_module, store_hint = TOY.name, TOY.label, TOY.package, TOY.package, "~/.toy"
        store_module = "toy_agent_store"

    plugin = Stored()
    assert plugin.default_stores() == [tmp_path]
    assert plugin.resolve("x", planned=True) == [("resolved", "x", True)]  # type: ignore[comparison-overlap]
    assert plugin.classify(tmp_path, size=3, head=b"{}") == ("classified", tmp_path, 3, b"{}")  # type: ignore[comparison-overlap]
    # Without one, a method not overridden says what is missing (ToyPlugin overrides default_stores only).
    with pytest.raises(NotImplementedError, match="ToyPlugin names no store_module"):
        TOY.resolve(None)
    assert TOY.default_stores() == [Path("~/.toy").expanduser()]


def test_a_long_chainless_record_after_a_line_that_is_not_one_is_still_chainless() -> None:
    # Found by the discovery fuzz target: a nested first line, then a record longer than the head.
    record = b'{"type":"user_message","timestamp":1767225604500,"data":{"role":"user","content":"' + b"x" * 200_000
    assert sniff_head(b"[[[[]]]]\n" + record[:65_536]) == "chainlesschain"
    assert sniff_head(b'[[[[]]]]\n{"type":"user","timestamp":"2026-03-01T10:00:00Z","data":{') != "chainlesschain"
