"""The result of scoring a suite: every figure of TestSuiteBench's evaluation, and its evidence.

``SuiteResult`` carries validity V, mutation_score M (overall and per spec section), the counts
behind them, the full kill matrix as per-test outcome rows per mutant, each mutant's killing
tests, and the limits, isolation backend and versions used.  It is a pydantic model: it
round-trips through ``results.json`` and is what the mutation-testing-elements report is
written from.  ``ImplementationResult`` is the reference pass rate R of a candidate.
"""

from __future__ import annotations

import csv
import io
import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from suitebench.suite.records import RunStatus, TestStatus

NOT_COMPUTED = 255  # kills.npz: this test was not run on this mutant


class MutantStatus(StrEnum):
    """A mutant's fate under a suite (mutation-testing-elements names in brackets)."""

    KILLED = "killed"  # a valid test failed or errored on it [Killed]
    TIMEOUT = "timeout"  # killed, but only by valid tests that hit the per-test limit [Timeout]
    SURVIVED = "survived"  # every valid test passed (or skipped) [Survived]
    BUILD_ERROR = "build_error"  # patch did not apply or build failed; not scored [CompileError]
    # The harness failed on it (a sandbox error), or the reference's own runs did not finish
    # so that nothing is measured; not scored [RuntimeError].  A run that merely ended early
    # is continued in a fresh run and scored like any other.
    CRASHED = "crashed"
    # The reference's program in another spelling (compiled to the same code, or declared so
    # in the instance, ``MutantResult.equivalent`` says which); not run, not scored [Ignored].
    EQUIVALENT = "equivalent"

    @property
    def scored(self) -> bool:
        return self in (MutantStatus.KILLED, MutantStatus.TIMEOUT, MutantStatus.SURVIVED)

    @property
    def detected(self) -> bool:
        return self in (MutantStatus.KILLED, MutantStatus.TIMEOUT)


class TestInfo(BaseModel):
    """One test of the scored suite: its outcomes on the reference runs and its validity."""

    __test__ = False
    model_config = ConfigDict(extra="forbid")

    id: str
    file: str
    valid: bool
    flaky: bool
    reference: list[TestStatus]
    # Its outcome on a decoy that it failed (the reference run as a mutant is:
    # :mod:`suitebench.suite.protocol.decoys`), which makes it invalid; None: it failed none.
    decoy: TestStatus | None = None
    sections: list[str] = []
    # pytest's one-line reason when it failed, errored or was skipped on the reference: the
    # exception and its message, or the collection error
    message: str = ""
    # Seconds from its start to the end of its teardown in each reference run (None: it did
    # not finish there), and its per-test limit on the mutants where that is below the
    # user's (None: the user's; :func:`suitebench.suite.execute.runspec.derive_timeouts`).
    seconds: list[float | None] = []
    mutant_time_limit: float | None = None

    @property
    def skipped(self) -> bool:
        """Skipped in every reference run: not valid, but not a failing test either."""
        return all(s is TestStatus.SKIPPED for s in self.reference)


class MutantResult(BaseModel):
    """One mutant's row of the kill matrix, and why it has the status it has."""

    model_config = ConfigDict(extra="forbid")

    id: str
    status: MutantStatus
    section: str | None = None
    target: str | None = None
    description: str = ""
    operator: str | None = None
    patch: str = ""  # the diff's path, relative to the instance (``instance_dir``)
    # The diff scored, and where its main change is in the reference source (the file relative
    # to the source root, the line, the enclosing function: :mod:`suitebench.suite.select.locate`)
    diff: str = ""
    file: str = ""
    line: int | None = None
    function: str = ""
    program_id: str = ""
    killed_by: list[str] = []
    # the killing tests' one-line failure messages (pytest's exception and message)
    kill_messages: dict[str, str] = {}
    tests_run: int = 0
    outcomes: dict[str, TestStatus] = {}
    # Coverage-guided selection: the tests run on this mutant (the tests reaching the code it
    # changes, plus those of unknown coverage); every other test kept its reference outcome,
    # not covered.  None: every test ran (``test_selection = "all"``, see selection_reason).
    covered_by: list[str] | None = None
    test_selection: str = "all"  # "coverage" or "all"
    selection_reason: str = ""
    run_status: RunStatus | None = None
    wall_time: float = 0.0
    # of ``wall_time``, its tests' own: the seconds they took, setup to teardown, summed (the
    # rest is the run's start, imports, and what the harness does between tests)
    tests_seconds: float = 0.0
    message: str = ""
    log: str = ""
    # Why it is equivalent (status "equivalent"): "tce" (the compiler gives the reference's
    # code) or "declared" (the instance's [[equivalent]] list); ``message`` says it in words.
    equivalent: str | None = None
    # ``score --incremental``: the earlier run whose stored row this mutant's is (its run id,
    # :mod:`suitebench.suite.select.reuse`); None: it ran in this one.
    reused_from: str | None = None


