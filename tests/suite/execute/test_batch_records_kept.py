"""A test of one mutant cannot write another mutant's record in the same batch.

Every child of a batch writes its event log in the batch's shared output directory, so a test
could append to the logs of the programs that ran before it in the batch.  ``calc``'s suite
checks nothing of ``scale`` or ``clamp`` (its tests call them and assert nothing), so no
mutant of theirs is killed by an honest run: M = 0 of 4, worked out from the code
(``x * k`` -> ``x + k``, ``clamp``'s bounds swapped, an equivalent ``x * k * 1 + 0 * k``, a
bound moved by one).  Its ``test_forge`` runs in every mutant's run (it calls both functions)
and appends a failed ``test_scale`` and ``test_clamp`` to every earlier program's event log --
but not in the reference's batches, which it tells by the fingerprint the reference's runs
leave, so the suite stays valid.  Before, that gave M = 3 of 4 (the last program of the batch,
whose log no later test touches, was the only survivor).  Now each program's record is cleared
before its child starts, kept in the batch's memory when it ends and put back when the batch's
loop ends (:mod:`suitebench.suite.inside.batch.forking`): M = 0.
"""

from __future__ import annotations

from pathlib import Path

from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance

SOURCE = """\
def add(a, b):
    return a + b


def scale(x, k):
    return x * k


def clamp(x, lo, hi):
    return max(lo, min(hi, x))
"""

TESTS = """\
import glob
import json
import os

from calc import add, clamp, scale


def test_add():
    assert add(2, 3) == 5


def test_scale():
    scale(2, 3)  # reaches scale, checks nothing


def test_clamp():
    clamp(5, 0, 10)  # reaches clamp, checks nothing


def test_forge():
    scale(1, 1)
    clamp(1, 0, 2)
    for out in glob.glob("/tmp/suitebench-*/out"):
        if glob.glob(os.path.join(out, "*.fingerprint.json")):
            continue  # the reference's runs: left honest
        logs = sorted(
            glob.glob(os.path.join(out, "*.events")),
            key=lambda p: int(os.path.basename(p).split(".")[0]),
        )
        for path in logs[:-1]:  # every earlier program's log, not this one's
            with open(path, "a") as f:
                for name in ("test_scale", "test_clamp"):
                    forged = {
                        "event": "report",
                        "nodeid": "tests/test_calc.py::" + name,
                        "when": "call",
                        "outcome": "failed",
                        "timeout": False,
                        "message": "forged",
                    }
                    f.write(json.dumps(forged) + "\\n")
"""

F = "calc/__init__.py"
MUTANTS = [
    ("plus", F, "x * k", "x + k"),
    ("swapped", F, "max(lo, min(hi, x))", "min(lo, max(hi, x))"),
    ("same", F, "x * k", "x * k * 1 + 0 * k"),
    ("wider", F, "max(lo, min(hi, x))", "max(lo, min(hi + 1, x))"),
]


def test_a_test_cannot_write_an_earlier_mutants_record(tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "calc",
        name="calc",
        source={F: SOURCE},
        tests={"test_calc.py": TESTS},
        spec="Adds, scales and clamps numbers.\n",
        mutants=MUTANTS,
    )
    result = score_suite(
        load_instance(toml),
        store=Store(tmp_path / "store.sqlite"),
        limits=SuiteLimits(per_test=10.0, per_program=60.0),
        executor=LocalExecutor(1),  # one worker: the four mutants in one batch
    )
    assert result.validity == 1.0
    assert {m.id: m.status for m in result.mutants} == {
        mid: MutantStatus.SURVIVED for mid, *_ in MUTANTS
    }
    assert result.mutation_score == 0.0
