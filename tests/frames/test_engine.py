"""The batch engine: batches in order whoever made them, and no process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from cc_analytics.frames import engine, memory, workers
from cc_analytics.frames.engine import batches, run_batches

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="children read from /proc")


def children() -> list[int]:
    """This process's child processes, running or not yet reaped (Linux's /proc)."""
    found: list[int] = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            with open(f"/proc/{os.getpid()}/task/{task}/children") as listed:
                found += [int(pid) for pid in listed.read().split()]
        except FileNotFoundError:  # a thread that ended meanwhile (a worker's reader, say)
            continue
    return found


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
    wait = subprocess.Popen.wait
    interrupted: list[subprocess.Popen] = []

    def wait_interrupted(self: subprocess.Popen, timeout: float | None = None) -> int:
        if not interrupted:
            interrupted.append(self)
            raise KeyboardInterrupt
        return wait(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", wait_interrupted)
    with pytest.raises(KeyboardInterrupt):
        list(run_batches(batch_pid, units, workers=2, batch_bytes=20))
    assert len(interrupted) == 1
    assert children() == []  # the worker was killed and reaped
    assert not engine._live_pools


def test_a_finished_run_kills_its_workers_instead_of_waiting_for_them() -> None:
    # Every result is in: a worker asked to exit would tear down its interpreter first.
    units = [Unit(f"s{index:03}", 10) for index in range(6)]
    ended: list[int | None] = []
    kill = workers.Pool.kill

    def watched(self: workers.Pool) -> None:
        kill(self)
        ended.extend(worker.process.returncode for worker in self._workers)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers.Pool, "kill", watched)
        results = list(run_batches(batch_pid, units, workers=2, batch_bytes=20))
    assert len({pid for _ids, pid in results}) == 2
    assert ended == [-signal.SIGKILL]
    assert children() == []
    assert not engine._live_pools


def test_workers_started_ahead_are_the_ones_the_run_uses() -> None:
    units = [Unit(f"s{index:03}", 10) for index in range(8)]
    with engine.workers_started(engine.PARALLEL_MIN_BYTES + 1, None, imports=["json"]):
        (pool,) = engine._started
        (worker,) = children()  # started before any batch was asked for
        assert pool.pids == [worker]
        results = list(run_batches(batch_pid, units, workers=2, batch_bytes=20))
        assert not engine._started  # the run took it
    assert {pid for _ids, pid in results} == {os.getpid(), worker}
    assert children() == []
    assert pool not in engine._live_pools
    # No multiprocessing: no resource tracker was started.
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
        assert len(children()) == 1
    assert children() == []
    assert not engine._started and not engine._live_pools
    with engine.workers_started(engine.PARALLEL_MIN_BYTES, None):  # not over the line: nothing starts
        assert children() == [] and not engine._started


def test_an_interrupt_ends_workers_started_ahead() -> None:
    with pytest.raises(KeyboardInterrupt), engine.workers_started(10, 2):
        engine.end_live_pools()  # what the CLI's interrupt handler runs
        raise KeyboardInterrupt
    assert children() == []
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
import os
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.engine import run_batches

files = [TranscriptFile(f"{n}.jsonl", f"s{n}", None, "main", "p", 10) for n in range(4)]
print(list(run_batches(len, files, workers=2, batch_bytes=10)), os.getpid(), flush=True)
"""


