"""Checkers: testlib semantics for the built-ins, testlib's calling convention for programs."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.checkers import Checker, CheckVerdict, double_compare
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import CheckerKind, CheckerSpec, ProblemError, parse_checker

from .conftest import PROBLEMS


def verdict(kind: str, output: bytes, answer: bytes, eps: float | None = None) -> CheckVerdict:
    c = Checker(CheckerSpec(kind=CheckerKind(kind), eps=eps))
    return c.check_many([(b"", output, answer)])[0].verdict


def test_exact_lines_tokens() -> None:
    assert verdict("exact", b"1 2\n", b"1 2\n") is CheckVerdict.OK
    assert verdict("exact", b"1  2\n", b"1 2\n") is CheckVerdict.PE
    assert verdict("exact", b"1 3\n", b"1 2\n") is CheckVerdict.WA
    assert verdict("lines", b"1  2 \n3\n\n", b"1 2\n3\n") is CheckVerdict.OK
    assert verdict("lines", b"1 2 3\n", b"1 2\n3\n") is CheckVerdict.PE
    assert verdict("lines", b"1 2\n4\n", b"1 2\n3\n") is CheckVerdict.WA
    assert verdict("tokens", b"1\n2", b"1 2\n") is CheckVerdict.OK
    assert verdict("tokens", b"1 2 3", b"1 2\n") is CheckVerdict.WA


def test_float_tokens_use_double_compare() -> None:
    assert verdict("float", b"0.6666667\n", b"0.6666666667\n", 1e-6) is CheckVerdict.OK
    assert verdict("float", b"0.67\n", b"0.6666666667\n", 1e-6) is CheckVerdict.WA
    assert verdict("float", b"abc\n", b"0.5\n", 1e-6) is CheckVerdict.PE
    assert verdict("float", b"yes 0.5\n", b"yes 0.5000001\n", 1e-6) is CheckVerdict.OK
    assert verdict("float", b"no 0.5\n", b"yes 0.5\n", 1e-6) is CheckVerdict.WA
    assert verdict("float", b"0.5 1\n", b"0.5\n", 1e-6) is CheckVerdict.WA


def test_double_compare_is_testlibs() -> None:
    # absolute error within eps
    assert double_compare(0.0, 1e-6, 1e-6)
    assert not double_compare(0.0, 1.1e-6, 1e-6)
    # relative error within eps for large values, where the absolute error is large
    assert double_compare(1e12, 1e12 + 5e5, 1e-6)
    assert not double_compare(1e12, 1e12 + 2e6, 1e-6)
    # the 1e-15 slack: exactly at the boundary counts as accepted
    assert double_compare(1.0, 1.0 + 1e-6, 1e-6)
    # NaN equals only NaN; infinities must agree in sign
    assert double_compare(math.nan, math.nan, 1e-6)
    assert not double_compare(math.nan, 0.0, 1e-6)
    assert not double_compare(0.0, math.nan, 1e-6)
    assert double_compare(math.inf, math.inf, 1e-6)
    assert not double_compare(math.inf, -math.inf, 1e-6)
    assert not double_compare(-math.inf, 1e300, 1e-6)
    assert not double_compare(1.0, math.inf, 1e-6)


def test_float_checker_reads_nan_and_inf_tokens() -> None:
    assert verdict("float", b"nan\n", b"NaN\n", 1e-9) is CheckVerdict.OK
    assert verdict("float", b"-inf\n", b"inf\n", 1e-9) is CheckVerdict.WA


def test_checker_program_testlib_convention(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    c = Checker(
        CheckerSpec(kind=CheckerKind.PROGRAM, program=PROBLEMS / "mean" / "check.py"), engine
    )
    got = c.check_many(
        [
            (b"3\n1 1 2\n", b"1.3333334\n", b"1.3333333333\n"),
            (b"3\n1 1 2\n", b"1.34\n", b"1.3333333333\n"),
            (b"3\n1 1 2\n", b"four\n", b"1.3333333333\n"),
        ]
    )
    assert [r.verdict for r in got] == [CheckVerdict.OK, CheckVerdict.WA, CheckVerdict.PE]
    # the calls are cached jobs: asking again runs nothing
    before = engine.executed_runs
    c.check_many([(b"3\n1 1 2\n", b"1.34\n", b"1.3333333333\n")])
    assert engine.executed_runs == before


@pytest.mark.parametrize(("code", "want"), [(3, CheckVerdict.FAIL), (7, CheckVerdict.FAIL)])
def test_checker_program_failure_is_not_a_wrong_answer(
    make_engine: Callable[..., AuditEngine], tmp_path: Path, code: int, want: CheckVerdict
) -> None:
    prog = tmp_path / "broken_checker.py"
    prog.write_text(f"import sys\nsys.stderr.write('answer file unreadable')\nsys.exit({code})\n")
    c = Checker(CheckerSpec(kind=CheckerKind.PROGRAM, program=prog), make_engine())
    r = c.check_many([(b"1\n", b"1\n", b"1\n")])[0]
    assert r.verdict is want


def icpc(flags: str, output: bytes, answer: bytes) -> CheckVerdict:
    spec = parse_checker(f"icpc:{flags}" if flags else "icpc", Path("."), Path("problem.toml"))
    return Checker(spec).check_many([(b"", output, answer)])[0].verdict


def test_icpc_is_the_package_formats_default_output_validator() -> None:
    # tokens, case-insensitive by default: a jury's "yes" against the answer's "YES"
    assert icpc("", b"yes\n", b"YES\n") is CheckVerdict.OK
    assert icpc("", b"Possible  2\n", b"POSSIBLE 2") is CheckVerdict.OK
    assert icpc("case_sensitive", b"yes\n", b"YES\n") is CheckVerdict.WA
    assert icpc("", b"yes no", b"yes") is CheckVerdict.WA  # trailing output
    assert icpc("", b"", b"0\n") is CheckVerdict.WA
    # whitespace must match exactly under space_change_sensitive (a trailing newline too)
    assert icpc("space_change_sensitive", b"1 2\n", b"1 2\n") is CheckVerdict.OK
    assert icpc("space_change_sensitive", b"1  2\n", b"1 2\n") is CheckVerdict.WA
    assert icpc("space_change_sensitive", b"1 2", b"1 2\n") is CheckVerdict.WA
    # without a tolerance numbers are tokens like any other
    assert icpc("", b"0.50", b"0.5") is CheckVerdict.WA


def test_icpc_float_tolerances_absolute_or_relative() -> None:
    # |1000.0001 - 1000| = 1e-4: over 1e-6 absolute, under 1e-6 * 1000 = 1e-3 relative
    assert icpc("float_absolute_tolerance 1e-6", b"1000.0001", b"1000") is CheckVerdict.WA
    assert icpc("float_relative_tolerance 1e-6", b"1000.0001", b"1000") is CheckVerdict.OK
    assert icpc("float_tolerance 1e-6", b"1000.0001", b"1000") is CheckVerdict.OK  # either
    # near zero only the absolute tolerance can accept: |1e-7 - 0| <= 1e-6
    assert icpc("float_relative_tolerance 1e-6", b"1e-7", b"0") is CheckVerdict.WA
    assert icpc("float_tolerance 1e-6", b"1e-7", b"0") is CheckVerdict.OK
    # any formatting of a number passes for a number token; words still fold case
    assert icpc("float_tolerance 1e-6", b"3.14000000e-2 YES", b"0.0314 yes") is CheckVerdict.OK
    assert icpc("float_tolerance 1e-6", b"abc", b"0.5") is CheckVerdict.WA
    assert icpc("float_tolerance 1e-6", b"nan", b"0.5") is CheckVerdict.WA
    # 0.33335 vs 0.3333: off by 5e-5, inside 1e-4
    assert icpc("float_tolerance 1e-4", b"0.33335", b"0.3333") is CheckVerdict.OK
    assert icpc("float_tolerance 1e-4", b"0.3335", b"0.3333") is CheckVerdict.WA


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("icpc:float_tolerance", "needs a number >= 0"),
        ("icpc:float_tolerance -1", "needs a number >= 0"),
        ("icpc:case_insensitive", "unknown flag 'case_insensitive'"),
    ],
)
def test_icpc_flags_are_checked(value: str, expected: str) -> None:
    with pytest.raises(ProblemError) as err:
        parse_checker(value, Path("."), Path("problem.toml"))
    assert err.value.field == "checker" and expected in str(err.value)


def test_icpc_label_names_every_flag() -> None:
    spec = parse_checker("icpc:case_sensitive float_tolerance 1e-6", Path("."), Path("p.toml"))
    assert spec.label() == (
        "icpc:case_sensitive float_absolute_tolerance 1e-06 float_relative_tolerance 1e-06"
    )
    assert parse_checker(spec.label(), Path("."), Path("p.toml")) == spec
