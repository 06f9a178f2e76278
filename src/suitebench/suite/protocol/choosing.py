"""Which tests each mutant's run takes: score's selection policy over the coverage run.

Per mutant, :func:`~suitebench.suite.select.selection.select_tests` reads the coverage run;
then score's own rules: a mutant whose module warns on compile where warnings are errors runs
every test; an import-time mutant chooses its tests in its own run (its impact spec), unless
decoys cannot hold that session; and no mutant runs a test that failed the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from suitebench.model.instance import MutantSpec
from suitebench.suite.execute.programs import BuiltProgram
from suitebench.suite.execute.projectconfig import WARNS_REASON, warns_on_compile
from suitebench.suite.execute.runspec import Patterns, Target
from suitebench.suite.inside.wire import ImpactSpec
from suitebench.suite.protocol.scoreplan import ScorePlan
from suitebench.suite.protocol.tally import test_universe
from suitebench.suite.records import RunStatus, SuiteRun
from suitebench.suite.result import CoverageNote
from suitebench.suite.select.impactspec import impact_readers, impact_spec
from suitebench.suite.select.selection import Coverage, Selection, select_tests

# Why an import-time mutant runs every test of a suite from elsewhere (decoys: :mod:`.decoys`).
NO_DECOY_REASON = (
    "import-time change; every test runs: the readers its run would choose have no decoy"
)


def choose_tests(
    plan: ScorePlan,
    all_runs: dict[str, SuiteRun],
    builds: Callable[[], dict[str, BuiltProgram]],
    excluded: dict[str, list[str]],
) -> Choice:
    """Each mutant's tests from the coverage run (:func:`~suitebench.suite.select.selection.
    select_tests`), an import-time mutant's impact spec, what the result says of coverage, and
    the regular expressions the coverage run compiled (each mutants' batch compiles them once:
    ``warm.warm_patterns``).  ``builds()`` gives the mutants' builds (waiting for those still
    going on): every mutant's selection is read first, while they finish (a selection needs
    no build), then the rules that read a build apply to those that built."""
    selections: dict[str, Selection] = {}
    impacts: dict[str, ImpactSpec] = {}
    if plan.coverage_request is None:
        built, runnable = _runnable(plan, builds)
        if plan.all_tests:
            note = CoverageNote(status="off", reason="--all-tests: every test on every mutant")
        elif not runnable:
            note = CoverageNote(status="off", reason="no mutant to run")
        else:
            note = CoverageNote(
                status="unknown",
                reason="no per-test coverage: not a Python package, nor a gcc build; "
                "every test runs",
            )
            selections = {m.id: Selection(None, note.reason) for m in runnable}
        return Choice(selections, impacts, note, (), built, runnable)
    ref0 = all_runs[plan.ref_keys[0]]
    known = [t for t in test_universe([ref0]) if t not in excluded]
    coverage, note = _coverage(
        all_runs[plan.coverage_request[0]], plan.coverage_request[1], ref0, known
    )
    shared = None if coverage is None else impact_readers(coverage, ref0.fingerprint, known)
    passing = tuple(t for t in known if not ref0.status_of(t).fails)
    patches = {m.id: m.patch.read_text(encoding="utf-8", errors="replace") for m in plan.mutants}
    first: dict[str, Selection] = {}
    if coverage is not None:
        for m in plan.mutants:
            site = plan.probes.sites.get(m.id)
            default = plan.probes.is_default(site)
            first[m.id] = select_tests(coverage, patches[m.id], known, site, default=default)
    built, runnable = _runnable(plan, builds)
    for m in runnable:
        if coverage is None:
            selections[m.id] = Selection(None, note.reason)
            continue
        selections[m.id] = first[m.id]
        if warns_on_compile(plan.carried, built[m.id].pythonpath, patches[m.id]):
            selections[m.id] = Selection(None, WARNS_REASON)
        sel = selections[m.id]
        spec = impact_spec(shared, sel)
        if spec is not None and plan.decoys and not sel.final:
            # The readers its run would choose once imported form a session no decoy can hold
            # (the reference changes nothing): with decoys, its run takes every test (but
            # those that failed the reference, as :func:`_leave_out_failed` leaves out).
            sel = Selection(None, NO_DECOY_REASON, passing, files=sel.files, final=True)
            selections[m.id] = sel
            spec = impact_spec(shared, sel)
        if spec is not None:
            impacts[m.id] = spec
        elif sel.final:  # no import-time impact to ride on: its tests, as chosen
            selections[m.id] = Selection(sel.import_time, sel.reason, files=sel.files)
    for mid, sel in selections.items():
        if sel.tests is not None:
            selections[mid] = replace(sel, tests=with_page_predecessors(sel.tests, known))
    _leave_out_failed(selections, impacts, known, ref0)
    patterns = () if coverage is None else coverage.patterns
    return Choice(selections, impacts, note, patterns, built, runnable)


class Choice(NamedTuple):
    """:func:`choose_tests`' answer: the selections and impact specs of the mutants that built
    (``runnable``, in the instance's order), the coverage note, the coverage run's patterns,
    and every mutant's build."""

    selections: dict[str, Selection]
    impacts: dict[str, ImpactSpec]
    note: CoverageNote
    patterns: Patterns
    built: dict[str, BuiltProgram]
    runnable: list[MutantSpec]


def _runnable(
    plan: ScorePlan, builds: Callable[[], dict[str, BuiltProgram]]
) -> tuple[dict[str, BuiltProgram], list[MutantSpec]]:
    built = builds()
    return built, [m for m in plan.mutants if built[m.id].ok]


def is_page(test: str) -> bool:
    """A text file of doctests (``docs/usage.rst::usage.rst``), not a test of a Python file."""
    file, sep, _ = test.partition("::")
    return bool(sep) and not file.endswith(".py")


def with_page_predecessors(tests: tuple[str, ...], order: list[str]) -> tuple[str, ...]:
    """``tests`` and, when they hold a text file of doctests, every test that ran before it on
    the reference (``order``): a page may use names the suite's fixtures put in pytest's
    ``doctest_namespace`` as the tests before it ran (semver's docs do), and without them it
    would fail where the reference's run passed -- a kill no change made."""
    pages = [order.index(t) for t in tests if is_page(t) and t in order]
    if not pages:
        return tests
    chosen = set(tests) | set(order[: max(pages)])
    return tuple(t for t in order if t in chosen) + tuple(t for t in tests if t not in order)


def _coverage(
    run: SuiteRun, target: Target, ref0: SuiteRun, tests: list[str]
) -> tuple[Coverage | None, CoverageNote]:
    """The coverage run read into a :class:`Coverage`, or None (all tests) and why."""
    if run.status is not RunStatus.OK or run.coverage is None:
        why = run.message or f"run status {run.status}"
        return None, CoverageNote(status="unknown", reason=f"the coverage run failed: {why}")
    if run.coverage.get("preloaded"):
        names = ", ".join(run.coverage["preloaded"])
        why = f"the program was imported before coverage could start ({names})"
        return None, CoverageNote(status="unknown", reason=why)
    # A test whose outcome under tracing differs from the first reference run's: what it
    # runs is not known well enough to leave it out.
    unknown = {t for t in tests if run.status_of(t) is not ref0.status_of(t)}
    coverage = Coverage.from_record(run.coverage, Path(target.coverage_root or ""), unknown)
    how = "instrumented import" if target.pythonpath else "gcc --coverage build, gcov"
    note = CoverageNote(
        status="ok",
        reason=f"per-test function coverage of the reference ({how})",
        unknown_tests=sorted(coverage.unknown),
    )
    return coverage, note


def _leave_out_failed(
    selections: dict[str, Selection],
    impacts: dict[str, ImpactSpec],
    known: list[str],
    ref0: SuiteRun,
) -> None:
    """A test that failed the first reference run (failed, error, timeout) is not valid, so it
    can kill no mutant: it runs on none (its cells keep its reference outcome).  A hostile or
    slow broken test then costs one run per reference run, not one per mutant.  A skipped test
    still runs (cheap, and its cell may differ on a mutant)."""
    failed = {t for t in known if ref0.status_of(t).fails}
    if not failed:
        return
    why = f"{len(failed)} test(s) that failed on the reference left out"
    for mid, sel in selections.items():
        if sel.tests is None and mid in impacts:
            continue  # an import-time mutant's run chooses its tests itself
        pool = known if sel.tests is None else sel.tests
        kept = tuple(t for t in pool if t not in failed)
        selections[mid] = replace(sel, tests=kept, reason=f"{sel.reason}; {why}")
