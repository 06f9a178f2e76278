"""A suite from elsewhere runs on the plain engine unless its caller vouches for it.

The batched engine runs a batch of programs under one pytest, whose children write their
results beside each other.  The test below turns its own outcome in every earlier program of
its batch into a failure; batched, that took a ``stats`` suite of M = 2/6 to 6/6 (every mutant
but the last of a batch, which a later one cannot reach, and the decoy is last), until each
program's record was kept from the children after it (``suite/inside/batch/forking.py``).
Scored as a suite from elsewhere is by default, each program has a sandbox and a pytest of its
own, and M is the honest figure, worked out by hand in ``test_hostile_tests``: 2/6 -- and
batched, asked for by name, the same now.  (What a batch's parent runs -- a command-line
suite's module-level code -- is still trusted with the records: hence the plain default.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits, engine_for
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from .test_hostile_tests import KILLED, VALID

LIMITS = SuiteLimits(per_test=5.0, per_program=90.0, memory_mb=256)

FORGER = """\
import glob
import os
import subprocess

ME = "tests/test_forger.py::test_forger"


def test_forger():
    for args in (["sum", "1", "2"], ["max", "1", "2"], ["clamp", "5", "1", "9"]):
        subprocess.run(["./executable", *args], capture_output=True)
    own = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            own.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue  # the listing's own descriptor, closed by now
    own = [path for path in own if path.endswith(".events")]
    if not own:
        return
    out, name = os.path.split(own[0])
    mine = int(name.split(".")[0])
    passed = '"nodeid": "%s", "when": "teardown", "outcome": "passed"' % ME
    failed = '"nodeid": "%s", "when": "teardown", "outcome": "failed", "message": "x"' % ME
    for path in glob.glob(os.path.join(out, "*.events")):
        if int(os.path.basename(path).split(".")[0]) < mine:
            with open(path) as fh:
                text = fh.read()
            with open(path, "w") as fh:
                fh.write(text.replace(passed, failed))
"""


@pytest.mark.parametrize(("engine", "ran"), [(None, "plain"), (Engine.BATCHED, "batched")])
def test_a_test_cannot_reach_another_programs_results(
    stats_instance: Path, tmp_path: Path, engine: Engine | None, ran: str
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in VALID.items():
        (suite / name).write_text(text)
    (suite / "test_forger.py").write_text(FORGER)
    result = score_suite(
        load_instance(stats_instance),
        suite,
        store=Store(tmp_path / "st.db"),
        limits=LIMITS,
        engine=engine,
    )
    assert result.engine == ran
    killed = {m.id for m in result.mutants if m.status is MutantStatus.KILLED}
    assert killed == KILLED, [(m.id, m.killed_by) for m in result.mutants]
    assert result.mutation_score == pytest.approx(2 / 6)


def test_the_instances_own_suite_runs_batched(stats_instance: Path, tmp_path: Path) -> None:
    tests = load_instance(stats_instance).tests
    assert engine_for(tests, None, None) is Engine.BATCHED
    assert engine_for(tests, tests, None) is Engine.BATCHED
    assert engine_for(tests, tmp_path / "agent-suite", None) is Engine.PLAIN
    assert engine_for(tests, tmp_path / "agent-suite", Engine.BATCHED) is Engine.BATCHED
