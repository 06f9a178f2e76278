"""A suite with every way a test can go wrong, scored against the real ``stats`` instance.

Flaky tests are dropped and counted, a test that needs the network fails in the sandbox, a
hanging test times out alone (the rest of its row is kept), a file with a syntax error breaks
only its own tests, a test that passes on everything is valid and kills nothing, and a test
that kills the pytest process is a crash with the log kept -- never a row of zeros.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run import sandbox
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import RunStatus, TestStatus
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

HANG_LIMIT = SuiteLimits(per_test=1.5, per_program=120.0)


def write_bad_suite(root: Path, port: int) -> Path:
    suite = root / "bad_suite"
    suite.mkdir()
    (suite / "test_good.py").write_text(
        "import subprocess\n\n"
        "def test_runs_at_all():\n"
        "    subprocess.run(['./executable', 'max', '1'], capture_output=True)\n\n"
        "def test_sum():\n"
        "    out = subprocess.run(['./executable', 'sum', '9223372036854775807', '1'],\n"
        "                         capture_output=True, text=True)\n"
        "    assert out.stdout == 'overflow\\n'\n"
    )
    (suite / "test_flaky.py").write_text(
        "import os\nimport pytest\n\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_coin(i):\n"
        "    assert os.urandom(1)[0] < 128\n"
    )
    (suite / "test_network.py").write_text(
        "import socket\n\n"
        "def test_fetch_reference_answer():\n"
        f"    with socket.create_connection(('127.0.0.1', {port}), timeout=2) as s:\n"
        "        assert s.recv(4) == b'ok'\n"
    )
    (suite / "test_hang.py").write_text(
        "import subprocess\nimport time\n\n"
        "def test_waits_forever():\n"
        "    time.sleep(60)\n\n"
        "def test_max_after_the_hang():\n"
        "    out = subprocess.run(['./executable', 'max', '1', '5'],\n"
        "                         capture_output=True, text=True)\n"
        "    assert out.stdout == '5\\n'\n"
    )
    (suite / "test_syntax.py").write_text("def test_broken(:\n    pass\n")
    return suite


def _score(instance: Path, suite: Path, tmp_path: Path, engine: Engine) -> SuiteResult:
    store = Store(tmp_path / f"store-{engine}" / "s.sqlite")
    return score_suite(
        load_instance(instance), suite, store=store, engine=engine, limits=HANG_LIMIT
    )


@pytest.mark.slow
def test_bad_suite_every_failure_handled(
    stats_instance: Path, tmp_path: Path, loopback_server: tuple[str, int]
) -> None:
    # The server really answers outside the sandbox: the test needs the network, nothing else.
    with socket.create_connection(loopback_server, timeout=2) as s:
        assert s.recv(4) == b"ok"
    suite = write_bad_suite(tmp_path, loopback_server[1])
    result = _score(stats_instance, suite, tmp_path, Engine.BATCHED)
    tests = {t.id: t for t in result.tests}

    # Always passes: valid, kills nothing.
    assert tests["tests/test_good.py::test_runs_at_all"].valid
    assert all("tests/test_good.py::test_runs_at_all" not in m.killed_by for m in result.mutants)
    # Hanging test: a timeout on every reference run, invalid but not flaky.
    hang = tests["tests/test_hang.py::test_waits_forever"]
    assert hang.reference == [TestStatus.TIMEOUT] * 3 and not hang.valid and not hang.flaky
    # ... and the rest of the row survives: its neighbour passed on the reference and still
    # runs (and decides) on every mutant.
    assert tests["tests/test_hang.py::test_max_after_the_hang"].valid
    by_id = {m.id: m for m in result.mutants}
    for m in result.mutants:
        if m.status.scored:
            assert m.outcomes["tests/test_hang.py::test_waits_forever"] is TestStatus.TIMEOUT
            assert m.outcomes["tests/test_hang.py::test_max_after_the_hang"] is not (
                TestStatus.NOT_RUN
            )
    assert "tests/test_hang.py::test_max_after_the_hang" in by_id["max_off_by_one"].killed_by
    # The syntax error: one invalid unit for the file, and the other files still ran.
    syntax = tests["tests/test_syntax.py"]
    assert syntax.reference == [TestStatus.ERROR] * 3 and not syntax.valid
    # Flaky tests: dropped from M and counted (each coin is flaky with probability 3/4).
    coins = [t for t in result.tests if t.file == "tests/test_flaky.py"]
    assert len(coins) == 8
    flaky = [t for t in coins if len(set(t.reference)) > 1]
    assert flaky, "eight fair coins never disagreed across three runs"
    assert all(t.flaky and not t.valid for t in flaky)
    assert result.counts.flaky == len(flaky)
    # Invalid tests never kill.
    valid_ids = {t.id for t in result.tests if t.valid}
    assert all(set(m.killed_by) <= valid_ids for m in result.mutants)
    # (A coin that came up heads three times is valid and kills at random: leave coins out.)
    overflow_killers = [t for t in by_id["sum_no_overflow_check"].killed_by if "flaky" not in t]
    assert overflow_killers == ["tests/test_good.py::test_sum"]
    # The network test fails in the sandbox, so it is invalid.
    net = tests["tests/test_network.py::test_fetch_reference_answer"]
    if sandbox.detect_backend() is Backend.PLAIN:
        pytest.skip("no network isolation on this machine (plain backend)")
    assert net.reference == [TestStatus.FAILED] * 3 and not net.valid
    # V counted by hand from the suite as written: 14 units (2 good, 8 coins, 1 network, 2 in
    # the hang file, 1 for the file that does not parse); valid are the two good tests, the
    # test after the hang and every coin that passed all three reference runs and, the suite
    # being one from elsewhere, its decoy run (the reference in a mutant's place).
    assert len(result.tests) == 14
    heads = [t for t in coins if t.reference == [TestStatus.PASSED] * 3 and t.decoy is None]
    assert all(t.decoy.fails for t in coins if t.decoy is not None)
    expected_valid = {
        "tests/test_good.py::test_runs_at_all",
        "tests/test_good.py::test_sum",
        "tests/test_hang.py::test_max_after_the_hang",
    } | {t.id for t in heads}
    assert valid_ids == expected_valid
    assert result.validity == pytest.approx((3 + len(heads)) / 14)


@pytest.mark.slow
def test_bad_suite_same_matrix_on_both_engines(
    stats_instance: Path, tmp_path: Path, loopback_server: tuple[str, int]
) -> None:
    suite = write_bad_suite(tmp_path, loopback_server[1])
    plain = _score(stats_instance, suite, tmp_path, Engine.PLAIN)
    batched = _score(stats_instance, suite, tmp_path, Engine.BATCHED)

    def matrix(result: SuiteResult) -> dict[tuple[str, str], TestStatus]:
        return {k: v for k, v in result.kill_matrix().items() if "test_flaky" not in k[0]}

    assert matrix(plain) == matrix(batched)
    assert len(matrix(plain)) == 6 * (len(plain.tests) - 8)

    def killers(result: SuiteResult) -> dict[str, list[str]]:
        # Coins that happened to pass three times are valid and kill at random: leave them out.
        return {m.id: [t for t in m.killed_by if "test_flaky" not in t] for m in result.mutants}

    assert killers(plain) == killers(batched)


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_test_that_kills_pytest_is_a_crash_not_zero(
    stats_instance: Path, tmp_path: Path, engine: Engine
) -> None:
    suite = tmp_path / "crashing"
    suite.mkdir()
    (suite / "test_a_crash.py").write_text(
        "import os, signal, subprocess\n\n"
        "def test_empty_max_or_die():\n"
        "    out = subprocess.run(['./executable', 'max'], capture_output=True, text=True)\n"
        "    if out.stdout != 'empty\\n':\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n\n"
        "def test_after():\n"
        "    assert True\n"
    )
    result = _score(stats_instance, suite, tmp_path, engine)
    assert result.validity == 1.0
    by_id = {m.id: m for m in result.mutants}
    dead = by_id["max_empty"]
    # The test the run died in is its culprit; the test after it ran in a fresh run.
    assert dead.run_status is RunStatus.OK
    assert dead.status is MutantStatus.KILLED
    killer = "tests/test_a_crash.py::test_empty_max_or_die"
    assert dead.outcomes[killer] is TestStatus.ERROR
    assert dead.killed_by == [killer]
    assert dead.kill_messages[killer].startswith("the run ended in this test: ")
    assert dead.outcomes["tests/test_a_crash.py::test_after"] is TestStatus.PASSED
    assert "pytest did not finish" in dead.message and "fresh run" in dead.message
    assert by_id["max_off_by_one"].status is MutantStatus.SURVIVED


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_suite_that_crashes_pytest_on_the_reference(
    stats_instance: Path, tmp_path: Path, engine: Engine
) -> None:
    suite = tmp_path / "broken_conftest"
    suite.mkdir()
    (suite / "conftest.py").write_text("import os\nos._exit(7)\n")
    (suite / "test_x.py").write_text("def test_x():\n    pass\n")
    result = _score(stats_instance, suite, tmp_path, engine)
    assert result.reference_run_status == [RunStatus.CRASHED] * 3
    assert result.counts.tests == 0 and result.validity is None
    assert result.mutation_score is None  # nothing measured is not zero
    assert all(m.status in (MutantStatus.CRASHED, MutantStatus.BUILD_ERROR) for m in result.mutants)
    crashed = next(m for m in result.mutants if m.status is MutantStatus.CRASHED)
    assert "pytest did not finish" in crashed.message
    if engine is Engine.PLAIN:
        assert "exit code 7" in crashed.message


@pytest.mark.slow
@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_hang_the_alarm_cannot_reach_ends_as_a_timeout_crash(
    stats_instance: Path, tmp_path: Path, engine: Engine
) -> None:
    """A test that blocks SIGALRM and hangs: the watchdog ends the run; that test is a
    timeout, the tests before it keep their rows, the ones after are not_run."""
    suite = tmp_path / "stubborn"
    suite.mkdir()
    (suite / "test_stubborn.py").write_text(
        "import signal, subprocess, time\n\n"
        "def test_first():\n"
        "    out = subprocess.run(['./executable', 'max', '4', '2'], capture_output=True)\n"
        "    assert out.stdout == b'4\\n'\n\n"
        "def test_blocks_the_alarm():\n"
        "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
        "    time.sleep(60)\n\n"
        "def test_last():\n"
        "    assert True\n"
    )
    store = Store(tmp_path / f"s-{engine}" / "s.sqlite")
    result = score_suite(
        load_instance(stats_instance),
        suite,
        store=store,
        engine=engine,
        reference_runs=1,
        mutant_ids=["max_empty"],
        limits=SuiteLimits(per_test=0.5, per_program=60.0),
    )
    tests = {t.id: t for t in result.tests}
    assert tests["tests/test_stubborn.py::test_first"].valid
    stubborn = tests["tests/test_stubborn.py::test_blocks_the_alarm"]
    assert stubborn.reference == [TestStatus.TIMEOUT] and not stubborn.valid
    assert stubborn.message.startswith("the run ended in this test: the per-test watchdog ended it")
    # The test after the culprit ran in a fresh run: valid, not lost.
    assert tests["tests/test_stubborn.py::test_last"].reference == [TestStatus.PASSED]
    assert tests["tests/test_stubborn.py::test_last"].valid
    assert result.reference_run_status == [RunStatus.OK]
    mutant = result.mutants[0]
    assert mutant.run_status is RunStatus.OK
    assert mutant.outcomes["tests/test_stubborn.py::test_first"] is TestStatus.PASSED
    assert mutant.outcomes["tests/test_stubborn.py::test_last"] is TestStatus.PASSED
    # No valid test failed: it survived (scored), not "crashed" and out of the count.
    assert mutant.status is MutantStatus.SURVIVED
