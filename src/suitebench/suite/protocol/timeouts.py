"""A timeout kills a mutant only when it is the mutant's doing.

A valid test that takes 1.2 s on the reference can run past a 2 s limit on a mutant merely
because the machine is loaded (a batch of programs, other jobs), and each such timeout would
count as a kill.  The plugin tells the two apart where it can (:mod:`.inside.budget`): a test
whose thread used (nearly) its whole limit of CPU time computed all along, and a thread's CPU
time never exceeds its wall time, so no machine would have finished it sooner -- that timeout
stands as it is (``TestOutcome.on_cpu``).  Every other cell where a valid test timed out on a
mutant is run again, that test alone on that mutant, in a fresh run at the user's per-test
limit (not the lower limit a mutant's run derives from the reference's times,
:func:`.runspec.derive_timeouts`): the timeout counts (as ``timeout``, not ``failed``) only
if the test times out again; otherwise the cell takes the outcome of the run alone.  Each
confirmation is a job in the store like any run.

A confirmation waits (that is why it is one): it holds no core, so the confirmations do not
queue for the ``--jobs`` slots.  Each runs on its own, in a sandbox of its own, and as many go
side by side as the memory holds at their memory limit (``SuiteRuns.overlap``, at most
:data:`~suitebench.suite.execute.jobs.MAX_OVERLAP`).  Their start-ups and any test that computes
then share the cores: what that load could change, the plugin gives back -- a phase's time spent
ready to run without a CPU is not counted against its limit (:mod:`.inside.budget`), so a
confirmation's verdict is the one it would have on its own.

Confirmations start early: a mutant's run that shows a wait (on a test that passed the
reference runs so far) has it confirmed at once, beside the other mutants' runs
(:class:`EarlyConfirmations`, on a pool of its own as wide as the overlap leaves beside the
workers), so a hung mutant's waits pass while the others compute; what is left is asked for
after the mutants' runs, the early ones found in the store.

With ``--fast`` a mutant another valid test kills (a failure, or a timeout on the CPU) needs no
confirmation: its waiting cells are left unconfirmed, as ``not_run`` with the reason.  Nor does
it need more than one wait confirmed: its waits are confirmed one at a time early, and after the
runs in two rounds of waits at most (after those the store holds, each mutant's first other
wait, then the rest of the undecided mutants'); once one times out again alone (or fails alone)
the others are left unconfirmed (:func:`_confirm_fast`).  A mutant that hangs fifteen tests
costs one confirmation, not fifteen.  And a mutant whose early confirmation comes back a timeout
is decided: a run of it that ended early does not go on in a fresh run
(:meth:`EarlyConfirmations.settled`; a mutant that hangs an actor hangs test after test, each
ending its run).  Only the confirmation settles it, so M is what the whole chain would give;
the killer named may be the timeout where a later test fails.

The reference runs get the same (:func:`confirm_reference_timeouts`): a test that timed out
there, not on the CPU, would be dropped as not valid because the machine was busy, and V would
move with the load.  It runs alone on the reference at the user's limit, once however many
reference runs it timed out in; when it does not time out alone, those runs take the outcome of
the run alone.  A test that hangs, or computes past its limit, stays a timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace

from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.programs import BuiltProgram
from suitebench.suite.execute.runspec import Target
from suitebench.suite.records import SuiteRun, TestOutcome, TestStatus
from suitebench.suite.result import TestInfo


class EarlyConfirmations:
    """Waits confirmed as the mutants' runs show them, beside those runs.

    :meth:`watch` names the runs that are a mutant's (by job key), :meth:`offer` is handed
    each run as it arrives (``SuiteRuns.run``'s ``on_run``); a background thread runs the
    confirmations of its waits (on ``candidates``, the tests valid so far) as jobs in the store,
    batch by batch, at ``width`` side by side.  :meth:`join` waits for them all; the
    confirmations asked for afterwards (:func:`confirm_timeouts`) find them in the store.  A
    confirmation that failed to run here is simply asked for again there."""

    def __init__(
        self, runner: SuiteRuns, candidates: Iterable[str], *, fast: bool, width: int
    ) -> None:
        self.runner = runner
        self.candidates = tuple(candidates)
        self.fast = fast
        self.width = max(1, width)
        self.programs: dict[str, BuiltProgram] = {}
        self.asked = 0
        self._queue: list[tuple[str, Target]] = []
        # --fast: (program id, test) whose confirmation decided the mutant (it timed out again
        # or failed alone); each confirmation's cell by its key; the confirmations of a run's
        # other waits, asked for one at a time while none decides, by the key before them
        self._confirmed: set[tuple[str, str]] = set()
        self._cells: dict[str, tuple[str, str]] = {}
        self._later: dict[str, list[tuple[str, tuple[str, Target]]]] = {}
        self._cv = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def watch(self, programs: Mapping[str, BuiltProgram]) -> None:
        """The runs with these job keys are these mutants'."""
        self.programs.update(programs)

    def offer(self, key: str, run: SuiteRun) -> None:
        program = self.programs.get(key)
        if program is None:
            return
        waited = [t for t in self.candidates if _waited_out(run, t)]
        if not waited or (self.fast and any(_kills_at_once(run, t) for t in self.candidates)):
            return
        with self._cv:
            if self._closed:
                return
            jobs = [(t, confirmation(self.runner, program, t)) for t in waited]
            jobs = [(t, job) for t, job in jobs if job[0] not in self._cells]
            for test, job in jobs:
                self._cells[job[0]] = (program.program_id, test)
            if self.fast and jobs:  # one at a time: the next only if this one decides nothing
                self._later[jobs[0][1][0]] = jobs[1:]
                jobs = jobs[:1]
            self._queue += [job for _, job in jobs]
            self.asked += len(jobs)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="suitebench-confirmations", daemon=True
                )
                self._thread.start()
            self._cv.notify()

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue, []
            try:
                self.runner.run(batch, waits=True, width=self.width, on_run=self._arrived)
            except Exception:  # asked for again by confirm_timeouts, which reports it
                continue

    def _arrived(self, key: str, run: SuiteRun) -> None:
        cell = self._cells.get(key)
        if not self.fast or cell is None:
            return
        with self._cv:
            later = self._later.pop(key, [])
            if _decides(run.status_of(cell[1])):
                self._confirmed.add(cell)
            elif later and not self._closed:
                self._later[later[0][1][0]] = later[1:]
                self._queue.append(later[0][1])
                self.asked += 1
                self._cv.notify()

    def settled(self, key: str, run: SuiteRun) -> bool:
        """``--fast``: whether the mutant of run ``key`` is decided by a wait ``run`` shows:
        its confirmation, alone at the user's limit, timed out again or failed (a kill, as
        :func:`confirm_timeouts` will find it in the store)."""
        program = self.programs.get(key)
        if program is None or not self.fast:
            return False
        with self._cv:
            confirmed = {t for p, t in self._confirmed if p == program.program_id}
        return any(_waited_out(run, t) for t in confirmed)

    def join(self) -> None:
        """Every confirmation offered has run (or failed to): no more are taken."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join()


def early_confirmations(
    runner: SuiteRuns, candidates: Iterable[str], *, fast: bool
) -> EarlyConfirmations | None:
    """An :class:`EarlyConfirmations` as wide as the overlap leaves beside the workers, or
    None where waits do not overlap (``--overlap`` at most ``--jobs``, or not a local pool)."""
    width = runner.overlap - runner.workers
    if not runner.waits_overlap or width < 1:
        return None
    return EarlyConfirmations(runner, candidates, fast=fast, width=width)


def confirmation(runner: SuiteRuns, program: BuiltProgram, test: str) -> tuple[str, Target]:
    """The job of ``test`` alone on ``program`` at the user's per-test limit: its key, target.
    The key holds the program's derived limits (``BuiltProgram.timeouts``: a mutant's, once
    derived) although the run drops them: so it always was, and stored confirmations keep
    their keys."""
    key = runner.key(
        program.program_id,
        "confirm-timeout",
        (test,),
        timeouts=program.timeouts,
        positions=program.positions,
    )
    return key, replace(program.target(), select=(test,), timeouts=())


def confirm_timeouts(
    runner: SuiteRuns,
    built: dict[str, BuiltProgram],
    runs: Mapping[str, SuiteRun | None],
    tests: list[TestInfo],
    *,
    fast: bool = False,
) -> dict[str, SuiteRun | None]:
    """``runs`` (a mutant's row each) with every valid test's timeout confirmed alone
    (``fast``: only where no other valid test kills the mutant)."""
    valid = [t.id for t in tests if t.valid]
    out = dict(runs)
    asked: dict[tuple[str, str], BuiltProgram] = {}
    one_enough: dict[str, list[str]] = {}
    for mid, run in runs.items():
        if run is None:
            continue
        waited = [test for test in valid if _waited_out(run, test)]
        if fast and waited and any(_kills_at_once(run, test) for test in valid):
            out[mid] = _unconfirmed(run, waited)
            continue
        if fast and waited:
            one_enough[mid] = waited
            continue
        asked.update({(mid, test): built[mid] for test in waited})
    if one_enough:
        _confirm_fast(runner, built, out, one_enough)
    alone = _alone(runner, asked)
    for (mid, test), again in alone.items():
        row = out[mid]
        assert row is not None
        out[mid] = _take(row, test, again)
    return out


def confirm_reference_timeouts(
    runner: SuiteRuns, reference: BuiltProgram, runs: Mapping[str, SuiteRun]
) -> dict[str, SuiteRun]:
    """``runs`` (reference runs by key) with every timeout not spent on the CPU confirmed by
    the test alone on the reference (one run per test)."""
    waited = {test for run in runs.values() for test in run.outcomes if _waited_out(run, test)}
    alone = _alone(runner, {("reference", test): reference for test in sorted(waited)}, apart=True)
    out = dict(runs)
    for (_, test), again in alone.items():
        for key, run in out.items():
            if _waited_out(run, test):
                out[key] = _take(run, test, again)
    return out


def _confirm_fast(
    runner: SuiteRuns,
    built: Mapping[str, BuiltProgram],
    rows: dict[str, SuiteRun | None],
    waited: Mapping[str, list[str]],
) -> None:
    """``--fast``: each mutant's ``waited`` cells confirmed until one decides it (times out
    again alone, tells nothing, or fails alone: a kill either way), in ``rows`` in place; the
    cells not tried then are left unconfirmed.  Two rounds of waits at most: every confirmation
    the store holds (the early ones: no wait), then each undecided mutant's first other wait,
    then every other wait of the mutants still undecided.  M is the same as with every wait
    confirmed."""
    jobs = {(mid, t): confirmation(runner, built[mid], t) for mid, ts in waited.items() for t in ts}
    stored = runner.stored([key for key, _ in jobs.values()])
    known = {mid: [t for t in ts if jobs[(mid, t)][0] in stored] for mid, ts in waited.items()}
    first = {mid: [t for t in ts if t not in known[mid]][:1] for mid, ts in waited.items()}
    decided: set[str] = set()
    tried: set[tuple[str, str]] = set()
    for round_ in (known, first, waited):
        cells = [
            (mid, t)
            for mid, ts in round_.items()
            if mid not in decided
            for t in ts
            if (mid, t) not in tried
        ]
        if not cells:
            continue
        done = runner.run([jobs[cell] for cell in cells], waits=True)
        for mid, t in cells:
            tried.add((mid, t))
            alone = done[jobs[(mid, t)][0]]
            again = alone.status_of(t)
            if not _stands(again):
                row = rows[mid]
                assert row is not None
                rows[mid] = _take(row, t, alone)
            if _decides(again):
                decided.add(mid)
    for mid, ts in waited.items():
        untried = [t for t in ts if (mid, t) not in tried]
        row = rows[mid]
        if untried and row is not None:
            rows[mid] = _unconfirmed(row, untried)


def _stands(alone: TestStatus) -> bool:
    """Whether a wait stands after its confirmation ended ``alone``: it timed out again, or
    the run alone told nothing."""
    return alone in (TestStatus.TIMEOUT, TestStatus.NOT_RUN)


def _decides(alone: TestStatus) -> bool:
    """Whether a wait's confirmation that ended ``alone`` kills its mutant: the wait stands, or
    the test failed on its own."""
    return _stands(alone) or alone.fails


def _kills_at_once(run: SuiteRun, test: str) -> bool:
    """``test`` kills in ``run`` with no confirmation: it failed, or timed out on the CPU."""
    status = run.status_of(test)
    return status.fails and not _waited_out(run, test)


def _unconfirmed(run: SuiteRun, waited: list[str]) -> SuiteRun:
    """``run`` with its ``waited`` cells left unconfirmed (``--fast``: another test kills)."""
    note = "timed out waiting; not confirmed (--fast: another test kills the mutant)"
    for test in waited:
        run = _noted(run, test, TestStatus.NOT_RUN, note)
    return run


def _waited_out(run: SuiteRun, test: str) -> bool:
    """``test`` timed out in ``run`` without using its limit as CPU time."""
    return run.status_of(test) is TestStatus.TIMEOUT and not run.on_cpu(test)


def _alone(
    runner: SuiteRuns, asked: Mapping[tuple[str, str], BuiltProgram], *, apart: bool = False
) -> dict[tuple[str, str], SuiteRun]:
    """Each (row, test) of ``asked`` run alone on its program at the user's per-test limit
    (``apart``: the reference's, batched only among themselves); only those that did not time
    out again (nor fail to tell) are returned."""
    jobs = {cell: confirmation(runner, program, cell[1]) for cell, program in asked.items()}
    if not jobs:
        return {}
    keys = {cell: key for cell, (key, _) in jobs.items()}
    requests = list(jobs.values())
    done = runner.run(requests, apart=set(keys.values()) if apart else None, waits=True)
    out = {}
    for cell, key in keys.items():
        again = done[key].status_of(cell[1])
        if not _stands(again):
            out[cell] = done[key]
    return out


def _take(row: SuiteRun, test: str, alone: SuiteRun) -> SuiteRun:
    """``row`` with ``test``'s outcome and message from the run ``alone``, noted as such."""
    again = alone.status_of(test)
    message = alone.message_of(test)
    note = f"timed out in the full run, {again} when run alone"
    return _noted(row, test, again, f"{note}: {message}" if message else note)


def _noted(run: SuiteRun, test: str, status: TestStatus, message: str) -> SuiteRun:
    """``run`` with ``test``'s status and message replaced (what else it said stays)."""
    was = run.outcomes.get(test) or TestOutcome(status)
    return replace(
        run, outcomes={**run.outcomes, test: replace(was, status=status, message=message)}
    )
