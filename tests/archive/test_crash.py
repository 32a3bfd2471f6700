"""A run killed (SIGKILL) at a random moment leaves an archive that reads as before or after it,
and the next run completes it.

Each trial archives a corpus, changes it (appended lines, a rewritten file, a new file, a
deleted one), then starts ``cc-analytics archive`` in a subprocess and kills it after a random
delay drawn over the length of such a run (measured once, never asserted on).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from cc_analytics.archive import update
from cc_analytics.archive.layout import STAGING
from cc_analytics.archive.read import open_archive
from tests.archive.conftest import Corpus, assert_same, make_corpus, snapshot, tables
from tests.conftest import SCRIPT

TRIALS_DEFAULT = 3
TRIALS_SLOW = 24
SIZE_MB, SESSIONS = 10, 16  # enough work that most kills land inside the run, not in its start


def _change(corpus: Corpus, rng: random.Random) -> None:
    mains = sorted(corpus.generated.glob("*/*.jsonl"))
    for path in rng.sample(mains, 3):
        last = orjson.loads(path.read_bytes().splitlines()[0])
        line = {**last, "uuid": f"late-{rng.random()}", "message": {"role": "user", "content": "and then?"}}
        with path.open("ab") as handle:
            handle.write(orjson.dumps(line) + b"\n")
    rewritten = rng.choice(sorted(corpus.chainless.glob("*.jsonl")))
    rewritten.write_bytes(b"".join(rewritten.read_bytes().splitlines(keepends=True)[:-1]))
    new_project = corpus.claude / "-home-dev-late"
    new_project.mkdir(exist_ok=True)
    shutil.copy(mains[0], new_project / "99999999-aaaa-4bbb-8ccc-dddddddddddd.jsonl")
    rng.choice(sorted(corpus.claude.glob("*/*.jsonl"))).unlink()


def _run(corpus: Corpus, to: Path) -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C", "TZ": "UTC"}
    return subprocess.Popen(
        [str(SCRIPT), "archive", *corpus.sources, "--to", str(to), "--quiet"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def _timed(corpus: Corpus, to: Path) -> float:
    started = time.monotonic()
    _run(corpus, to).communicate()
    return time.monotonic() - started


@pytest.fixture(scope="module")
def run_length(tmp_path_factory: pytest.TempPathFactory) -> tuple[float, float]:
    """How long a run with nothing to do (starting, listing) and one over a changed corpus take
    here: the kills are drawn between the two (never asserted on)."""
    root = tmp_path_factory.mktemp("length")
    corpus = make_corpus(root / "src", size_mb=SIZE_MB, sessions=SESSIONS)
    update(corpus.sources, root / "archive")
    idle = _timed(corpus, root / "archive")
    _change(corpus, random.Random(0))
    return idle, _timed(corpus, root / "archive")


def _trial(seed: int, root: Path, run_length: tuple[float, float]) -> None:
    rng = random.Random(seed)
    corpus = make_corpus(root / "src", size_mb=SIZE_MB, sessions=SESSIONS)
    to = root / "archive"
    update(corpus.sources, to)
    before = tables(to)
    _change(corpus, rng)
    reference = root / "reference"  # the same run, not interrupted
    shutil.copytree(to, reference)
    update(corpus.sources, reference)
    after = tables(reference)

    process = _run(corpus, to)
    idle, busy = run_length
    time.sleep(rng.uniform(0.8 * idle, busy))
    process.send_signal(signal.SIGKILL)
    process.communicate()

    now = tables(to)  # readable, and as before or after the run
    try:
        assert_same(now, before)
    except AssertionError:
        assert_same(now, after)
    summary = update(corpus.sources, to)  # the next run completes it
    assert_same(tables(to), after)
    assert not (to / STAGING).exists()
    named = open_archive(to).manifest.referenced() | {"manifest.json"}
    assert set(snapshot(to)) == named, summary


@pytest.mark.parametrize("seed", range(TRIALS_DEFAULT))
def test_killed_run_leaves_a_readable_archive(seed: int, tmp_path: Path, run_length: tuple[float, float]) -> None:
    _trial(seed, tmp_path, run_length)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(TRIALS_DEFAULT, TRIALS_DEFAULT + TRIALS_SLOW))
def test_killed_run_leaves_a_readable_archive_many(seed: int, tmp_path: Path, run_length: tuple[float, float]) -> None:
    _trial(seed, tmp_path, run_length)
