"""``score --fast``: M only, each mutant stopped at its first kill (the partial matrix).

Valid tests only, likely killers first, in two waves (:func:`_fast_runs`); with a suite from
elsewhere, the decoys (:mod:`.decoys`) run beside each wave and, while they find tests to leave
out, the waves go again without them (:func:`fast_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from suitebench.model.instance import MutantSpec
from suitebench.suite.execute.programs import BuiltProgram
from suitebench.suite.execute.runner import spec_digest
from suitebench.suite.execute.runspec import Patterns, Target, Timeouts
from suitebench.suite.inside.wire import ImpactSpec
from suitebench.suite.protocol.choosing import is_page
from suitebench.suite.protocol.decoys import Decoy, as_decoy, cover, failing, replicate, session
from suitebench.suite.protocol.rows import merged, patchable
from suitebench.suite.protocol.scoreplan import ScorePlan
from suitebench.suite.protocol.tally import test_infos
from suitebench.suite.protocol.timeouts import EarlyConfirmations
from suitebench.suite.records import SuiteRun
from suitebench.suite.result import TestInfo
from suitebench.suite.select.selection import Selection

__all__ = ["fast_order", "fast_rows"]


def fast_order(
    mutant: MutantSpec,
    tests: list[TestInfo],
    section_kills: dict[str | None, dict[str, int]],
) -> tuple[str, ...]:
    """Valid tests only, likely killers first: tests that killed mutants of the same section
    (most kills first), then the mutant's target, then tests mapped to its section; among
    equals the fastest on the reference first (as mutmut orders), so a kill costs little, by
    the class of their time (:func:`_time_class`), then in the suite's order."""
    kills = section_kills.get(mutant.section, {})
    valid = [t for t in tests if t.valid]

    def rank(pair: tuple[int, TestInfo]) -> tuple[bool, int, int, int, int, int]:
        index, test = pair
        in_section = mutant.section is not None and mutant.section in test.sections
        seconds = _time_class(max((s for s in test.seconds if s is not None), default=0.0))
        # Text files of doctests last, in their order: names the tests' fixtures give them
        # (:func:`~suitebench.suite.protocol.choosing.with_page_predecessors`) are there then.
        page = is_page(test.id)
        first = (page, 0 if page else -kills.get(test.id, 0), test.id != mutant.target)
        return (*first, not in_section, seconds if not page else 0, index)

    return tuple(t.id for _, t in sorted(enumerate(valid), key=rank))


# Tests quicker than this on the reference are equally quick for the order: below it, a time
# measures the harness's noise more than the test (isodate's sub-millisecond tests swapped
# places from one run to the next, and --fast ran 27,000 cells one time and 44,000 the next).
_QUICK = 0.002


def _time_class(seconds: float) -> int:
    """A reference time's class for :func:`fast_order`: 0 below :data:`_QUICK`, then one class
    per factor of the square root of two (a test's times mostly vary less than that from run
    to run, so its place in the order stays)."""
    if seconds < _QUICK:
        return 0
    return 1 + int(2 * math.log2(seconds / _QUICK))


def fast_rows(
    plan: ScorePlan,
    all_runs: dict[str, SuiteRun],
    built: dict[str, BuiltProgram],
    runnable: list[MutantSpec],
    selections: dict[str, Selection],
    impacts: dict[str, ImpactSpec],
    excluded: dict[str, list[str]],
    lane: EarlyConfirmations | None = None,
    *,
    timeouts: Timeouts,
    patterns: Patterns = (),
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[TestInfo], dict[str, SuiteRun]]:
    """``--fast``'s tests and rows: its runs (:func:`_fast_runs`) go again, without them, while
    their decoys find tests that fail in a mutant's place (each round leaves one test or more
    out; a run a cheating test stopped at its first failure has to go on past it).
    ``timeouts``: the mutants' derived limits (their programs in ``built`` carry them);
    ``patterns``: the coverage run's regular expressions, for the batches; ``progress(done,
    total)``: the mutants' runs as they end, over both waves."""
    ref_runs = [all_runs[k] for k in plan.ref_keys]
    decoys: list[Decoy] = []
    invalid: set[str] | None = None
    runs: dict[str, SuiteRun] = {}
    while True:
        decoyed = failing(plan, all_runs, decoys, excluded, timeouts)
        tests = test_infos(plan, ref_runs, excluded, decoyed, timeouts=timeouts)
        now = {t.id for t in tests if not t.valid}
        if now == invalid:
            return tests, runs
        invalid, chosen = now, dict(selections)
        runs, more = _fast_runs(
            plan, built, runnable, tests, chosen, impacts, all_runs, lane, patterns, progress
        )
        decoys += more
        selections.update(chosen)


