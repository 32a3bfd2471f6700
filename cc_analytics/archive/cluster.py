"""The Dask engine: the same per-batch work as the local engine, as tasks on a ``distributed`` cluster.

Imports: the standard library and ``frames.engine``; ``distributed`` inside
:func:`run_batches_dask` (the ``dask`` extra). Batches are cut exactly as the local engine
cuts them and at most two per worker thread are in flight, so a worker holds a bounded
amount of transcripts whatever the corpus size; results are yielded in batch order, so
a run gives the same archive on either engine. Workers read the sources and write the
archive themselves: on a real cluster both must be URLs every worker can reach (object
storage), and the package must be installed on the workers.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from cc_analytics.errors import InputError
from cc_analytics.frames.engine import Progress, U, _resource_tracker_running, _stop_resource_tracker, batches

T = TypeVar("T")


def run_batches_dask(
    work: Callable[[list[U]], T],
    files: Sequence[U],
    *,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    on_progress: Progress | None = None,
    batch_bytes: int,
) -> Iterator[T]:
    """``work(batch)`` for every batch as a Dask task, results in batch order.

    ``client``: a ``distributed.Client`` to use; else one connected to ``scheduler`` (an
    address such as ``tcp://host:8786``); else a ``LocalCluster`` of ``workers`` processes
    (default: one per CPU) started for this run and closed after it.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        msg = "the dask engine needs dask.distributed\nHint: pip install 'cc_analytics[dask]'."
        raise InputError(msg) from None
    owned: list[Any] = []
    tracker_was_running = _resource_tracker_running()
    if client is None:
        if scheduler:
            client = _connect(Client, scheduler)
        else:
            cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            owned.append(cluster)
            client = Client(cluster)
        owned.insert(0, client)
    try:
        yield from _run(client, work, batches(files, batch_bytes), on_progress, sum(f.size for f in files))
    finally:
        for thing in owned:
            thing.close()
        if owned and not tracker_was_running:
            _stop_resource_tracker()  # the cluster's processes started it: leave none defunct


def _connect(client: Callable[[str], Any], scheduler: str) -> Any:
    """A client of the scheduler at ``scheduler``, or an :class:`InputError` saying why not."""
    try:
        return client(scheduler)
    except (OSError, ValueError, TypeError) as error:  # a timeout is an OSError; a malformed address a ValueError
        msg = (
            f"cannot connect to the Dask scheduler at {scheduler!r}: {error}\n"
            "Hint: give its address as tcp://HOST:8786 and check that the scheduler runs and that this "
            "machine reaches it (or leave out --scheduler for a LocalCluster)."
        )
        raise InputError(msg) from None


def _run(
    client: Any, work: Callable[[list[U]], T], plan: list[list[U]], on_progress: Progress | None, total: int
) -> Iterator[T]:
    threads = sum(client.nthreads().values()) or 1
    pending: deque[tuple[Any, int]] = deque()
    queue = iter(plan)
    done = 0
    if on_progress:
        on_progress(0, total)

    def submit() -> bool:
        batch = next(queue, None)
        if batch is None:
            return False
        pending.append((client.submit(work, batch, pure=False), sum(f.size for f in batch)))
        return True

    while len(pending) < 2 * threads and submit():
        pass
    while pending:
        future, size = pending.popleft()
        result = future.result()
        future.release()
        submit()
        done += size
        if on_progress:
            on_progress(done, total)
        yield result
