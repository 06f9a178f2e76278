"""What decided a verdict is in the outputs: the judge options (``exit_status``, ``[compile]``)
in results.json, the ledger and kills.csv; both runs' times of a re-judged wall-clock TLE; the
judged output's head in retractions.csv."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig, audit_problem
from suitebench.audit.pipeline import run_audit
from suitebench.audit.records import Verdict
from suitebench.audit.runs import AuditEngine, RunResult
from suitebench.model.problem import load_problem
from suitebench.run.outcome import Status

from .problems import WRAPCHECK_C, WRONG_EXIT_C, write_next_int

EDGE = {"01-max.in": "2147483647\n", "02-zero.in": "0\n"}
OLD_JUDGE = 'exit_status = "ignore"\n[compile]\nc = ["-O0", "-std=gnu99"]\n'
SLEEPER = "import time\ntime.sleep(30)\n"
OK_PY = 'x = int(input())\nprint("OVERFLOW" if x == 2**31 - 1 else x + 1)\n'


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_judge_options_are_recorded_with_every_verdict(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """wrong_exit.c answers -1 with 1 and exits 3: RE by default, WA when the exit status is
    ignored. Which rule (and which compiler flags) decided is written beside the verdict."""
    tests = {"01.in": "5\n", "02.in": "-1\n"}
    plain = write_next_int(tmp_path / "plain", {"wrong_exit.c": WRONG_EXIT_C}, tests=tests)
    old = write_next_int(
        tmp_path / "old", {"wrong_exit.c": WRONG_EXIT_C}, tests=tests, extra=OLD_JUDGE
    )
    toml = old / "problem.toml"
    toml.write_text(toml.read_text().replace('id = "next-int"', 'id = "next-int-old"'))
    out = tmp_path / "out"
    result = run_audit([plain, old], [], make_engine(), out_dir=out)
    problems = result.results["problems"]
    assert problems["next-int"]["exit_status"] == "judge" and problems["next-int"]["compile"] == {}
    assert problems["next-int-old"]["exit_status"] == "ignore"
    assert problems["next-int-old"]["compile"] == {"c": ["-O0", "-std=gnu99"]}

    ledger = {r["problem"]: r for r in _rows(out / "ledger.csv")}
    assert (ledger["next-int"]["verdict"], ledger["next-int-old"]["verdict"]) == ("RE", "WA")
    assert ledger["next-int"]["exit_status"] == "judge"
    assert ledger["next-int"]["compile_flags"] == "default"
    assert ledger["next-int-old"]["exit_status"] == "ignore"
    assert ledger["next-int-old"]["compile_flags"] == "c=-O0 -std=gnu99"
    assert json.loads((out / "ledger.json").read_text())[1]["compile_flags"] == "c=-O0 -std=gnu99"

    cells = _rows(out / "next-int-old" / "kills.csv")
    assert cells and {(r["exit_status"], r["compile_flags"]) for r in cells} == {
        ("ignore", "c=-O0 -std=gnu99")
    }
    assert {
        (r["exit_status"], r["compile_flags"]) for r in _rows(out / "next-int" / "kills.csv")
    } == {("judge", "default")}


def test_a_sleeping_program_is_rejudged_once_and_stays_tle(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """sleep.py sleeps 30 s: the wall-clock watchdog stops it at 2 x 1 s + 0.5 s with almost
    no CPU time. It is run once more, times out again, and the cell keeps both runs' times."""
    d = write_next_int(tmp_path / "p", {"sleep.py": SLEEPER}, tests={"01.in": "5\n"})
    engine = make_engine()
    out = tmp_path / "out"
    result = run_audit([d], [], engine, out_dir=out)
    (audit,) = result.audits
    (cell,) = [j for (n, _), j in audit.cells.items() if n == "submissions/sleep.py"]
    assert cell.verdict is Verdict.TLE
    assert cell.tle_first is not None
    first_wall, first_cpu = cell.tle_first
    assert first_wall >= 2.5 and first_cpu < 1.0
    assert cell.wall_time >= 2.5 and cell.cpu_time < 1.0
    (row,) = _rows(out / "next-int" / "kills.csv")
    assert row["verdict"] == "TLE"
    assert float(row["first_wall_time"]) >= 2.5 and float(row["wall_time"]) >= 2.5
    (entry,) = result.results["problems"]["next-int"]["tle_rejudged"]
    assert entry["submission_id"] == "submissions/sleep.py" and entry["verdict"] == "TLE"
    assert entry["first_wall_time"] >= 2.5 and entry["first_cpu_time"] < 1.0


def test_a_wall_clock_tle_of_a_loaded_machine_does_not_count(
    make_engine: Callable[..., AuditEngine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run of ok.py is made to look like a loaded machine's: stopped by the wall
    watchdog after 2.6 s with 0.01 s of CPU. The re-run (a real one) answers: AC, and the
    cell keeps the first run's times."""
    d = write_next_int(tmp_path / "p", {"ok.py": OK_PY}, tests={"01.in": "5\n"})
    problem = load_problem(d)
    engine = make_engine()
    target = engine.build(problem.pools["accepted"][0]).program_id
    real = engine._execute

    def loaded(keyed: Sequence[Any]) -> list[RunResult]:
        outs = real(list(keyed))
        return [
            dataclasses.replace(
                r,
                outcome=dataclasses.replace(
                    r.outcome,
                    status=Status.TIMEOUT,
                    timeout_kind="wall",
                    wall_time=2.6,
                    cpu_time=0.01,
                ),
            )
            if spec.salt == "" and spec.built.program_id == target
            else r
            for (_, _, spec), r in zip(keyed, outs, strict=True)
        ]

    monkeypatch.setattr(engine, "_execute", loaded)
    audit = audit_problem(problem, [], AuditConfig(), engine)
    (cell,) = [j for (n, _), j in audit.cells.items() if n == "submissions/ok.py"]
    assert cell.verdict is Verdict.AC
    assert cell.tle_first == (2.6, 0.01)
    assert cell.wall_time < 2.5


def test_retractions_carry_the_head_of_the_output_they_judged(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """Without a validator the edge arm's kills are withdrawn at legality; wrapcheck.c (built
    at -O2, where gcc folds its overflow test away) printed -2147483648 on 2^31 - 1."""
    d = write_next_int(tmp_path / "p", {"wrapcheck.c": WRAPCHECK_C}, arms={"edge": EDGE})
    toml = d / "problem.toml"
    toml.write_text(toml.read_text().replace('validator = "validator.py"\n', ""))
    out = tmp_path / "out"
    run_audit([d], [parse_arm("edge=arms/edge")], make_engine(), out_dir=out)
    (row,) = _rows(out / "retractions.csv")
    assert (row["input_id"], row["stage"], row["verdict"]) == ("01-max.in", "legality", "WA")
    assert row["output_head"] == "-2147483648\\n"
