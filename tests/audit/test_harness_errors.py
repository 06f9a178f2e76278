"""A broken harness is loud: red-team problems whose checker, validator or reference is broken,
audited as a user audits them (a subprocess). Each must exit with the harness-error status,
name the broken program and its first message on stderr, and list it in results.json; with
``--keep-going`` the same audit exits 0 and writes the same figures."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..cli_helpers import run_suitebench
from .problems import WRONG_EXIT_C, write_next_int
from .test_cli_ledger import suitebench

HARNESS_ERROR_EXIT = 4  # the documented exit status (docs/audit.md, `audit --help`)

OK_C = """\
#include <stdio.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  if (x + 1 > 2147483647LL) puts("OVERFLOW"); else printf("%lld\\n", x + 1);
  return 0; }
"""

CHECKER_FAIL = 'import sys\nsys.stderr.write("FAIL cannot open the answer file\\n")\nsys.exit(3)\n'
CHECKER_RAISES = (
    "import sys\n"
    "answer = open(sys.argv[3]).read().split()\n"
    'raise RuntimeError("checker bug: answer has " + str(len(answer)) + " tokens")\n'
)
CHECKER_SLEEPS = "import time\ntime.sleep(60)\n"
VALIDATOR_RAISES = 'raise RuntimeError("validator bug: forgot to read stdin")\n'
REF_C_BROKEN = "int main(void) { return undeclared_variable; }\n"

TESTS = {"01.in": "5\n", "02.in": "-1\n"}
SUBS = {"ok.c": OK_C, "wrong_exit.c": WRONG_EXIT_C}


def _problem(root: Path, *, checker: str = "", validator: str = "", ref_c: str = "") -> Path:
    """next-int with ok.c (right) and wrong_exit.c (RE on -1), and one part of the harness
    replaced by a broken one."""
    d = write_next_int(root, SUBS, tests=TESTS, arms={"edge": {"max.in": "2147483647\n"}})
    toml = d / "problem.toml"
    if checker:
        (d / "checker.py").write_text(checker)
        toml.write_text(toml.read_text().replace('checker = "tokens"', 'checker = "checker.py"'))
    if validator:
        (d / "validator.py").write_text(validator)
    if ref_c:
        (d / "refs" / "ref.c").write_text(ref_c)
    return d


def _audit(problem: Path, tmp: Path, build_cache: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    out = tmp / ("out-keep" if "--keep-going" in extra else "out")
    proc = suitebench(
        "audit",
        str(problem),
        "--arm",
        "edge=arms/edge",
        "--build-cache",
        str(build_cache),
        "--out",
        str(out),
        *extra,
        store=tmp / "store.sqlite",
    )
    results = json.loads((out / "results.json").read_text())
    return proc, results


# attack -> (problem edits, role, program, stage, a piece of the first message, failures)
ATTACKS = {
    # every judged output asks the checker (ok.c on 3 inputs, wrong_exit.c on the 2 where it
    # exits 0; its crash on -1 needs no checker): FAIL each time
    "checker exits 3": (
        {"checker": CHECKER_FAIL},
        "checker",
        "checker.py",
        "judge",
        "exit 3 (FAIL): FAIL cannot open the answer file",
        5,
    ),
    # a Python exception exits 1, which read as WA: every submission was "certified" buggy
    "checker raises": (
        {"checker": CHECKER_RAISES},
        "checker",
        "checker.py",
        "judge",
        "RuntimeError: checker bug: answer has 1 tokens",
        5,
    ),
    # rejects both official tests: the gate fails, every flag was withdrawn at legality
    "validator raises": (
        {"validator": VALIDATOR_RAISES},
        "validator",
        "validator.py",
        "legality",
        "rejects official input tests/01.in: exit 1: RuntimeError: validator bug",
        2,
    ),
    # one of two references: no input had gold (min_success 2), nothing was scored
    "reference does not compile": (
        {"ref_c": REF_C_BROKEN},
        "reference",
        "refs/ref.c",
        "build",
        "undeclared_variable",
        1,
    ),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_broken_harness_fails_the_audit_unless_asked_to_keep_going(
    attack: str, tmp_path: Path, build_cache: Path
) -> None:
    edits, role, program, stage, message, count = ATTACKS[attack]
    problem = _problem(tmp_path / "p", **edits)
    proc, results = _audit(problem, tmp_path, build_cache)
    assert proc.returncode == HARNESS_ERROR_EXIT, proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("harness error:"))
    assert f"next-int: {role} {program}" in line and message in line, proc.stderr
    (err,) = results["harness_errors"]
    assert err["problem"] == "next-int" and err["role"] == role and err["program"] == program
    assert err["stage"] == stage and message in err["message"]
    assert err["count"] == count
    # the tables are still printed (on stdout) and the figures written
    assert "cov@1" in proc.stdout
    kept, kept_results = _audit(problem, tmp_path, build_cache, "--keep-going")
    assert kept.returncode == 0, kept.stderr
    assert "harness error:" in kept.stderr and "--keep-going" in kept.stderr
    assert kept_results["harness_errors"] == results["harness_errors"]
    assert kept_results["problems"] == results["problems"]


def test_a_checker_that_crashes_no_longer_certifies_bugs(tmp_path: Path, build_cache: Path) -> None:
    """Before, the raising checker's exit status 1 was WA: ok.c was certified as a bug."""
    problem = _problem(tmp_path / "p", checker=CHECKER_RAISES)
    _, results = _audit(problem, tmp_path, build_cache, "--keep-going")
    out = tmp_path / "out-keep"
    assert results["certified"] == 1
    # only wrong_exit.c's crash on -1 (which needs no checker) is certified
    ledger = list(csv.DictReader((out / "ledger.csv").open()))
    assert [r["submission_id"] for r in ledger] == ["submissions/wrong_exit.c"]
    assert ledger[0]["verdict"] == "RE"
    with (out / "next-int" / "kills.csv").open() as fh:
        verdicts = {(r["submission_id"], r["input_id"]): r["verdict"] for r in csv.DictReader(fh)}
    assert verdicts == {
        ("submissions/ok.c", "01.in"): "FAIL",
        ("submissions/ok.c", "02.in"): "FAIL",
        ("submissions/ok.c", "max.in"): "FAIL",
        ("submissions/wrong_exit.c", "01.in"): "FAIL",
        ("submissions/wrong_exit.c", "02.in"): "RE",
        ("submissions/wrong_exit.c", "max.in"): "FAIL",
    }


