"""The batch engine every loader runs on: bounded batches, in-process, in worker processes, or in
threads of this process for work that runs outside the GIL (``run_batches(threads=True)``).

Imports: the standard library, ``errors``, ``cleanup`` and ``frames.memory``; polars inside
:func:`lazy_source`. Transcript files are grouped by session (a session's main file and
subagent files always share a batch) into batches of about ``BATCH_BYTES``; each batch is
decoded and reduced on its own, in this process and worker processes when the corpus is
large, and a few batches at most are in flight, so memory stays flat whatever the corpus size. A unit of work is anything with a ``size`` (bytes) and a
``session_id``: every format's transcript files are.

Worker processes (``frames.workers``: plain interpreters fed their batches through pipes, no
``multiprocessing``) start with SIGINT and SIGTERM blocked: Ctrl-C reaches the whole process
group, but only this process reacts, and whatever ends a run early (Ctrl-C, SIGTERM, a
consumer that stops iterating) kills the workers at once (:func:`end_workers`) instead of
waiting for their batches. A pool whose generator an interrupt leaves suspended (its consumer
was interrupted, not the generator) is ended by :func:`end_live_pools`, which this module
registers with the leaf ``cc_analytics.cleanup`` and the CLI runs on an interrupt. Threads
cannot be killed: an interrupt drops the batches none has begun, the CLI exits at once
(``os._exit``), and a Python caller's process waits at exit for the batches running to end.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, overload

from cc_analytics.cleanup import on_interrupt
from cc_analytics.errors import WorkerError
from cc_analytics.frames.memory import no_cycle_collection, release_memory

if TYPE_CHECKING:
    from concurrent.futures import Future

    import polars as pl

    from cc_analytics.frames.workers import Pool

BATCH_BYTES = 64 * 1024 * 1024
# The Polars engine of a batch's queries (``collect(engine=BATCH_ENGINE)``): a batch is a few
# thousand to a hundred thousand rows, and the in-memory engine runs such small queries for a
# fraction of the CPU the default (streaming) engine takes to set them up (Claude Code: two
# thirds; the Codex lean summary: a third). Not for every query: measure it where it goes.
BATCH_ENGINE: Final = "in-memory"
# The variable that sets Polars' default engine (``pl.Config.set_engine_affinity``): the command
# line sets it to BATCH_ENGINE for its own process unless the user set it.
POLARS_ENGINE_ENV: Final = "POLARS_ENGINE_AFFINITY"
PARALLEL_MIN_BYTES = 96 * 1024 * 1024
MAX_WORKERS = 2
WAIT_SLICE_SECONDS = 0.1
BATCH_THREAD = "cc-batch"  # the name of the threads that run batches (at most 15 bytes: Linux's limit)
PR_SET_NAME = 15
END_SECONDS = 5.0

Progress = Callable[[int, int], None]
# Pools alive now.
_live_pools: set[Pool] = set()
# Pools started ahead of their run (workers_started), not yet taken by one: their worker counts.
_started: dict[Pool, int] = {}
T = TypeVar("T")
R = TypeVar("R")


class Unit(Protocol):
    """What the engine needs of a transcript file."""

    @property
    def size(self) -> int: ...

    @property
    def session_id(self) -> str: ...


U = TypeVar("U", bound=Unit)


def batches(files: Sequence[U], batch_bytes: int = BATCH_BYTES) -> list[list[U]]:
    """Files cut into batches of about ``batch_bytes``, never splitting a session, and of about
    equal size: as many batches as ``batch_bytes`` asks for (the total over ``batch_bytes``,
    rounded up), each session in the batch its middle byte falls in. A last batch of a few
    files, as cutting at ``batch_bytes`` leaves, costs a batch's fixed work for little and
    leaves one thread or process working alone at the end.

    Examples:
        >>> from collections import namedtuple
        >>> File = namedtuple("File", "session_id size")
        >>> files = [File(str(i), 10) for i in range(9)]  # 90 bytes: two batches of at most 50
        >>> [len(batch) for batch in batches(files, 50)]
        [4, 5]
    """
    groups: list[tuple[list[U], int]] = []
    index = 0
    while index < len(files):
        session = files[index].session_id
        group: list[U] = []
        while index < len(files) and files[index].session_id == session:
            group.append(files[index])
            index += 1
        groups.append((group, sum(f.size for f in group)))
    total = sum(size for _group, size in groups)
    count = -(-total // batch_bytes) if batch_bytes > 0 else len(groups)
    if count <= 1:
        return [list(files)] if files else []
    target = total / count
    out: list[list[U]] = [[] for _ in range(count)]
    offset = 0
    for group, size in groups:
        out[min(count - 1, int((offset + size / 2) // target))].extend(group)
        offset += size
    return [batch for batch in out if batch]


@overload
def run_batches(
    work: Callable[[list[U]], T],
    files: Sequence[U],
    *,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    batch_bytes: int = BATCH_BYTES,
    threads: bool = False,
) -> Iterator[T]: ...


@overload
def run_batches(
    work: Callable[[list[U]], T],
    files: Sequence[U],
    *,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    batch_bytes: int = BATCH_BYTES,
    threads: bool = False,
    finish: Callable[[T], R],
) -> Iterator[R]: ...


def run_batches(
    work: Callable[[list[U]], Any],
    files: Sequence[U],
    *,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    batch_bytes: int = BATCH_BYTES,
    threads: bool = False,
    finish: Callable[[Any], Any] | None = None,
) -> Iterator[Any]:
    """``work(batch)`` for every batch, results in batch order, in processes when worthwhile.

    ``finish``, when given, is applied to each result in this process (what a worker hands
    back can then stay plain Python, and only this process imports and runs Polars).

    ``workers=1`` (the loaders' default) runs in-process; ``workers=None`` picks up to two
    for corpora over ``PARALLEL_MIN_BYTES``. With ``workers=N > 1`` this process works too,
    beside ``N - 1`` worker processes (``frames.workers``: they run nothing of the calling
    script, so it needs no ``if __name__ == "__main__":`` guard; ``work`` must be importable by
    its module and name). ``threads=True``: the workers are threads of this
    process instead, for work that spends its time outside the GIL (a C loop that releases it,
    Polars): no interpreter to start, no import to repeat, no result to copy between processes.
    Batches hold about ``batch_bytes`` of transcripts each (sessions are never split).
    """
    plan = batches(files, batch_bytes)
    work = partial(_then_release_memory, work)
    total = sum(f.size for f in files)
    sizes = [sum(f.size for f in batch) for batch in plan]
    workers = min(worker_count(total, workers), len(plan)) or 1
    done = 0
    if on_progress:
        on_progress(0, total)
    if workers == 1:
        results = _in_process(work, plan)
    elif threads:
        results = _in_threads(work, plan, workers)
    else:
        results = _beside_workers(work, plan, workers - 1)
    for result, size in zip(results, sizes, strict=True):
        if finish is not None:
            with no_cycle_collection():
                result = finish(result)
            release_memory()
        done += size
        if on_progress:
            on_progress(done, total)
        yield result


def worker_count(total: int, workers: int | None) -> int:
    """How many processes read ``total`` bytes when ``workers`` are asked for (None: up to
    two, for corpora over ``PARALLEL_MIN_BYTES``), this one included.

    Examples:
        >>> worker_count(10, 3), worker_count(10, None)
        (3, 1)
        >>> worker_count(10, 0)
        Traceback (most recent call last):
        ...
        cc_analytics.errors.InputError: workers must be None or a whole number of at least 1, not 0
    """
    if workers is None:
        return min(MAX_WORKERS, os.cpu_count() or 1) if total > PARALLEL_MIN_BYTES else 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        from cc_analytics.errors import InputError

        msg = f"workers must be None or a whole number of at least 1, not {workers!r}"
        raise InputError(msg)
    return workers


@contextmanager
def workers_started(total: int, workers: int | None, imports: Sequence[str] = ()) -> Iterator[None]:
    """Start now the worker processes that reading ``total`` bytes will use, each importing
    ``imports`` (the modules its work needs) while this process gets ready.

    A worker takes about a third of a second to start (a new interpreter, then Polars): begun
    as soon as the files are planned, that overlaps this process's own imports instead of
    following them. The next :func:`run_batches` that asks for as many workers takes them; the
    ones nobody took end when the block does.

    Examples:
        >>> with workers_started(0, None):  # a small corpus: nothing is started
        ...     not _started
        True
    """
    spawned = worker_count(total, workers) - 1 if total > 0 else 0  # nothing to read in processes
    if spawned < 1:
        yield
        return
    pool = _new_pool(spawned)
    _started[pool] = spawned
    try:
        for _ in range(spawned):
            pool.submit(_import_all, list(imports))
        yield
    finally:
        if _started.pop(pool, None) is not None:  # never taken: end it as a run would
            _finish_pool(pool)


def import_ahead(modules: Sequence[str]) -> None:
    """Have the workers started ahead (:func:`workers_started`) and not taken yet import
    ``modules`` too, before any batch (one request per worker).

    Examples:
        >>> import_ahead(["json"])  # no worker started: nothing to do
    """
    if not modules:
        return
    for pool, spawned in _started.items():
        for _ in range(spawned):  # a worker killed already: the run's batches say so
            pool.submit(_import_all, list(modules))


def _import_all(modules: Sequence[str]) -> None:
    import importlib

    for name in modules:
        importlib.import_module(name)


def _new_pool(spawned: int) -> Pool:
    """A pool of ``spawned`` workers, registered so that an interrupt ends it; they start with
    SIGINT and SIGTERM blocked, and with their share of the cores for Polars' threads."""
    # Imported here: a run in this process or in threads starts no process.
    from cc_analytics.frames.workers import Pool

    with _signals_blocked():  # the workers inherit the mask
        pool = Pool(spawned, _worker_environment(spawned))
    _live_pools.add(pool)
    return pool


def _take_pool(spawned: int) -> Pool:
    """A pool started ahead (:func:`workers_started`) with ``spawned`` workers, else a new one."""
    pool = next((pool for pool, count in _started.items() if count == spawned), None)
    if pool is None:
        return _new_pool(spawned)
    del _started[pool]
    return pool


def _finish_pool(pool: Pool) -> None:
    """End ``pool``'s workers, then forget it.

    They are killed, not asked to exit: a pool is finished once every result it was asked for
    is in (or none is wanted any more), and a worker that exits on its own first tears down its
    interpreter and Polars, which kept the run waiting a fifth of a second.
    """
    try:
        end_workers(pool)
    finally:
        # The pool is forgotten last: an interrupt before that still finds it (end_live_pools).
        _live_pools.discard(pool)


def _then_release_memory(work: Callable[[list[U]], T], batch: list[U]) -> T:
    # The cyclic collector is paused for the batch: its lists and tuples hold no cycles, and
    # the collector rescanned them (a tenth of the time a Claude Code batch takes).
    with no_cycle_collection():
        result = work(batch)
    release_memory()
    return result


def _in_process(work: Callable[[list[U]], T], plan: list[list[U]]) -> Iterator[T]:
    for batch in plan:
        yield work(batch)


def _name_thread() -> None:
    """Give this thread the name :data:`BATCH_THREAD` where the system shows threads (Linux:
    ``ps -L``, ``top -H``), so that a user sees what the run's threads are."""
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None).prctl(PR_SET_NAME, BATCH_THREAD.encode(), 0, 0, 0)


