"""kills.csv, row by row, for test ids that a CSV field must quote.

pytest's parametrized ids carry what the parameters print: commas (``[1,2]``), quotes
(``['a"b']``), spaces.  A reader of kills.csv (``csv.DictReader``, pandas) must get each id
back exactly, with the row's outcome, validity, kill and coverage as the kill matrix says.
"""

from __future__ import annotations

import csv
from pathlib import Path

from suitebench.suite.records import RunStatus, TestStatus
from suitebench.suite.result import Counts, MutantResult, SuiteResult, TestInfo

COMMA = "tests/test_span.py::test_span[1,2]"
QUOTE = 'tests/test_span.py::test_quote[a"b]'
PLAIN = "tests/test_span.py::test_empty"
SKIPPED = "tests/test_span.py::test_slow"


def _result() -> SuiteResult:
    tests = [
        TestInfo(id=COMMA, file="tests/test_span.py", valid=True, flaky=False, reference=[]),
        TestInfo(id=QUOTE, file="tests/test_span.py", valid=True, flaky=False, reference=[]),
        TestInfo(id=PLAIN, file="tests/test_span.py", valid=False, flaky=True, reference=[]),
        TestInfo(id=SKIPPED, file="tests/test_span.py", valid=True, flaky=False, reference=[]),
    ]
    off_by_one = MutantResult(
        id="m,1",  # an id with a comma too (a hand-written mutant may be named so)
        status="killed",
        outcomes={
            COMMA: TestStatus.FAILED,
            QUOTE: TestStatus.PASSED,
            PLAIN: TestStatus.TIMEOUT,
            SKIPPED: TestStatus.SKIPPED,
        },
        covered_by=[COMMA, PLAIN],
    )
    # A build error: no outcome at all, so no row.
    broken = MutantResult(id="m2", status="build_error")
    # Every test ran (covered_by None): each row covered; an error kills.
    tie = MutantResult(
        id="m3", status="killed", outcomes={QUOTE: TestStatus.ERROR, COMMA: TestStatus.PASSED}
    )
    return SuiteResult(
        instance="span",
        suite="tests",
        suite_hash="0",
        engine="plain",
        mode="full",
        reference_runs=3,
        validity=0.75,
        mutation_score=1.0,
        per_section={},
        counts=Counts(
            tests=4,
            valid=3,
            flaky=1,
            mutants=3,
            scored=2,
            killed=2,
            survived=0,
            build_errors=1,
            crashed=0,
        ),
        reference_program="p",
        reference_run_status=[RunStatus.OK] * 3,
        tests=tests,
        mutants=[off_by_one, broken, tie],
        limits={},
        backend="plain",
        versions={},
        wall_time=1.0,
    )


def test_rows_read_back_with_every_id_whole(tmp_path: Path) -> None:
    _, kills, _ = _result().write(tmp_path)
    with kills.open(newline="", encoding="utf-8") as fh:
        rows = [tuple(r.values()) for r in csv.DictReader(fh)]
    # By hand: test order is the suite's, mutants in order; valid from the test, kills =
    # valid and (failed, error or timeout); covered 1 where covered_by is None or names it.
    assert rows == [
        (COMMA, "m,1", "failed", "1", "1", "1"),
        (QUOTE, "m,1", "passed", "1", "0", "0"),
        (PLAIN, "m,1", "timeout", "0", "0", "1"),  # invalid: a timeout there kills nothing
        (SKIPPED, "m,1", "skipped", "1", "0", "0"),
        (COMMA, "m3", "passed", "1", "0", "1"),
        (QUOTE, "m3", "error", "1", "1", "1"),
    ]


def test_file_is_what_the_csv_module_writes(tmp_path: Path) -> None:
    """Byte for byte the rows ``csv.writer`` writes (its quoting, its ``\\r\\n``), so a tool
    that compared kills.csv files from before sees no change."""
    result = _result()
    _, kills, _ = result.write(tmp_path)
    expected = tmp_path / "expected.csv"
    valid = {t.id: t.valid for t in result.tests}
    with expected.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["test", "mutant", "outcome", "valid", "kills", "covered"])
        for m in result.mutants:
            for t in result.test_ids():
                if t in m.outcomes:
                    s = m.outcomes[t]
                    covered = m.covered_by is None or t in m.covered_by
                    writer.writerow(
                        [t, m.id, s.value, int(valid[t]), int(valid[t] and s.fails), int(covered)]
                    )
    assert kills.read_bytes() == expected.read_bytes()
