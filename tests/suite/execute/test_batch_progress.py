"""The progress of a batch moves as its children end, not only with the whole batch; the runs
themselves are stored with the batch (until its loop ends, what the host could read of a run is
what any later child of the batch could have written).

``queue`` is a bounded FIFO of jobs with a dispatcher that backs off between polls.  Its three
mutants run in one batch, in this order:

* ``off_by_one``: ``size`` counts one job too many -- ``test_size`` fails (3 != 2), and
  ``test_poll`` too: ``poll`` sees a job in an empty queue and pops from an empty list;
* ``wrong_end``: ``pop`` takes from the back -- ``test_fifo`` fails ("b" != "a");
* ``slow_poll``: ``poll`` backs off 2 s, not 0.01 s, between its two looks -- ``test_poll``
  takes 4 s on it and passes (inside the 10 s limit): the batch runs 4 s past the other two.

While ``slow_poll``'s child still sleeps, the progress says 2 of 3 and the store holds none of
the three runs; once the batch ends, each is stored, as worked out below.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.programs import Builder, build_all
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import SuiteRun, TestStatus

from ..conftest import score_in_store, write_python_instance

SOURCE = '''\
"""A bounded FIFO of jobs."""

import time


class Queue:
    def __init__(self, limit):
        self.limit = limit
        self.items = []

    def push(self, item):
        if len(self.items) >= self.limit:
            raise OverflowError("queue full")
        self.items.append(item)

    def pop(self):
        return self.items.pop(0)

    def size(self):
        return len(self.items)


def poll(queue, tries):
    """The first job within ``tries`` looks, backing off between them; None if none came."""
    for _ in range(tries):
        if queue.size():
            return queue.pop()
        time.sleep(0.01)
    return None
'''

TESTS = """\
from queue_ import Queue, poll


def test_size():
    q = Queue(3)
    q.push("a")
    q.push("b")
    assert q.size() == 2


def test_fifo():
    q = Queue(3)
    q.push("a")
    q.push("b")
    assert q.pop() == "a"


def test_poll():
    assert poll(Queue(1), 2) is None
"""

MUTANTS = [
    ("off_by_one", "queue_/__init__.py", "return len(self.items)", "return len(self.items) + 1"),
    ("wrong_end", "queue_/__init__.py", "self.items.pop(0)", "self.items.pop()"),
    ("slow_poll", "queue_/__init__.py", "time.sleep(0.01)", "time.sleep(2.0)"),
]
F = "tests/test_queue.py::"
P, X = TestStatus.PASSED, TestStatus.FAILED
EXPECTED = {  # test_size, test_fifo, test_poll
    "off_by_one": (X, P, X),
    "wrong_end": (P, X, P),
    "slow_poll": (P, P, P),
}
TESTS_IN_ORDER = [F + "test_size", F + "test_fifo", F + "test_poll"]


def write_queue(root: Path) -> Path:
    """The queue instance under ``root``: its instance.toml."""
    return write_python_instance(
        root,
        name="queue_",
        source={"queue_/__init__.py": SOURCE},
        tests={"test_queue.py": TESTS},
        spec="A bounded FIFO of jobs.\n",
        mutants=MUTANTS,
    )


def test_the_progress_counts_a_batchs_children_as_they_end(tmp_path: Path) -> None:
    instance = load_instance(write_queue(tmp_path / "queue"))
    _reference, built = build_all(Builder(instance, tmp_path / "builds"), instance.mutants)
    store = Store(tmp_path / "store.sqlite")
    runner = SuiteRuns(
        instance.tests,
        kind="python",
        store=store,
        executor=LocalExecutor(1),
        engine=Engine.BATCHED,
        limits=SuiteLimits(per_test=10.0),
        backend=None,
        batch_size=8,
    )
    keys = {m.id: runner.key(built[m.id].program_id, "test", None) for m in instance.mutants}
    requests = [(keys[m.id], built[m.id].target()) for m in instance.mutants]
    got: dict[str, SuiteRun] = {}
    told: list[tuple[int, int, bool]] = []  # (done, total, whether the batch still ran)

    def progress(done: int, total: int) -> None:
        told.append((done, total, batch.is_alive()))

    batch = threading.Thread(
        target=lambda: got.update(runner.run(requests, progress=progress)), daemon=True
    )
    batch.start()
    deadline = time.monotonic() + 300
    while not any(done == 2 for done, _, _ in told) and time.monotonic() < deadline:
        assert batch.is_alive(), ("the batch ended before two of its children were told", told)
        time.sleep(0.05)
    # slow_poll's child sleeps 2 s twice in test_poll: the batch is still running, and none of
    # its runs is in the store yet.
    assert batch.is_alive()
    assert store.get_many(list(keys.values())) == {}
    batch.join(300)
    assert not batch.is_alive()
    # The progress moved as the children ended, not only when the batch did.
    assert any(done == 2 and total == 3 and running for done, total, running in told), told
    assert told[-1][:2] == (3, 3)
    for mid, statuses in EXPECTED.items():
        run = got[keys[mid]]
        assert tuple(run.status_of(t) for t in TESTS_IN_ORDER) == statuses, mid
    assert set(store.get_many(list(keys.values()))) == set(keys.values())


@pytest.mark.parametrize("fast", [False, True], ids=["selected", "fast"])
def test_a_score_shows_its_mutants_runs_as_they_end(tmp_path: Path, fast: bool) -> None:
    """What the command's progress line shows: before, the mutants' runs of the selected
    matrix and of ``--fast`` moved it only when all of them were done (a user saw "50%" for
    the twenty minutes a project's --fast took).  Worked out: 1 + 3 builds, 3 reference runs
    and 3 mutants' runs make 10; off_by_one and wrong_end end within a second, so 9 of 10 is
    shown while slow_poll's test still backs off its 4 s."""
    toml = write_queue(tmp_path / "queue")
    told: list[tuple[int, int, float]] = []
    result = score_in_store(
        toml,
        tmp_path,
        engine=Engine.BATCHED,
        executor=LocalExecutor(1),  # one batch: its children end one after the other
        limits=SuiteLimits(per_test=10.0),
        fast=fast,
        progress=lambda done, total: told.append((done, total, time.monotonic())),
    )
    ended = time.monotonic()
    assert {m.id: m.status for m in result.mutants} == {
        "off_by_one": "killed",
        "wrong_end": "killed",
        "slow_poll": "survived",
    }
    assert told[-1][:2] == (10, 10)
    shown = [(done, at) for done, total, at in told if total == 10]
    assert [done for done, _ in shown] == sorted(done for done, _ in shown)  # never back
    nine = [at for done, at in shown if done == 9]
    assert nine, told
    # shown while slow_poll's child still slept (it sleeps 2 s twice after the others ended)
    assert ended - nine[0] > 2.0, (ended - nine[0], told)
