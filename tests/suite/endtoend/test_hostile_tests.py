"""Red team: one hostile test added to a valid suite never moves M, on every backend.

The valid suite (three tests) is scored against the real ``stats`` instance; then each of nine
hostile tests is added in a file that runs first (``test_a_hostile.py``): it uses the network,
writes outside its work dir, fork-bombs, allocates without bound, prints forever, sleeps
forever, spins, leaves a daemon behind, or prints bytes that are not UTF-8.  Before, the
print-forever test alone took a suite of M = 6.2% to 100% (the reference's run died in it, the
rest became ``not_run``, each mutant "killed" or "crashed").  Now the run it ends names it as
its culprit and the rest run in a fresh run; what it leaves running is killed with it.

Expected figures, worked out by hand from the program and the tests: of the six ``stats``
mutants that build, ``test_sum_overflow`` kills ``sum_no_overflow_check`` (it prints the
wrapped sum instead of ``overflow``) and ``test_max_last`` kills ``max_off_by_one`` (``max 1
5`` stops before 5 and prints 1); ``sum 1 2 3`` kills none.  So M = 2/6 and V = 3/3.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run import sandbox
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

LIMITS = SuiteLimits(per_test=3.0, per_program=90.0, memory_mb=256)
KILLED = {"sum_no_overflow_check", "max_off_by_one"}
VALID = {
    "test_valid.py": (
        "import subprocess\n\n"
        "def run(*args):\n"
        "    return subprocess.run(['./executable', *args], capture_output=True, text=True)\n\n"
        "def test_sum_small():\n"
        "    assert run('sum', '1', '2', '3').stdout == '6\\n'\n\n"
        "def test_sum_overflow():\n"
        "    assert run('sum', '9223372036854775807', '1').stdout == 'overflow\\n'\n\n"
        "def test_max_last():\n"
        "    assert run('max', '1', '5').stdout == '5\\n'\n"
    )
}
MARKER = "suitebench-hostile-daemon"

HOSTILE = {
    "network": (
        "import socket\n\n"
        "def test_hostile():\n"
        "    with socket.create_connection(('127.0.0.1', {port}), timeout=2) as s:\n"
        "        assert s.recv(2) == b'ok'\n"
    ),
    "write_outside": (
        "def test_hostile():\n"
        "    with open({source!r}, 'a') as f:\n"
        "        f.write('/* rewritten by a test */\\n')\n"
    ),
    "fork_bomb": (
        "import os\n\n"
        "def test_hostile():\n"
        "    while True:\n"
        "        try:\n"
        "            os.fork()\n"
        "        except OSError:\n"
        "            pass\n"
    ),
    "memory_bomb": (
        "def test_hostile():\n"
        "    hoard = []\n"
        "    while True:\n"
        "        hoard.append(bytearray(1 << 24))\n"
    ),
    "print_forever": (
        "import sys\n\n"
        "def test_hostile():\n"
        "    while True:\n"
        "        sys.stdout.write('x' * 65536)\n"
    ),
    "sleep_forever": "import time\n\ndef test_hostile():\n    time.sleep(10**6)\n",
    "spin": "def test_hostile():\n    while True:\n        pass\n",
    "daemon": (
        "import os, sys, time\n\n"
        "def test_hostile():\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            sys.argv[0] = {marker!r}\n"
        "            while True:\n"
        "                os.write(1, b'spam' * 1024)\n"
        "        os._exit(0)\n"
        "    time.sleep(0.2)\n"
        "    assert False, 'the daemon was left behind'\n"
    ),
    "non_utf8": (
        "import os\n\n"
        "def test_hostile():\n"
        "    os.write(1, b'\\xff\\xfe\\x80 not utf-8\\n')\n"
        "    os.write(2, b'\\xc3\\x28\\n')\n"
        "    assert b'\\xff\\xfe'.decode('latin-1') == ''\n"
    ),
}
# What a backend does not contain by design: plain is rlimits only, asked for by name.
NOT_CONTAINED = {Backend.PLAIN: {"network", "write_outside"}}


def _backends() -> list[object]:
    available = sandbox.available_backends()
    out = []
    for b in Backend:
        reason = available[b]
        marks = [] if reason is None else [pytest.mark.skip(reason=f"{b}: {reason}")]
        out.append(pytest.param(b, id=str(b), marks=marks))
    return out


def _suite(root: Path, hostile: str | None, *, last: bool = False, **fill: object) -> Path:
    """The valid suite, with ``hostile`` in a file that runs first (``last``: after it)."""
    root.mkdir(parents=True)
    for name, text in VALID.items():
        (root / name).write_text(text)
    if hostile is not None:
        name = "test_z_hostile.py" if last else "test_a_hostile.py"
        (root / name).write_text(HOSTILE[hostile].format(**fill))
    return root


def _score(instance: Path, suite: Path, store: Path, backend: Backend, **kw: object) -> SuiteResult:
    return score_suite(
        load_instance(instance),
        suite,
        store=Store(store),
        backend=backend,
        limits=LIMITS,
        **kw,  # type: ignore[arg-type]
    )


def _killed(result: SuiteResult) -> set[str]:
    return {m.id for m in result.mutants if m.status is MutantStatus.KILLED}


def _processes_named(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmd:
            found.append(pid)
    return found


@pytest.mark.parametrize("backend", _backends())
def test_the_valid_suite_alone(stats_instance: Path, tmp_path: Path, backend: Backend) -> None:
    result = _score(stats_instance, _suite(tmp_path / "s", None), tmp_path / "st.db", backend)
    assert result.validity == 1.0
    assert _killed(result) == KILLED
    assert result.counts.scored == 6 and result.mutation_score == pytest.approx(2 / 6)


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
@pytest.mark.parametrize("backend", _backends())
def test_a_hostile_test_does_not_move_m(
    stats_instance: Path,
    tmp_path: Path,
    loopback_server: tuple[str, int],
    backend: Backend,
    hostile: str,
) -> None:
    if hostile in NOT_CONTAINED.get(backend, set()):
        pytest.skip(f"{backend} does not contain {hostile} (rlimits only, asked for by name)")
    source = stats_instance.parent / "src" / "stats.c"
    before = source.read_bytes()
    suite = _suite(
        tmp_path / "s",
        hostile,
        port=loopback_server[1],
        source=str(source),
        marker=MARKER,
    )
    result = _score(stats_instance, suite, tmp_path / "st.db", backend)
    tests = {t.id: t for t in result.tests}
    bad = tests["tests/test_a_hostile.py::test_hostile"]
    assert not bad.valid, bad
    assert bad.message, "the hostile test is invalid with its cause as the reason"
    for name in ("test_sum_small", "test_sum_overflow", "test_max_last"):
        assert tests[f"tests/test_valid.py::{name}"].valid, (name, tests)
    assert _killed(result) == KILLED, [(m.id, m.status, m.killed_by) for m in result.mutants]
    assert result.counts.scored == 6 and result.counts.crashed == 0
    assert result.mutation_score == pytest.approx(2 / 6)
    assert all(set(m.killed_by) <= {t for t in tests if tests[t].valid} for m in result.mutants)
    assert source.read_bytes() == before
    assert _processes_named(MARKER) == []


@pytest.mark.parametrize("hostile", ["print_forever", "memory_bomb"])
@pytest.mark.parametrize("how", ["plain engine", "fast"])
def test_a_run_ended_by_a_test_goes_on_in_every_engine(
    stats_instance: Path, tmp_path: Path, hostile: str, how: str
) -> None:
    suite = _suite(tmp_path / "s", hostile)
    kw: dict[str, object] = {"engine": Engine.PLAIN} if how == "plain engine" else {"fast": True}
    result = _score(stats_instance, suite, tmp_path / "st.db", sandbox.detect_backend(), **kw)
    bad = next(t for t in result.tests if t.id == "tests/test_a_hostile.py::test_hostile")
    # Ended by the memory limit, or by its own time limit while writing: invalid either way.
    assert not bad.valid and bad.message
    assert all(t.valid for t in result.tests if t.id != bad.id)
    assert _killed(result) == KILLED
    assert result.mutation_score == pytest.approx(2 / 6)


# A hostile test that runs last: its run ends in it, the fresh run (it alone) ends in it too, and
# nothing is left to run.  Before, that run stayed "did not finish": the reference's runs were a
# harness error (exit 4) and every mutant no valid test killed was ``crashed`` and left out, so
# M was 2/2 = 100% where the valid tests give 2/6 -- at any limit, since the order, not the
# limit, was the cause (the tests above put the hostile test first and never saw it).


@pytest.mark.parametrize("hostile", ["print_forever", "memory_bomb"])
def test_a_hostile_test_that_runs_last_does_not_move_m(
    stats_instance: Path, tmp_path: Path, hostile: str
) -> None:
    suite = _suite(tmp_path / "s", hostile, last=True)
    result = _score(stats_instance, suite, tmp_path / "st.db", sandbox.detect_backend())
    bad = next(t for t in result.tests if t.id == "tests/test_z_hostile.py::test_hostile")
    assert not bad.valid and "the run ended in this test" in bad.message
    assert result.harness_errors == [] and result.withheld == {}
    assert result.counts.scored == 6 and result.counts.crashed == 0
    assert _killed(result) == KILLED
    assert result.mutation_score == pytest.approx(2 / 6)


@pytest.mark.parametrize("last", [False, True], ids=["first", "last"])
def test_print_forever_at_the_default_limits(
    stats_instance: Path, tmp_path: Path, last: bool
) -> None:
    """Issue 20's first case at the defaults (10 s per test, 2048 MiB: pytest's capture of the
    output fills the memory limit first), on two mutants to stay quick: ``max_off_by_one``
    (``max 1 5`` prints 1: killed by test_max_last) and ``max_empty`` (only ``max`` with no
    numbers differs, which no valid test runs: survives), so M = 1/2 as the valid suite alone
    gives."""
    suite = _suite(tmp_path / "s", "print_forever", last=last)
    result = score_suite(
        load_instance(stats_instance),
        suite,
        store=Store(tmp_path / "st.db"),
        backend=sandbox.detect_backend(),
        limits=SuiteLimits(),
        mutant_ids=["max_off_by_one", "max_empty"],
    )
    assert SuiteLimits().per_test == 10.0 and SuiteLimits().memory_mb == 2048
    name = "test_z_hostile.py" if last else "test_a_hostile.py"
    bad = next(t for t in result.tests if t.id == f"tests/{name}::test_hostile")
    assert not bad.valid and "the run ended in this test" in bad.message
    assert all(t.valid for t in result.tests if t.id != bad.id)
    assert result.harness_errors == [] and result.counts.crashed == 0
    assert _killed(result) == {"max_off_by_one"}
    assert result.mutation_score == pytest.approx(1 / 2)
