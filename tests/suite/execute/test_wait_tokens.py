"""The runner's waiting runs: a wait holds no core, so waiting runs go on pools of their own
beside the workers' (the early confirmations', the waits' of a phase) -- and however those pools
overlap in time, no more runs go side by side than the bound the memory set
(``SuiteRuns.overlap``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from suitebench.run.executor import LocalExecutor
from suitebench.suite.execute import jobs
from suitebench.suite.execute.runspec import Target
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus

from ..conftest import plain_runner

P = TestStatus.PASSED


def test_runs_of_every_pool_together_stay_within_the_overlap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two callers at once (the early confirmations' lane and the main thread's fresh runs),
    # each asking for six waiting runs on a pool as wide as the overlap (3): side by side they
    # would be six; the runner's tokens hold them to three, the bound the memory set.
    runner = plain_runner(tmp_path, LocalExecutor(2), overlap=3)
    lock = threading.Lock()
    now, most = [0], [0]
    finished = SuiteRun.from_maps(RunStatus.OK, tests={"a": P}).to_dict()

    def job(payload: dict[str, object], on_child: object = None) -> dict[str, object]:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.2)
        with lock:
            now[0] -= 1
        return finished

    monkeypatch.setattr(jobs, "suite_job", job)
    asked = [[(f"{who}{i}", Target(executable=f"/b/{who}{i}")) for i in range(6)] for who in "xy"]
    callers = [
        threading.Thread(target=runner.run, args=(a,), kwargs={"waits": True}) for a in asked
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert 2 <= most[0] <= 3
    assert len(runner.store.get_many([k for a in asked for k, _ in a])) == 12
