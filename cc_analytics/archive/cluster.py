"""The Dask engine: the same per-batch work as the local engine, and the reading of archives'
parts, as tasks on a ``distributed`` cluster.

Imports: the standard library and ``frames.engine``; ``distributed`` inside
:func:`dask_client` (the ``dask`` extra). A read (:class:`Cluster`, which
``archive.read.open_archives(..., engine="dask")`` holds) is one round of tasks per table,
each reading parts of one archive and format into a frame. Batches are cut exactly as the local engine
cuts them and at most two per worker thread are in flight, so a worker holds a bounded
amount of transcripts whatever the corpus size; results are yielded in batch order, so
a run gives the same archive on either engine. Workers read the sources and write the
archive themselves: on a real cluster both must be URLs every worker can reach (object
storage), and the package must be installed on the workers.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from cc_analytics.errors import InputError
from cc_analytics.frames.engine import Progress, U, _resource_tracker_running, _stop_resource_tracker, batches

T = TypeVar("T")
Item = TypeVar("Item")


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
    with dask_client(client=client, scheduler=scheduler, workers=workers) as connected:
        yield from _run(connected, work, batches(files, batch_bytes), on_progress, sum(f.size for f in files))


@contextlib.contextmanager
def dask_client(*, client: Any = None, scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """``client``, or one connected to ``scheduler``, or one of a ``LocalCluster`` of ``workers``
    processes (default: one per CPU) started here: those made here are closed on leaving.

    An :class:`InputError` when ``distributed`` is not installed or the scheduler cannot be reached.
    """
    if client is not None:
        yield client
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        msg = "the dask engine needs dask.distributed\nHint: pip install 'cc_analytics[dask]'."
        raise InputError(msg) from None
    owned: list[Any] = []
    tracker_was_running = _resource_tracker_running()
    try:
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
        yield client
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


class Cluster:
    """A Dask client kept for several rounds of tasks (the reads of an archive's tables):
    ``client``, else one connected to ``scheduler``, else a ``LocalCluster`` of ``workers``
    processes, connected or started on the first :meth:`map` and ended by :meth:`close`
    (a client given stays open).

    Examples:
        >>> cluster = Cluster(scheduler="tcp://127.0.0.1:8786")
        >>> cluster.map(len, [])  # nothing to do: nothing is connected
        []
        >>> cluster.close()
    """

    def __init__(self, *, client: Any = None, scheduler: str | None = None, workers: int | None = None) -> None:
        self._how = {"client": client, "scheduler": scheduler, "workers": workers}
        self._stack: contextlib.ExitStack | None = None
        self._client: Any = None

    def map(self, work: Callable[[Item], T], items: Sequence[Item]) -> list[T]:
        """``work(item)`` for every item as a Dask task, the results in the items' order."""
        if not items:
            return []
        client = self._connected()
        futures = client.map(work, list(items), pure=False)
        try:
            return list(client.gather(futures))
        finally:
            for future in futures:
                future.release()

    def _connected(self) -> Any:
        if self._client is None:
            stack = contextlib.ExitStack()
            self._client = stack.enter_context(dask_client(**self._how))
            self._stack = stack
        return self._client

    def close(self) -> None:
        """End what was started (a ``LocalCluster``, a client of a scheduler); nothing otherwise."""
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            stack.close()

    def __repr__(self) -> str:
        return f"<Cluster {'connected' if self._client is not None else 'not connected'}>"
