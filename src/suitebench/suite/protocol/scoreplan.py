"""The plan of one score: which programs, which runs, keyed how (the first of score's parts).

``suitebench score`` has three parts: this plan, the runs (:mod:`suitebench.suite.score`) and
the tally (:mod:`suitebench.suite.protocol.tally`).  Planning builds the reference (a score cannot
start without it), starts the mutants' builds, stages what the project carries beside its suite, and
fixes every key: the reference runs', the coverage run's and the order they go in.  Nothing here
runs a test.

The order: the first reference run goes first (it records the fingerprint import-time impact
compares with) with the coverage run, when there is one; the mutants' runs take per-test time
limits from what ran before them.  With ``--fast``, which needs validity before its order, every
reference run goes first; the batched engine batches a Python coverage run with the first
reference run, so the other reference runs fill the other workers meanwhile.  Otherwise the
later reference runs go with the mutants' runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run.executor import Executor, LocalExecutor
from suitebench.run.layout import detect_backend, refuse_a_replaced_place
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.run.tree import not_utf8
from suitebench.suite.execute.interpreter import Interpreter, protocol_for, suite_interpreter
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.programs import Builder, BuiltProgram, build_reference_first
from suitebench.suite.execute.projectconfig import Beside, stage_beside
from suitebench.suite.execute.runspec import Engine, SuiteLimits, Target, own_suite
from suitebench.suite.execute.workspaces import suite_to_run
from suitebench.suite.protocol.equivalence import Equivalence, known_equivalents, object_equivalents
from suitebench.suite.select.infection import Probes, probes_for

Report = Callable[[str, int], None]  # (part: "builds" or "runs", done so far)
Request = tuple[str, Target]


class ReferenceBuildError(RuntimeError):
    """The instance's reference does not build: a harness error, nothing can be scored."""


class SuiteInputError(ValueError):
    """The suite cannot be scored as given (bad input, exit 2): a Python file whose name is not
    UTF-8 (its tests' ids could not be written to results.json or kills.csv), or a suite that
    collects no test (V and M of nothing)."""


@dataclass
class ScorePlan:
    """What one score runs, keyed how (see the module doc)."""

    instance: Instance
    suite_dir: Path
    python: Interpreter | None
    builder: Builder
    mutants: list[MutantSpec]
    reference: BuiltProgram
    # The mutants' builds: done (``built``), or going on beside the reference runs (``beside``:
    # ``wait_builds`` returns them).
    built: dict[str, BuiltProgram]
    beside: bool
    wait_builds: Callable[[], dict[str, BuiltProgram]]
    carried: Beside | None
    runner: SuiteRuns
    ref_keys: list[str]
    ref_target: Target
    first_target: Target
    coverage_request: Request | None
    probes: Probes  # the coverage run's weak-mutation probes (:mod:`.infection`)
    fast: bool
    all_tests: bool
    early: int  # the reference runs that go before the mutants' runs
    decoys: bool = True  # a suite from elsewhere: the reference runs as mutants are too
    # The mutants left out as equivalent, not built or not run (:mod:`.equivalence`).
    equivalent: dict[str, Equivalence] = field(default_factory=dict)
    # Why the runs' protocol is not the one asked for (a pytest the direct protocol does not
    # know: :func:`~suitebench.suite.execute.interpreter.protocol_for`); None: it is.
    protocol_note: str | None = None

    @property
    def staged(self) -> bool:
        """Mutants run a selection of tests, from the coverage run."""
        return self.coverage_request is not None and not self.fast

    @property
    def full(self) -> bool:
        """Mutants run every test (``--all-tests``, or no coverage run)."""
        return self.coverage_request is None and not self.fast

    def first_requests(self) -> list[Request]:
        """The runs before any mutant's: the early reference runs and the coverage run."""
        targets = [self.first_target, *[self.ref_target] * (len(self.ref_keys) - 1)]
        requests = list(zip(self.ref_keys, targets, strict=True))[: self.early]
        if self.coverage_request is not None:
            requests.append(self.coverage_request)
        return requests

    def later_requests(self) -> list[Request]:
        """The reference runs that go with the mutants' runs."""
        return [(k, self.ref_target) for k in self.ref_keys[self.early :]]


