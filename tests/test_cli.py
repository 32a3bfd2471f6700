"""The program as a whole: ``--version`` and ``--help``."""

from __future__ import annotations

import cc_analytics
from cc_analytics.commands import COMMANDS
from tests.conftest import run_cli


def test_version() -> None:
    done = run_cli(["--version"])
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode() == f"cc-analytics {cc_analytics.__version__}\n"


def test_help_lists_every_command() -> None:
    done = run_cli(["--help"])
    assert done.returncode == 0 and done.stderr == b""
    assert all(name in done.stdout.decode() for name in COMMANDS)
    assert "--version" in done.stdout.decode()
