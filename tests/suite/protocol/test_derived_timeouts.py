"""A mutant's per-test limits come from the reference's own times (PIT's factor x time +
constant, capped by the user's limit); a test that used its limit of CPU time timed out, and
one that waited past it counts only when it times out alone at the user's limit.

``stats`` again, with ``sum_loops`` (``i += 0``: ``sum`` never ends) and ``max_off_by_one``.
``test_slow`` sleeps 0.5 s on every program, and 2.5 s more when the test before it saw a
wrong maximum: past the limit derived for it (1.25 x ~0.5 s + 1 s, about 1.7 s) but well
inside the user's 8 s, as a slow test on a loaded machine would be.  ``test_busy`` computes
for 3 s of CPU time there instead of waiting: it uses its whole limit of CPU time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits, derive_timeouts
from suitebench.suite.records import TestStatus
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import INTERVALS_INIT, INTERVALS_TESTS, write_python_instance
from .test_timeouts import ORDER_PREAMBLE, stats_instance

SUITE = {
    "test_order.py": (
        ORDER_PREAMBLE + "def test_slow():\n"
        "    time.sleep(0.5 if SEEN.get('max', '5\\n') == '5\\n' else 3.0)\n"
        "    assert run('max', '7').stdout == '7\\n'\n\n"
        "def test_busy():\n"
        "    spin = 0.0 if SEEN.get('max', '5\\n') == '5\\n' else 3.0\n"
        "    end = time.thread_time() + spin\n"
        "    while time.thread_time() < end:\n"
        "        pass\n"
        "    assert run('max', '7').stdout == '7\\n'\n\n"
        "def test_sum():\n"
        "    assert run('sum', '1', '2').stdout == '3\\n'\n"
    )
}
SLOW, BUSY, SUM, MAX = (f"tests/test_order.py::test_{n}" for n in ("slow", "busy", "sum", "max"))


def test_a_limit_is_factor_times_the_longest_reference_time_plus_the_constant() -> None:
    limits = SuiteLimits(per_test=5.0, timeout_factor=1.25, timeout_constant=4.0)
    seconds = [{"a": 0.2, "b": 1.0}, {"a": 0.3, "b": 1.1}]
    # a: 1.25 x 0.3 + 4 = 4.375 -> 4.4 s; b: 1.25 x 1.1 + 4 = 5.375, over the 5 s cap: the cap;
    # c: no time in the reference runs: the cap.
    assert derive_timeouts(seconds, ["a", "b", "c"], limits) == (("a", 4.4),)
    assert derive_timeouts([{"a": 0.2}, {}], ["a"], limits) == ()


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_mutant_runs_at_limits_from_the_reference_and_slow_tests_do_not_kill(
    tmp_path: Path, engine: Engine
) -> None:
    toml = stats_instance(tmp_path / "stats", SUITE)
    limits = SuiteLimits(per_test=8.0, per_program=120.0, timeout_constant=1.0)
    result = score_suite(
        load_instance(toml), store=Store(tmp_path / "store.sqlite"), engine=engine, limits=limits
    )
    assert result.validity == 1.0
    tests = {t.id: t for t in result.tests}
    slow = tests[SLOW]
    assert all(s is not None and s >= 0.5 for s in slow.seconds), slow.seconds
    assert slow.mutant_time_limit is not None
    assert 1.25 * 0.5 + 1.0 <= slow.mutant_time_limit < 3.0
    fast = tests[SUM]
    assert fast.mutant_time_limit is not None and 1.0 <= fast.mutant_time_limit <= 1.5

    by_id = {m.id: m for m in result.mutants}
    loops = by_id["sum_loops"]
    # Ended at the derived limit in its run, confirmed alone at the user's: a kill.
    assert loops.outcomes[SUM] is TestStatus.TIMEOUT
    assert loops.status is MutantStatus.TIMEOUT and loops.killed_by == [SUM]
    assert f"limit of {fast.mutant_time_limit:g} s" in loops.kill_messages[SUM]
    # test_slow waited past its derived limit after the wrong maximum, and passes alone;
    # test_busy computed past its own there: a timeout on the CPU, the mutant's doing, not
    # run again (alone, where nothing came before it, it would pass).
    off = by_id["max_off_by_one"]
    assert off.outcomes[SLOW] is TestStatus.PASSED, off.outcomes
    assert off.outcomes[BUSY] is TestStatus.TIMEOUT, off.outcomes
    assert "s of CPU time" in off.kill_messages[BUSY]
    assert sorted(off.killed_by) == sorted([MAX, BUSY]) and off.status is MutantStatus.KILLED


LOOPS = (
    "merge_loops",
    "intervals/__init__.py",
    "    for lo, hi in sorted(intervals):\n",
    "    while intervals:\n        lo, hi = sorted(intervals)[0]\n",
)


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_python_package_s_mutants_run_at_limits_from_the_reference(
    tmp_path: Path, engine: Engine
) -> None:
    """Coverage-guided selection: the mutants run after the first reference run, at limits
    from its times; ``merge_loops`` never ends ``merge`` on a non-empty list."""
    toml = write_python_instance(
        tmp_path / "intervals",
        name="intervals",
        source={"intervals/__init__.py": INTERVALS_INIT},
        tests=INTERVALS_TESTS,
        spec="# Intervals\n",
        mutants=[LOOPS],
    )
    limits = SuiteLimits(per_test=6.0, per_program=120.0, timeout_constant=1.0)
    result = score_suite(
        load_instance(toml), store=Store(tmp_path / "store.sqlite"), engine=engine, limits=limits
    )
    assert result.validity == 1.0
    overlap = "tests/test_merge.py::test_merge_overlap"
    limit = {t.id: t.mutant_time_limit for t in result.tests}[overlap]
    assert limit is not None and 1.0 <= limit <= 1.5
    (loops,) = result.mutants
    assert loops.status is MutantStatus.TIMEOUT
    assert loops.outcomes[overlap] is TestStatus.TIMEOUT
    assert loops.outcomes["tests/test_merge.py::test_empty"] is TestStatus.PASSED
    assert f"limit of {limit:g} s" in loops.kill_messages[overlap]
