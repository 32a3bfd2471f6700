"""``cc-analytics usage`` through the installed console script."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import ROOT, run_cli
from tests.frames.claude_builders import assistant, text, usage, user, write

SAMPLES = ROOT / "data-samples"


@pytest.fixture(scope="module")
def unknown_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One session: two requests of a priced model, two of a model no price list knows."""
    folder = tmp_path_factory.mktemp("unknown") / "-w-demo"
    write(
        folder / "s1.jsonl",
        user("go", session="s1"),
        assistant([text("a")], session="s1", tokens=usage(10, 0, 0, 100)),
        assistant([text("b")], session="s1", model="mystery-9", tokens=usage(10, 0, 0, 200)),
        assistant([text("c")], session="s1", model="mystery-9", tokens=usage(10, 0, 0, 300)),
        assistant([text("d")], session="s1", tokens=usage(10, 0, 0, 50)),
    )
    return folder


def test_json_by_day_sums_every_request_of_both_formats() -> None:
    done = run_cli(["usage", str(SAMPLES), "--json", "--timezone", "UTC"])
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    sessions = json.loads(run_cli(["sessions", str(SAMPLES), "--json"]).stdout)
    assert sum(r["requests"] for r in rows) == sum(s["requests"] for s in sessions)
    assert sum(r["cost_usd"] or 0 for r in rows) == pytest.approx(sum(s["cost_usd"] or 0 for s in sessions), rel=1e-12)
    assert [r["day"] for r in rows] == sorted(r["day"] for r in rows)
    assert rows[0]["day"] == "2026-03-02" and rows[0]["first_time"].endswith("Z")


def test_table_groupings_and_breakdown() -> None:
    done = run_cli(["usage", str(SAMPLES), "--by", "month", "--breakdown", "--timezone", "UTC"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].split()[:3] == ["month", "models", "input"]
    assert lines[1].startswith("2026-03 ")
    assert lines[2].lstrip().startswith("└ claude-haiku-4-5")
    assert lines[-2].startswith("total") and lines[-1] == "2 months · * leaves out requests without a price"
    blocks = run_cli(["usage", str(SAMPLES), "--by", "block", "--timezone", "Europe/Paris"]).stdout.decode()
    assert blocks.splitlines()[1].startswith("2026-03-02 10:00")  # 09:00 UTC, shown in Paris time
    assert "$/hour" in blocks.splitlines()[0]


def test_unpriced_requests_are_named_on_stderr(unknown_model: Path) -> None:
    done = run_cli(["usage", str(unknown_model), "--by", "model"])
    assert done.returncode == 0, done.stderr
    assert "2 requests have no price and are left out of the costs: mystery-9 (2)" in done.stderr.decode()
    table = done.stdout.decode()
    assert "mystery-9" in table and "* leaves out requests without a price" in table
    sessions = run_cli(["sessions", str(unknown_model)])
    assert b"mystery-9 (2)" in sessions.stderr and b"*" in sessions.stdout
    quiet = run_cli(["usage", str(unknown_model), "--quiet"])
    assert quiet.stderr == b""


def test_since_until_and_parquet(tmp_path: Path) -> None:
    target = tmp_path / "usage.parquet"
    args = ["usage", str(SAMPLES), "--since", "20260305", "--until", "2026-03-06", "--timezone", "UTC"]
    done = run_cli([*args, "--parquet", str(target)])
    assert done.returncode == 0, done.stderr
    frame = pl.read_parquet(target)
    assert [str(day) for day in frame["day"]] == ["2026-03-05", "2026-03-06"]
    again = run_cli([*args, "--parquet", str(target)])
    assert again.returncode == 1 and b"already exists" in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "2026-13-01"], b"--since: not a date"),
        (["--timezone", "Mars/Olympus"], b"--timezone: unknown timezone"),
        (["--by", "model", "--breakdown"], b"does not apply to --by model"),
        (["--by", "hour"], b"invalid choice"),
        (["--force"], b"--force only applies to --parquet"),
        (["--since", "2026-05-01", "--until", "20260101"], b"--since 2026-05-01 is after --until 20260101"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: bytes) -> None:
    done = run_cli(["usage", str(SAMPLES), *args])
    assert done.returncode == 2
    assert message in done.stderr


