"""A test whose ``finally`` waits on what the test hung ends within a few limits, not at the
watchdog.

The mutant's worker thread has died without answering (:mod:`tests.suite.hung_worker`): the
alarm interrupts the test's ``ask``, and its ``finally`` then waits on ``stop`` for the same
answer.  Before, nothing interrupted that wait: faulthandler's watchdog ended the whole process
at 3 x 0.5 + 5 + 1 = 7.5 s, the next test never ran, and the host had to run the suite on in a
fresh process, that test first (another 7.5 s).  Now the timeout is raised again a limit later:
the test fails as a timeout after about two limits and the next test runs in the same process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..hung_worker import NARROWED, TESTS, WORKER


def _session(tmp_path: Path, worker: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "worker.py").write_text(worker)
    (tmp_path / "test_worker.py").write_text(TESTS)
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p"]
    argv += ["suitebench.suite.inside.plugin", "--suitebench-timeout=0.5", "--rootdir", "."]
    argv += ["--suitebench-events=out.events", f"--suitebench-faultlog={tmp_path / 'fault'}"]
    return subprocess.run(
        [*argv, "test_worker.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def _calls(tmp_path: Path) -> dict[str, dict[str, object]]:
    lines = (tmp_path / "out.events").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return {
        e["nodeid"].rpartition("::")[2]: e
        for e in events
        if e.get("event") == "report" and e.get("when") == "call"
    }


def test_a_cleanup_waiting_on_a_hung_worker_ends_the_test_not_the_run(tmp_path: Path) -> None:
    done = _session(tmp_path, WORKER.replace(*NARROWED))
    calls = _calls(tmp_path)
    hung = calls["test_a_failing_request_raises_in_the_caller"]
    assert hung["timeout"] is True and hung["outcome"] == "failed", done.stdout
    assert "exceeded the per-test limit of 0.5 s" in str(hung["message"])
    assert "on_cpu" not in hung  # it waited: the host confirms it alone
    assert calls["test_doubles"]["outcome"] == "passed", done.stdout
    assert "1 failed, 1 passed" in done.stdout
    assert not (tmp_path / "fault").read_text()  # the watchdog did not fire


def test_the_reference_passes_both(tmp_path: Path) -> None:
    done = _session(tmp_path, WORKER)
    assert "2 passed" in done.stdout, done.stdout
    assert not (tmp_path / "fault").read_text()