def plan_score(
    instance: Instance,
    suite: Path | None,
    *,
    store: Store,
    cache_dir: Path | None,
    executor: Executor | None,
    engine: Engine,
    reference_runs: int,
    fast: bool,
    limits: SuiteLimits,
    backend: Backend | None,
    batch_size: int,
    mutant_ids: Iterable[str] | None,
    all_tests: bool,
    report: Report,
    overlap: int | None = None,
) -> ScorePlan:
    """Build the reference, start the mutants' builds and key every run before the mutants'
    (see the module doc); raises :class:`ReferenceBuildError` when the reference does not
    build, ``FileNotFoundError`` when the suite is not a directory and
    :class:`SuiteInputError` when a Python file of the suite's is not named in UTF-8."""
    given = Path(suite if suite is not None else instance.tests).resolve()
    if not given.is_dir():
        raise FileNotFoundError(f"{given}: the suite to score is not a directory")
    odd = not_utf8(given, ".py")
    if odd:
        raise SuiteInputError(
            f"{given / odd[0]}: a Python file whose name is not UTF-8 "
            f"({len(odd)} in the suite): its tests' ids could not be written to results.json; "
            "rename it"
        )
    python = suite_interpreter(instance, backend)
    limits, protocol_note = protocol_for(limits, python)
    # A suite from elsewhere runs against mutants built from scratch: an incremental build
    # can leave a trace of what it rebuilt in the tree (a build log), which no decoy -- the
    # reference's own tree -- would share (docs/threat-model.md).
    decoys = not own_suite(instance.tests, suite)
    builds_in = cache_dir or store.path.parent / "builds"
    if (backend or detect_backend()) is not Backend.PLAIN:  # (plain shows the host's /dev)
        for place in (builds_in, Path(tempfile.gettempdir())):  # before a build, not the runs
            refuse_a_replaced_place(place)
    builder = Builder(
        instance,
        builds_in,
        backend=backend,
        python=python,
        incremental=not decoys,
    )
    # A ProgramBench task's branches (or a suite in their shape) run as workspaces.
    suite_dir = suite_to_run(instance, suite, builder.cache_dir)
    chosen = set(mutant_ids) if mutant_ids is not None else None
    mutants = [m for m in instance.mutants if chosen is None or m.id in chosen]
    equivalent = known_equivalents(instance, mutants, builder.source, python)
    mutants = [m for m in mutants if m.id not in equivalent]
    reference, built, beside, wait_builds = _start_builds(builder, mutants, executor, report)
    equivalent |= object_equivalents(builder, mutants, built)
    mutants = [m for m in mutants if m.id not in equivalent]
    # the project's files and pytest config; its doctests are its own suite's tests
    own = not decoys
    carried = stage_beside(instance, builder.cache_dir, doctest_modules=own, doctest_files=own)
    runner = SuiteRuns(
        suite_dir,
        kind=str(instance.kind),
        store=store,
        executor=executor,
        engine=engine,
        limits=limits,
        backend=backend,
        batch_size=batch_size,
        beside=carried,
        python=python,
        overlap=overlap,
    )
    ref_target = reference.target()
    # The first reference run records the fingerprint import-time impact compares with, and
    # the parametrized tests' positions every mutant's run names its tests by (with or
    # without a selection: :mod:`suitebench.suite.inside.positions`).
    first_target = ref_target
    if reference.pythonpath is not None:
        first_target = replace(ref_target, fingerprint=True)
    runnable = list(mutants) if beside else [m for m in mutants if built[m.id].ok]
    probes = Probes()
    if reference.pythonpath is not None and not all_tests and runnable:
        probes = probes_for(Path(reference.pythonpath), instance.mutants, suite_dir)
    coverage_request = (
        None
        if all_tests or not runnable
        else coverage_request_of(runner, builder, reference, probes)
    )
    if beside and coverage_request is None:  # nothing to run beside: wait for them now
        built, beside = wait_builds(), False
    rides = (
        coverage_request is not None
        and coverage_request[1].pythonpath is not None
        and engine is Engine.BATCHED
    )
    return ScorePlan(
        instance=instance,
        suite_dir=suite_dir,
        python=python,
        builder=builder,
        mutants=mutants,
        reference=reference,
        built=built,
        beside=beside,
        wait_builds=wait_builds,
        carried=carried,
        runner=runner,
        ref_keys=runner.reference_keys(reference.program_id, reference_runs),
        ref_target=ref_target,
        first_target=first_target,
        coverage_request=coverage_request,
        probes=probes,
        fast=fast,
        all_tests=all_tests,
        early=reference_runs if rides or fast else 1,
        decoys=decoys,
        equivalent=equivalent,
        protocol_note=protocol_note,
    )


def _start_builds(
    builder: Builder,
    mutants: list[MutantSpec],
    executor: Executor | None,
    report: Report,
) -> tuple[BuiltProgram, dict[str, BuiltProgram], bool, Callable[[], dict[str, BuiltProgram]]]:
    """Build the reference now and the mutants now or beside the reference runs: a Python
    package's mutants (light builds: copy, patch, compile) build while the reference's suite
    runs, on a local machine -- ``--fast`` and ``--all-tests`` too (building them first cost
    ``--fast`` 17 s of its 129 on python-slugify's 556).  Raises :class:`ReferenceBuildError`."""
    instance = builder.instance
    local = executor is None or (isinstance(executor, LocalExecutor) and not executor.processes)
    beside = instance.kind is InstanceKind.PYTHON and local
    reference, wait_builds = build_reference_first(
        builder,
        mutants,
        beside=beside,
        progress=lambda d, _: report("builds", d),
        executor=executor,
    )
    built = {} if beside else wait_builds()
    if not reference.ok:
        raise ReferenceBuildError(
            f"the reference of {instance.name} does not build:\n{reference.message}"
        )
    return reference, built, beside, wait_builds


def coverage_request_of(
    runner: SuiteRuns, builder: Builder, reference: BuiltProgram, probes: Probes | None = None
) -> Request | None:
    """The extra reference run that records per-test coverage, where the program can be
    traced: a Python package (``kind = "python"``; batched with the first reference run by the
    batched engine; with ``probes`` compiled in), or a program whose build compiles with gcc,
    rebuilt with ``--coverage`` (plain engine)."""
    if reference.pythonpath is not None:
        target = replace(reference.target(), coverage_root=reference.pythonpath)
        mode = "coverage"
        if probes is not None and probes.probes:
            target = replace(target, probes=probes.probes)
            mode = f"coverage-probed-{probes.digest()}"
        return runner.key(reference.program_id, mode, None), target
    built = builder.coverage()
    if built is None or built.executable is None:
        return None
    target = replace(built.target(), coverage_root=built.directory)
    return runner.key(built.program_id, "coverage", None, engine=Engine.PLAIN), target
