"""The cache of decoded sessions survives whatever stops a run: ``sessions`` and ``usage`` killed
(SIGKILL, to the whole process group: nothing of the run is cleaned up) at random points of cold,
partly warm and warm runs, and two runs at once; each next run prints what a run without the cache
prints.

Real processes on a generated corpus (``benchmarks/corpus.py``), its files dated back so that
they are kept (a file modified in the last seconds is decoded, never kept). The kill points are
drawn over the length of a measured run, most near its end, where the packs and the manifest are
written.
"""

from __future__ import annotations

import importlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, SCRIPT, run_cli

sys.path.insert(0, str(ROOT / "benchmarks"))
corpus = importlib.import_module("corpus")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and SIGKILL as on Linux"),
]

KILLS = 10
COMMANDS = (["sessions", "--json"], ["usage", "--by", "day", "--json", "--timezone", "UTC"])


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("killed")
    corpus.generate(out, size_mb=4, sessions=30, seed=26)
    settle(out / "projects", time.time() - 3600)
    return out / "projects"


def settle(folder: Path, when: float) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (when, when))


def without_cache(command: list[str], projects: Path, env: dict[str, str]) -> bytes:
    done = run_cli([*command, str(projects), "--no-cache"], env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_and_kill(command: list[str], projects: Path, cache: Path, after: float) -> None:
    env = {**os.environ, "CC_ANALYTICS_CACHE_DIR": str(cache), "TZ": "UTC"}
    process = subprocess.Popen(
        [str(SCRIPT), *command, str(projects), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    time.sleep(after)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # it ended first: a whole run is one of the points too
        pass
    process.wait(timeout=60)


def test_a_run_killed_anywhere_leaves_what_the_next_run_reads_right(projects: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"CC_ANALYTICS_CACHE_DIR": str(cache)}
    rng = random.Random(26)
    start = time.perf_counter()
    expected = {tuple(command): without_cache(command, projects, env) for command in COMMANDS}
    cold = (time.perf_counter() - start) / len(COMMANDS)
    files = sorted(projects.rglob("*.jsonl"))
    for kill in range(KILLS):
        command = COMMANDS[kill % len(COMMANDS)]
        if kill % 4 == 3:  # some sessions grew since: a partly warm run is killed
            for grown in rng.sample(files, 3):
                with grown.open("ab") as handle:
                    handle.write(grown.read_bytes().splitlines(keepends=True)[-1])
            settle(projects, time.time() - 3000 + kill)
            expected = {tuple(c): without_cache(c, projects, env) for c in COMMANDS}
        if kill % 5 == 4:
            run_cli(["cache", "clear"], env=env)  # a cold run is killed
        run_and_kill(command, projects, cache, after=cold * rng.uniform(0.3, 1.1))
        for after in COMMANDS:
            done = run_cli([*after, str(projects)], env=env)
            assert done.returncode == 0, (kill, done.stderr)
            assert done.stdout == expected[tuple(after)], (kill, after)
    facts = run_cli(["cache", "info", "--json"], env=env)
    assert facts.returncode == 0 and b'"sessions"' in facts.stdout


def test_two_runs_at_once(projects: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "CC_ANALYTICS_CACHE_DIR": str(cache), "TZ": "UTC"}
    command = [str(SCRIPT), "sessions", "--json", str(projects), "--quiet"]
    expected = without_cache(["sessions", "--json"], projects, {"CC_ANALYTICS_CACHE_DIR": str(cache)})
    for _ in range(2):  # cold, both writing; then warm, both reading
        running = [subprocess.Popen(command, stdout=subprocess.PIPE, env=env) for _ in range(2)]
        outputs = [process.communicate(timeout=300)[0] for process in running]
        assert all(process.returncode == 0 for process in running)
        assert outputs == [expected, expected]
    again = run_cli(["sessions", "--json", str(projects)], env={"CC_ANALYTICS_CACHE_DIR": str(cache)})
    assert again.stdout == expected
