"""The program as a whole: ``--version``, ``--help``, and the process it sets up (Polars' engine)."""

from __future__ import annotations

import os
import subprocess
import sys

import cc_analytics
from cc_analytics.commands import COMMANDS
from cc_analytics.frames.engine import BATCH_ENGINE, POLARS_ENGINE_ENV
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


def test_the_command_runs_polars_on_the_batch_engine_unless_the_user_chose_one() -> None:
    # The process that is the command sets Polars' default engine (inherited by its workers);
    # a caller of main(argv) in its own process (a test, a notebook) keeps its own.
    probe = (
        "import os, sys\n"
        "from cc_analytics import cli\n"
        "sys.argv = ['cc-analytics', '--version']\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        f"print(os.environ.get({POLARS_ENGINE_ENV!r}), file=sys.stderr)\n"
    )
    env = {name: value for name, value in os.environ.items() if name != POLARS_ENGINE_ENV}
    for chosen, expected in ((None, BATCH_ENGINE), ("streaming", "streaming")):
        run_env = env if chosen is None else {**env, POLARS_ENGINE_ENV: chosen}
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, env=run_env, timeout=60)
        assert done.stderr.decode().strip() == expected
    in_process = subprocess.run(
        [sys.executable, "-c", probe.replace("cli.main()", "cli.main(['--version'])")],
        capture_output=True,
        check=True,
        env=env,
        timeout=60,
    )
    assert in_process.stderr.decode().strip() == "None"
