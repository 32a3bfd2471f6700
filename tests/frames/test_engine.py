"""The batch engine: batches in order whoever made them, and no process left behind."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest

from cc_analytics.frames import engine, memory
from cc_analytics.frames.engine import batches, run_batches


@dataclass(frozen=True)
class Unit:
    session_id: str
    size: int


def batch_pid(batch: list[Unit]) -> tuple[list[str], int]:
    return [unit.session_id for unit in batch], os.getpid()


def test_results_come_in_batch_order_from_this_process_and_a_worker() -> None:
    units = [Unit(f"s{index:03}", 10) for index in range(40)]
    seen: list[tuple[int, int]] = []
    results = list(
        run_batches(batch_pid, units, workers=2, batch_bytes=20, on_progress=lambda d, t: seen.append((d, t)))
    )
    assert [ids for ids, _pid in results] == [[u.session_id for u in b] for b in batches(units, 20)]
    assert seen[-1] == (400, 400)
    assert len({pid for _ids, pid in results}) == 2  # this process worked too
    assert results[0][1] == os.getpid()  # the first batch, while the worker started
    # The resource tracker that spawning starts is waited for, so it never lingers defunct.
    assert getattr(resource_tracker._resource_tracker, "_pid", None) is None


def test_two_batches_with_a_worker() -> None:
    units = [Unit("a", 10), Unit("b", 10)]
    results = list(run_batches(batch_pid, units, workers=2, batch_bytes=10))
    assert [ids for ids, _pid in results] == [["a"], ["b"]]


def batch_thread(batch: list[Unit]) -> tuple[list[str], int, int]:
    return [unit.session_id for unit in batch], os.getpid(), threading.get_ident()


def test_threads_give_results_in_batch_order_in_this_process() -> None:
    units = [Unit(f"s{index:03}", 10) for index in range(40)]
    seen: list[tuple[int, int]] = []
    results = list(
        run_batches(
            batch_thread, units, workers=2, batch_bytes=20, threads=True, on_progress=lambda d, t: seen.append((d, t))
        )
    )
    assert [ids for ids, _pid, _thread in results] == [[u.session_id for u in b] for b in batches(units, 20)]
    assert seen[-1] == (400, 400)
    assert {pid for _ids, pid, _thread in results} == {os.getpid()}  # no process started
    assert threading.get_ident() not in {thread for _ids, _pid, thread in results}  # the pool's threads


def test_a_consumer_that_stops_leaves_the_batches_not_begun() -> None:
    units = [Unit(f"s{index:03}", 10) for index in range(20)]
    begun: list[str] = []
    gate = threading.Event()

    def work(batch: list[Unit]) -> str:
        begun.append(batch[0].session_id)
        gate.wait(5)
        return batch[0].session_id

    run = run_batches(work, units, workers=2, batch_bytes=10, threads=True)
    gate.set()
    assert next(run) == "s000"
    run.close()  # cancels what no thread has taken
    assert len(begun) < len(units)


def test_one_worker_runs_in_process() -> None:
    units = [Unit("a", 1), Unit("a", 1), Unit("b", 1)]
    results = list(run_batches(batch_pid, units, workers=1, batch_bytes=1))
    assert [ids for ids, _pid in results] == [["a", "a"], ["b"]]
    assert {pid for _ids, pid in results} == {os.getpid()}


def test_an_interrupt_while_the_workers_are_ended_still_reaps_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # The last batch is in; Ctrl-C or SIGTERM lands while the pool waits for its killed worker.
    units = [Unit(f"s{index:03}", 10) for index in range(6)]
    join = BaseProcess.join
    interrupted: list[BaseProcess] = []

    def join_interrupted(self: BaseProcess, timeout: float | None = None) -> None:
        if not interrupted:
            interrupted.append(self)
            raise KeyboardInterrupt
        join(self, timeout)

    monkeypatch.setattr(BaseProcess, "join", join_interrupted)
    with pytest.raises(KeyboardInterrupt):
        list(run_batches(batch_pid, units, workers=2, batch_bytes=20))
    assert len(interrupted) == 1
    assert multiprocessing.active_children() == []  # the worker was killed and reaped
    assert getattr(resource_tracker._resource_tracker, "_pid", None) is None
    assert not engine._live_pools


def test_a_finished_run_kills_its_workers_instead_of_waiting_for_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every result is in: a worker asked to exit would tear down its interpreter first.
    units = [Unit(f"s{index:03}", 10) for index in range(6)]
    waits: list[bool] = []
    shutdown = ProcessPoolExecutor.shutdown

    def watched(self: ProcessPoolExecutor, wait: bool = True, *, cancel_futures: bool = False) -> None:
        waits.append(wait)
        shutdown(self, wait=wait, cancel_futures=cancel_futures)

    monkeypatch.setattr(ProcessPoolExecutor, "shutdown", watched)
    results = list(run_batches(batch_pid, units, workers=2, batch_bytes=20))
    assert len({pid for _ids, pid in results}) == 2
    assert waits == [False]
    assert multiprocessing.active_children() == []
    assert not engine._live_pools


def test_workers_started_ahead_are_the_ones_the_run_uses() -> None:
    units = [Unit(f"s{index:03}", 10) for index in range(8)]
    with engine.workers_started(engine.PARALLEL_MIN_BYTES + 1, None, imports=["json"]):
        (pool,) = engine._started
        (worker,) = multiprocessing.active_children()  # started before any batch was asked for
        results = list(run_batches(batch_pid, units, workers=2, batch_bytes=20))
        assert not engine._started  # the run took it
    assert {pid for _ids, pid in results} == {os.getpid(), worker.pid}
    assert multiprocessing.active_children() == []
    assert pool not in engine._live_pools
    assert getattr(resource_tracker._resource_tracker, "_pid", None) is None


def loaded_modules(_batch: list[Unit]) -> set[str]:
    return set(sys.modules)


def test_workers_started_ahead_import_polars_then_the_planned_formats_alone() -> None:
    from cc_analytics.frames import sources

    with sources.workers_ahead(None, 2, start=False):  # nothing started: nothing to import into
        sources.import_ahead({"claude-code": [Unit("a", 1)]})  # type: ignore[list-item]
    with engine.workers_started(10, 2, imports=sources.AHEAD_IMPORTS):
        sources.import_ahead({"claude-code": [Unit("a", 1)], "gemini": []})  # type: ignore[list-item]
        (pool,) = engine._started
        loaded = pool.submit(loaded_modules, []).result()
    assert {"polars", "cc_analytics.frames.schema", "cc_analytics.frames.claude.tables"} <= loaded
    assert not {"cc_analytics.frames.gemini.verbs", "cc_analytics.frames.codex.sessions"} & loaded


def test_workers_started_and_not_taken_end_with_the_block() -> None:
    # --workers 2 on a corpus that turned out to be an archive, or a run that failed first.
    with engine.workers_started(10, 2, imports=["no_such_module_at_all"]):  # a failing import is harmless
        assert len(multiprocessing.active_children()) == 1
    assert multiprocessing.active_children() == []
    assert not engine._started and not engine._live_pools
    assert getattr(resource_tracker._resource_tracker, "_pid", None) is None
    with engine.workers_started(engine.PARALLEL_MIN_BYTES, None):  # not over the line: nothing starts
        assert multiprocessing.active_children() == [] and not engine._started


def test_an_interrupt_ends_workers_started_ahead() -> None:
    with pytest.raises(KeyboardInterrupt), engine.workers_started(10, 2):
        engine.end_live_pools()  # what the CLI's interrupt handler runs
        raise KeyboardInterrupt
    assert multiprocessing.active_children() == []
    assert not engine._started and not engine._live_pools


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_memory_is_handed_back_after_each_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: calls.append)
    list(run_batches(batch_pid, [Unit("a", 1), Unit("b", 1)], workers=1, batch_bytes=1))
    assert calls == [0, 0]
    monkeypatch.undo()
    memory.release_memory()  # the real one: glibc's malloc_trim where there is one, else nothing


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_a_worker_count_that_is_not_a_whole_number_of_at_least_one_is_refused(workers: object) -> None:
    # It used to be taken as 1 (or failed inside min()): the CLI already refused --workers 0.
    import cc_analytics.frames as frames
    from cc_analytics.errors import InputError
    from tests.conftest import ROOT

    with pytest.raises(InputError, match="workers must be None or a whole number of at least 1"):
        frames.read_sessions(ROOT / "data-samples", workers=workers)  # type: ignore[arg-type]
    assert frames.read_sessions(ROOT / "data-samples", workers=1).height > 0


SCRIPT_WITHOUT_GUARD = """
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.engine import run_batches

files = [TranscriptFile(f"{n}.jsonl", f"s{n}", None, "main", "p", 10) for n in range(4)]
print(list(run_batches(len, files, workers=2, batch_bytes=10)))
"""


def test_a_script_without_the_main_guard_is_told_which_line_to_change(tmp_path: Path) -> None:
    script = tmp_path / "no_guard.py"
    script.write_text(SCRIPT_WITHOUT_GUARD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    # The worker says why it cannot start, the script says a worker failed as it started.
    assert 'put the script\'s code under `if __name__ == "__main__":`' in done.stderr
    assert "failed as it started" in done.stderr
    assert "TypeError" not in done.stderr and "leaked semaphore" not in done.stderr


def test_a_resource_tracker_this_process_did_not_start_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    class Inherited:  # a worker process's view of its parent's tracker: a descriptor, no process id
        _pid = None
        _fd = 99

        def _stop(self) -> None:
            pytest.fail("a worker stopped its parent's resource tracker")

    monkeypatch.setattr(resource_tracker, "_resource_tracker", Inherited())
    engine._stop_resource_tracker()
