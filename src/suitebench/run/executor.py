"""Executors: spread a batch of jobs over a local pool or a Dask cluster, behind one interface.

Jobs are plain data and results are plain data (JSON-able dicts); the coordinator alone writes
the store. That is what lets the same command run on two cores or on a cluster with ``--dask``,
and what makes a run killed halfway resumable: :func:`run_cached` looks every key up first, runs
only the missing jobs and commits results in small batches as they complete.

The local pool uses threads by default: our jobs spend their time waiting on sandboxed
subprocesses (untrusted code never runs in-process), so threads need no pickling and start
instantly. ``processes=True`` is there for CPU-bound Python jobs.
"""

from __future__ import annotations

import base64
import concurrent.futures as cf
import contextlib
import functools
import heapq
import json
import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

from suitebench.run.outcome import Limits
from suitebench.run.store import Store

P = TypeVar("P")
R = TypeVar("R")

Progress = Callable[[int, int], None]

_IDLE_SECONDS = 2.0  # a job queue's worker thread ends after this long without work


class ExecutorError(RuntimeError):
    """An executor cannot be created (e.g. Dask requested but not installed)."""


def default_jobs() -> int:
    """One worker per core: the default of ``--jobs``."""
    return os.cpu_count() or 1


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn(payload)`` for many payloads in parallel and yields results as they complete."""

    jobs: int

    def map_unordered(
        self, fn: Callable[[Any], Any], payloads: Iterable[Any]
    ) -> Iterator[tuple[int, Any]]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class _ExecutorBase:
    jobs: int

    def close(self) -> None:  # pragma: no cover - overridden
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class LocalExecutor(_ExecutorBase):
    """A local pool of ``jobs`` workers (threads, or processes with ``processes=True``).

    At most a few payloads per worker are in flight at once, so a batch of a million jobs
    does not hold a million futures, and abandoning the iterator cancels what has not started.
    """

    def __init__(
        self,
        jobs: int | None = None,
        *,
        processes: bool = False,
        start: str | None = None,
        nice: int = 0,
    ) -> None:
        """``start``: how worker processes start (``multiprocessing``'s start methods;
        ``forkserver`` where the caller has threads that may hold a lock a fork would copy
        held); ``nice``: worker processes' niceness, for work that should only fill the
        cores others leave idle."""
        self.jobs = max(1, jobs or default_jobs())
        self.processes = processes
        context = None if start is None else multiprocessing.get_context(start)
        self._pool: cf.Executor = (
            cf.ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=context,
                initializer=functools.partial(os.nice, nice) if nice else None,
            )
            if processes
            else cf.ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="suitebench")
        )

    def map_unordered(self, fn: Callable[[P], R], payloads: Iterable[P]) -> Iterator[tuple[int, R]]:
        window = self.jobs * 4
        it = iter(enumerate(payloads))
        pending: dict[cf.Future[R], int] = {}

        def fill() -> None:
            while len(pending) < window:
                try:
                    i, p = next(it)
                except StopIteration:
                    return
                pending[self._pool.submit(fn, p)] = i

        try:
            fill()
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                error: BaseException | None = None
                # Finished results first, in payload order; a failure is raised after them so
                # no completed work is lost to a sibling's exception.
                for fut in sorted(done, key=pending.__getitem__):
                    i = pending.pop(fut)
                    exc = fut.exception()
                    if exc is not None:
                        error = error or exc
                        continue
                    yield i, fut.result()
                if error is not None:
                    raise error
                fill()
        finally:
            for fut in pending:
                fut.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __repr__(self) -> str:
        kind = "processes" if self.processes else "threads"
        return f"LocalExecutor(jobs={self.jobs}, {kind})"


class DaskExecutor(_ExecutorBase):
    """Jobs on a Dask cluster: ``"local"`` starts a LocalCluster, ``"tcp://..."`` joins one.

    The LocalCluster runs one single-threaded worker process per job slot, listens on loopback
    only and starts no dashboard. ``fn`` must be a top-level function importable on the workers.
    """

    def __init__(
        self, address: str = "local", *, jobs: int | None = None, connect_timeout: float = 30.0
    ) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is installed in CI
            raise ExecutorError(
                "--dask needs the optional Dask extra: pip install 'suitebench[dask]'"
            ) from exc
        self.address = address
        self._cluster: Any = None
        if address == "local":
            n = max(1, jobs or default_jobs())
            try:
                self._cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    host="127.0.0.1",
                    silence_logs=40,  # logging.ERROR
                )
                self._client: Any = Client(self._cluster)
            except Exception as exc:
                if self._cluster is not None:
                    self._cluster.close()
                raise ExecutorError(
                    f"could not start a Dask LocalCluster with {n} workers: {exc} (worker "
                    "processes re-import the main module: run from a script or the "
                    "suitebench command, not from stdin)"
                ) from exc
        elif address.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
            try:
                self._client = Client(address, timeout=connect_timeout)
            except Exception as exc:
                raise ExecutorError(
                    f"--dask {address}: cannot reach the Dask scheduler: {exc}"
                ) from exc
        else:
            raise ExecutorError(
                f"--dask {address!r}: expected 'local' or a scheduler address like tcp://host:8786"
            )
        nthreads = self._client.nthreads()
        self.jobs = max(1, sum(nthreads.values()) if nthreads else (jobs or 1))

    def map_unordered(self, fn: Callable[[P], R], payloads: Iterable[P]) -> Iterator[tuple[int, R]]:
        from distributed import as_completed

        window = self.jobs * 8
        it = iter(enumerate(payloads))
        index: dict[str, int] = {}

        def submit_next() -> Any | None:
            try:
                i, p = next(it)
            except StopIteration:
                return None
            fut = self._client.submit(fn, p, pure=False)
            index[fut.key] = i
            return fut

        first = [f for f in (submit_next() for _ in range(window)) if f is not None]
        if not first:
            return
        ac = as_completed(first)
        try:
            for fut in ac:
                i = index.pop(fut.key)
                result = fut.result()
                fut.release()
                nxt = submit_next()
                if nxt is not None:
                    ac.add(nxt)
                yield i, result
        finally:
            for f in list(ac.futures):
                f.cancel()

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __repr__(self) -> str:
        return f"DaskExecutor({self.address!r}, jobs={self.jobs})"


class JobQueue(_ExecutorBase):
    """One priority queue of jobs served by the executor's ``jobs`` workers.

    Many callers (one thread per problem of an audit, say) submit to the same queue, so a
    worker is idle only when no job of any caller is ready. A caller sets the priority of what
    it submits with :meth:`priority` (thread-local; lower runs first, ties in submission order),
    so the earliest problem's jobs go first and the others fill the gaps. It is itself an
    :class:`Executor`: ``map_unordered`` submits at the caller's priority.

    On a local thread pool the queue's own worker threads run the jobs (the pool's threads stay
    idle); on any other executor (processes, Dask) each queue worker hands one job at a time to
    it, so ``jobs`` jobs are in flight.
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.jobs = max(1, executor.jobs)
        self._direct = isinstance(executor, LocalExecutor) and not executor.processes
        self._heap: list[tuple[tuple[Any, ...], int, Callable[[Any], Any], Any, cf.Future[Any]]]
        self._heap = []
        self._seq = 0
        self._cv = threading.Condition()
        self._closed = False
        self._local = threading.local()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # workers waiting for a job

    @contextlib.contextmanager
    def priority(self, *key: Any) -> Iterator[None]:
        """Jobs this thread submits inside the block get priority ``key`` (lower first)."""
        old = getattr(self._local, "key", ())
        self._local.key = key
        try:
            yield
        finally:
            self._local.key = old

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> cf.Future[Any]:
        fut: cf.Future[Any] = cf.Future()
        with self._cv:
            if self._closed:
                raise RuntimeError("the job queue is closed")
            self._seq += 1
            key = getattr(self._local, "key", ())
            heapq.heappush(self._heap, (key, self._seq, fn, payload, fut))
            self._threads = [t for t in self._threads if t.is_alive()]
            if len(self._heap) > self._idle and len(self._threads) < self.jobs:
                # workers start when there is work and end when idle: nothing to close
                t = threading.Thread(
                    target=self._work, name=f"suitebench-queue-{self._seq}", daemon=True
                )
                self._threads.append(t)
                self._idle += 1
                t.start()
            self._cv.notify()
        return fut

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    if not self._cv.wait(timeout=_IDLE_SECONDS) and not self._heap:
                        self._idle -= 1
                        return
                if not self._heap:
                    self._idle -= 1
                    return
                self._idle -= 1
                _, _, fn, payload, fut = heapq.heappop(self._heap)
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                if self._direct:
                    result = fn(payload)
                else:
                    ((_, result),) = list(self.executor.map_unordered(fn, [payload]))
            except BaseException as exc:
                fut.set_exception(exc)
            else:
                fut.set_result(result)
            del fn, payload, fut  # do not keep a finished job's data alive while waiting
            with self._cv:
                self._idle += 1

    def map_unordered(self, fn: Callable[[P], R], payloads: Iterable[P]) -> Iterator[tuple[int, R]]:
        futs = {self.submit(fn, p): i for i, p in enumerate(payloads)}
        try:
            for fut in cf.as_completed(futs):
                yield futs[fut], fut.result()
        finally:
            for fut in futs:
                fut.cancel()

    def close(self) -> None:
        """Stop the workers once the queued jobs are done (the executor stays open)."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        for t in list(self._threads):
            if t is not threading.current_thread():
                t.join()

    def __repr__(self) -> str:
        return f"JobQueue({self.executor!r})"


def make_executor(jobs: int | None = None, dask: str | None = None) -> Executor:
    """The executor the global options ask for: ``--dask`` if given, else a local pool."""
    if dask:
        return DaskExecutor(dask, jobs=jobs)
    return LocalExecutor(jobs)


def _normalise(value: Any) -> Any:
    """The value as it will come back from the store (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, sort_keys=True))


