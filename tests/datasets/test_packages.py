"""``suitebench import kattis`` and ``import polygon`` on packages the team wrote
(tests/datasets/packages.py), then the audit of what they wrote."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

import pytest

from suitebench.model.problem import load_problem

from . import packages
from .conftest import audit, kills, suitebench


def _import(fmt: str, out: Path, *paths: Path) -> dict:
    proc = suitebench("import", fmt, *map(str, paths), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return {"stdout": proc.stdout, **json.loads((out / "import-summary.json").read_text())}


def test_kattis_packages_with_their_limits_checker_and_pools(tmp_path: Path) -> None:
    evensum = packages.evensum(tmp_path / "contest/evensum")
    circle = packages.circle(tmp_path / "contest/circle")
    out = tmp_path / "out"
    summary = _import("kattis", out, evensum, circle)
    assert [w["id"] for w in summary["written"]] == ["evensum", "circle"]
    # evensum gives no memory limit: the format's default, 2048 MiB, named with its field
    reason = "memory_limit missing in problem.yaml limits.memory: 2048 MiB taken"
    assert summary["fields_dropped"] == {reason: 1}
    assert reason in summary["stdout"]

    toml = tomllib.loads((out / "evensum/problem.toml").read_text())
    assert (toml["time_limit"], toml["memory_limit"]) == (1.0, 2048)  # .timelimit: 1
    assert toml["checker"] == "icpc"  # the default output validator, no flags
    assert toml["pools"] == {
        "accepted": "submissions/accepted/*",
        "wrong_answer": "submissions/wrong_answer/*",
    }
    # problemtools' standards: C++ gnu++23, C gnu17; Python 3 under PyPy
    assert toml["languages"]["submissions/accepted/ranges.cpp"] == "cpp:gnu++23"
    assert toml["languages"]["submissions/wrong_answer/mod.c"] == "c:gnu17"
    assert toml["languages"]["submissions/accepted/lower.py"] == "pypy3"
    problem = load_problem(out / "evensum")
    # data/secret/1.in and its answer, beside each other
    assert problem.official[0].read_text() == "2\n-1 -2\n"
    assert problem.official[0].with_suffix(".ans").read_text() == "NO\n"
    assert [p.name for p in problem.pools["accepted"]] == ["lower.py", "mixed.c", "ranges.cpp"]
    assert problem.validator is not None and (problem.validator / "build.sh").is_file()

    circle_toml = tomllib.loads((out / "circle/problem.toml").read_text())
    assert circle_toml["checker"] == "icpc:float_tolerance 1e-6"
    assert (circle_toml["time_limit"], circle_toml["memory_limit"]) == (2.0, 512)
    assert load_problem(out / "circle").checker.label() == (
        "icpc:float_absolute_tolerance 1e-06 float_relative_tolerance 1e-06"
    )


def test_kattis_without_a_time_limit_says_what_it_took(tmp_path: Path) -> None:
    root = packages.evensum(tmp_path / "evensum")
    (root / ".timelimit").unlink()
    summary = _import("kattis", tmp_path / "out", root)
    assert summary["fields_dropped"] == {
        "time_limit missing in the package (.timelimit, limits.time_limit): 10.0 s taken": 1,
        "memory_limit missing in problem.yaml limits.memory: 2048 MiB taken": 1,
    }


def test_kattis_interactive_package_names_its_interactor(tmp_path: Path) -> None:
    root = packages.evensum(tmp_path / "guess")
    (root / "problem.yaml").write_text("name: Guess\nvalidation: custom interactive\n")
    packages.write_tree(root, {"output_validators/interactor/interact.cpp": "int main(){}\n"})
    summary = _import("kattis", tmp_path / "out", root)
    text = (tmp_path / "out/guess/problem.toml").read_text()
    assert 'interactor = "output_validators/interactor/interact.cpp"' in text
    # called as the package format calls it (validator input answer feedback_dir; 42 / 43),
    # and the problem loads (its interactor is a field of problem.toml)
    assert 'interactor_convention = "kattis"' in text
    assert summary["written"][0]["loads"] is None
    assert (tmp_path / "out/guess/output_validators/interactor/interact.cpp").is_file()
    assert summary["written"][0]["interactor"] == "output_validators/interactor/interact.cpp"
    # its .ans files are the interactor's, not expected outputs: not beside the inputs, so
    # the audit does not hold the references' output against them
    assert not (tmp_path / "out/guess/tests/001.ans").exists()
    assert (tmp_path / "out/guess/answers/official/001.ans").read_text() == "NO\n"


def test_polygon_package(tmp_path: Path) -> None:
    root = packages.maxpair(tmp_path / "maxpair")
    summary = _import("polygon", tmp_path / "out", root)
    assert summary["programs_dropped"] == {"python2: no interpreter": 1}  # solutions/old.py
    assert summary["tests_dropped"] == {"not in the package (made by 'gen 3')": 1}
    toml = tomllib.loads((tmp_path / "out/maxpair/problem.toml").read_text())
    # 2000 ms, 268435456 bytes
    assert (toml["time_limit"], toml["memory_limit"]) == (2.0, 256)
    assert (toml["checker"], toml["validator"]) == ("files/check.cpp", "files/val.py")
    assert toml["languages"] == {
        "refs/main.cpp": "cpp:gnu++20",  # cpp.gcc13-64-winlibs-g++20
        "submissions/accepted/main.cpp": "cpp:gnu++20",
        "submissions/wrong-answer/twice.cpp": "cpp:gnu++17",  # cpp.g++17
    }
    problem = load_problem(tmp_path / "out/maxpair")
    assert [p.name for p in problem.pools["accepted"]] == ["main.cpp", "sorted.py"]
    assert [p.name for p in problem.samples] == ["001.in"]
    assert problem.official[1].with_suffix(".ans").read_text() == "18\n"


@pytest.mark.slow
def test_kattis_audit_case_and_tolerance_from_the_package(
    tmp_path: Path, build_cache: Path
) -> None:
    packages.evensum(tmp_path / "contest/evensum")
    packages.circle(tmp_path / "contest/circle")
    out = tmp_path / "out"
    _import("kattis", out, tmp_path / "contest")
    ledger, _retractions, results = audit(
        [out / "circle", out / "evensum"], tmp_path / "audit", build_cache, "--pool", "wrong_answer"
    )
    # By hand. evensum: YES / yes / Yes agree case-insensitively, so every test has a gold;
    # mod.c fails only secret/1 (-1 + -2 = -3, and -3 % 2 == -1 in C: it says YES), official
    # 001; the sample (6) and secret 2 (4) and 3 (4) are even. circle: 3.14 * 4 = 12.56 vs
    # 12.566370614 (secret/1, official 001) and 3.14 vs 3.141592654 (the sample) are off by
    # more than 1e-6, absolute and relative; the references' 9 decimals and Python's repr
    # agree within it.
    assert kills(ledger) == {
        ("official", "submissions/wrong_answer/mod.c", "001.in", "WA"),
        ("official", "submissions/wrong_answer/pi314.py", "001.in", "WA"),
        ("samples", "submissions/wrong_answer/pi314.py", "001.in", "WA"),
    }
    assert results["harness_errors"] == []
    for pid, n in (("evensum", 3), ("circle", 2)):  # every official test has a gold
        counts = results["problems"][pid]["arms"]["official"]["counts"]
        assert (counts["no_gold"], counts["scored"]) == (0, n), pid
    # the validator (exit 42 / 43, wrapped) accepted evensum's three official tests
    assert results["problems"]["evensum"]["arms"]["official"]["counts"]["legal"] == 3


@pytest.mark.slow
def test_a_wrong_official_answer_is_a_harness_error(tmp_path: Path, build_cache: Path) -> None:
    packages.evensum(tmp_path / "evensum", wrong_answer_file=True)
    out = tmp_path / "out"
    _import("kattis", out, tmp_path / "evensum")
    proc = suitebench(
        "audit",
        str(out / "evensum"),
        "--pool",
        "wrong_answer",
        "--build-cache",
        str(build_cache),
        "--out",
        str(tmp_path / "audit"),
        store=tmp_path / "store.sqlite",
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    # secret/2 (4, even) ships NO: the three references say YES, yes, Yes
    errors = json.loads((tmp_path / "audit/results.json").read_text())["harness_errors"]
    assert [(e["role"], e["program"]) for e in errors] == [("answer", "tests/002.ans")]
    for ref in ("refs/lower.py", "refs/mixed.c", "refs/ranges.cpp"):
        assert ref in errors[0]["message"]
    assert "answer tests/002.ans" in proc.stderr
    # the console names the limit the import took by default
    assert "evensum: memory_limit missing in problem.yaml limits.memory: 2048 MiB taken" in (
        proc.stdout
    )
    # the kill on secret/1 stands (its answer agrees); nothing rests on secret/2
    ledger = (tmp_path / "audit/ledger.csv").read_text()
    assert ",002.in," not in ledger and ",001.in," in ledger


@pytest.mark.slow
def test_polygon_audit(tmp_path: Path, build_cache: Path) -> None:
    packages.maxpair(tmp_path / "maxpair")
    out = tmp_path / "out"
    _import("polygon", out, tmp_path / "maxpair")
    ledger, _r, results = audit(
        [out / "maxpair"], tmp_path / "audit", build_cache, "--pool", "wrong-answer"
    )
    # 1 5 2: 5 + 2 = 7, twice.cpp says 10; 9 -1 9 3: 18 both ways
    assert kills(ledger) == {
        ("official", "submissions/wrong-answer/twice.cpp", "001.in", "WA"),
        ("samples", "submissions/wrong-answer/twice.cpp", "001.in", "WA"),
    }
    assert results["harness_errors"] == []


@pytest.mark.slow
def test_kattis_measures_a_missing_time_limit_as_the_format_does(
    tmp_path: Path, build_cache: Path
) -> None:
    root = packages.evensum(tmp_path / "evensum")
    (root / ".timelimit").unlink()
    out = tmp_path / "out"
    proc = suitebench(
        "import",
        "kattis",
        str(root),
        "--out",
        str(out),
        "--measure-time-limits",
        store=tmp_path / "store.sqlite",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "import-summary.json").read_text())
    (why,) = [d for d in summary["written"][0]["defaults"] if d.startswith("time_limit")]
    # legacy format: the slowest accepted run (of 3 programs x 4 tests) x time_multiplier 5,
    # rounded up to whole seconds, at least 1
    m = re.search(r"\((submissions/accepted/\S+) on (\S+), ([0-9.]+) s CPU, of 12 runs\)", why)
    assert m is not None, why
    expected = max(1, math.ceil(float(m.group(3)) * 5))
    assert why.endswith(f"x ac_to_time_limit 5, rounded up to 1 s: {expected} s taken")
    assert load_problem(out / "evensum").time_limit == expected
    prov = json.loads((out / "evensum/provenance.json").read_text())
    assert prov["limits"]["time_limit"] == expected


@pytest.mark.slow
def test_kattis_custom_output_validator_judges(tmp_path: Path, build_cache: Path) -> None:
    packages.pairsum(tmp_path / "pairsum")
    out = tmp_path / "out"
    _import("kattis", out, tmp_path / "pairsum")
    assert load_problem(out / "pairsum").checker.label() == "program:output_validator"
    ledger, _r, results = audit(
        [out / "pairsum"], tmp_path / "audit", build_cache, "--pool", "wrong_answer"
    )
    # (1, 4) and (4, 1) for n = 5 agree under the package's validator, and both pass it
    # against the official answer 2 3; (0, 5) does not: killed on the first test. n = 2: (1, 1)
    # from both references; zero.py's (0, 2) is killed there too.
    assert kills(ledger) == {("official", "submissions/wrong_answer/zero.py", "001.in", "WA")}
    counts = results["problems"]["pairsum"]["arms"]["official"]["counts"]
    assert (counts["scored"], counts["no_gold"]) == (2, 0)
    assert results["harness_errors"] == []


def test_a_package_that_links_or_points_outside_itself_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "private.txt"
    secret.write_text("not the package's\n")
    root = packages.evensum(tmp_path / "k/evensum")
    (root / "data/secret/9.in").symlink_to(secret)
    summary = _import("kattis", tmp_path / "out", root)
    assert summary["skipped"][0]["reason"] == "data/secret/9.in links outside the package"
    assert not (tmp_path / "out/evensum").exists()

    pg = packages.maxpair(tmp_path / "p/maxpair")
    xml = (pg / "problem.xml").read_text()
    (pg / "problem.xml").write_text(
        xml.replace('path="solutions/sorted.py"', 'path="../../private.txt"')
    )
    summary = _import("polygon", tmp_path / "out2", pg)
    # the solution that points outside is not read: only main.cpp is left in accepted
    prov = json.loads((tmp_path / "out2/maxpair/provenance.json").read_text())
    assert [p["file"] for p in prov["programs"]["accepted"]] == ["submissions/accepted/main.cpp"]
    assert "not the package's" not in json.dumps(prov)
