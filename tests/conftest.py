"""Shared test helpers: where the repo and ../shared are, how to run the console script, and
whether the C extension is there to test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from cc_analytics.frames import extension
from tests.paths import ROOT as ROOT  # re-exported: tests import ROOT and SHARED from here
from tests.paths import SHARED

SCRIPT = Path(sys.executable).with_name("cc-analytics")

# Property tests draw the same examples on every run ("derandomize": a run's verdict depends on the
# code, not on the draw, so CI cannot fail on a case the previous run did not try);
# HYPOTHESIS_PROFILE=explore draws afresh each run, to look for new counterexamples (add each one
# found as an @example). The fuzz targets explore too (tests/fuzz/run_long.py).
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))


@pytest.fixture(autouse=True, scope="session")
def _price_book(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Prices cached by this run only (``frames.prices.PriceBook``), never in the user's cache."""
    os.environ["CC_ANALYTICS_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


def shared_path(*parts: str) -> Path:
    """A path under ../shared, skipping the test with a clear reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"{path} is absent: it comes from ../shared beside the repository (or $CC_SHARED_DIR), not from a clone"
        )
    return path


def extension_unavailable(module: str | None = None) -> str | None:
    """Why the C extension ``module`` (by default the first a format declares: Claude Code's
    skimmer) cannot be tested in this run (pure Python asked for, or not built), or None."""
    if extension.pure_python_asked():
        return f"{extension.PURE_PYTHON_ENV} is set: this run tests the pure Python path (a user without a C compiler)"
    if extension.load(module) is None:
        name = module or extension.native_module()
        return f"the C extension {name} is not built ({extension.missing(name)}): `pip install -e .` with a C compiler"
    return None


def extension_or_skip() -> ModuleType:
    """The C extension, or a skip of the calling test module that says why it is not there."""
    reason = extension_unavailable()
    module = extension.load()
    if reason is not None or module is None:
        pytest.skip(reason, allow_module_level=True)
    return module


def inherited_env() -> dict[str, str]:
    """What every child process takes from this one whatever else its environment holds: PATH, and
    the choice of pure Python (so that a run under it tests it in the console script too)."""
    kept = {"PATH": os.environ.get("PATH", "")}
    if extension.PURE_PYTHON_ENV in os.environ:
        kept[extension.PURE_PYTHON_ENV] = os.environ[extension.PURE_PYTHON_ENV]
    return kept


def run_cli(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the installed ``cc-analytics`` console script with a minimal, deterministic environment."""
    base = {**inherited_env(), "LANG": "C", "LC_ALL": "C", "TZ": "UTC", "FORCE_COLOR": "0"}
    base["CC_ANALYTICS_CACHE_DIR"] = os.environ.get("CC_ANALYTICS_CACHE_DIR", "")
    base.update(env or {})
    return subprocess.run([str(SCRIPT), *args], env=base, capture_output=True, cwd=cwd, timeout=300, input=stdin)