def _in_threads(work: Callable[[list[U]], T], plan: list[list[U]], workers: int) -> Iterator[T]:
    """Results in batch order, made by ``workers`` threads; one batch more than there are
    threads is in hand at a time (each held until the ones before it are taken)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(workers, thread_name_prefix=BATCH_THREAD, initializer=_name_thread)
    pending: deque[Future[T]] = deque()
    # The collector is paused for the whole run, not batch by batch: it is one per process, so a
    # thread ending its batch turned it back on under the other thread's batch.
    try:
        with no_cycle_collection():
            for batch in plan:
                pending.append(pool.submit(work, batch))
                if len(pending) > workers:
                    yield _result(pending.popleft())
            while pending:
                yield _result(pending.popleft())
    finally:
        # Ctrl-C or a consumer that stops: the batches not begun are dropped; those running end
        # with their batch (a thread cannot be killed), and the process exits once they have.
        pool.shutdown(wait=False, cancel_futures=True)


def _beside_workers(work: Callable[[list[U]], T], plan: list[list[U]], spawned: int) -> Iterator[T]:
    """Results in batch order; batches go to ``spawned`` worker processes and, whenever the next
    result is not ready, to this process. A worker's next batch is handed to it as its answer
    arrives (by the pool's thread that reads it, not when this process is between batches), and
    near the end a worker holds one batch only: a second queued in it left this process idle
    for one or two batches at the end of the 1 GB corpus (100-200 ms)."""
    import threading
    from concurrent.futures import Future

    lock = threading.Lock()
    pending: dict[int, Future[T]] = {}  # batches handed to workers and not yet collected
    ready: dict[int, T] = {}
    handed = 1  # batches handed out: the first is this process's (below)
    in_workers = 0  # batches handed to the workers and not answered yet
    stopped = False
    pool = _take_pool(spawned)

    def take() -> int | None:
        """The next batch for this process, if one is left."""
        nonlocal handed
        with lock:
            if stopped or handed >= len(plan):
                return None
            handed += 1
            return handed - 1

    def feed(done: Future[T] | None = None) -> None:
        """Hand the workers batches up to their share (``done``: the future of the batch a worker
        just answered; after a failure nothing more is handed: this process hears of it when it
        takes that result): two each while more than that is left, so that a worker never waits
        for its next batch; one each at the end, where a batch queued in a worker would leave
        this process idle."""
        nonlocal handed, in_workers
        handing: list[Future[T]] = []
        with lock:
            if done is not None:
                in_workers -= 1
                if done.cancelled() or done.exception() is not None:
                    return
            while not stopped and handed < len(plan):
                share = 2 * spawned if len(plan) - handed > 2 * spawned else spawned
                if in_workers >= share:
                    break
                index, handed, in_workers = handed, handed + 1, in_workers + 1
                try:
                    future = pool.submit(work, plan[index])
                except Exception as error:  # noqa: BLE001 - a batch that cannot be sent fails as its result
                    future = Future()
                    future.set_exception(error)
                pending[index] = future
                handing.append(future)
        for future in handing:
            future.add_done_callback(feed)

    try:
        feed()
        for index in range(len(plan)):
            if index == 0:
                # A worker takes a moment to start (a new interpreter and its imports): the
                # first batch is this process's, made while the workers start on the next ones.
                ready[0] = work(plan[0])
            # Work here while the next result is still being made, if a batch is left to take
            # and at most ``spawned`` of this process's results wait out of order (one more
            # than that held in memory cut the time this process waits for a worker: on the
            # 1 GB corpus, 1 GB of sessions took 8% less wall time).
            while index not in ready and len(ready) <= spawned:
                with lock:
                    future = pending.get(index)
                if future is not None and future.done():
                    break
                taken = take()
                if taken is None:
                    break
                ready[taken] = work(plan[taken])
            if index in ready:
                yield ready.pop(index)
            else:
                with lock:
                    future = pending.pop(index)
                yield _result(future)
    except BaseException as exc:  # Ctrl-C, SIGTERM, GeneratorExit, a worker killed: no more batches
        with lock:
            stopped = True
        end_workers(pool)
        from cc_analytics.frames.workers import WorkerDied

        if isinstance(exc, WorkerDied):  # the OOM killer, kill -9: say so plainly
            msg = (
                "a worker process ended abruptly while reading transcripts (killed, out of memory, or it "
                "failed as it started: see the error printed above, if any)\n"
                "Hint: run it again; with --workers 1 (workers=1) every batch is read in this process."
            )
            raise WorkerError(msg) from exc
        raise
    finally:
        with lock:
            stopped = True
        _finish_pool(pool)


def _worker_environment(spawned: int) -> dict[str, str]:
    """The variables of a worker process: this process's, and its share of the cores for Polars'
    threads (this process and the workers each run batches; on 2 cores, one thread each spares
    the processes from taking turns on them). A ``POLARS_MAX_THREADS`` set by the user is kept."""
    environment = dict(os.environ)
    environment.setdefault("POLARS_MAX_THREADS", str(max(1, (os.cpu_count() or 1) // (spawned + 1))))
    return environment


@on_interrupt
def end_live_pools() -> None:
    """End every pool still running (the interrupt reached a consumer, not the generator that
    owns the pool)."""
    _started.clear()
    while _live_pools:
        end_workers(_live_pools.pop())


def _result(future: Future[T]) -> T:
    # In slices, so that this thread runs its signal handlers while it waits: the kernel may
    # hand Ctrl-C to another thread (Polars runs several), and Polars' own SIGINT handler
    # restarts interrupted system calls (SA_RESTART), so a plain wait would not end.
    while True:
        try:
            return future.result(timeout=WAIT_SLICE_SECONDS)
        except TimeoutError:
            continue


@contextmanager
def _signals_blocked() -> Iterator[None]:
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks, and no process groups to share
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def end_workers(pool: Pool) -> None:
    """Kill ``pool``'s worker processes now and reap them, without waiting for their batches."""
    pool.kill()


def _resource_tracker_running() -> bool:
    """Whether multiprocessing's resource tracker runs (Dask's processes start it: ``archive.cluster``)."""
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None) is not None


