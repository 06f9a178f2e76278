"""A test's timeout verdict does not depend on the machine's load (:mod:`.inside.budget`).

The pytest process and a busy hog share one CPU, so a test gets about half of it (less when
other work lands on that CPU too; a fifth is still enough).  A test that computes for 3 s of
CPU time still uses up its 1 s limit of CPU time (a timeout the host counts without running it
again), though at the first alarm it has had only ~0.5 s; a test that sleeps times out at its
limit as a wait; a test that computes 0.5 s of CPU time, about 1 s of wall time here, passes.
A test that replaces ``time.thread_time`` before it sleeps still waited.

The premise is a share of a CPU, which a loaded machine may not give: when the loop got less
than a fifth, it runs on to four limits of wall time and is a wait, which the host confirms
alone (the same verdict); the test then checks that road instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from suitebench.suite.execute.eventlog import read_events, summarize

TESTS = (
    "import time\n"
    "\n"
    "def _spin(seconds):\n"
    "    end = time.thread_time() + seconds\n"
    "    while time.thread_time() < end:\n"
    "        pass\n"
    "\n"
    "def test_loops():\n"
    "    _spin(3.0)\n"
    "\n"
    "def test_sleeps():\n"
    "    time.sleep(3.0)\n"
    "\n"
    "def test_computes_a_while():\n"
    "    _spin(0.5)\n"
    "\n"
    "def test_fakes_its_cpu_time():\n"
    "    time.thread_time = lambda: 1e12\n"
    "    time.sleep(3.0)\n"
)
HOG = "while True:\n    pass\n"


def _on_one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


class SharedRun(NamedTuple):
    """A pytest run of one file beside busy hogs on one CPU: what it printed, each test's
    call report and its seconds (start to end of teardown), and the run's wall time."""

    stdout: str
    calls: dict[str, Any]
    took: dict[str, float]
    elapsed: float
    events: list[Any]


