"""Benchmark: ``cc-analytics archive`` (first run, no-change rerun, grown sessions) beside ``sessions``.

Imports: the standard library, ``corpus`` and ``measure``; ``distributed`` for ``--dask``.

    python benchmarks/archive.py --smoke                      # a ~3 MB corpus, a few seconds
    python benchmarks/archive.py --corpus /tmp/bench/c1000    # a corpus of benchmarks/corpus.py
    python benchmarks/archive.py --make 1000 --dask 1000 --dask 10000

The corpus is copied into a scratch folder first (the runs append to its files). Each step is
a fresh ``cc-analytics`` process: wall and CPU seconds (worker processes included) and peak
RSS summed over the process tree. Steps: ``sessions`` (the reference), the first archive, a
rerun with no change, a rerun after 10 sessions grew by 1 MB each, and one after 1 % of the
sessions grew by a few lines (``--rounds N``: N alternating sessions/first-archive pairs,
medians shown). ``--dask SIZE_MB`` archives a generated corpus of that size
through the Dask engine on a 2-worker LocalCluster and prints each worker's peak RSS (its
own ``getrusage``), to show that a worker's memory does not grow with the corpus.

``--team N`` (with a corpus; instead of the steps above) deals its sessions in turn to N machines, archives each to an
archive of its own under one folder (one per machine, as a team's bucket holds them) and the
whole corpus to one archive, then reads each way with fresh processes (``usage --by month``
and ``sessions --parquet``; interleaved rounds, at least 3, medians): the bucket of N archives
beside the one archive of the same bytes, and beside decoding the transcripts again
(``--no-cache``). It checks that the bucket and the one archive give the same usage.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import cached, generate
from measure import PeakTreeRss, as_installed

VENV_BIN = Path(sys.executable).parent
CLI = str(VENV_BIN / "cc-analytics")
GROWN_SESSIONS, GROWN_BYTES = 10, 1_000_000


def measure(command: list[str]) -> dict[str, float]:
    """Run ``command``; wall seconds, CPU seconds of it and its children, peak tree RSS (MB)."""
    os.sync()  # the previous step's (or the corpus copy's) writes are not flushed during this one
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = PeakTreeRss(process.pid)
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    tree = sampler.stop()
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        msg = f"{' '.join(command[:2])} failed: {stderr.strip()[:400]}"
        raise RuntimeError(msg)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "tree": max(tree, usage.ru_maxrss / 1024)}


def mains(projects: Path) -> list[Path]:
    return sorted(p for p in projects.glob("*/*.jsonl") if p.is_file())


def grow(path: Path, size: int) -> None:
    """Append whole lines of the file itself until it grew by about ``size`` bytes (a live session)."""
    lines = [line for line in path.read_bytes().splitlines(keepends=True) if line.endswith(b"\n")]
    added = 0
    with path.open("ab") as handle:
        while added < size:
            for line in lines:
                handle.write(line)
                added += len(line)
                if added >= size:
                    break


def median_of(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


def steps(projects: Path, archive: Path, parquet: Path, rounds: int) -> list[tuple[str, dict[str, float]]]:
    rng = random.Random(1)
    sessions = [CLI, "sessions", str(projects), "--parquet", str(parquet), "--force", "--no-cache"]
    reference: list[dict[str, float]] = []
    first: list[dict[str, float]] = []
    for index in range(rounds):  # alternating, so both see the same load on a shared machine
        for name in ("sessions", "archive") if index % 2 == 0 else ("archive", "sessions"):
            if name == "sessions":
                reference.append(measure(sessions))
            else:
                # Each round archives into a folder of its own: deleting the previous round's
                # thousands of files just before would make ext4 slow to create new ones
                # (it skips recently freed inodes: 1.4 s of system time more on 1 GB).
                run = [CLI, "archive", str(projects), "--to", f"{archive}-{index}", "--quiet"]
                first.append(measure(run))
    out = [("sessions --parquet (reference)", median_of(reference)), ("archive: first run", median_of(first))]
    out.append(("archive: rerun, no change", measure(run)))
    files = mains(projects)
    for path in rng.sample(files, min(GROWN_SESSIONS, len(files))):
        grow(path, GROWN_BYTES)
    out.append((f"archive: {GROWN_SESSIONS} sessions grown by 1 MB", measure(run)))
    for path in rng.sample(files, max(1, len(files) // 100)):
        grow(path, 20_000)
    out.append((f"archive: 1% ({max(1, len(files) // 100)}) sessions grown by 20 kB", measure(run)))
    return out


def show(title: str, rows: list[tuple[str, dict[str, float]]]) -> None:
    reference = rows[0][1]["wall"]
    print(f"\n{title}")
    cpu = rows[0][1]["cpu"]
    print(f"{'step':44} {'wall s':>8} {'CPU s':>8} {'tree RSS MB':>12} {'× sessions wall':>16} {'CPU':>6}")
    for name, row in rows:
        print(
            f"{name:44} {row['wall']:8.2f} {row['cpu']:8.2f} {row['tree']:12.0f} "
            f"{row['wall'] / reference:16.2f} {row['cpu'] / cpu:6.2f}"
        )


def team_steps(projects: Path, scratch: Path, machines: int, rounds: int) -> list[tuple[str, dict[str, float]]]:
    """The corpus as one archive and as ``machines`` archives under one folder; reading each, and the transcripts."""
    split = scratch / "machines"
    moved = split_sessions(projects, split, machines)
    one, team = scratch / "one-archive", scratch / "team"
    for machine in sorted(split.iterdir()):
        run = [CLI, "archive", str(machine / "projects"), "--to", str(team / machine.name)]
        subprocess.run([*run, "--machine", machine.name, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    sources = [str(machine / "projects") for machine in sorted(split.iterdir())]
    subprocess.run(
        [CLI, "archive", *sources, "--to", str(one), "--machine", "all", "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    usage = {
        name: subprocess.run(
            [CLI, "usage", str(where), "--by", "month", "--timezone", "UTC", "--json"], check=True, capture_output=True
        ).stdout
        for name, where in (("one", one), ("team", team))
    }
    sizes = sorted(_bytes(machine / "projects") for machine in split.iterdir())
    print(
        f"{machines} machines of {sizes[0] / 1e6:.0f}-{sizes[-1] / 1e6:.0f} MB of transcripts (sessions dealt in turn); "
        f"the bucket of {machines} archives and the one archive give the same usage: {usage['one'] == usage['team']}"
    )
    reads = {
        f"usage, one archive ({_size(one)})": [CLI, "usage", str(one), "--by", "month", "--json"],
        f"usage, {machines} archives ({_size(team)})": [CLI, "usage", str(team), "--by", "month", "--json"],
        "usage, the transcripts again (--no-cache)": [CLI, "usage", *sources, "--by", "month", "--json", "--no-cache"],
        "sessions --parquet, one archive": [CLI, "sessions", str(one), "--parquet", str(scratch / "s.parquet"), "--force"],
        f"sessions --parquet, {machines} archives": [
            CLI, "sessions", str(team), "--parquet", str(scratch / "s.parquet"), "--force",
        ],
        "sessions --parquet, the transcripts again": [
            CLI, "sessions", *sources, "--parquet", str(scratch / "s.parquet"), "--force", "--no-cache",
        ],
    }  # fmt: skip
    timings: dict[str, list[dict[str, float]]] = {name: [] for name in reads}
    for index in range(rounds):  # interleaved, so each sees the same load on a shared machine
        order = list(reads) if index % 2 == 0 else list(reversed(reads))
        for name in order:
            timings[name].append(measure(reads[name]))
    for source, target in moved:  # the sessions back, for the steps after
        source.rename(target)
    return [(name, median_of(rows)) for name, rows in timings.items()]


def split_sessions(projects: Path, split: Path, machines: int) -> list[tuple[Path, Path]]:
    """Deal the sessions of ``projects`` (a main file with its folder of subagents) in turn to
    ``machines`` folders ``split/mK/projects/PROJECT``: machines of about the same size, each with
    most projects. The moves made, as (where it is now, where it was)."""
    moved: list[tuple[Path, Path]] = []
    for index, main in enumerate(sorted(projects.glob("*/*.jsonl"))):
        target = split / f"m{index % machines}" / "projects" / main.parent.name
        target.mkdir(parents=True, exist_ok=True)
        for path in (main, main.with_suffix("")):
            if path.exists():
                path.rename(target / path.name)
                moved.append((target / path.name, path))
    return moved


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def show_team(rows: list[tuple[str, dict[str, float]]], machines: int) -> None:
    """The ratios the team's reading is judged by: N archives against one, the transcripts against N archives."""
    found = dict(rows)
    for command in ("usage", "sessions --parquet"):
        one, team, again = (row for name, row in found.items() if name.startswith(f"{command},"))
        print(
            f"{command}: {machines} archives / one archive: wall {team['wall'] / one['wall']:.2f}×, "
            f"CPU {team['cpu'] / one['cpu']:.2f}×; the transcripts again / {machines} archives: "
            f"wall {again['wall'] / team['wall']:.1f}×, CPU {again['cpu'] / team['cpu']:.1f}×"
        )


