"""Tests made of subtests (pytest's ``subtests`` fixture): a test's outcome is its subtests'.

A subtest that fails fails its test, as plain pytest says (``FAILED ... contains 1 failed
subtest``, exit status 1); a subtest that skips does not make its test skipped while another
subtest passes (plain pytest: ``PASSED``, exit status 0) -- counted skipped, such a test was
never valid and could not kill the mutant its real suite kills. A test whose every subtest
skips is skipped. The same on both engines and both protocols (the ``subtests`` fixture is
served by pytest's plugin phase by phase, so the direct protocol leaves such a test to pytest).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits, TestProtocol
from suitebench.suite.records import TestStatus
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance

PARTS = '''\
"""Small numeric helpers."""


def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def sign(x):
    return (x > 0) - (x < 0)
'''

TESTS = {
    "test_parts.py": """\
import pytest

from parts import clamp, sign


def test_clamp_cases(subtests):
    with subtests.test(msg="below"):
        assert clamp(-5, 0, 10) == 0
    with subtests.test(msg="a platform this is not"):
        pytest.skip("not on this platform")
    with subtests.test(msg="above"):
        assert clamp(50, 0, 10) == 10


def test_sign_cases(subtests):
    with subtests.test(msg="skipped first"):
        pytest.skip("not here")
    for x, want in [(-3, -1), (0, 0), (4, 1)]:
        with subtests.test(x=x):
            assert sign(x) == want


def test_every_subtest_skips(subtests):
    for x in range(2):
        with subtests.test(x=x):
            pytest.skip("none here")


def test_plain():
    assert clamp(5, 0, 10) == 5
""",
}

MUTANTS = [
    ("above", "parts/__init__.py", "min(x, hi)", "min(x, hi + 1)"),
    ("zero", "parts/__init__.py", "(x > 0) - (x < 0)", "(x >= 0) - (x < 0)"),
]

CLAMP = "tests/test_parts.py::test_clamp_cases"
SIGN = "tests/test_parts.py::test_sign_cases"
ALL_SKIP = "tests/test_parts.py::test_every_subtest_skips"
PLAIN = "tests/test_parts.py::test_plain"


@pytest.mark.parametrize(
    ("engine", "protocol"),
    [
        (Engine.BATCHED, TestProtocol.DIRECT),
        (Engine.BATCHED, TestProtocol.PYTEST),
        (Engine.PLAIN, TestProtocol.PYTEST),
    ],
)
def test_a_failing_subtest_kills_and_a_skipped_one_leaves_its_test_valid(
    tmp_path: Path, engine: Engine, protocol: TestProtocol
) -> None:
    toml = write_python_instance(
        tmp_path / "parts",
        name="parts",
        source={"parts/__init__.py": PARTS},
        tests=TESTS,
        spec="# parts\n\n## Helpers\nclamp and sign.\n",
        mutants=MUTANTS,
    )
    store = Store(tmp_path / "store" / "store.sqlite")
    try:
        result = score_suite(
            load_instance(toml),
            store=store,
            cache_dir=tmp_path / "builds",
            engine=engine,
            limits=SuiteLimits(per_test=5.0, per_program=300.0, protocol=protocol),
        )
    finally:
        store.close()
    tests = {t.id: t for t in result.tests}
    assert tests[CLAMP].reference == [TestStatus.PASSED] * 3 and tests[CLAMP].valid
    assert tests[SIGN].valid and tests[PLAIN].valid
    assert tests[ALL_SKIP].reference == [TestStatus.SKIPPED] * 3
    assert not tests[ALL_SKIP].valid
    by_id = {m.id: m for m in result.mutants}
    assert by_id["above"].killed_by == [CLAMP], by_id["above"]
    assert by_id["zero"].killed_by == [SIGN], by_id["zero"]
    assert by_id["above"].outcomes[CLAMP] is TestStatus.FAILED
    assert result.mutation_score == 1.0
