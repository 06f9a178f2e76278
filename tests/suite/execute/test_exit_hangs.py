"""A run whose every outcome is written does not wait for the interpreter's exit.

``flushlog`` buffers lines and writes them from a daemon thread; ``close``, registered with
``atexit``, hands the thread a stop marker and joins it.  The mutant ``keeps_going`` turns the
thread's ``break`` on the marker into ``continue``: the thread never ends, so ``close`` -- run
by the interpreter at its exit, after pytest has written every outcome -- waits for ever.  Its
tests pass (the bug shows only at exit): the mutant survives, as the reference passes.

Before, a plain run of it ended only at the run's wall limit (here 90 s) -- as a run of
fasteners 0.20 did, where a timed-out test's ``multiprocessing`` pool, its workers killed with
the test, left the pool's exit handler waiting for a lock one of them held.  The interpreter's
exit has nothing left to tell: the run ends once pytest is done, with pytest's exit status.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import RunStatus

from ..conftest import score_in_store, write_python_instance

SOURCE = '''\
"""Lines buffered in memory and written by a background thread."""

import atexit
import queue
import threading

_STOP = object()


class Buffered:
    def __init__(self, path):
        self.path = path
        self.lines = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        atexit.register(self.close)

    def write(self, line):
        self.lines.put(line)

    def _run(self):
        while True:
            line = self.lines.get()
            if line is _STOP:
                break
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line + "\\n")
            self.lines.task_done()

    def flush(self):
        self.lines.join()

    def close(self):
        self.lines.put(_STOP)
        self.thread.join()
'''
TESTS = {
    "test_flushlog.py": (
        "from flushlog import Buffered\n\n\n"
        "def test_lines_are_written_in_order(tmp_path):\n"
        "    out = tmp_path / 'log.txt'\n"
        "    log = Buffered(out)\n"
        "    log.write('a')\n"
        "    log.write('b')\n"
        "    log.flush()\n"
        "    assert out.read_text() == 'a\\nb\\n'\n"
    )
}
WALL = 90.0  # the run's wall limit: a run waiting for its exit would end only here


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_a_run_does_not_wait_for_its_interpreters_exit(engine: Engine, tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "flushlog",
        name="flushlog",
        source={"flushlog/__init__.py": SOURCE},
        tests=TESTS,
        spec="# flushlog\n\n## Buffering\nLines written in order.\n",
        mutants=[("keeps_going", "flushlog/__init__.py", "break", "continue")],
    )
    limits = SuiteLimits(per_test=5.0, per_program=WALL)
    result = score_in_store(toml, tmp_path, engine=engine, limits=limits, all_tests=True)
    assert result.validity == 1.0
    (mutant,) = result.mutants
    assert mutant.status == "survived"
    assert mutant.outcomes["tests/test_flushlog.py::test_lines_are_written_in_order"] == "passed"
    assert mutant.run_status is RunStatus.OK
    assert result.harness_errors == []
    # its run ended once pytest was done, not at the wall limit
    assert mutant.wall_time < WALL / 2, mutant.wall_time
