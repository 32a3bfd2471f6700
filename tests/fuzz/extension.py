"""Load the C extension from a file of one's choosing (a build with sanitizers, see ``sanitize.sh``)
in place of the installed one. Imports nothing else of the tests, so that pytest can be started
after it (``sanitize.sh``) and still rewrite the asserts of hypothesis and the tests."""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from pathlib import Path

EXTENSION = "cc_analytics.frames.claude._skim"
CODEX_EXTENSION = "cc_analytics.frames.codex._scan"
COPILOT_EXTENSION = "cc_analytics.frames.copilot._events"


# Each extension: its option, the module that takes its C loop, that module's name for the loop,
# the loop's own name, and what the module is called in messages.
LOOPS = {
    EXTENSION: ("--extension", "cc_analytics.frames.claude.decode", "SKIM_LINES", "skim_lines", "the walker"),
    CODEX_EXTENSION: (
        "--codex-extension",
        "cc_analytics.frames.codex.scan",
        "SCAN_LINES",
        "scan_lines",
        "the lean scan",
    ),
    COPILOT_EXTENSION: (
        "--copilot-extension",
        "cc_analytics.frames.copilot.events",
        "SCAN_LINES",
        "scan_lines",
        "the walk",
    ),
}


def load(name: str, path: Path) -> None:
    """Import the C extension ``name`` (one of :data:`LOOPS`) from ``path`` under its own name,
    before anything imports the module that uses it; SystemExit, saying why, when that module
    would not use it."""
    option, user, attribute, loop, called = LOOPS[name]
    if name in sys.modules or user in sys.modules:
        msg = f"{option} {path}: {called} or {name} was imported already"
        raise SystemExit(msg)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        msg = f"{option} {path}: not a Python extension module (its name must end in {suffix!r})"
        raise SystemExit(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    from cc_analytics.frames import extension

    if getattr(importlib.import_module(user), attribute) is not getattr(module, loop):
        msg = f"{option} {path}: {called} does not use it; unset {extension.PURE_PYTHON_ENV}"
        raise SystemExit(msg)


def load_extension(path: Path) -> None:
    """:func:`load` of the Claude Code walker's skimmer."""
    load(EXTENSION, path)


def load_codex_extension(path: Path) -> None:
    """:func:`load` of the Codex lean scan's loop."""
    load(CODEX_EXTENSION, path)


def load_copilot_extension(path: Path) -> None:
    """:func:`load` of the Copilot CLI walk's loop."""
    load(COPILOT_EXTENSION, path)
