"""TACO (parquet) and APPS (JSON lines) rows -> problems: function-call problems run through
the call driver and judged by the JSON checker; plain stdin/stdout problems as they are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from suitebench.datasets.languages import Lang
from suitebench.datasets.writer import Program, pick_references
from suitebench.model.problem import load_problem

from .conftest import audit, kills, pa, suitebench, write_jsonl, write_parquet

TACO = pa.schema(
    [
        (name, pa.string())
        for name in (
            "question",
            "solutions",
            "starter_code",
            "input_output",
            "difficulty",
            "raw_tags",
            "name",
            "source",
            "tags",
            "skill_types",
            "url",
            "Expected Auxiliary Space",
            "time_limit",
            "date",
            "picture_num",
            "memory_limit",
            "Expected Time Complexity",
        )
    ]
)

AVERAGE = [
    "def average(xs):\n    return sum(xs) / len(xs)\n",
    "class Solution:\n    def average(self, xs):\n        return sum(xs) / len(xs)\n",
    "import statistics\n\ndef average(xs):\n    print('debugging', xs)\n"
    "    return statistics.fmean(xs)\n",
    "def average(xs):\n    return sum(xs) // len(xs)\n",  # integer division: wrong
]


def _taco(name: str, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "question": "Return the mean of a non-empty list of numbers.",
        "solutions": json.dumps(AVERAGE),
        "starter_code": "class Solution:\n    def average(self, xs):\n        ",
        "input_output": json.dumps(
            {
                "fn_name": "average",
                "inputs": [[[1, 2, 3]], [[1, 2]], [[0.1, 0.2]]],
                "outputs": [[2.0], [1.5], [0.15000000000000002]],
            }
        ),
        "difficulty": "EASY",
        "raw_tags": "['Math']",
        "name": name,
        "source": "leetcode",
        "tags": "['Mathematics']",
        "skill_types": "[]",
        "url": "https://example.org/average",
        "Expected Auxiliary Space": "O(1)",
        "time_limit": "1 seconds",
        "date": "2021-01-01",
        "picture_num": "0",
        "memory_limit": "256 megabytes",
        "Expected Time Complexity": "O(n)",
    }
    row.update(over)
    return row


APPS = [
    {
        "problem_id": 17,
        "question": "Read n and n numbers; print their sum.",
        "solutions": json.dumps(
            [
                "n = int(input())\nprint(sum(map(int, input().split())))\n",
                "input()\nprint(sum(int(x) for x in input().split()))\n",
                "n = int(input())\nprint(sum(map(int, input().split()[1:])))\n",  # skips a[0]
            ]
        ),
        "input_output": json.dumps({"inputs": ["3\n1 2 3\n", "1\n5\n"], "outputs": ["6\n", "5\n"]}),
        "difficulty": "introductory",
        "url": "https://example.org/sum",
        "starter_code": "",
    },
    {
        "problem_id": 19,  # APPS' test split has problems without solutions
        "question": "No solutions.",
        "solutions": "",
        "input_output": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]}),
        "difficulty": "interview",
        "url": "",
        "starter_code": "",
    },
    {
        "problem_id": 18,
        "question": "Broken row.",
        "solutions": "[not json",
        "input_output": "{}",
        "difficulty": "introductory",
        "url": "",
        "starter_code": "",
    },
]


def _import(fmt: str, src: Path, out: Path, *extra: str) -> dict[str, Any]:
    proc = suitebench("import", fmt, str(src), "--out", str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "import-summary.json").read_text())


def _seed_without_the_wrong_solution() -> int:
    progs = [Program(f"s{i:03d}", Lang.PYTHON3, s, "") for i, s in enumerate(AVERAGE)]
    return next(
        s
        for s in range(100)
        if "s003" not in {p.name for p in pick_references(progs, 3, s, "mean")}
    )


def test_call_based_rows_get_the_driver_and_the_json_checker(tmp_path: Path) -> None:
    src = write_parquet(tmp_path / "taco/train-00000-of-00001.parquet", [_taco("Mean")], TACO)
    out = tmp_path / "out"
    summary = _import("taco", src, out)
    root = out / "mean"
    problem = load_problem(root)
    assert problem.checker.program == (root / "checker.py").resolve()
    assert problem.time_limit == 1.0 and problem.memory_limit == 256
    assert [p.read_text() for p in problem.official][1] == "[[1, 2]]\n"
    assert (root / "answers/official/002.ans").read_text() == "[1.5]\n"
    assert summary["written"][0]["pools"] == {"accepted": 4}

    # The driver: arguments as JSON on stdin, the result as JSON on stdout, the function's
    # own prints on stderr; a Solution method is found as well as a top-level function.
    for name, want in (("s000.py", "1.5"), ("s001.py", "1.5"), ("s002.py", "1.5")):
        run = subprocess.run(
            [sys.executable, str(root / "submissions/accepted" / name)],
            input="[[1, 2]]\n",
            capture_output=True,
            text=True,
            check=True,
        )
        assert run.stdout == want + "\n"
    # The checker: values within 1e-6, integers and floats alike; not JSON is PE.
    check = root / "checker.py"
    for got, want, code in (
        ("1.5000000001\n", "1.5\n", 0),
        ("2\n", "2.0\n", 0),
        ("1\n", "1.5\n", 1),
        ("[1, [2, 3]]\n", "[1, [2, 3.0]]\n", 0),
        ("oops\n", "1.5\n", 2),
    ):
        (tmp_path / "o").write_text(got)
        (tmp_path / "a").write_text(want)
        rc = subprocess.run(
            [sys.executable, str(check), "in", str(tmp_path / "o"), str(tmp_path / "a")],
            capture_output=True,
        ).returncode
        assert rc == code, (got, want)


def test_apps_json_lines_plain_stdio_and_a_broken_row(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "apps/test.jsonl", APPS)
    summary = _import("apps", src, tmp_path / "out")
    assert [w["id"] for w in summary["written"]] == ["apps-17"]
    assert summary["skipped"][0]["reason"] == "no usable solution for the references"
    assert summary["skipped"][1]["reason"].startswith("solutions or input_output not JSON")
    problem = load_problem(tmp_path / "out/apps-17")
    assert problem.checker.label() == "tokens"
    assert [p.read_text() for p in problem.official] == ["3\n1 2 3\n", "1\n5\n"]
    prov = json.loads((tmp_path / "out/apps-17/provenance.json").read_text())
    assert {
        "what": "time_limit",
        "kind": "field",
        "reason": "time_limit missing in the row: 2.0 s taken",
    } in prov["dropped"]


@pytest.mark.slow
def test_imported_call_problem_audits_as_it_is(tmp_path: Path, build_cache: Path) -> None:
    src = write_parquet(tmp_path / "taco.parquet", [_taco("Mean")], TACO)
    out = tmp_path / "out"
    seed = _seed_without_the_wrong_solution()
    _import("taco", src, out, "--seed", str(seed))
    assert "s003.py" not in {p.name for p in (out / "mean/refs").iterdir()}
    ledger, _retractions, results = audit(
        [out / "mean"], tmp_path / "audit-out", build_cache, "--pool", "accepted"
    )
    # By hand: sum // len is right on [1, 2, 3] (2 against 2.0) and wrong on [1, 2] (1 against
    # 1.5, official 002) and [0.1, 0.2] (0.0); fmean's last-digit difference is within 1e-6.
    assert kills(ledger) == {("official", "submissions/accepted/s003.py", "002.in", "WA")}
    assert results["problems"]["mean"]["arms"]["official"]["killed"] == 1