def test_a_script_without_the_main_guard_runs_once(tmp_path: Path) -> None:
    # A worker runs nothing of the caller's: a script needs no `if __name__ == "__main__":`.
    script = tmp_path / "no_guard.py"
    script.write_text(SCRIPT_WITHOUT_GUARD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("[1, 1, 1, 1] ")
    assert done.stderr == ""


def loaded_in_worker(_batch: list[Unit]) -> tuple[int, str, str]:
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return os.getpid(), ",".join(sorted(str(int(s)) for s in blocked)), os.environ.get("POLARS_MAX_THREADS", "")


def test_workers_start_with_the_signals_blocked_and_their_share_of_the_cores() -> None:
    pool = engine._new_pool(1)
    try:
        pid, blocked, threads = pool.submit(loaded_in_worker, []).result(timeout=60)
    finally:
        engine._finish_pool(pool)
    assert pid != os.getpid()
    assert {str(int(signal.SIGINT)), str(int(signal.SIGTERM))} <= set(blocked.split(","))
    assert threads == os.environ.get("POLARS_MAX_THREADS", str(max(1, (os.cpu_count() or 1) // 2)))
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # this process's mask is back


def failing(_batch: list[Unit]) -> None:
    raise ValueError("bad batch")


def killing(batch: list[Unit]) -> list[str]:
    if os.environ.get("TEST_ENGINE_PARENT") != str(os.getpid()):  # in the worker only
        os.kill(os.getpid(), signal.SIGKILL)
    return [unit.session_id for unit in batch]


def test_an_error_in_a_worker_is_raised_here_with_its_traceback() -> None:
    pool = engine._new_pool(1)
    try:
        with pytest.raises(ValueError, match="bad batch") as raised:
            pool.submit(failing, []).result(timeout=60)
    finally:
        engine._finish_pool(pool)
    assert isinstance(raised.value.__cause__, workers.RemoteTraceback)
    assert "in failing" in str(raised.value.__cause__)


def test_a_worker_that_dies_is_a_worker_error(monkeypatch: pytest.MonkeyPatch) -> None:
    units = [Unit(f"s{index:03}", 10) for index in range(6)]
    from cc_analytics.errors import WorkerError

    monkeypatch.setenv("TEST_ENGINE_PARENT", str(os.getpid()))
    with pytest.raises(WorkerError, match="ended abruptly"):
        list(run_batches(killing, units, workers=2, batch_bytes=20))
    assert children() == [] and not engine._live_pools


def test_a_resource_tracker_this_process_did_not_start_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    class Inherited:  # a worker process's view of its parent's tracker: a descriptor, no process id
        _pid = None
        _fd = 99

        def _stop(self) -> None:
            pytest.fail("a worker stopped its parent's resource tracker")

    monkeypatch.setattr(resource_tracker, "_resource_tracker", Inherited())
    engine._stop_resource_tracker()


def test_a_task_given_to_a_worker_that_died_fails_at_once() -> None:
    pool = workers.Pool(1)
    try:
        (pid,) = pool.pids
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(workers.WorkerDied):
            pool.submit(divmod, 7, 2).result(timeout=60)  # answered, or failed as the worker's end is seen
        with pytest.raises(workers.WorkerDied):
            pool.submit(divmod, 7, 2).result(timeout=60)
    finally:
        pool.kill()
    assert children() == []


def test_a_task_the_worker_cannot_load_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # A function of the caller's __main__ (or of a module only the caller has): that task's error.
    import types

    module = types.ModuleType("cc_analytics_test_here_only")

    def here() -> int:
        return 1

    here.__module__, here.__qualname__ = module.__name__, "here"
    module.here = here  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    pool = workers.Pool(1)
    try:
        with pytest.raises(ModuleNotFoundError):
            pool.submit(here).result(timeout=60)
        assert pool.submit(divmod, 7, 2).result(timeout=60) == (3, 1)  # the worker serves on
    finally:
        pool.kill()


def slow_batch_pid(batch: list[Unit]) -> tuple[list[str], int]:
    import time

    time.sleep(0.02)
    return batch_pid(batch)


def test_a_worker_holds_two_batches_but_one_near_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two keep a worker busy while this process is between batches; at the end a second one
    # queued in the worker would leave this process with nothing to do while the worker works.
    handed: list[tuple[str, int]] = []  # (batch, how many the worker held when it was handed)
    futures: list[object] = []
    submit = workers.Pool.submit

    def spy(self: workers.Pool, function: object, *arguments: object) -> object:
        held = sum(not future.done() for future in futures)  # type: ignore[attr-defined]
        handed.append((arguments[0][0].session_id, held))  # type: ignore[index]
        future = submit(self, function, *arguments)  # type: ignore[arg-type]
        futures.append(future)
        return future

    monkeypatch.setattr(workers.Pool, "submit", spy)
    units = [Unit(f"s{index:02}", 10) for index in range(16)]
    results = list(run_batches(slow_batch_pid, units, workers=2, batch_bytes=10))
    assert [ids for ids, _pid in results] == [[unit.session_id] for unit in units]
    assert max(held for _batch, held in handed) == 1  # never more than two
    assert any(held == 1 for _batch, held in handed)  # two at a time while many are left
    last = [held for batch, held in handed if batch >= "s14"]  # the last two batches, if handed
    assert all(held == 0 for held in last), handed
