"""The bad-suite fixture against the wordfreq instance: every way a suite goes wrong, handled.

``tests/fixtures/instances/bad-suite/tests`` holds two real tests, one that passes on
everything, one that fails at random, one that needs a service on the host's loopback, one that
hangs and a file that does not parse.  Scored against wordfreq's reference and 16 mutants, only
the three tests that pass all three reference runs count: V = 3/7, and M = 4/16 comes from the
two real tests alone, whatever the broken tests do on the mutants.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR, SUITES_DIR
from suitebench.model.instance import load_instance
from suitebench.suite import score as score_module

FIXTURES = INSTANCES_DIR
BAD_SUITE = SUITES_DIR / "bad-suite" / "tests"
GOOD = ["tests/test_good.py::test_missing_file_exits_2", "tests/test_good.py::test_top_two"]
ALWAYS = "tests/test_always_passes.py::test_help_exits_0"
FLAKY = "tests/test_flaky.py::test_counts_are_stable"
NETWORK = "tests/test_network.py::test_reports_counts_to_local_service"
HANGS = "tests/test_hangs.py::test_waits_forever"
SYNTAX = "tests/test_syntax_error.py"
KILLS = {"m01": [GOOD[1]], "m07": [GOOD[1]], "m09": [GOOD[0]], "m16": [GOOD[1]]}


@pytest.fixture
def bad_suite(tmp_path: Path, loopback_server: tuple[str, int]) -> Path:
    """A copy of the bad suite pointed at the running service."""
    suite = tmp_path / "bad-suite"
    shutil.copytree(BAD_SUITE, suite)
    host, port = loopback_server
    (suite / "service.addr").write_text(f"{host}:{port}\n")
    return suite


def test_network_test_passes_on_the_host_where_the_service_is_reachable(
    bad_suite: Path, tmp_path: Path
) -> None:
    """The network test is not simply broken: outside a sandbox it reaches the service."""
    inst = load_instance(FIXTURES / "wordfreq-py")
    build = tmp_path / "build"
    shutil.copytree(inst.source, build)
    env = {**os.environ, "SUITEBENCH_PYTHON": sys.executable, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    subprocess.run(["sh", "build.sh"], cwd=build, env=env, check=True, capture_output=True)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(bad_suite, work / "tests")
    os.symlink(build / "executable", work / "executable")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", "."]
    proc = subprocess.run(
        [*argv, "tests/test_network.py"], cwd=work, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout


@pytest.mark.slow
def test_bad_suite_scores_only_its_valid_tests(bad_suite: Path, tmp_path: Path) -> None:
    score = score_module
    from suitebench.run.store import Store
    from suitebench.suite.execute.runspec import SuiteLimits

    inst = load_instance(FIXTURES / "wordfreq-py")
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score.score_suite(
            inst,
            bad_suite,
            store=store,
            cache_dir=tmp_path / "builds",
            limits=SuiteLimits(per_test=2.0, per_program=300.0),
        )
    finally:
        store.close()
    tests = {t.id: t for t in result.tests}
    assert set(tests) == {*GOOD, ALWAYS, FLAKY, NETWORK, HANGS, SYNTAX}

    isolated = result.backend != "plain"  # the plain backend shares the host's network
    valid = {*GOOD, ALWAYS} | (set() if isolated else {NETWORK})
    how = {t: ([str(s) for s in info.reference], info.message) for t, info in tests.items()}
    assert {t for t, info in tests.items() if info.valid} == valid, how
    assert result.validity == pytest.approx(len(valid) / 7)

    # How each broken test showed up on the three reference runs.
    assert [str(s) for s in tests[HANGS].reference] == ["timeout"] * 3
    assert [str(s) for s in tests[SYNTAX].reference] == ["error"] * 3
    if isolated:
        assert [str(s) for s in tests[NETWORK].reference] == ["failed"] * 3
    flaky = [str(s) for s in tests[FLAKY].reference]
    assert "failed" in flaky
    assert tests[FLAKY].flaky == ("passed" in flaky)

    # Only valid tests kill: M comes from the two real tests alone.
    by_id = {m.id: m for m in result.mutants}
    assert {m: sorted(r.killed_by) for m, r in by_id.items() if r.killed_by} == KILLS
    assert result.counts.killed == 4
    assert result.mutation_score == pytest.approx(4 / 16)
    # The broken tests still failed on the mutants; none of it counts as a kill.
    survivor = by_id["m02"]
    assert str(survivor.status) == "survived"
    assert str(survivor.outcomes[HANGS]) == "timeout"
    assert str(survivor.outcomes[SYNTAX]) == "error"
    # A hang does not blank the row: the other tests of that run kept their own outcomes.
    assert str(by_id["m01"].outcomes[GOOD[1]]) == "failed"
    assert str(by_id["m01"].outcomes[ALWAYS]) == "passed"
    assert all(str(m.outcomes[ALWAYS]) == "passed" for m in result.mutants)
