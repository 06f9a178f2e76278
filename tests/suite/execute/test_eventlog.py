"""The event log is the one record of a run's tests: every outcome pytest's JUnit XML would
give (suitebench's runs write no XML; this run asks pytest for one beside the log), read back
by :mod:`suitebench.suite.execute.eventlog`; a log cut before the session's end is a crash's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from suitebench.suite.execute.eventlog import read_events, summarize
from suitebench.suite.records import TestStatus

MIX = """\
import time
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup fails")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown fails")

def test_pass(): pass
def test_fail(): assert 1 == 2
def test_setup_error(broken_setup): pass
def test_teardown_error(broken_teardown): pass
def test_fail_and_teardown_error(broken_teardown): assert 0
def test_skip(): pytest.skip("no")
@pytest.mark.xfail(reason="known")
def test_xfail(): assert 0
@pytest.mark.xfail(reason="known", strict=True)
def test_xpass_strict(): pass
@pytest.mark.xfail(reason="known")
def test_xpass(): pass
@pytest.mark.parametrize("x", [1, 2])
def test_param(x): assert x == 1
def test_hangs(): time.sleep(30)
class SuiteTestTimeout(Exception): pass
def test_fakes_a_timeout(): raise SuiteTestTimeout("test exceeded the per-test limit")
class TestK:
    def test_method(self): pass
"""

EXPECTED = {
    "test_pass": TestStatus.PASSED,
    "test_fail": TestStatus.FAILED,
    "test_setup_error": TestStatus.ERROR,
    "test_teardown_error": TestStatus.ERROR,
    "test_fail_and_teardown_error": TestStatus.FAILED,
    "test_skip": TestStatus.SKIPPED,
    "test_xfail": TestStatus.SKIPPED,
    "test_xpass_strict": TestStatus.FAILED,
    "test_xpass": TestStatus.PASSED,
    "test_param[1]": TestStatus.PASSED,
    "test_param[2]": TestStatus.FAILED,
    "test_hangs": TestStatus.TIMEOUT,
    # Raising an exception of the timeout's name is a failure: only the budget's alarm times
    # a test out (a test that passed its failure off as a wait would be confirmed alone).
    "test_fakes_a_timeout": TestStatus.FAILED,
    "TestK::test_method": TestStatus.PASSED,
}


def _run(tmp_path: Path) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_mix.py").write_text(MIX, encoding="utf-8")
    (tests / "test_broken.py").write_text("import nonexistent_module\n", encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    argv += ["-p", "suitebench.suite.inside.plugin", "-q", "--continue-on-collection-errors"]
    argv += ["--rootdir", ".", "-o", "junit_family=xunit1", "--suitebench-timeout=1"]
    argv += ["--junitxml=out.xml", "--suitebench-events=out.events", "tests"]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=120)
    return tmp_path


def test_a_finished_run_s_rows_come_from_its_event_log(tmp_path: Path) -> None:
    out = _run(tmp_path)
    log = summarize(read_events(out / "out.events"))
    assert log.session_ended
    tests, broken = log.finished_rows()
    assert tests == {f"tests/test_mix.py::{name}": s for name, s in EXPECTED.items()}
    assert broken == ["tests/test_broken.py"]
    messages = log.messages
    assert "nonexistent_module" in messages["tests/test_broken.py"]
    assert messages["tests/test_mix.py::test_skip"] == "no"
    assert (out / "out.xml").is_file()  # asked for here only: suitebench's runs write none


def test_a_log_cut_before_the_session_s_end_is_a_crash_s(tmp_path: Path) -> None:
    events = read_events(_run(tmp_path) / "out.events")
    starts = [i for i, e in enumerate(events) if e.get("event") == "start"]
    cut = events[: starts[3] + 1]  # died in the fourth test
    assert not summarize(cut).session_ended
    tests, broken, culprit = summarize(cut).crashed_rows(died_of_timeout=False)
    assert culprit == "tests/test_mix.py::test_teardown_error"
    assert tests[culprit] is TestStatus.ERROR
    assert tests["tests/test_mix.py::test_fail"] is TestStatus.FAILED
    assert tests["tests/test_mix.py::test_hangs"] is TestStatus.NOT_RUN
    assert broken == ["tests/test_broken.py"]
