"""CodeContests+ rows (parquet) -> problems with their own testlib checker, validator and
generator; audited as imported, the generator replaying the dataset's command lines.

No testlib.h ships with the tests (nothing is downloaded): ``MINI_TESTLIB`` is a small
stand-in holding the few testlib calls these programs make, given as ``--testlib``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suitebench.model.problem import load_problem

from .conftest import audit, kills, pa, suitebench, write_parquet

MINI_TESTLIB = r"""// A stand-in for testlib.h with the calls the tests' programs make.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstdarg>
#include <cctype>
enum TResult { _ok = 0, _wa = 1, _pe = 2, _fail = 3 };
[[noreturn]] inline void quitf(TResult r, const char* fmt, ...) {
    va_list ap; va_start(ap, fmt); vfprintf(stderr, fmt, ap); va_end(ap);
    std::exit(int(r));
}
struct InStream {
    FILE* f = nullptr; bool strict = false; TResult bad = _pe;
    int peek() { int c = std::fgetc(f); if (c != EOF) std::ungetc(c, f); return c; }
    long long readLong() {
        if (!strict) while (std::isspace(peek())) std::fgetc(f);
        long long v = 0; int sign = 1, n = 0, c = peek();
        if (c == '-') { sign = -1; std::fgetc(f); }
        while (std::isdigit(c = peek())) { v = v * 10 + (c - '0'); std::fgetc(f); ++n; }
        if (n == 0 || n > 18) quitf(bad, "expected an integer");
        return sign * v;
    }
    long long readLong(long long lo, long long hi, const char* name) {
        long long v = readLong();
        if (v < lo || v > hi) quitf(_fail, "%s out of range", name);
        return v;
    }
    void expect(char want) { if (std::fgetc(f) != want) quitf(_fail, "expected %d", want); }
    void readSpace() { expect(' '); }
    void readEoln() { expect('\n'); }
    void readEof() { if (std::fgetc(f) != EOF) quitf(_fail, "expected EOF"); }
};
inline InStream inf, ouf, ans;
inline void registerTestlibCmd(int argc, char* argv[]) {
    if (argc < 4) quitf(_fail, "usage: checker input output answer");
    inf.f = std::fopen(argv[1], "r");
    ouf.f = std::fopen(argv[2], "r");
    ans.f = std::fopen(argv[3], "r");
    inf.bad = _fail; ans.bad = _fail;
}
inline void registerValidation(int, char**) { inf.f = stdin; inf.strict = true; inf.bad = _fail; }
inline void registerGen(int, char**, int) {}
"""

CHECKER = r"""#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long a = inf.readLong(), b = inf.readLong(), x = ouf.readLong();
    if (x < a || x > b) quitf(_wa, "%lld is not in [%lld, %lld]", x, a, b);
    quitf(_ok, "ok");
}
"""
VALIDATOR = r"""#include "testlib.h"
int main(int argc, char* argv[]) {
    registerValidation(argc, argv);
    long long a = inf.readLong(-2000000000LL, 2000000000LL, "a");
    inf.readSpace();
    long long b = inf.readLong(-2000000000LL, 2000000000LL, "b");
    inf.readEoln();
    inf.readEof();
    if (a > b) quitf(_fail, "a > b");
    return 0;
}
"""
GENERATOR = r"""#include "testlib.h"
int main(int argc, char* argv[]) {
    registerGen(argc, argv, 1);
    std::printf("%s %s\n", argv[1], argv[2]);
}
"""
CPP, PYTHON3 = 2, 3
_SUB = pa.struct([("code", pa.string()), ("language", pa.int64())])
_TEST = pa.struct([("input", pa.string()), ("output", pa.string())])
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("title", pa.string()),
        ("description", pa.string()),
        ("source", pa.string()),
        ("url", pa.string()),
        ("time_limit", pa.int64()),
        ("memory_limit", pa.int64()),
        ("generator", pa.string()),
        ("generator_cmd", pa.string()),
        ("validator", pa.string()),
        ("checker", pa.string()),
        ("correct_submissions", pa.list_(_SUB)),
        ("incorrect_submissions", pa.list_(_SUB)),
        ("test_cases", pa.list_(_TEST)),
    ]
)
READ = '#include <cstdio>\nint main(){long long a,b;scanf("%lld %lld",&a,&b);'


def _row(pid: str, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": pid,
        "title": "Between",
        "description": "Given a <= b (|a|, |b| <= 2*10^9), print any integer x, a <= x <= b.",
        "source": "Codeforces",
        "url": "https://example.org/between",
        "time_limit": 1000,
        "memory_limit": 256,
        "generator": GENERATOR,
        "generator_cmd": "./gen 3 3\n./gen -7 2\n./gen 0 0\n",
        "validator": VALIDATOR,
        "checker": CHECKER,
        "correct_submissions": [
            {"code": READ + 'printf("%lld\\n",a);}\n', "language": CPP},
            {"code": "a, b = map(int, input().split())\nprint(b)\n", "language": PYTHON3},
            {"code": "a, b = map(int, input().split())\nprint((a + b) // 2)\n", "language": 3},
        ],
        "incorrect_submissions": [
            {"code": "a, b = map(int, input().split())\nprint(a - 1)\n", "language": PYTHON3},
            {"code": READ + 'printf("%lld\\n",a+1);}\n', "language": CPP},
            {
                "code": '#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);'
                'int s=a+b;printf("%d\\n",s/2);}\n',
                "language": CPP,
            },
            {"code": "print input()\n", "language": 1},
        ],
        "test_cases": [
            {"input": "1 10\n", "output": "1\n"},
            {"input": "5 5\n", "output": "5\n"},
            {"input": "2000000000 2000000000\n", "output": "2000000000\n"},
        ],
    }
    row.update(over)
    return row


def _import(src: Path, out: Path, *extra: str) -> dict[str, Any]:
    proc = suitebench("import", "codecontests-plus", str(src), "--out", str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "import-summary.json").read_text())


@pytest.fixture
def testlib(tmp_path: Path) -> Path:
    path = tmp_path / "testlib" / "testlib.h"
    path.parent.mkdir()
    path.write_text(MINI_TESTLIB)
    return path


def test_without_testlib_h_the_testlib_checker_skips_the_problem(tmp_path: Path) -> None:
    src = write_parquet(tmp_path / "ccp.parquet", [_row("1A"), _row("2B", checker="")], SCHEMA)
    summary = _import(src, tmp_path / "out")
    assert summary["skipped"] == [
        {
            "name": "1A",
            "source_file": str(src),
            "row": 0,
            "reason": "testlib checker needs testlib.h",
        }
    ]
    # 2B has no checker (tokens): kept, its testlib validator and generator dropped.
    assert summary["fields_dropped"] == {
        "testlib validator needs testlib.h": 1,
        "testlib generator needs testlib.h": 1,
    }
    problem = load_problem(tmp_path / "out/2b")
    assert problem.validator is None and problem.generator is None
    assert problem.checker.label() == "tokens"


def test_with_testlib_h_checker_validator_and_generator(tmp_path: Path, testlib: Path) -> None:
    src = write_parquet(tmp_path / "ccp.parquet", [_row("1A")], SCHEMA)
    summary = _import(src, tmp_path / "out", "--testlib", str(testlib))
    assert summary["programs_dropped"] == {"python2: no interpreter": 1}
    root = tmp_path / "out/1a"
    problem = load_problem(root)
    assert problem.checker.program == (root / "checker.cpp").resolve()
    assert problem.validator == (root / "validator.cpp").resolve()
    assert problem.generator == (root / "generator").resolve()
    assert (root / "testlib.h").read_text() == MINI_TESTLIB
    assert (root / "generator/commands.txt").read_text() == "./gen 3 3\n./gen -7 2\n./gen 0 0\n"
    assert problem.time_limit == 1.0


@pytest.mark.slow
def test_the_imported_problem_audits_as_it_is(
    tmp_path: Path, testlib: Path, build_cache: Path
) -> None:
    src = write_parquet(tmp_path / "ccp.parquet", [_row("1A")], SCHEMA)
    out = tmp_path / "out"
    _import(src, out, "--testlib", str(testlib))
    ledger, retractions, results = audit(
        [out / "1a"],
        tmp_path / "audit-out",
        build_cache,
        "--pool",
        "rejected",
        "--arm",
        "gen=generator@3",
    )
    # By hand, under the range checker (the references print a, b and the midpoint: all
    # agree under it): a - 1 is out of range everywhere (official 001, generated 3 3);
    # a + 1 only where a = b (official 002 "5 5", generated "3 3"); int a + b overflows
    # only on 2e9 + 2e9 (official 003). The generator's inputs pass the validator, so its
    # kills are certified too.
    assert kills(ledger) == {
        ("official", "submissions/rejected/i000.py", "001.in", "WA"),
        ("official", "submissions/rejected/i001.cpp", "002.in", "WA"),
        ("official", "submissions/rejected/i002.cpp", "003.in", "WA"),
        ("gen", "submissions/rejected/i000.py", "seed-0", "WA"),
        ("gen", "submissions/rejected/i001.cpp", "seed-0", "WA"),
    }
    assert {r["legality_basis"] for r in ledger} == {"validator"}
    assert retractions == []
    counts = results["problems"]["1a"]["arms"]["gen"]["counts"]
    assert counts["inputs"] == 3 and counts["legal"] == 3
