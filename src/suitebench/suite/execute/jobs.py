"""Suite runs as jobs in the store: one suite against many programs, by one engine.

Every run is a job keyed by what determines its result (the suite's content hash, the program
id, the limits, the backend, the engine, the mode and, for the reference, the repetition), so a
killed score resumes where it stopped and a re-run computes only what the store lacks.  Jobs are
plain data in and out: they run on a local pool or on Dask workers.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suitebench.run import sandbox
from suitebench.run.executor import Executor, LocalExecutor, run_cached
from suitebench.run.outcome import Backend
from suitebench.run.store import Store, job_key
from suitebench.run.tree import tree_hash
from suitebench.suite.execute.continuation import (
    MAX_CONTINUATIONS,
    continuation,
    ended_waiting,
    merge_continued,
    needs_continuation,
    settled_run,
)
from suitebench.suite.execute.interpreter import Interpreter
from suitebench.suite.execute.projectconfig import Beside
from suitebench.suite.execute.runner import run_batched, run_plain
from suitebench.suite.execute.runspec import (
    Engine,
    Patterns,
    Positions,
    SuiteLimits,
    Target,
    Timeouts,
)
from suitebench.suite.records import SuiteRun

Progress = Callable[[int, int], None]
# At most this many waiting runs side by side (``overlap``), whatever the memory allows.
MAX_OVERLAP = 64
# 3: a crashed run names its culprit; 4: per-test seconds; 5: timeouts on the CPU
# 6: one hash seed for every run; 7: one memory layout; 8: lambdas entered, in coverage
_JOB_VERSION = "suite-run/8"


@functools.lru_cache(maxsize=64)
def _derived_key(name: str, pairs: tuple[tuple[Any, Any], ...]) -> str:
    """A job key's part from the reference's runs (every mutant's the same: keyed once)."""
    return job_key(name, [list(p) for p in pairs])


def _plain_only(target: Target) -> bool:
    """A run the batched engine does not take: a gcc coverage run of a command-line program
    (its launcher and counters are the plain engine's)."""
    return target.coverage_root is not None and not target.pythonpath


def suite_job(
    payload: dict[str, Any], on_child: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """One suite run on one program (plain engine), or runs on a batch of programs in one
    sandbox (batched engine; ``on_child(index)`` told of each program as its child ends)."""
    limits = SuiteLimits.from_dict(payload["limits"])
    backend = Backend(payload["backend"]) if payload.get("backend") else None
    beside = Path(payload["beside"]) if payload.get("beside") else None
    python = Interpreter.from_dict(payload["python"]) if payload.get("python") else None
    if "target" in payload:
        run = run_plain(
            Path(payload["suite"]),
            Target.from_dict(payload["target"]),
            limits=limits,
            backend=backend,
            beside=beside,
            python=python,
        )
        return run.to_dict()
    runs = run_batched(
        Path(payload["suite"]),
        [Target.from_dict(t) for t in payload["targets"]],
        collect_once=bool(payload["collect_once"]),
        limits=limits,
        backend=backend,
        reference=bool(payload.get("reference")),
        patterns=payload.get("patterns") or (),
        beside=beside,
        python=python,
        on_child=on_child,
    )
    return {"runs": [r.to_dict() for r in runs]}


def _local_job(
    gate: threading.BoundedSemaphore | None,
    ended: Callable[[str], None],
    payload: dict[str, Any],
) -> dict[str, Any]:
    """:func:`suite_job` on a local pool: holding one of the runner's tokens (``gate``:
    :attr:`SuiteRuns._gate`), and a batch's programs told to ``ended(key)`` as their children
    end, for the progress (the payload's ``keys`` name them)."""
    keys = payload.get("keys")
    on_child = None if keys is None else (lambda i: ended(keys[i]))
    with gate if gate is not None else contextlib.nullcontext():
        return suite_job(payload, on_child)


class SuiteRuns:
    """Runs a suite against many targets through the store, by one engine."""

    def __init__(
        self,
        suite: Path,
        *,
        kind: str,
        store: Store,
        executor: Executor | None,
        engine: Engine,
        limits: SuiteLimits,
        backend: Backend | None,
        batch_size: int,
        beside: Beside | None = None,
        python: Interpreter | None = None,
        overlap: int | None = None,
    ) -> None:
        self.suite = suite
        # The project's interpreter (None: suitebench's own): what it is is part of every key.
        self.python = python
        # The project's files beside the suite (its carried pytest configuration among them):
        # they change results, so their digest is part of every run's key.
        self.beside = beside
        self.kind = kind
        self.suite_hash = tree_hash(suite)
        self.store = store
        self.executor = executor
        self.engine = engine
        self.limits = limits
        self.backend = backend
        self.backend_name = str(backend or sandbox.detect_backend())
        self.batch_size = max(1, batch_size)
        # How many runs that wait (timeouts confirmed alone) go side by side: a wait holds no
        # core, so these do not take the ``--jobs`` slots (:func:`overlap_bound`).
        # (``overlap`` given: that many; 0 or fewer than the workers: at the workers' width.)
        self.overlap = overlap_bound(limits, self.workers) if overlap is None else overlap
        # Every run on a local pool holds one of ``overlap`` tokens while it runs, whichever
        # pool started it (the workers', the early confirmations', the waits'): side by side
        # they never pass the bound the memory set, however the pools overlap in time.
        self._gate = threading.BoundedSemaphore(max(self.overlap, self.workers))
        # Fresh runs that compute (after a crash) take turns at the workers' width.
        self._cores = threading.BoundedSemaphore(self.workers)

    def key(
        self,
        program_id: str,
        mode: str,
        order: tuple[str, ...] | None,
        engine: Engine | None = None,
        *,
        timeouts: Timeouts = (),
        positions: Positions = (),
    ) -> str:
        """The job key of a run of ``program_id`` in ``mode`` (``order``: its tests, where they
        are chosen), from what determines its result.  ``timeouts``: the mutants' per-test
        limits derived from the reference's runs (:func:`.runspec.derive_timeouts`), which a
        run asked for once they are known is keyed by -- its program's (``BuiltProgram.
        timeouts``), never a value set on the runner, so a key depends on its arguments only;
        ``positions``: a mutant's, from the same runs (``BuiltProgram.positions``), likewise."""
        beside = () if self.beside is None else (f"beside:{self.beside.digest}",)
        derived: tuple[str, ...] = ()
        if timeouts:
            derived += (_derived_key("timeouts", timeouts),)
        if positions:
            derived += (_derived_key("positions", positions),)
        python = (job_key("python", self.python.identity()),) if self.python else ()
        return job_key(
            _JOB_VERSION,
            self.suite_hash,
            program_id,
            self.limits.to_dict(),
            self.backend_name,
            str(engine or self.engine),
            mode,
            list(order) if order is not None else None,
            *beside,
            *derived,
            *python,
        )

    def stored(self, keys: list[str]) -> set[str]:
        """Which of these job keys the store holds a run for."""
        return set(self.store.get_many(keys))

    def reference_keys(self, program_id: str, runs: int) -> list[str]:
        """One key per reference run: the repetitions are separate jobs, so flakiness shows."""
        return [job_key(self.key(program_id, "reference", None), rep) for rep in range(runs)]

    @property
    def workers(self) -> int:
        return max(1, int(getattr(self.executor, "jobs", None) or os.cpu_count() or 1))

    def batch_count(self, programs: int) -> int:
        """How many batches :meth:`run` deals ``programs`` runs into (none unbatched)."""
        return (
            0
            if self.engine is Engine.PLAIN
            else len(_deal([""] * programs, self.batch_size, self.workers))
        )

    def run(
        self,
        requests: list[tuple[str, Target]],
        progress: Progress | None = None,
        apart: set[str] | None = None,
        spread: list[str] | None = None,
        waits: bool = False,
        width: int | None = None,
        on_run: Callable[[str, SuiteRun], None] | None = None,
        patterns: Patterns = (),
        settled: Callable[[str, SuiteRun], bool] | None = None,
    ) -> dict[str, SuiteRun]:
        """``(job key, target)`` pairs -> runs, computing only what the store lacks.  A target
        recording coverage always runs on its own (plain engine); the keys in ``apart`` (the
        reference's runs) are batched only among themselves, so that no sandbox shows the
        reference's build to a mutant's tests or a mutant's to the reference's; the keys in
        ``spread`` (decoys: :mod:`.decoys`) go one to a batch of the others, last in it, as
        long as they last (:meth:`batch_count` says how many batches to expect).  ``waits``:
        runs expected to wait (a timeout confirmed alone), each on its own (plain engine),
        :attr:`overlap` of them side by side on a local pool (``width``: that many).
        ``on_run(key, run)`` is told of each run of a request as it arrives (before any
        continuation of it).  ``patterns``: the regular expressions the reference's coverage
        run compiled (``Coverage.patterns``), which each batch of programs compiles once for its
        children (not part of a run's key: a pure memo).

        A run that ended early (:mod:`.continuation`) has its remaining tests run in a fresh
        run, again until every test has an outcome or a fresh run reaches none; one that ended
        in a timeout its limit could not stop goes on as a wait does (``waits``), the test it
        ended in first.  ``settled(key, run)``: whether the row of run ``key`` is decided so
        far (``--fast``: a wait it shows was confirmed a timeout): its chain then stops there
        (:func:`.continuation.settled`)."""
        runs = self._run_once(
            requests,
            progress,
            apart,
            spread=spread,
            waits=waits,
            width=width,
            on_run=on_run,
            patterns=patterns,
        )
        targets = dict(requests)
        pending = [k for k, r in runs.items() if needs_continuation(r, targets[k])]
        if pending:
            # Each run's chain goes on at its own pace: one hung mutant's long chain does not
            # hold back the others' (its tokens bound them all, :attr:`_gate`).
            wide = self.overlap if self.waits_overlap else self.workers
            with cf.ThreadPoolExecutor(
                min(len(pending), max(1, wide)), thread_name_prefix="suitebench-continued"
            ) as chains:
                went_on = list(
                    chains.map(lambda k: self._go_on(k, runs[k], targets[k], settled), pending)
                )
            runs.update(zip(pending, went_on, strict=True))
        return runs

    def _go_on(
        self,
        key: str,
        run: SuiteRun,
        target: Target,
        settled: Callable[[str, SuiteRun], bool] | None = None,
    ) -> SuiteRun:
        """``run`` (of request ``key``) gone on in fresh runs (:mod:`.continuation`), one after
        the other, until every test has an outcome, a fresh run reaches no test, or the row is
        ``settled``.  A fresh run after a timeout its limit could not stop runs that test first
        and likely waits as long: it runs as a wait (no --jobs slot, where waits overlap);
        another, on a slot."""
        for _ in range(MAX_CONTINUATIONS):
            if not needs_continuation(run, target):
                break
            if settled is not None and settled(key, run):
                return settled_run(run)
            fresh_key, fresh = continuation(key, run, target)
            waits = self.waits_overlap and ended_waiting(run)
            with contextlib.nullcontext() if waits else self._cores:
                done = self._run_once(
                    [(fresh_key, fresh)],
                    None,
                    None,
                    plain=True,
                    waits=waits,
                    width=1 if waits else None,
                )
            went_on = merge_continued(run, done[fresh_key])
            if went_on is run:  # it reached nothing new: the chain ends
                break
            run = went_on
        return run

    def _run_once(
        self,
        requests: list[tuple[str, Target]],
        progress: Progress | None,
        apart: set[str] | None,
        plain: bool = False,
        spread: list[str] | None = None,
        waits: bool = False,
        width: int | None = None,
        on_run: Callable[[str, SuiteRun], None] | None = None,
        patterns: Patterns = (),
    ) -> dict[str, SuiteRun]:
        """:meth:`run`'s one pass: every request once, ``plain`` forcing the plain engine
        (``waits``: as well, on a pool of :attr:`overlap` workers where the pool is local)."""
        wanted: dict[str, Target] = {}
        for key, target in requests:
            wanted.setdefault(key, target)
        base: dict[str, Any] = {
            "suite": str(self.suite),
            "limits": self.limits.to_dict(),
            "backend": str(self.backend) if self.backend else None,
            "beside": None if self.beside is None else str(self.beside.path),
            "python": None if self.python is None else self.python.to_dict(),
        }
        found = self.store.get_many(list(wanted))
        missing = [k for k in wanted if k not in found]
        plain = plain or waits
        alone = [
            k for k in missing if plain or self.engine is Engine.PLAIN or _plain_only(wanted[k])
        ]
        batched = [k for k in missing if k not in alone]
        # The reference's runs each alone (each is a whole run of the suite; alone they spread
        # over the workers); the others one batch per worker (pytest's start-up paid once per
        # worker), capped by batch_size.  A Python package's coverage run (the reference,
        # traced) shares the first reference run's batch: one start-up less.
        riders = [k for k in batched if wanted[k].coverage_root]
        separate = [k for k in batched if apart and k in apart]
        spreading = set(spread or ())
        decoys = [k for k in batched if k in spreading]
        grouped = [
            k
            for k in batched
            if (not apart or k not in apart) and k not in riders and k not in spreading
        ]
        batches = [[k] for k in separate]
        if riders:
            batches = [[*batches[0], *riders], *batches[1:]] if batches else [riders]
        dealt = _deal(grouped, self.batch_size, self.workers)
        for batch, decoy in zip(dealt, decoys, strict=False):
            batch.append(decoy)
        batches += dealt + [[k] for k in decoys[len(dealt) :]]
        jobs: list[tuple[str, dict[str, Any]]] = [
            (k, {**base, "target": wanted[k].to_dict()}) for k in alone
        ]
        batch_keys: list[tuple[str, list[str]]] = []
        reference = {*(apart or ()), *riders}
        for keys in batches:
            batch_key = job_key(_JOB_VERSION, "batch", keys)
            batch_keys.append((batch_key, keys))
            payload = {
                **base,
                "keys": keys,  # each target's job key: the progress counts it as its child ends
                "targets": [wanted[k].to_dict() for k in keys],
                "collect_once": self.kind == "cli",
                "reference": all(k in reference for k in keys),
                "patterns": [list(p) for p in patterns],
            }
            jobs.append((batch_key, payload))
        done_before = len(found)

        # Progress: by jobs done, or by the batches' programs that have ended, whichever says
        # more (a batch of a hundred mutants is one job for minutes).
        told = threading.Lock()
        jobs_done = [0.0]
        ended_runs: set[str] = set()

        def tell(done: float | None = None, key: str | None = None) -> None:
            if progress is None:
                return
            with told:
                if done is not None:
                    jobs_done[0] = done
                if key is not None:
                    ended_runs.add(key)
                finished = max(round(jobs_done[0] * len(missing)), len(ended_runs))
                progress(done_before + min(len(missing), finished), len(wanted))

        def job_progress(done: int, total: int) -> None:
            tell(done=done / max(1, total))

        in_batch = {batch_key: keys for batch_key, keys in batch_keys}

        def arrived(key: str, value: Any) -> None:
            if on_run is None:
                return
            if key in in_batch:
                for inner, run in zip(in_batch[key], value["runs"], strict=True):
                    on_run(inner, SuiteRun.from_dict(run))
            else:
                on_run(key, SuiteRun.from_dict(value))

        def ended(key: str) -> None:
            """A batch's program ended: the progress counts it (its run is read with the
            batch: :class:`.runner._Children` says why)."""
            tell(key=key)

        pool = self._wait_pool(len(jobs), width) if waits else None
        gate = self._gate if self.waits_overlap else None
        try:
            raw = run_cached(
                functools.partial(_local_job, gate, ended) if self.local else suite_job,
                jobs,
                store=self.store,
                executor=pool or self.executor,
                progress=job_progress if progress is not None else None,
                kind="suite-batch" if batch_keys else "suite-run",
                on_result=arrived if on_run is not None else None,
            )
        finally:
            if pool is not None:
                pool.close()
        fresh: list[tuple[str, Any]] = []
        for key in alone:
            found[key] = raw[key]
        for batch_key, keys in batch_keys:
            for key, run in zip(keys, raw[batch_key]["runs"], strict=True):
                found[key] = run
                fresh.append((key, run))
        self.store.put_many(fresh, kind="suite-run")
        if progress is not None:
            progress(len(wanted), len(wanted))
        return {k: SuiteRun.from_dict(found[k]) for k in wanted}

    def _wait_pool(self, runs: int, width: int | None = None) -> LocalExecutor | None:
        """A pool of :attr:`overlap` threads (``width``: that many) for ``runs`` waiting runs,
        where the runs are local (a thread pool, or none given) and, without ``width``, there
        are more of them than workers; else None (the executor as given: on Dask its workers
        decide)."""
        if not self.waits_overlap:
            return None
        wide = min(width or self.overlap, runs)
        return LocalExecutor(wide) if width or wide > self.workers else None

    @property
    def local(self) -> bool:
        """Whether the runs go on threads of this process (a thread pool, or none given): a
        batch's programs then move the progress as their children end, not only with the
        batch."""
        return self.executor is None or (
            isinstance(self.executor, LocalExecutor) and not self.executor.processes
        )

    @property
    def waits_overlap(self) -> bool:
        """Whether waiting runs go on a pool of their own: the runs are local and
        :attr:`overlap` is wider than the workers."""
        return self.local and self.overlap > self.workers


def overlap_bound(limits: SuiteLimits, workers: int) -> int:
    """How many waiting runs may go side by side: each may use its memory limit, so no more
    than the memory available holds at that (and :data:`MAX_OVERLAP`), and never fewer than
    the workers (the runs then take the ``--jobs`` slots, as every other run does)."""
    available = _available_mib()
    each = limits.memory_mb or 2048
    fits = int(available * 0.8 // each) if available else workers
    return max(workers, min(MAX_OVERLAP, fits))


def _available_mib() -> int:
    """MemAvailable of ``/proc/meminfo`` in MiB (0 where it cannot be read)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return 0
    return 0


def _deal(keys: list[str], most: int, workers: int) -> list[list[str]]:
    """``keys`` in batches of at most ``most``, as many batches as a multiple of ``workers``
    (each worker gets as many), dealt round-robin: neighbouring programs (a module's import-time
    mutants, say, which cost more than its body mutants) spread over the batches, so that the
    batches cost alike and no worker is left alone at the end."""
    if not keys:
        return []
    count = -(-len(keys) // most)
    count = min(len(keys), -(-count // workers) * workers)
    return [keys[i::count] for i in range(count)]
