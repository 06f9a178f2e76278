"""``--fast``: a mutant whose wait is confirmed a timeout is decided; its hung tests stop there.

The mutant makes a barrier's last arrival return without waking the others (``>=`` made ``>``):
every test that starts threads then hangs joining them, and leaves them waiting, so each hung
test ends its run and the rest goes on in a fresh run.  Before, ``--fast`` went through every
hung test, one fresh run after another (a wait and a start-up each), while the first wait was
being confirmed alone beside them.  Now the chain stops once that confirmation comes back a
timeout: the mutant is a timeout all the same, and the tests after it are not run.
"""

from __future__ import annotations

from pathlib import Path

from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.records import RunStatus

from ..conftest import score_in_store, write_python_instance

BARRIER = '''\
"""A barrier: each of ``parties`` threads waits in ``arrive`` until all have arrived."""

import threading


class Barrier:
    def __init__(self, parties):
        self._parties = parties
        self._arrived = 0
        self._all_in = threading.Condition()

    def arrive(self):
        with self._all_in:
            self._arrived += 1
            if self._arrived >= self._parties:
                self._all_in.notify_all()
                return
            while self._arrived < self._parties:
                self._all_in.wait()
'''

PARTIES = range(2, 12)  # ten tests that hang on the mutant

TESTS = '''\
import threading

import pytest

from barrier import Barrier


def meet(parties):
    """``parties - 1`` threads and this one meet at a barrier; how many got through."""
    barrier = Barrier(parties)
    through = []

    def party():
        barrier.arrive()
        through.append(1)

    threads = [threading.Thread(target=party) for _ in range(parties - 1)]
    for thread in threads:
        thread.start()
    barrier.arrive()
    for thread in threads:
        thread.join()
    return len(through) + 1


def test_alone_goes_through():
    assert meet(1) == 1


@pytest.mark.parametrize("parties", {parties})
def test_everyone_goes_through(parties):
    assert meet(parties) == parties
'''.replace("{parties}", repr(list(PARTIES)))


def test_a_confirmed_wait_stops_the_hung_tests_chain(tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "barrier",
        name="barrier",
        source={"barrier/__init__.py": BARRIER},
        tests={"test_barrier.py": TESTS},
        spec="# barrier\n\n## Meeting\nEvery party goes through once all have arrived.\n",
        mutants=[
            ("last_stays_silent", "barrier/__init__.py", ">= self._parties", "> self._parties")
        ],
    )
    limits = SuiteLimits(per_test=2.0, per_program=300.0, timeout_constant=1.0)
    result = score_in_store(toml, tmp_path, limits=limits, fast=True)
    assert (result.counts.tests, result.counts.valid) == (11, 11)
    (mutant,) = result.mutants
    assert mutant.status == "timeout"
    hung = [f"tests/test_barrier.py::test_everyone_goes_through[{n}]" for n in PARTIES]
    # passed where the chain reached it (--fast orders by the reference's times)
    assert mutant.outcomes["tests/test_barrier.py::test_alone_goes_through"] in (
        "passed",
        "not_run",
    )
    timed_out = [t for t in hung if mutant.outcomes[t] == "timeout"]
    not_run = [t for t in hung if mutant.outcomes[t] == "not_run"]
    # each hung test is a timeout or was never reached: the chain stopped before the last
    assert timed_out and len(timed_out) + len(not_run) == len(hung), mutant.outcomes
    assert not_run, mutant.outcomes
    assert mutant.run_status is RunStatus.OK
    assert "timed out again alone" in mutant.message, mutant.message
    assert result.mutation_score == 1.0