def test_a_checker_that_times_out_is_a_harness_error(tmp_path: Path, build_cache: Path) -> None:
    """One submission, one input: one checker call, which sleeps past the 10 s limit."""
    d = write_next_int(tmp_path / "p", {"ok.c": OK_C}, tests={"01.in": "5\n"})
    (d / "checker.py").write_text(CHECKER_SLEEPS)
    toml = d / "problem.toml"
    toml.write_text(toml.read_text().replace('checker = "tokens"', 'checker = "checker.py"'))
    proc = suitebench(
        "audit",
        str(d),
        "--build-cache",
        str(build_cache),
        "--out",
        str(tmp_path / "out"),
        store=tmp_path / "store.sqlite",
    )
    assert proc.returncode == HARNESS_ERROR_EXIT, proc.stderr
    assert "checker checker.py (judge, 1 failure(s)): timed out after 10" in proc.stderr
    (err,) = json.loads((tmp_path / "out" / "results.json").read_text())["harness_errors"]
    assert err["count"] == 1 and err["message"].startswith("timed out after 10")


def test_a_sound_audit_exits_0_with_no_harness_errors(tmp_path: Path, build_cache: Path) -> None:
    problem = _problem(tmp_path / "p")
    proc, results = _audit(problem, tmp_path, build_cache)
    assert proc.returncode == 0, proc.stderr
    assert results["harness_errors"] == []
    assert "harness error" not in proc.stderr
    # wrong_exit.c crashes on -1 (official 02.in): one certified finding
    assert [
        r["submission_id"] for r in csv.DictReader((tmp_path / "out" / "ledger.csv").open())
    ] == ["submissions/wrong_exit.c"]


def test_human_output_goes_to_stdout(tmp_path: Path, build_cache: Path) -> None:
    """``audit ... > out.txt`` keeps the tables; with --json stdout holds the JSON alone."""
    problem = _problem(tmp_path / "p")
    target = tmp_path / "out.txt"
    with target.open("w") as fh:
        done = run_suitebench(
            "audit", problem, "--build-cache", build_cache, "--out", tmp_path / "out",
            store=tmp_path / "store.sqlite", timeout=600, stdout=fh, stderr=subprocess.PIPE,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = target.read_text()
    assert "cov@1" in text and "reproducible (DET_WA / DET_RE)" in text
    assert "ledger: 1 certified rows" in text
    assert "cov@1" not in done.stderr
    js = suitebench(
        "--json",
        "audit",
        str(problem),
        "--build-cache",
        str(build_cache),
        "--out",
        str(tmp_path / "out"),
        store=tmp_path / "store.sqlite",
    )
    assert json.loads(js.stdout)["certified"] == 1
    assert "cov@1" in js.stderr