def _run_beside_hogs(tmp_path: Path, name: str, text: str, limit: int, hogs: int) -> SharedRun:
    """``text`` as ``name``, run by pytest with the plugin at a ``limit`` s per-test limit, on
    one CPU shared with ``hogs`` busy processes."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    argv += ["-p", "suitebench.suite.inside.plugin", "--rootdir", "."]
    argv += [f"--suitebench-timeout={limit}", "--suitebench-events=out.events", name]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    busy = [
        subprocess.Popen([sys.executable, "-c", HOG], preexec_fn=_on_one_cpu) for _ in range(hogs)
    ]
    try:
        started = time.monotonic()
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
            preexec_fn=_on_one_cpu,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    finally:
        for hog in busy:
            hog.kill()
            hog.wait()
    events = read_events(tmp_path / "out.events")
    reports = [e for e in events if e.get("event") == "report"]
    calls = {e["nodeid"].rpartition("::")[2]: e for e in reports if e.get("when") == "call"}
    took = {
        e["nodeid"].rpartition("::")[2]: e["seconds"]
        for e in reports
        if e.get("when") == "teardown" and "seconds" in e
    }
    return SharedRun(done.stdout, calls, took, elapsed, list(events))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux affinity")
def test_a_loop_on_a_shared_cpu_is_a_timeout_on_the_cpu(tmp_path: Path) -> None:
    run = _run_beside_hogs(tmp_path, "test_load.py", TESTS, limit=1, hogs=1)
    calls, took, events, elapsed = run.calls, run.took, run.events, run.elapsed
    assert calls["test_loops"]["timeout"] is True, run.stdout
    assert calls["test_sleeps"]["timeout"] is True
    assert "exceeded the per-test limit of 1 s" in calls["test_sleeps"]["message"]
    assert "exceeded the per-test limit of 1 s" in calls["test_fakes_its_cpu_time"]["message"]
    if "used the per-test limit of 1 s of CPU time" in calls["test_loops"]["message"]:
        assert summarize(events).on_cpu == ("test_load.py::test_loops",)
        assert calls["test_computes_a_while"]["outcome"] == "passed", run.stdout
    else:
        # The loop got less than 0.9 s of CPU in its four limits of wall time (under a fifth
        # of a CPU: other work landed on its CPU too). It ran on to the last of them, and the
        # host confirms it alone as a wait: the same verdict, by the other road.
        assert "exceeded the per-test limit of 1 s" in calls["test_loops"]["message"]
        assert took["test_loops"] >= 0.95 * 4.0, took
        assert summarize(events).on_cpu == ()
    # The loop ran on until it had its limit of CPU time (~2 s of wall at half a CPU),
    # within the four limits of wall time it may take; the sleeper was not kept past its own.
    assert elapsed < 3 * 4.0 + 3.0 + 10.0, elapsed


MIXED = (
    "import time\n"
    "\n"
    "def _spin(seconds):\n"
    "    end = time.thread_time() + seconds\n"
    "    while time.thread_time() < end:\n"
    "        pass\n"
    "\n"
    "def test_sleeps_then_computes():\n"
    "    time.sleep(2.0)\n"
    "    _spin(0.4)\n"
    "\n"
    "def test_sleeps_past_its_limit():\n"
    "    time.sleep(3.6)\n"
)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux affinity")
def test_time_spent_waiting_for_a_cpu_is_not_the_tests(tmp_path: Path) -> None:
    """A test that sleeps 2 s and then computes 0.4 s of CPU time takes 2.4 s alone, inside
    its 3 s limit.  Here three hogs share its CPU, so its 0.4 s take ~1.6 s of wall (3.6 s in
    all): at its limit it has had ~0.25 s of CPU (less than a fifth of its wall: a wait, by the
    CPU share alone), but ~0.75 s of its phase went ready to run without a CPU, and it runs on
    until the time it was not kept from the CPU reaches 3 s -- so it passes, as alone.  A test
    that only sleeps 3.6 s is a timeout at its limit all the same: a sleep waits for no CPU."""
    run = _run_beside_hogs(tmp_path, "test_mixed.py", MIXED, limit=3, hogs=3)
    calls = run.calls
    assert calls["test_sleeps_then_computes"]["outcome"] == "passed", run.stdout
    assert calls["test_sleeps_past_its_limit"]["timeout"] is True, run.stdout
    assert "exceeded the per-test limit of 3 s" in calls["test_sleeps_past_its_limit"]["message"]


SPAWNS = (
    "import subprocess, sys\n"
    "\n"
    "SPIN = ('import time\\nend = time.process_time() + 0.5\\n'\n"
    "        'while time.process_time() < end: pass')\n"
    "\n"
    "def test_waits_for_a_program_that_computes():\n"
    "    subprocess.run([sys.executable, '-c', SPIN], check=True)\n"
    "\n"
    "def test_waits_for_a_program_that_sleeps():\n"
    "    subprocess.run([sys.executable, '-c', 'import time; time.sleep(3.0)'], check=True)\n"
)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux affinity")
def test_a_program_the_test_waits_for_is_kept_from_the_cpu_by_the_machine(tmp_path: Path) -> None:
    """A command-line suite's test waits for the program it runs.  Here the program computes
    0.5 s of CPU time (alone: about 0.55 s with its interpreter's start, inside the 1 s
    limit), and three hogs share its CPU, so it takes ~2 s of wall: at the limit the test's
    own thread has used no CPU and waited for none -- a wait, by its own threads alone -- but
    the program it waits for was ready to run without a CPU for ~0.75 s of that second, and
    that time is the machine's: the test runs on and passes, as alone.  (Before, a loaded
    machine made it a wait, confirmed alone at the same limit on the same loaded machine: a
    timeout that was the load's.)  A program that sleeps 3 s waits for no CPU: its test is a
    timeout at its limit all the same."""
    run = _run_beside_hogs(tmp_path, "test_spawns.py", SPAWNS, limit=1, hogs=3)
    calls = run.calls
    computes = calls["test_waits_for_a_program_that_computes"]
    if computes["outcome"] != "passed":
        # The program got under a seventh of its CPU (other work landed there too): its test
        # ran on to the last of its four limits of wall time before it was a wait -- which
        # the host confirms alone -- and not a moment less.
        assert "exceeded the per-test limit of 1 s" in computes["message"], run.stdout
        assert run.took["test_waits_for_a_program_that_computes"] >= 0.95 * 4.0, run.took
    sleeps = calls["test_waits_for_a_program_that_sleeps"]
    assert sleeps["timeout"] is True, run.stdout
    assert "exceeded the per-test limit of 1 s" in sleeps["message"]
