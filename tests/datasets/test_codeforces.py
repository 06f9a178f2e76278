"""A Codeforces problem table and submissions table (the open-r1 layout, parquet) ->
problems with pools by verdict; the imported problem audited as it is."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from suitebench.model.problem import load_problem

from .conftest import audit, kills, pa, suitebench, write_parquet

_TEST = pa.struct([("input", pa.string()), ("output", pa.string())])
PROBLEMS = pa.schema(
    [
        ("id", pa.string()),
        ("aliases", pa.list_(pa.string())),
        ("contest_id", pa.string()),
        ("contest_name", pa.string()),
        ("contest_type", pa.string()),
        ("contest_start", pa.int64()),
        ("contest_start_year", pa.int64()),
        ("index", pa.string()),
        ("time_limit", pa.float64()),
        ("memory_limit", pa.float64()),
        ("title", pa.string()),
        ("description", pa.string()),
        ("input_format", pa.string()),
        ("output_format", pa.string()),
        ("interaction_format", pa.string()),
        ("note", pa.string()),
        ("examples", pa.list_(_TEST)),
        ("editorial", pa.string()),
        ("rating", pa.int64()),
        ("tags", pa.list_(pa.string())),
        ("testset_size", pa.int64()),
        ("official_tests", pa.list_(_TEST)),
        ("official_tests_complete", pa.bool_()),
        ("input_mode", pa.string()),
        ("generated_checker", pa.string()),
        ("executable", pa.bool_()),
        ("generated_tests", pa.int64()),
    ]
)
SUBMISSIONS = pa.schema(
    [
        ("submission_id", pa.string()),
        ("source", pa.string()),
        ("contestId", pa.string()),
        ("problem_index", pa.string()),
        ("programmingLanguage", pa.string()),
        ("verdict", pa.string()),
        ("testset", pa.string()),
        ("passedTestCount", pa.float64()),
        ("timeConsumedMillis", pa.float64()),
        ("memoryConsumedBytes", pa.float64()),
        ("creationTimeSeconds", pa.float64()),
        ("problem_id", pa.string()),
    ]
)


def _problem(pid: str, **over: Any) -> dict[str, Any]:
    contest, index = pid.split("/")
    row: dict[str, Any] = {
        "id": pid,
        "aliases": [],
        "contest_id": contest,
        "contest_name": "Round 1",
        "contest_type": "CF",
        "contest_start": 1_600_000_000,
        "contest_start_year": 2020,
        "index": index,
        "time_limit": 1.0,
        "memory_limit": 256.0,
        "title": "Triangular",
        "description": "Print 1 + 2 + ... + n.",
        "input_format": "One integer n (1 <= n <= 10^9).",
        "output_format": "The sum.",
        "interaction_format": None,
        "note": None,
        "examples": [{"input": "3\n", "output": "6\n"}],
        "editorial": None,
        "rating": 800,
        "tags": ["math"],
        "testset_size": 4,
        "official_tests": [
            {"input": "1\n", "output": "1\n"},
            {"input": "100000\n", "output": "5000050000\n"},
            {"input": "1000000000\n", "output": "500000000500000000\n"},
            {"input": "12345678901234567890123...", "output": "..."},
        ],
        "official_tests_complete": False,
        "input_mode": "stdio",
        "generated_checker": None,
        "executable": True,
        "generated_tests": 0,
    }
    row.update(over)
    return row


CPP_OK = (
    '#include <cstdio>\nint main(){long long n;scanf("%lld",&n);printf("%lld\\n",n*(n+1)/2);}\n'
)
CPP_INT = '#include <cstdio>\nint main(){int n;scanf("%d",&n);printf("%d\\n",n*(n+1)/2);}\n'
PY_OK = "n = int(input())\nprint(n * (n + 1) // 2)\n"
PY_OFF = "n = int(input())\nprint(n * (n - 1) // 2)\n"
PY_LOOP = "n = int(input())\ns = 0\nfor i in range(1, n + 1):\n    s += i\nprint(s)\n"


def _sub(sid: str, lang: str, verdict: str, source: str, pid: str = "1/A") -> dict[str, Any]:
    contest, index = pid.split("/")
    return {
        "submission_id": sid,
        "source": source,
        "contestId": contest,
        "problem_index": index,
        "programmingLanguage": lang,
        "verdict": verdict,
        "testset": "TESTS",
        "passedTestCount": 4.0,
        "timeConsumedMillis": 15.0,
        "memoryConsumedBytes": 0.0,
        "creationTimeSeconds": 1_600_000_100.0,
        "problem_id": pid,
    }


SUBS = [
    _sub("101", "GNU C++17", "OK", CPP_OK),
    _sub("102", "Python 3", "OK", PY_OK),
    _sub("103", "PyPy 3-64", "OK", PY_OK),
    _sub("104", "Python 2", "OK", "print input()*(input()+1)/2\n"),
    _sub("105", "GNU C++20 (64)", "WRONG_ANSWER", CPP_INT),
    _sub("106", "Python 3", "WRONG_ANSWER", PY_OFF),
    _sub("107", "Python 3", "TIME_LIMIT_EXCEEDED", PY_LOOP),
    _sub("108", "GNU C++17", "COMPILATION_ERROR", "int main( {}\n"),
    _sub("109", "Kotlin 1.7", "OK", "fun main() { println(1) }\n"),
    _sub("110", "GNU C++17", "OK", CPP_OK, pid="99/Z"),
]
PROBLEM_ROWS = [
    _problem("1/A"),
    _problem("2/B", input_mode="file"),
    _problem("3/C", interaction_format="Ask queries '? x'; answer '! y'."),
]


@pytest.fixture
def tables(tmp_path: Path) -> tuple[Path, Path]:
    problems = write_parquet(
        tmp_path / "codeforces/train-00000-of-00001.parquet", PROBLEM_ROWS, PROBLEMS
    )
    subs = write_parquet(tmp_path / "submissions/train-00000-of-00001.parquet", SUBS, SUBMISSIONS)
    return problems, subs


def _import(problems: Path, subs: Path, out: Path, *extra: str) -> dict[str, Any]:
    proc = suitebench(
        "import", "codeforces", str(problems), "--submissions", str(subs), "--out", str(out), *extra
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "import-summary.json").read_text())


def test_pools_by_verdict_pypy_in_the_languages_table(
    tables: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = _import(*tables, out)
    assert [w["id"] for w in summary["written"]] == ["1-a"]
    assert {s["name"]: s["reason"] for s in summary["skipped"]} == {
        "2/B": "input_mode file: the judge gives stdio only",
        "3/C": "interactive: the judge has no interactor",
    }
    assert summary["programs_dropped"] == {
        "python2: no interpreter": 1,
        "compilation error on the original judge": 1,
        "language Kotlin 1.7: not imported": 1,
        "submission of a problem not in the problem table": 1,
    }
    assert summary["tests_dropped"] == {"truncated on Codeforces (ends in ...)": 1}

    root = out / "1-a"
    toml = tomllib.loads((root / "problem.toml").read_text())
    # PyPy by its label; each C++ program with the standard its label names (101 "GNU C++17",
    # 105 "GNU C++20 (64)"), built with -std=gnu++17 / -std=gnu++20
    assert toml["languages"] == {
        "refs/a000.cpp": "cpp:gnu++17",
        "refs/a002.py": "pypy3",
        "submissions/accepted/a000.cpp": "cpp:gnu++17",
        "submissions/accepted/a002.py": "pypy3",
        "submissions/rejected/r000.cpp": "cpp:gnu++20",
    }
    problem = load_problem(root)
    assert [problem.rel(p) for p in problem.pools["accepted"]] == [
        "submissions/accepted/a000.cpp",
        "submissions/accepted/a001.py",
        "submissions/accepted/a002.py",
    ]
    assert [problem.rel(p) for p in problem.pools["rejected"]] == [
        "submissions/rejected/r000.cpp",
        "submissions/rejected/r001.py",
        "submissions/rejected/r002.py",
    ]
    assert len(problem.official) == 3 and len(problem.samples) == 1
    prov = json.loads((root / "provenance.json").read_text())
    assert prov["programs"]["rejected"][0]["origin"].startswith("submission 105 (")
    assert prov["notes"] == ["official_tests_complete is false: Codeforces showed only some tests"]
    assert {
        "what": "official_tests[3]",
        "kind": "test",
        "reason": "truncated on Codeforces (ends in ...)",
    } in prov["dropped"]


def test_a_testlib_checker_without_testlib_h_skips_the_problem(tmp_path: Path) -> None:
    checker = '#include "testlib.h"\nint main(int c, char** v) { registerTestlibCmd(c, v); }\n'
    problems = write_parquet(
        tmp_path / "p.parquet", [_problem("1/A", generated_checker=checker)], PROBLEMS
    )
    subs = write_parquet(tmp_path / "s.parquet", SUBS[:2], SUBMISSIONS)
    summary = _import(problems, subs, tmp_path / "out")
    assert summary["skipped"][0]["reason"] == "testlib checker needs testlib.h"


@pytest.mark.slow
def test_the_imported_problem_audits_as_it_is(
    tables: tuple[Path, Path], tmp_path: Path, build_cache: Path
) -> None:
    out = tmp_path / "out"
    _import(*tables, out, "--languages", "cpp,python3")
    ledger, _retractions, results = audit(
        [out / "1-a"], tmp_path / "audit-out", build_cache, "--pool", "rejected"
    )
    # By hand: n(n-1)/2 is wrong from n = 1 on (official 001, the sample); int arithmetic
    # overflows at n = 100000 (official 002); the loop is right but too slow for 10^9 (TLE,
    # never a kill).
    assert kills(ledger) == {
        ("official", "submissions/rejected/r000.cpp", "002.in", "WA"),
        ("official", "submissions/rejected/r001.py", "001.in", "WA"),
        ("samples", "submissions/rejected/r001.py", "001.in", "WA"),
    }
    arm = results["problems"]["1-a"]["arms"]["official"]
    assert arm["killed"] == 2
    assert arm["tle_only_submissions"] == ["submissions/rejected/r002.py"]
