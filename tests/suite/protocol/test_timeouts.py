"""A timeout kills a mutant only when it is the mutant's doing: each is confirmed alone.

Two mutants of ``stats``: ``sum_loops`` never ends a ``sum`` (``i += 0``), a real timeout
kill; ``max_off_by_one`` prints 1 for ``max 1 5``.  The suite's ``test_slow_after_max`` sleeps
past the 1 s limit only when the test before it saw a wrong maximum -- a timeout that is not
that test's finding about the mutant (as a loaded machine's are not): run alone on the mutant
it passes, so it does not count, while ``test_max`` still kills the mutant.
"""

from __future__ import annotations

from pathlib import Path

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import TestStatus
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import STATS_C, STATS_SPEC, write_instance

# A suite's start: a helper running the program, and test_max, which notes what it printed
# (the tests after it wait or spin when the maximum was wrong).
ORDER_PREAMBLE = (
    "import subprocess, time\n\n"
    "SEEN = {}\n\n"
    "def run(*args):\n"
    "    return subprocess.run(['./executable', *args], capture_output=True, text=True)\n\n"
    "def test_max():\n"
    "    SEEN['max'] = run('max', '1', '5').stdout\n"
    "    assert SEEN['max'] == '5\\n'\n\n"
)
SUITE = {
    "test_order.py": (
        ORDER_PREAMBLE + "def test_slow_after_max():\n"
        "    if SEEN.get('max', '5\\n') != '5\\n':\n"
        "        time.sleep(4)\n"
        "    assert run('max', '7').stdout == '7\\n'\n\n"
        "def test_sum():\n"
        "    assert run('sum', '1', '2').stdout == '3\\n'\n"
    )
}
MUTANTS = [
    (
        "sum_loops",
        "Sum",
        None,
        "the loop never advances",
        "for (int i = 0; i < n; i++)",
        "for (int i = 0; i < n; i += 0)",
    ),
    (
        "max_off_by_one",
        "Max",
        None,
        "loop stops one element early",
        "for (int i = 1; i < n; i++)",
        "for (int i = 1; i < n - 1; i++)",
    ),
]


def stats_instance(root: Path, tests: dict[str, str]) -> Path:
    """``stats`` with the two mutants above and the suite ``tests``."""
    return write_instance(
        root,
        name="stats",
        source_files={"stats.c": STATS_C, "build.sh": "gcc -O1 -o executable stats.c\n"},
        build=None,
        spec=STATS_SPEC,
        tests=tests,
        mutants=MUTANTS,
        mutated_file="stats.c",
    )


def test_a_timeout_counts_only_when_it_happens_alone_too(tmp_path: Path) -> None:
    toml = stats_instance(tmp_path / "stats", SUITE)
    for engine in (Engine.BATCHED, Engine.PLAIN):
        result = score_suite(
            load_instance(toml),
            store=Store(tmp_path / f"{engine}.sqlite"),
            engine=engine,
            all_tests=True,
            limits=SuiteLimits(per_test=1.0, per_program=60.0),
        )
        assert result.validity == 1.0
        by_id = {m.id: m for m in result.mutants}
        loops = by_id["sum_loops"]
        assert loops.outcomes["tests/test_order.py::test_sum"] is TestStatus.TIMEOUT
        assert loops.status is MutantStatus.TIMEOUT and loops.killed_by == [
            "tests/test_order.py::test_sum"
        ]
        off = by_id["max_off_by_one"]
        slow = "tests/test_order.py::test_slow_after_max"
        assert off.outcomes[slow] is TestStatus.PASSED, off.outcomes
        assert off.killed_by == ["tests/test_order.py::test_max"]
        assert off.status is MutantStatus.KILLED