def _size(folder: Path) -> str:
    return f"{sum(p.stat().st_size for p in folder.rglob('*') if p.is_file()) / 1e6:.0f} MB"


def dask_run(projects: Path, archive: Path) -> dict[str, float]:
    """Archive through the Dask engine on a 2-worker LocalCluster; wall seconds and each worker's peak RSS."""
    from distributed import Client, LocalCluster

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from cc_analytics.archive import update

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        start = time.perf_counter()
        update(str(projects), str(archive), engine="dask", client=client)
        wall = time.perf_counter() - start
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    values = sorted(peaks.values())
    return {"wall": wall, "worker_min": values[0], "worker_max": values[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a ~3 MB corpus, generated afresh")
    parser.add_argument("--corpus", type=Path, help="a corpus folder of benchmarks/corpus.py (holds projects/)")
    parser.add_argument("--make", type=int, metavar="SIZE_MB", help="generate (or reuse) a corpus under --tmp")
    parser.add_argument("--dask", type=int, action="append", default=[], metavar="SIZE_MB", help="Dask engine runs")
    parser.add_argument("--rounds", type=int, default=1, help="sessions/first-archive pairs (medians)")
    parser.add_argument(
        "--team", type=int, metavar="N", help="read a bucket of N archives beside one archive (instead of the steps)"
    )
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()), help="where corpora are kept")
    args = parser.parse_args(argv)
    as_installed(os.environ)  # each command (and worker) starts as from an installed package
    with tempfile.TemporaryDirectory(prefix="cc-analytics-archive-bench-", dir=args.tmp) as scratch_name:
        scratch = Path(scratch_name)
        if args.smoke:
            generate(scratch / "corpus", size_mb=3, seed=1)
            source = scratch / "corpus"
        elif args.corpus or args.make:
            source = args.corpus or args.tmp / f"cc-analytics-claude-corpus-{args.make}mb"
            if args.make:
                cached(source, size_mb=args.make, seed=1, jobs=min(2, os.cpu_count() or 1))
        else:
            source = None
        if source is not None:
            projects = scratch / "projects"
            shutil.copytree(source / "projects", projects)  # the steps append to its files
            size = sum(p.stat().st_size for p in projects.rglob("*.jsonl"))
            count = sum(1 for _ in projects.rglob("*.jsonl"))
            if args.team:  # only the team's comparison
                team = team_steps(projects, scratch, args.team, max(args.rounds, 3))
                show(f"reading {size / 1e6:.0f} MB of transcripts' archives: one, or {args.team} in one folder", team)
                show_team(team, args.team)
            else:
                rows = steps(projects, scratch / "archive", scratch / "sessions.parquet", args.rounds)
                show(f"{size / 1e6:.0f} MB, {count} files, {len(mains(projects))} sessions", rows)
            shutil.rmtree(projects)
        for size_mb in args.dask:
            corpus = args.tmp / f"cc-analytics-claude-corpus-{size_mb}mb"
            cached(corpus, size_mb=size_mb, seed=1, jobs=min(2, os.cpu_count() or 1))
            result = dask_run(corpus / "projects", scratch / f"dask-{size_mb}")
            print(
                f"dask engine, {size_mb} MB, 2-worker LocalCluster: {result['wall']:.1f} s wall; "
                f"worker peak RSS {result['worker_min']:.0f}–{result['worker_max']:.0f} MB"
            )
            shutil.rmtree(scratch / f"dask-{size_mb}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
