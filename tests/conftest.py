"""Shared test helpers: where the repo and ../shared are, and how to run the console script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CC_SHARED_DIR", ROOT.parent / "shared"))
SCRIPT = Path(sys.executable).with_name("cc-analytics")


def shared_path(*parts: str) -> Path:
    """A path under ../shared, skipping the test with a clear reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared conformance data lives in ../shared next to the repo")
    return path


def run_cli(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the installed ``cc-analytics`` console script with a minimal, deterministic environment."""
    base = {"PATH": os.environ.get("PATH", ""), "LANG": "C", "LC_ALL": "C", "TZ": "UTC", "FORCE_COLOR": "0"}
    base.update(env or {})
    return subprocess.run([str(SCRIPT), *args], env=base, capture_output=True, cwd=cwd, timeout=300)
