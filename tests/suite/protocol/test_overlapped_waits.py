"""Timeouts confirmed side by side: a confirmation waits, holding no core, so many go at once
(``SuiteRuns.overlap``) -- and not one verdict moves for it.

``tickets`` is a ticket dispenser guarded by a lock and a condition, with a retry helper that
backs off between attempts and a digit counter.  Its mutants hang, sleep, spin and pass
slowly, as mutants of locking code do:

* ``deadlock``: ``wait_for`` waits for a ticket past the one asked for, which never comes --
  ``test_waiter_wakes`` waits forever: a timeout spent waiting, confirmed alone: ``timeout``;
* ``spin``: ``digits`` divides by 1 and never ends -- a timeout on the CPU, a kill at once;
* ``sleep``: ``retry`` sleeps 30 times its backoff, 1.5 s before its second try, not 0.05 s --
  ``test_retry`` takes ~1.5 s, past its derived limit (1.25 x ~0.05 s + 0.5 s, 0.6 s) but well
  inside the user's 6 s: it passes alone, so the cell is ``passed`` and the mutant survives;
* ``slow``: ``checksum`` sleeps 0.1 s first: inside every limit, it survives;
* ``hang_and_fail``: ``issue`` adds 2 and wakes nobody -- ``test_waiter_wakes`` hangs and
  ``test_issue_counts`` fails: killed by the failure;
* ``sleep_and_wrong``: ``backoff`` is at least 1.5 s for a retry, and 0.2 s for the first try
  -- ``test_retry`` waits past its derived limit (passes alone) and ``test_backoff_values``
  fails.

Each expectation above is worked out from the code, not from a run; the matrix is the same
with the confirmations side by side or at the workers' width.  ``--fast`` runs on past a wait
(``sleep_and_wrong``'s target is ``test_retry``, so it comes first): before, a run stopped at
that timeout and the confirmation, which passes, left the mutant a survivor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.records import TestStatus
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import unified_diff

SOURCE = '''\
"""Numbered tickets for threads: a waiter blocks until its number has been issued."""

import threading
import time


class Dispenser:
    def __init__(self):
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._next = 0

    def issue(self):
        with self._lock:
            self._next += 1
            self._ready.notify_all()
            return self._next

    def wait_for(self, number, timeout=None):
        with self._ready:
            return self._ready.wait_for(lambda: self._next >= number, timeout)


def backoff(attempt):
    """Seconds to wait before retry ``attempt`` (0: the first try), at most 0.2 s."""
    return min(0.2, 0.05 * attempt)


def retry(action, attempts):
    for attempt in range(attempts):
        time.sleep(backoff(attempt))
        try:
            return action()
        except ConnectionError:
            continue
    raise ConnectionError("gave up")


def checksum(values):
    total = 0
    for v in values:
        total = (total * 31 + v) % 1_000_003
    return total


def digits(n):
    count = 0
    while n:
        n //= 10
        count += 1
    return max(1, count)
'''

TESTS = """\
import threading
import time

from tickets import Dispenser, backoff, checksum, digits, retry


def test_issue_counts():
    time.sleep(0.3)  # the first customer arrives
    d = Dispenser()
    assert [d.issue() for _ in range(3)] == [1, 2, 3]


def test_waiter_wakes():
    d = Dispenser()
    woke = []
    waiter = threading.Thread(target=lambda: woke.append(d.wait_for(2)), daemon=True)
    waiter.start()
    deadline = time.monotonic() + 5
    while not d._ready._waiters and time.monotonic() < deadline:  # it waits before we issue
        time.sleep(0.001)
    d.issue()
    d.issue()
    waiter.join()
    assert woke == [True]


def test_retry():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 2:
            raise ConnectionError("refused")
        return "ok"

    assert retry(flaky, 3) == "ok"


def test_backoff_values():
    assert [backoff(a) for a in (0, 1, 2, 10)] == [0.0, 0.05, 0.1, 0.2]


def test_checksum():
    assert checksum([1, 2, 3]) == (1 * 31 + 2) * 31 + 3


def test_digits():
    assert [digits(0), digits(7), digits(12345)] == [1, 1, 5]