def test_missing_source_is_one_error_line() -> None:
    done = run_cli(["usage", "/no/such/folder"])
    assert done.returncode == 1
    assert done.stderr.decode().startswith("✖ no such file or folder")


def polars_at_calls(spied: str, words: list[str], cwd: Path, prelude: str = "") -> tuple[list[bool], int, str]:
    """The command line run in a fresh interpreter with ``spied`` (``sources.workers_ahead``,
    ``workers.Pool.submit``) watched: whether Polars was imported at each of its calls, the exit
    code and stdout. ``prelude``: lines run first (``engine``, ``sources`` and ``workers`` imported)."""
    import subprocess
    import sys

    owner, _, name = spied.rpartition(".")
    code = (
        "import sys\n"
        "from cc_analytics.frames import engine, sources, workers\n"
        f"{prelude}"
        "seen = []\n"
        f"spied = {spied}\n"
        "def spy(*args, **kw):\n"
        "    seen.append('polars' in sys.modules)\n"
        "    return spied(*args, **kw)\n"
        f"{owner}.{name} = spy\n"
        "from cc_analytics.cli import main\n"
        f"code = main({words!r})\n"
        "print(seen, code, file=sys.stderr)\n"
    )
    env = {**os.environ, "CC_ANALYTICS_CACHE_DIR": str(cwd / "cache")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd, env=env)
    seen, exit_code = done.stderr.strip().splitlines()[-1].rsplit(" ", 1)
    return json.loads(seen.lower()), int(exit_code), done.stdout


@pytest.mark.parametrize("command", ["usage", "sessions"])
def test_polars_is_imported_after_the_workers_are_asked_for(command: str, tmp_path: Path) -> None:
    # The workers start while this process imports Polars (a worker's start overlaps the import):
    # `usage` imported it first, and its second batch came 240 ms after the first on 100 MB.
    words = [command, str(SAMPLES), "--json", "--quiet", "--no-cache"]
    seen, code, out = polars_at_calls("sources.workers_ahead", words, tmp_path)
    assert (seen, code) == ([False], 0)
    assert json.loads(out)


@pytest.mark.parametrize("command", ["usage", "sessions"])
def test_the_first_batches_are_the_workers_before_polars_is_imported(command: str, tmp_path: Path) -> None:
    # A worker waits for its first batch while this process plans; importing Polars (and the
    # decoders) before handing it one kept it idle 120 ms more on the 1 GB corpus.
    words = [command, str(SAMPLES / "claude"), "--json", "--quiet", "--workers", "2"]
    a_batch_per_session = "cut = engine.batches\nengine.batches = lambda files, batch_bytes=0: cut(files, 1)\n"
    seen, code, out = polars_at_calls("workers.Pool.submit", words, tmp_path, a_batch_per_session)
    # the workers' imports, then two batches for the worker: all before Polars
    assert code == 0 and seen[:3] == [False, False, False] and True in seen, seen
    assert json.loads(out)


def test_sessions_counts_a_request_without_a_price_once_over_archives(unknown_model: Path, tmp_path: Path) -> None:
    # The same session archived from two machines: its two requests without a price are two.
    for machine in ("anna", "ben"):
        to = tmp_path / "team" / machine
        done = run_cli(["archive", str(unknown_model), "--to", str(to), "--machine", machine])
        assert done.returncode == 0, done.stderr
    sessions = run_cli(["sessions", str(tmp_path / "team")])
    assert sessions.returncode == 0, sessions.stderr
    assert b"2 requests have no price" in sessions.stderr and b"mystery-9 (2)" in sessions.stderr