def _fast_runs(
    plan: ScorePlan,
    built: dict[str, BuiltProgram],
    runnable: list[MutantSpec],
    tests: list[TestInfo],
    selections: dict[str, Selection],
    impacts: dict[str, ImpactSpec],
    all_runs: dict[str, SuiteRun],
    lane: EarlyConfirmations | None = None,
    patterns: Patterns = (),
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, SuiteRun], list[Decoy]]:
    """``--fast`` in two waves, with the decoys (:mod:`.decoys`; their runs added to
    ``all_runs``) beside the mutants they run as: first one mutant per section, then all the
    others, ordered by
    what killed the first wave's mutants of their section.  Two waves, not one per mutant: each
    wave is a round of parallel (and, batched, start-up) cost, which is what --fast saves.
    An import-time mutant tries, in that order, only the tests that read a global its import
    changed (a survivor need not run every test to survive)."""
    by_section: dict[str | None, list[MutantSpec]] = {}
    for m in runnable:
        by_section.setdefault(m.section, []).append(m)
    waves = [
        [ms[0] for ms in by_section.values()],
        [m for ms in by_section.values() for m in ms[1:]],
    ]
    runner = plan.runner
    section_kills: dict[str | None, dict[str, int]] = {}
    valid = {t.id for t in tests if t.valid}
    runs: dict[str, SuiteRun] = {}
    decoys: list[Decoy] = []
    passed = 0  # the mutants of the waves before this one
    for members in waves:
        requests: list[tuple[str, Target]] = []
        keys: dict[str, str] = {}
        wave: list[Decoy] = []
        # (mutant, its tests in order, the tests reaching it: None when its import chooses)
        ordered: list[tuple[MutantSpec, tuple[str, ...], tuple[str, ...] | None]] = []
        # the order depends on the mutant's section and target alone (within a wave)
        orders: dict[tuple[str | None, str | None], tuple[str, ...]] = {}
        for m in members:
            place = (m.section, m.target)
            if place not in orders:
                orders[place] = fast_order(m, tests, section_kills)
            order = orders[place]
            chosen = _reaching(selections, m)
            if chosen is not None:  # only tests that reach the mutant can kill it
                order = _within(order, set(chosen))
                if not order:
                    continue
            ordered.append((m, order, chosen))
        # a decoy for each sequence of tests the wave's runs take (an import-time mutant's
        # with decoys: the tests known before its run, in its order, chosen inside it)
        sessions = []
        for m, order, _ in ordered:
            sel = selections.get(m.id)
            held = (None, "") if sel is None else session(sel, impacts.get(m.id))
            if held is not None:
                run_tests, how = held
                seq = None if run_tests is None else _within(order, set(run_tests))
                sessions.append((m.id, seq, how))
        as_mutants = set(cover(sessions, ordered=True)) if plan.decoys else set()
        for m, order, chosen in ordered:
            impact = impacts.get(m.id) if chosen is None else None
            mode = "fast" if impact is None else f"fast-impact-{spec_digest(impact)}"
            program = built[m.id]
            keys[m.id] = runner.key(
                program.program_id,
                mode,
                order,
                timeouts=program.timeouts,
                positions=program.positions,
            )
            target = patchable(built[m.id], selections.get(m.id), impact)
            # Tests chosen before the run are also its selection: it collects only their files
            # and functions, as a selected run of the full matrix does (semver's runs each
            # collected its 328 tests and doctest modules to run a few: --fast took longer
            # than the full matrix).
            select = None if chosen is None else order
            target = replace(target, order=order, select=select, impact=impact)
            requests.append((keys[m.id], target))
            if m.id in as_mutants:
                wave.append(as_decoy(runner, plan.reference, m.id, keys[m.id], requests[-1][1]))
        wave = replicate(wave, runner.batch_count(len(keys)))
        if lane is not None:
            lane.watch({keys[m.id]: built[m.id] for m, _, _ in ordered})
        got = runner.run(
            [*requests, *((d.key, d.target) for d in wave)],
            progress=None
            if progress is None
            else _in_wave(progress, passed, len(members), len(runnable)),
            spread=[d.key for d in wave],
            on_run=None if lane is None else lane.offer,
            patterns=patterns,
            settled=None if lane is None else lane.settled,
        )
        all_runs.update({d.key: got[d.key] for d in wave})
        decoys += wave
        passed += len(members)
        for m in members:
            selection = selections.get(m.id)
            found = got.get(keys[m.id]) if m.id in keys else None
            if selection is None or selection.tests is None:
                assert found is not None
                run = found
                if m.id in impacts and found.selection_reason:  # what its run chose
                    selections[m.id] = Selection(found.selected, found.selection_reason)
            else:
                run = merged(found, selection, tests)
            runs[m.id] = run
            for test in tests:
                if test.id in valid and run.status_of(test.id).fails:
                    counter = section_kills.setdefault(m.section, {})
                    counter[test.id] = counter.get(test.id, 0) + 1
    return runs, decoys


def _in_wave(
    progress: Callable[[int, int], None], before: int, members: int, total: int
) -> Callable[[int, int], None]:
    """A wave's ``progress(done, total)`` over its runs as the whole ``--fast`` run's: the
    ``before`` mutants of earlier waves, then this wave's ``members`` in step with its runs."""
    return lambda done, runs: progress(before + done * members // max(1, runs), total)


def _within(order: tuple[str, ...], tests: set[str]) -> tuple[str, ...]:
    return tuple(t for t in order if t in tests)


def _reaching(selections: dict[str, Selection], m: MutantSpec) -> tuple[str, ...] | None:
    return selections[m.id].tests if m.id in selections else None