def run_cached(
    fn: Callable[[Any], Any],
    jobs: Iterable[tuple[str, Any]],
    *,
    store: Store,
    executor: Executor | None = None,
    progress: Progress | None = None,
    kind: str = "",
    commit_every: int = 50,
    commit_seconds: float = 1.0,
    batch: int | None = None,
    on_result: Callable[[str, Any], None] | None = None,
) -> dict[str, Any]:
    """Results of ``fn(payload)`` for every ``(key, payload)``, computing only what is missing.

    Every key is looked up in the store first; the missing ones run on ``executor`` (a local
    pool of one worker per core if None) and their results are committed from this thread in
    batches of ``commit_every`` results or every ``commit_seconds``, whichever comes first, so
    a run killed with SIGKILL loses at most one uncommitted batch and a restart recomputes only
    the missing jobs. A key given twice runs once. Results must be JSON-able; the returned
    values are as the store returns them (so a fresh run and a resumed run compare equal).
    ``batch`` is an alias of ``commit_every``; ``on_result(key, value)`` is called in this
    thread for each result computed, as it arrives.
    """
    if batch is not None:
        commit_every = batch
    commit_every = max(1, commit_every)
    payloads: dict[str, Any] = {}
    for key, payload in jobs:
        payloads.setdefault(key, payload)
    total = len(payloads)
    results: dict[str, Any] = store.get_many(payloads) if payloads else {}
    done = len(results)
    if progress is not None:
        progress(done, total)
    missing = [k for k in payloads if k not in results]
    if not missing:
        return {k: results[k] for k in payloads}

    own = executor is None
    ex: Executor = LocalExecutor() if executor is None else executor
    buffer: list[tuple[str, Any]] = []
    last_commit = time.monotonic()
    try:
        for i, result in ex.map_unordered(fn, [payloads[k] for k in missing]):
            key = missing[i]
            value = _normalise(result)
            results[key] = value
            buffer.append((key, value))
            if on_result is not None:
                on_result(key, value)
            done += 1
            now = time.monotonic()
            if len(buffer) >= commit_every or now - last_commit >= commit_seconds:
                store.put_many(buffer, kind=kind)
                buffer.clear()
                last_commit = now
            if progress is not None:
                progress(done, total)
    finally:
        # Whatever finished is kept, even if a job raised or the caller was interrupted.
        if buffer:
            store.put_many(buffer, kind=kind)
        if own:
            ex.close()
    return {k: results[k] for k in payloads}