"""

MUTANTS = [  # (id, old, new, target test)
    ("deadlock", "self._next >= number", "self._next > number", None),
    ("spin", "n //= 10", "n //= 1", None),
    ("sleep", "time.sleep(backoff(attempt))", "time.sleep(backoff(attempt) * 30)", None),
    ("slow", "    total = 0\n", "    time.sleep(0.1)\n    total = 0\n", None),
    (
        "hang_and_fail",
        "            self._next += 1\n            self._ready.notify_all()\n",
        "            self._next += 2\n",
        "test_waiter_wakes",
    ),
    ("sleep_and_wrong", "min(0.2, 0.05 * attempt)", "max(0.2, 1.5 * attempt)", "test_retry"),
]
T = {n: f"tests/test_tickets.py::test_{n}" for n in (
    "issue_counts", "waiter_wakes", "retry", "backoff_values", "checksum", "digits"
)}  # fmt: skip


def tickets_instance(root: Path) -> Path:
    (root / "src" / "tickets").mkdir(parents=True)
    (root / "src" / "tickets" / "__init__.py").write_text(SOURCE)
    (root / "tests").mkdir()
    (root / "tests" / "test_tickets.py").write_text(TESTS)
    (root / "mutants").mkdir()
    lines = ['name = "tickets"', 'kind = "python"', 'package = "tickets"']
    lines += ['source = "src"', 'tests = "tests"']
    for mid, old, new, target in MUTANTS:
        rel = "tickets/__init__.py"
        assert SOURCE.count(old) == 1, mid
        (root / "mutants" / f"{mid}.diff").write_text(
            unified_diff(rel, SOURCE, SOURCE.replace(old, new))
        )
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
        if target:
            lines.append(f'target = "{T[target.removeprefix("test_")]}"')
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root / "instance.toml"


LIMITS = SuiteLimits(per_test=6.0, per_program=300.0, timeout_constant=0.5)


def _score(tmp_path: Path, name: str, *, overlap: int, fast: bool = False) -> SuiteResult:
    toml = tickets_instance(tmp_path / name)
    store = Store(tmp_path / f"{name}.sqlite")
    return score_suite(load_instance(toml), store=store, limits=LIMITS, overlap=overlap, fast=fast)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteResult, SuiteResult]:
    tmp = tmp_path_factory.mktemp("overlap")
    return _score(tmp, "apart", overlap=0), _score(tmp, "overlapped", overlap=12)


def test_every_verdict_is_the_protocols(both: tuple[SuiteResult, SuiteResult]) -> None:
    for result in both:
        assert result.validity == 1.0
        by_id = {m.id: m for m in result.mutants}
        assert by_id["deadlock"].status is MutantStatus.TIMEOUT
        assert by_id["deadlock"].killed_by == [T["waiter_wakes"]]
        assert by_id["spin"].status is MutantStatus.TIMEOUT
        assert by_id["spin"].killed_by == [T["digits"]]
        assert by_id["sleep"].status is MutantStatus.SURVIVED
        assert by_id["sleep"].outcomes[T["retry"]] is TestStatus.PASSED
        assert by_id["slow"].status is MutantStatus.SURVIVED
        hang = by_id["hang_and_fail"]
        assert hang.status is MutantStatus.KILLED
        assert hang.outcomes[T["waiter_wakes"]] is TestStatus.TIMEOUT
        assert hang.outcomes[T["issue_counts"]] is TestStatus.FAILED
        wrong = by_id["sleep_and_wrong"]
        assert wrong.status is MutantStatus.KILLED
        assert wrong.killed_by == [T["backoff_values"]]
        assert wrong.outcomes[T["retry"]] is TestStatus.PASSED


def test_the_matrix_is_the_same_side_by_side(both: tuple[SuiteResult, SuiteResult]) -> None:
    apart, overlapped = both
    assert apart.kill_matrix() == overlapped.kill_matrix()
    assert [m.status for m in apart.mutants] == [m.status for m in overlapped.mutants]


def test_results_give_each_phase_its_floor(both: tuple[SuiteResult, SuiteResult]) -> None:
    for result in both:
        floor = result.floor
        assert set(floor) == {"reference_runs", "mutant_runs", "confirm_timeouts", "runs"}
        # Two waits are confirmed and time out again (deadlock's and hang_and_fail's), each at
        # the user's 6 s: the confirmations cannot end before one of them does.
        assert floor["confirm_timeouts"] >= LIMITS.per_test
        # Together: the cells' time over the workers plus the longest chain of waits, a
        # wait in a mutant's run (its derived limit, over half a second) and then its
        # confirmation (6 s): more than either phase's own floor, less than their sum.
        assert floor["runs"] > LIMITS.per_test + 0.5
        assert floor["runs"] <= (
            floor["reference_runs"] + floor["mutant_runs"] + floor["confirm_timeouts"] + 0.01
        )
        # The phases may overlap (a wait confirmed while other mutants run), never go below
        # the floor of all of them together.
        ran = sum(result.phases[p] for p in ("reference_runs", "mutant_runs", "confirm_timeouts"))
        assert ran + 0.05 >= floor["runs"]


def test_fast_prefers_a_kill_that_is_not_a_wait(tmp_path: Path) -> None:
    result = _score(tmp_path, "fast", overlap=12, fast=True)
    by_id = {m.id: m for m in result.mutants}
    # test_retry ran first (its target) and waited past its limit; the run went on and
    # test_backoff_values killed it: no survivor made of an unconfirmed wait.
    wrong = by_id["sleep_and_wrong"]
    assert wrong.status is MutantStatus.KILLED
    assert T["backoff_values"] in wrong.killed_by
    # hang_and_fail's wait is left unconfirmed: the failure kills it.
    hang = by_id["hang_and_fail"]
    assert hang.status is MutantStatus.KILLED and hang.killed_by == [T["issue_counts"]]
    assert hang.outcomes[T["waiter_wakes"]] is TestStatus.NOT_RUN
    assert by_id["deadlock"].status is MutantStatus.TIMEOUT
    assert by_id["sleep"].status is MutantStatus.SURVIVED
