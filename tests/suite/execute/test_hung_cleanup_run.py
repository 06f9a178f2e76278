"""A mutant on which a test's cleanup waits forever is scored in one run, its verdicts as before.

The mutant (:mod:`tests.suite.hung_worker`) kills the worker's thread on a handler's
``ZeroDivisionError``: ``test_a_failing_request_raises_in_the_caller`` waits for an answer that
never comes, and its ``finally`` waits again in ``stop``.  That test is a timeout spent waiting,
confirmed alone, and kills the mutant; ``test_doubles`` passes on it.  Before, the wait in the
``finally`` held the process until the watchdog ended the run, and the rest of the suite went
on in a fresh run, the hung test first: the same verdicts, at two watchdog periods.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import RunStatus

from ..conftest import score_in_store, write_python_instance
from ..hung_worker import NARROWED, TESTS, WORKER

HUNG = "tests/test_worker.py::test_a_failing_request_raises_in_the_caller"
DOUBLES = "tests/test_worker.py::test_doubles"


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_a_cleanup_that_waits_forever_ends_its_test_not_its_run(
    engine: Engine, tmp_path: Path
) -> None:
    toml = write_python_instance(
        tmp_path / "worker",
        name="worker",
        source={"worker/__init__.py": WORKER},
        tests={"test_worker.py": TESTS},
        spec="# worker\n\n## Requests\nA failing request raises in the caller.\n",
        mutants=[("narrowed", "worker/__init__.py", *NARROWED)],
    )
    limits = SuiteLimits(per_test=2.0, per_program=120.0, timeout_constant=1.0)
    result = score_in_store(toml, tmp_path, engine=engine, limits=limits, all_tests=True)
    assert (result.counts.tests, result.counts.valid) == (2, 2)
    (narrowed,) = result.mutants
    assert narrowed.outcomes[HUNG] == "timeout"
    assert "exceeded the per-test limit" in narrowed.kill_messages[HUNG]
    assert narrowed.outcomes[DOUBLES] == "passed"
    assert narrowed.status == "timeout"
    assert narrowed.run_status is RunStatus.OK
    assert "fresh run" not in narrowed.message, narrowed.message
    assert result.harness_errors == []
