"""Strict loading of problem.toml: what a problem setter sees when a field is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.problem import CheckerKind, OracleRule, ProblemError, load_problem

from .conftest import PROBLEMS, copy_problem


def test_fixture_problems_load_with_resolved_files() -> None:
    p = load_problem(PROBLEMS / "maxsum")
    assert p.id == "maxsum"
    assert p.checker.kind is CheckerKind.TOKENS
    assert [p.rel(r) for r in p.references] == ["refs/ref1.c", "refs/ref2.py", "refs/ref3.cpp"]
    assert p.rel(p.validator) == "validator.py" if p.validator else False
    assert sorted(p.pools) == ["accepted", "rejected"]
    assert [f.name for f in p.official] == ["01.in", "02.in", "03.in"]
    assert p.allowance == 0.5 and p.oracle.rule is OracleRule.ALL_AGREE
    d = load_problem(PROBLEMS / "divsum" / "problem.toml")
    assert d.oracle.rule is OracleRule.MAJORITY and d.allowance == 0.2
    assert d.brute_time_limit == 5.0 and d.checker.kind is CheckerKind.LINES
    m = load_problem(PROBLEMS / "mean")
    assert m.checker.kind is CheckerKind.FLOAT and m.checker.eps == 1e-6
    assert m.brute == () and m.brute_time_limit == 10.0


def expect_error(tmp_path: Path, field: str, *edits: str) -> ProblemError:
    d = copy_problem(tmp_path, "mean", **{f"e{i}": e for i, e in enumerate(edits)})
    with pytest.raises(ProblemError) as info:
        load_problem(d)
    err = info.value
    assert err.field == field
    assert str(d / "problem.toml") in str(err)
    return err


def test_unknown_key_is_named(tmp_path: Path) -> None:
    err = expect_error(tmp_path, "time_limt", "time_limit = 1.0|time_limt = 1.0\ntime_limit = 1")
    assert "unknown key" in str(err)


def test_unknown_key_in_a_table(tmp_path: Path) -> None:
    expect_error(tmp_path, "tests.hidden", '[tests]|[tests]\nhidden = "x/*"')


def test_missing_required_field(tmp_path: Path) -> None:
    err = expect_error(tmp_path, "memory_limit", "memory_limit = 256\n|")
    assert "missing" in str(err)


def test_missing_validator_file(tmp_path: Path) -> None:
    err = expect_error(tmp_path, "validator", 'validator = "validator.py"|validator = "val.py"')
    assert "val.py" in str(err)


def test_glob_matching_nothing(tmp_path: Path) -> None:
    err = expect_error(
        tmp_path, "pools.rejected", 'rejected = "submissions/rejected/*"|rejected = "nope/*.c"'
    )
    assert "nope/*.c" in str(err)


def test_empty_reference_list(tmp_path: Path) -> None:
    expect_error(
        tmp_path, "references", 'references = ["refs/ref.c", "refs/ref.py"]|references = []'
    )


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ("time_limit = 1.0|time_limit = 0", "time_limit"),
        ("time_limit = 1.0|time_limit = -2.5", "time_limit"),
        ("memory_limit = 256|memory_limit = 0", "memory_limit"),
        ('time_limit = 1.0|time_limit = "fast"', "time_limit"),
        ('checker = "float:1e-6"|checker = "float:abc"', "checker"),
        ('checker = "float:1e-6"|checker = "nosuch-checker.py"', "checker"),
    ],
)
def test_bad_limits_and_checkers(tmp_path: Path, edit: str, field: str) -> None:
    expect_error(tmp_path, field, edit)


def test_bad_oracle_rule(tmp_path: Path) -> None:
    d = copy_problem(tmp_path, "mean")
    (d / "problem.toml").write_text(
        (d / "problem.toml").read_text() + '\n[oracle]\nrule = "unanimous"\n'
    )
    with pytest.raises(ProblemError) as info:
        load_problem(d)
    assert info.value.field == "oracle.rule"


def test_custom_checker_program_and_oracle_table(tmp_path: Path) -> None:
    d = copy_problem(tmp_path, "mean", c='checker = "float:1e-6"|checker = "check.py"')
    (d / "problem.toml").write_text(
        (d / "problem.toml").read_text() + '\n[oracle]\nrule = "majority"\nmin_success = 1\n'
    )
    p = load_problem(d)
    assert p.checker.kind is CheckerKind.PROGRAM and p.checker.program == d / "check.py"
    assert p.oracle.rule is OracleRule.MAJORITY and p.oracle.min_success == 1


def test_not_a_problem_directory(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match=r"problem\.toml"):
        load_problem(tmp_path)


def test_toml_syntax_error(tmp_path: Path) -> None:
    d = copy_problem(tmp_path, "mean")
    (d / "problem.toml").write_text("id = \n")
    with pytest.raises(ProblemError) as info:
        load_problem(d)
    assert info.value.field == "(syntax)"