def _stop_resource_tracker(*, collect: bool = True) -> None:
    # Spawning starts multiprocessing's resource tracker, a child that outlives the pool; a
    # process that exits without waiting for it leaves it defunct where PID 1 does not reap.
    # Only a tracker the pool started is stopped (one started before may be watching the
    # caller's shared memory); the next spawn starts it again.
    from multiprocessing import resource_tracker

    # A pool's queues hold semaphores the tracker watches until they are finalized; one caught
    # in a reference cycle (an interrupted run's traceback) would still be registered, and the
    # tracker would warn of "leaked semaphore objects" as it stops. (A full collection, once
    # Polars is loaded: 15-20 ms, which a run that ended as it should is spared: ``collect``.)
    if collect:
        gc.collect()
    tracker = resource_tracker._resource_tracker
    pid = getattr(tracker, "_pid", None)
    stop = getattr(tracker, "_stop", None)
    if stop is None or pid is None:
        # Not running, or this is a worker process, which uses its parent's: not ours to stop
        # (its _stop would wait for a process id it does not have).
        return
    try:
        stop()
    except BaseException:  # interrupted while it waited for the tracker (which is ending): reap it
        if pid is not None:
            with suppress(OSError):
                os.waitpid(pid, 0)
        raise


def lazy_source(produce: Callable[[], Iterator[pl.DataFrame]], schema: pl.Schema, name: str) -> pl.LazyFrame:
    """A LazyFrame whose batches come from ``produce()``, with projection and filters applied."""
    from polars.io.plugins import register_io_source

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        _batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        left = n_rows
        for frame in produce():
            if predicate is not None:
                frame = frame.filter(predicate)
            if with_columns is not None:
                frame = frame.select(with_columns)
            if left is not None:
                frame = frame.head(left)
                left -= frame.height
            yield frame
            if left is not None and left <= 0:
                return

    return register_io_source(source, schema=schema, explain_name=name)