class CoverageNote(BaseModel):
    """How per-test coverage was had for test selection: ``ok``, ``unknown`` (the coverage
    run failed, or the program cannot be traced: every test runs) or ``off`` (``--all-tests``)."""

    model_config = ConfigDict(extra="forbid")

    status: str
    reason: str = ""
    unknown_tests: list[str] = []  # always run: coverage of these is not known


class HarnessError(BaseModel):
    """One broken part of the harness (not a finding about the suite): the reference's runs
    that did not finish even continued in fresh runs, a mutant whose run the sandbox lost.
    The command names each on the terminal and exits non-zero unless asked to keep going."""

    model_config = ConfigDict(extra="forbid")

    stage: str  # "reference" (its runs) or "mutant"
    program: str  # "reference", or the mutant's id
    message: str  # the first message
    count: int  # runs it broke


class Counts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tests: int
    valid: int
    flaky: int
    skipped: int = 0  # skipped on the reference: not valid, counted apart from failing tests
    mutants: int
    scored: int
    killed: int
    survived: int
    build_errors: int
    crashed: int
    equivalent: int = 0  # out of M's denominator, as build errors are


class SuiteResult(BaseModel):
    """Everything ``suitebench score INSTANCE --suite DIR`` reports (results.json)."""

    model_config = ConfigDict(extra="forbid")

    instance: str
    # Where the instance was when scored: mutants' ``patch`` paths are relative to it
    instance_dir: str = ""
    suite: str
    suite_hash: str
    engine: str
    mode: str  # "full" (whole matrix) or "fast" (stop each mutant at its first kill)
    test_selection: str = "all"  # "coverage", "all" or "mixed": how mutants chose their tests
    coverage: CoverageNote = CoverageNote(status="off")
    reference_runs: int
    validity: float | None
    mutation_score: float | None
    per_section: dict[str, float | None]
    counts: Counts
    reference_program: str
    reference_run_status: list[RunStatus]
    tests: list[TestInfo]
    excluded_tests: dict[str, list[str]] = {}  # refined out of the reference suite, with reasons
    mutants: list[MutantResult]
    harness_errors: list[HarnessError] = []
    # The figures written as null because they rest on a harness error ("validity",
    # "mutation_score"), each with the reason: a number there would be a measurement of the
    # harness, not of the suite (per_section is null where M is, for the sections concerned).
    withheld: dict[str, str] = {}
    # The project's pytest configuration carried into the runs: {source, carried, dropped}.
    pytest_config: dict[str, Any] | None = None
    limits: dict[str, Any]
    backend: str
    versions: dict[str, str]
    # Wall seconds per stage of the score (build_reference, reference_runs -- with the
    # coverage run and the mutants' builds beside it --, selection, mutant_runs,
    # confirm_timeouts, tally), in the order they ran.
    phases: dict[str, float] = {}
    # The floor of each run phase (reference_runs, mutant_runs, confirm_timeouts) and of
    # their sum (runs): the cells' own time at reference speed over the workers plus the
    # waits that cannot overlap (:mod:`suitebench.suite.protocol.floor`).
    floor: dict[str, float] = {}
    wall_time: float
    # ``--since REV`` (:mod:`suitebench.suite.select.since`): the revision, the files changed, the
    # mutants scored (on changed lines) and those left out, not run, with their files.
    since: dict[str, Any] | None = None
    # ``--incremental`` (:mod:`suitebench.suite.select.reuse`): this run's id, the earlier run it
    # reused rows of, the mutants reused and those rerun with why.
    incremental: dict[str, Any] | None = None

    def test_ids(self) -> list[str]:
        return [t.id for t in self.tests]

    def kill_matrix(self) -> dict[tuple[str, str], TestStatus]:
        """(test id, mutant id) -> outcome, for every mutant that was run."""
        return {(test, m.id): status for m in self.mutants for test, status in m.outcomes.items()}

    def write(self, out_dir: Path) -> list[Path]:
        """results.json, kills.csv (long form: test, mutant, outcome, valid, kills, covered)
        and kills.npz."""
        out_dir.mkdir(parents=True, exist_ok=True)
        results = out_dir / "results.json"
        # pydantic's own encoder writes what ``json.dumps(model_dump(mode="json"), indent=2)``
        # would, in a third of the time (a full matrix's results.json runs to tens of MB).
        results.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        kills = out_dir / "kills.csv"
        # One row per (test, mutant) run: a full matrix's hundreds of thousands of rows, so
        # each id is quoted once (as csv.writer quotes it) and the rows are joined as text.
        tests = [(t.id, _csv_field(t.id), int(t.valid)) for t in self.tests]
        killing = {s: int(s.fails) for s in TestStatus}
        with kills.open("w", newline="", encoding="utf-8") as fh:
            fh.write("test,mutant,outcome,valid,kills,covered\r\n")
            for mutant in self.mutants:
                chosen = None if mutant.covered_by is None else set(mutant.covered_by)
                outcomes, name = mutant.outcomes, _csv_field(mutant.id)
                # covered 0: the test does not reach the mutant and kept its reference outcome
                fh.write(
                    "".join(
                        f"{quoted},{name},{outcomes[test].value},{valid},"
                        f"{valid & killing[outcomes[test]]},"
                        f"{1 if chosen is None or test in chosen else 0}\r\n"
                        for test, quoted, valid in tests
                        if test in outcomes
                    )
                )
        compact = out_dir / "kills.npz"
        np.savez_compressed(compact, **self.kill_arrays())
        return [results, kills, compact]

    def kill_arrays(self) -> dict[str, Any]:
        """The kill matrix in compact form (``kills.npz``): ``outcomes[test, mutant]`` is an
        index into ``statuses`` (``NOT_COMPUTED`` where the mutant was not run on that test:
        a build error, or ``--fast`` after its first kill), with the ids and the valid mask."""
        statuses = list(TestStatus)
        code = {s: i for i, s in enumerate(statuses)}
        tests = self.test_ids()
        matrix = np.full((len(tests), len(self.mutants)), NOT_COMPUTED, dtype=np.uint8)
        for j, mutant in enumerate(self.mutants):
            for i, test in enumerate(tests):
                status = mutant.outcomes.get(test)
                if status is not None:
                    matrix[i, j] = code[status]
        return {
            "outcomes": matrix,
            "tests": np.array(tests, dtype=str),
            "mutants": np.array([m.id for m in self.mutants], dtype=str),
            "valid": np.array([t.valid for t in self.tests], dtype=bool),
            "statuses": np.array([str(s) for s in statuses], dtype=str),
        }

    @classmethod
    def read(cls, path: Path) -> SuiteResult:
        """Read results.json back (or the directory holding it)."""
        path = path / "results.json" if path.is_dir() else path
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def _csv_field(text: str) -> str:
    """``text`` as one field of a row that :mod:`csv`'s writer writes (quoted where it holds a
    comma, a quote or a line break)."""
    if not text:
        return ""  # (the writer quotes a row of one empty field, not an empty field)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([text])
    return buffer.getvalue()


class ImplementationResult(BaseModel):
    """R of a candidate implementation: the fraction of valid reference tests it passes."""

    model_config = ConfigDict(extra="forbid")

    instance: str
    implementation: str
    build_status: str
    build_message: str = ""
    reference_pass_rate: float | None
    passed: int
    total: int
    failing: dict[str, TestStatus]
    excluded_invalid: list[str]
    excluded_tests: dict[str, list[str]] = {}
    run_status: RunStatus | None
    limits: dict[str, Any]
    backend: str
    versions: dict[str, str]

    def write(self, out_dir: Path) -> Path:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "results.json"
        path.write_text(json.dumps(self.model_dump(mode="json"), indent=2) + "\n", "utf-8")
        return path
