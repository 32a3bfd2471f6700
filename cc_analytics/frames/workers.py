"""Worker processes of the batch engine: plain interpreters running :func:`serve`, each fed its
tasks on its standard input and answering on its standard output.

Imports: the standard library only (a worker imports this module first, and nothing else until
its tasks ask).

A :class:`Pool` starts its workers with ``python -c`` and this module's :func:`serve`: no
``multiprocessing``, so no resource tracker beside them (a 13 MB process that competed for the
cores as a run started), and nothing of the caller run again in them: a script needs no
``if __name__ == "__main__":`` guard, and the command line's own modules are not imported in
each worker (on the 100 MB corpus, a cold ``sessions`` took 0.32 s against 0.365 s with
``multiprocessing``). A task is a pickled ``(function, arguments)``, sent with its length: the
function must be importable by its module and name (every batch function is; one of the
caller's ``__main__`` is an error of its task, and the worker serves on), and the worker has the
caller's ``sys.path``. Each worker has two threads here, one writing its tasks (a write to a
full pipe waits for the worker, never for this process's own work) and one reading its answers,
each the pickled ``(True, result)`` or ``(False, error, traceback)`` of a task, which resolves
its :class:`~concurrent.futures.Future` in order.

A worker that ends before it answers (killed, out of memory) fails its tasks with
:class:`WorkerDied`; :meth:`Pool.kill` kills every worker at once (the engine's runs end that
way: waiting for a worker to exit on its own would wait for its interpreter and Polars to tear
down).

Examples:
    >>> pool = Pool(1)
    >>> pool.submit(divmod, 7, 2).result(timeout=60)
    (3, 1)
    >>> pool.kill()
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from collections import deque
from contextlib import suppress
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # the rest is this process's: a worker imports no more than it needs to serve
    from collections.abc import Callable, Mapping
    from concurrent.futures import Future

_SIZE = struct.Struct("<Q")  # the length of a task or an answer, before it
WORKER_MARK = "from cc_analytics.frames.workers import serve"  # in a worker's command line
_BOOT = f"import sys,pickle;sys.path[:]=pickle.load(sys.stdin.buffer);{WORKER_MARK};serve()"


class WorkerDied(Exception):
    """A worker process ended before it answered a task (killed, out of memory, or failed as it started)."""


class RemoteTraceback(Exception):
    """The traceback of an error raised in a worker, as its ``__cause__`` (the worker's text)."""

    def __str__(self) -> str:
        return "\n" + "".join(self.args)


def serve() -> None:  # pragma: no cover - runs in the worker process (tests/frames/test_engine.py)
    """A worker's loop: read ``(function, arguments)`` from standard input until it ends, answer
    each on standard output. What a task prints goes to standard error (the answers' pipe is
    this module's alone)."""
    tasks = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while True:
        head = tasks.read(_SIZE.size)
        if len(head) < _SIZE.size:
            return
        data = tasks.read(_SIZE.unpack(head)[0])
        try:
            function, arguments = pickle.loads(data)  # a function of the caller's __main__ fails here
            answer: tuple[Any, ...] = (True, function(*arguments))
        except BaseException as error:  # noqa: BLE001 - every error is the caller's to see
            answer = (False, error, _traceback())
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # noqa: BLE001 - a result or an error that does not pickle
            made = RuntimeError(f"a worker's answer could not be sent: {error!r}")
            data = pickle.dumps((False, made, _traceback()), protocol=pickle.HIGHEST_PROTOCOL)
        answers.write(_SIZE.pack(len(data)))
        answers.write(data)
        answers.flush()
        del answer, data


def _traceback() -> str:
    import traceback  # only when something failed: a worker starts without it

    return traceback.format_exc()


class _Worker:
    """One worker process, its writer and reader threads, and its tasks not yet answered."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        import subprocess
        import threading

        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(environment),
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.waiting: deque[Future[Any]] = deque()  # sent or to send, in order
        self.lock = threading.Lock()
        self.ended = False  # its answers ended: a task sent now would never be answered
        self._sends: deque[bytes | None] = deque([pickle.dumps(sys.path)])
        self._wake = threading.Condition(self.lock)
        threading.Thread(target=self._write, args=(self.process.stdin,), daemon=True, name="cc-worker-in").start()
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True, name="cc-worker-out").start()

    def send(self, future: Future[Any], data: bytes) -> None:
        with self.lock:
            if not self.ended:
                self.waiting.append(future)
                self._sends.append(data)
                self._wake.notify()
                return
        _settle(future, error=WorkerDied("the worker process had ended"))

    def _write(self, pipe: IO[bytes]) -> None:
        while True:
            with self.lock:
                while not self._sends:
                    self._wake.wait()
                data = self._sends.popleft()
            if data is None:
                break
            try:
                pipe.write(data)
                pipe.flush()
            except (OSError, ValueError):  # the worker is gone: the reader fails its tasks
                break
        with suppress(OSError, ValueError):
            pipe.close()

    def _read(self, pipe: IO[bytes]) -> None:
        while True:
            head = pipe.read(_SIZE.size)
            answer = None
            if len(head) == _SIZE.size:
                (size,) = _SIZE.unpack(head)
                data = pipe.read(size)
                if len(data) == size:
                    try:
                        answer = pickle.loads(data)
                    except Exception as error:  # noqa: BLE001 - a class the answer names cannot be loaded here
                        answer = (False, error, _traceback())
                del data
            with self.lock:
                future = self.waiting.popleft() if self.waiting and answer is not None else None
            if answer is None:
                break
            assert future is not None
            if answer[0]:
                _settle(future, result=answer[1])
            else:
                raised, text = answer[1], answer[2]
                raised.__cause__ = RemoteTraceback(text)
                _settle(future, error=raised)
            del answer
        with suppress(OSError, ValueError):
            pipe.close()
        with self.lock:
            self.ended = True
            left, self.waiting = list(self.waiting), deque()
            self._sends.clear()
            self._sends.append(None)
            self._wake.notify()
        died = WorkerDied("the worker process ended before it answered")
        for future in left:
            _settle(future, error=died)

    def kill(self) -> None:
        """Kill the process (reaped by :meth:`Pool.kill`) and end the writer."""
        with suppress(OSError):
            self.process.kill()
        with self.lock:
            self._sends.clear()
            self._sends.append(None)
            self._wake.notify()


def _settle(future: Future[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    from concurrent.futures import InvalidStateError

    with suppress(InvalidStateError):  # settled or cancelled meanwhile: nobody waits for it
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)


class Pool:
    """``count`` worker processes (``environment``: their variables, else this process's); a
    task goes to the worker with the fewest tasks waiting."""

    def __init__(self, count: int, environment: Mapping[str, str] | None = None) -> None:
        import threading

        variables = dict(os.environ if environment is None else environment)
        self._workers = [_Worker(variables) for _ in range(count)]
        self._lock = threading.Lock()

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Future[Any]:
        """Run ``function(*arguments)`` in a worker; its future is resolved by the worker's answer."""
        from concurrent.futures import Future

        data = pickle.dumps((function, arguments), protocol=pickle.HIGHEST_PROTOCOL)
        data = _SIZE.pack(len(data)) + data
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        with self._lock:
            worker = min(self._workers, key=lambda one: len(one.waiting))
            worker.send(future, data)
        return future

    @property
    def pids(self) -> list[int]:
        """The workers' process ids."""
        return [worker.process.pid for worker in self._workers]

    def kill(self) -> None:
        """Kill every worker now and reap it (its tasks left unanswered)."""
        for worker in self._workers:
            worker.kill()
        try:
            for worker in self._workers:
                worker.process.wait()
        finally:  # even when an interrupt lands while a killed worker is reaped
            for worker in self._workers:
                if worker.process.returncode is None:
                    worker.process.wait()