def scan_batches(
    work: Callable[[list[U]], Any],
    files: Sequence[U],
    schema: pl.Schema,
    name: str,
    *,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    batch_bytes: int = BATCH_BYTES,
    threads: bool = False,
    finish: Callable[[Any], Any] | None = None,
    pick: Callable[[Any], pl.DataFrame] | None = None,
) -> pl.LazyFrame:
    """A LazyFrame of ``schema`` whose batches are :func:`run_batches`'s results (the frame
    ``pick`` takes of each, when a batch gives more than one), made when it is collected: the
    body of every format's ``scan_*`` verbs.

    Examples:
        >>> import polars as pl
        >>> from collections import namedtuple
        >>> File = namedtuple("File", "session_id size")
        >>> count = lambda batch: pl.DataFrame({"files": [len(batch)]})
        >>> scan_batches(count, [File("a", 1), File("b", 1)], pl.Schema({"files": pl.Int64}), "demo").collect().item()
        2
    """

    def produce() -> Iterator[pl.DataFrame]:
        run = partial(
            run_batches, work, files, workers=workers, on_progress=on_progress, batch_bytes=batch_bytes, threads=threads
        )
        for result in run() if finish is None else run(finish=finish):
            yield result if pick is None else pick(result)

    return lazy_source(produce, schema, name)
