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


def load_extension(path: Path) -> None:
    """Import the C extension from ``path`` under its own name, before anything imports the walker;
    SystemExit, saying why, when the walker would not use it."""
    if EXTENSION in sys.modules or "cc_analytics.frames.claude.decode" in sys.modules:
        msg = f"--extension {path}: the walker or {EXTENSION} was imported already"
        raise SystemExit(msg)
    spec = importlib.util.spec_from_file_location(EXTENSION, path)
    if spec is None or spec.loader is None:
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        msg = f"--extension {path}: not a Python extension module (its name must end in {suffix!r})"
        raise SystemExit(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[EXTENSION] = module
    spec.loader.exec_module(module)
    from cc_analytics.frames import extension
    from cc_analytics.frames.claude import decode

    if decode.SKIM_LINES is not module.skim_lines:
        msg = f"--extension {path}: the walker does not use it; unset {extension.PURE_PYTHON_ENV}"
        raise SystemExit(msg)


def load_codex_extension(path: Path) -> None:
    """Import the Codex scan's C loop from ``path`` under its own name, before anything imports the
    lean scan; SystemExit, saying why, when the scan would not use it."""
    if CODEX_EXTENSION in sys.modules or "cc_analytics.frames.codex.lean" in sys.modules:
        msg = f"--codex-extension {path}: the lean scan or {CODEX_EXTENSION} was imported already"
        raise SystemExit(msg)
    spec = importlib.util.spec_from_file_location(CODEX_EXTENSION, path)
    if spec is None or spec.loader is None:
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        msg = f"--codex-extension {path}: not a Python extension module (its name must end in {suffix!r})"
        raise SystemExit(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[CODEX_EXTENSION] = module
    spec.loader.exec_module(module)
    from cc_analytics.frames import extension
    from cc_analytics.frames.codex import lean

    if lean.SCAN_LINES is not module.scan_lines:
        msg = f"--codex-extension {path}: the lean scan does not use it; unset {extension.PURE_PYTHON_ENV}"
        raise SystemExit(msg)


def load_copilot_extension(path: Path) -> None:
    """Import the Copilot CLI walk's C loop from ``path`` under its own name, before anything
    imports the walk; SystemExit, saying why, when the walk would not use it."""
    if COPILOT_EXTENSION in sys.modules or "cc_analytics.frames.copilot.events" in sys.modules:
        msg = f"--copilot-extension {path}: the walk or {COPILOT_EXTENSION} was imported already"
        raise SystemExit(msg)
    spec = importlib.util.spec_from_file_location(COPILOT_EXTENSION, path)
    if spec is None or spec.loader is None:
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        msg = f"--copilot-extension {path}: not a Python extension module (its name must end in {suffix!r})"
        raise SystemExit(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[COPILOT_EXTENSION] = module
    spec.loader.exec_module(module)
    from cc_analytics.frames import extension
    from cc_analytics.frames.copilot import events

    if events.SCAN_LINES is not module.scan_lines:
        msg = f"--copilot-extension {path}: the walk does not use it; unset {extension.PURE_PYTHON_ENV}"
        raise SystemExit(msg)
