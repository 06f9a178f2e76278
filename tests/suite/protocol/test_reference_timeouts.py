"""A timeout on a reference run drops a test only when it is the test's doing.

A valid test that waits past its limit because the machine is busy would be dropped as not
valid on that reference run, and V would move with the load.  ``test_waits`` stands for it: it
sleeps 3 s, past the 2 s limit, whenever ``test_max`` ran before it in the same run (as a busy
machine would slow it), and 0.1 s alone.  It runs alone on the reference, passes, and stays
valid.  ``test_hangs`` times out alone too, and ``test_computes`` spins 3 s of CPU time after
``test_max``: it used its whole limit computing, a timeout no run alone would change.  So V is
3/5, where counting the full runs' timeouts as they came would give 2/5.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import TestStatus
from suitebench.suite.score import score_suite

from .test_timeouts import ORDER_PREAMBLE, stats_instance

SUITE = {
    "test_order.py": (
        ORDER_PREAMBLE + "def test_waits():\n"
        "    time.sleep(3.0 if 'max' in SEEN else 0.1)\n"
        "    assert run('max', '7').stdout == '7\\n'\n\n"
        "def test_computes():\n"
        "    end = time.thread_time() + (3.0 if 'max' in SEEN else 0.0)\n"
        "    while time.thread_time() < end:\n"
        "        pass\n\n"
        "def test_hangs():\n"
        "    time.sleep(30)\n\n"
        "def test_sum():\n"
        "    assert run('sum', '1', '2').stdout == '3\\n'\n"
    )
}
MAX, WAITS, COMPUTES, HANGS, SUM = (
    f"tests/test_order.py::test_{n}" for n in ("max", "waits", "computes", "hangs", "sum")
)


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_reference_timeout_stands_only_when_the_test_times_out_alone_too(
    tmp_path: Path, engine: Engine
) -> None:
    toml = stats_instance(tmp_path / "stats", SUITE)
    result = score_suite(
        load_instance(toml),
        store=Store(tmp_path / "store.sqlite"),
        engine=engine,
        limits=SuiteLimits(per_test=2.0, per_program=120.0),
    )
    tests = {t.id: t for t in result.tests}
    assert {t for t, info in tests.items() if info.valid} == {MAX, WAITS, SUM}
    assert result.validity == pytest.approx(3 / 5)
    assert tests[WAITS].reference == [TestStatus.PASSED] * 3
    assert tests[WAITS].message.startswith("timed out in the full run, passed when run alone")
    assert tests[HANGS].reference == [TestStatus.TIMEOUT] * 3
    assert tests[COMPUTES].reference == [TestStatus.TIMEOUT] * 3

    by_id = {m.id: m for m in result.mutants}
    # max_off_by_one: test_max fails, and test_waits waits past its limit after it again --
    # on the mutant too it passes alone, so only test_max kills.
    off = by_id["max_off_by_one"]
    assert off.killed_by == [MAX]
    assert off.outcomes[WAITS] is TestStatus.PASSED
    # sum_loops never ends: test_sum times out alone too.
    loops = by_id["sum_loops"]
    assert loops.killed_by == [SUM]
    assert loops.outcomes[SUM] is TestStatus.TIMEOUT