# -- a generic job: one sandboxed run, as plain data --------------------------------------------


def sandbox_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one command sandboxed in a fresh scratch directory; the outcome as a dict.

    Payload keys: ``argv`` (list of str), optional ``stdin_b64`` or ``stdin`` (text),
    ``limits`` (a ``Limits.to_dict()``), ``ro_binds`` (paths), ``env`` (mapping) and
    ``with_output`` (default True). A top-level function on plain data, so it runs the same
    on the local pool and on Dask workers.
    """
    from suitebench.run import sandbox

    if "stdin_b64" in payload:
        stdin = base64.b64decode(payload["stdin_b64"])
    else:
        stdin = str(payload.get("stdin", "")).encode()
    limits = Limits.from_dict(payload["limits"]) if payload.get("limits") else Limits()
    with tempfile.TemporaryDirectory(prefix="suitebench-job-") as scratch:
        outcome = sandbox.run(
            list(payload["argv"]),
            cwd=Path(scratch),
            stdin=stdin,
            env=payload.get("env"),
            limits=limits,
            ro_binds=tuple(payload.get("ro_binds", ())),
        )
    return outcome.to_dict(with_output=bool(payload.get("with_output", True)))


def run_all(
    fn: Callable[[Any], Any],
    payloads: Sequence[Any],
    *,
    executor: Executor | None = None,
    progress: Progress | None = None,
) -> list[Any]:
    """``[fn(p) for p in payloads]`` in parallel, in input order (no store)."""
    out: list[Any] = [None] * len(payloads)
    own = executor is None
    ex: Executor = LocalExecutor() if executor is None else executor
    try:
        if progress is not None:
            progress(0, len(payloads))
        for n, (i, r) in enumerate(ex.map_unordered(fn, payloads), start=1):
            out[i] = r
            if progress is not None:
                progress(n, len(payloads))
    finally:
        if own:
            ex.close()
    return out
