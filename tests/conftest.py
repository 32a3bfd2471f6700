"""Shared test helpers: where the repo and ../shared are, and how to run the console script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT as ROOT  # re-exported: tests import ROOT and SHARED from here
from tests.paths import SHARED

SCRIPT = Path(sys.executable).with_name("cc-analytics")


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


def run_cli(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the installed ``cc-analytics`` console script with a minimal, deterministic environment."""
    base = {"PATH": os.environ.get("PATH", ""), "LANG": "C", "LC_ALL": "C", "TZ": "UTC", "FORCE_COLOR": "0"}
    base["CC_ANALYTICS_CACHE_DIR"] = os.environ.get("CC_ANALYTICS_CACHE_DIR", "")
    base.update(env or {})
    return subprocess.run([str(SCRIPT), *args], env=base, capture_output=True, cwd=cwd, timeout=300, input=stdin)
