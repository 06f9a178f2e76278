"""The watchdog still watches after a test fails.

pytest's faulthandler plugin cancels faulthandler's watchdog on every failure
(``pytest_exception_interact``, meant for a debugger), and suitebench's watchdog is that one.
Before the plugin armed it again, a test that failed left the next test unwatched: one that
blocks SIGALRM and sleeps (stuck where the per-test alarm cannot reach it) ran until its run's
wall-clock limit, not the watchdog's 3 x 0.5 + 5 + 1 = 7.5 s.  Here it sleeps 40 s in a plain
pytest session with the plugin: the watchdog must end the process first (faulthandler prints
``Timeout`` and exits with 1), where without it the sleep ends and every test is reported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUITE = (
    "import signal, time\n\n"
    "def test_fails():\n    assert 2 + 2 == 5\n\n"
    "def test_hangs_where_the_alarm_cannot_reach():\n"
    "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
    "    time.sleep(40)\n"
)


def test_a_failure_leaves_the_next_test_watched(tmp_path: Path) -> None:
    (tmp_path / "test_watch.py").write_text(SUITE)
    faultlog = tmp_path / "fault.log"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "suitebench.suite.inside.plugin",
            "--suitebench-timeout=0.5",
            f"--suitebench-faultlog={faultlog}",
            "-p",
            "no:cacheprovider",
            "test_watch.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Timeout" in faultlog.read_text(), (done.stdout, done.stderr)
    assert "test_hangs_where_the_alarm_cannot_reach" in faultlog.read_text()
    assert done.returncode == 1  # faulthandler's exit, not pytest's report of two tests
    assert "1 failed, 1 passed" not in done.stdout
