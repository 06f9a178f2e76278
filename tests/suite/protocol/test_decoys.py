"""Red team: a test that tells a mutant's run by its harness, not its program, moves no figure.

A mutant's run is not the reference runs' twin: it takes only the tests chosen for it, its
per-test limit is derived from the reference's times, its pytest starts with other options, in
a batch of other mutants.  Each test below knows nothing of the program; it calls every command
(so every mutant's coverage chooses it) and then fails when its run looks like a mutant's:

* ``items``: fewer tests collected than the suite holds (the mutant's tests were chosen);
* ``limit``: less time left on its per-test alarm than the user's limit (a derived one);
* ``argv``: an option on pytest's command line that the reference runs do not have (the
  plain engine's; the batched engine's pytest has none);
* ``batch``: more than one program's tree mounted in its sandbox (the batched engine's; it
  reads ``/proc/self/mountinfo``, since pid 1's command line, where bwrap once listed every
  bind, is blank);
* ``absent``: neither ``test_sum_small`` nor ``test_max_last`` in its session -- what a run
  of a ``clamp`` mutant holds (only the cheats call ``clamp``), and no session of the fewest
  mutants covering every test: with decoys chosen that way (a greedy cover, as they first
  were) it passed them all and killed both ``clamp`` mutants, M = 4/6.

Before decoys, each passed the three reference runs and killed every mutant it ran on: one of
them took the ``stats`` suite below from M = 2/6 to 6/6 (checked: with :func:`cover` made to
pick nothing, this file fails).  Now each fails a decoy -- the reference run as a mutant is
-- and is invalid.  Expected figures, worked out by hand from the program and the valid tests
(``test_hostile_tests``'s): ``test_sum_overflow`` kills ``sum_no_overflow_check`` and
``test_max_last`` kills ``max_off_by_one``: M = 2/6, V = 3 / (3 + the cheats).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR, SUITES_DIR
from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.protocol.decoys import cover
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..endtoend.test_hostile_tests import KILLED, VALID

LIMITS = SuiteLimits(per_test=6.0, per_program=90.0, memory_mb=256)

CALLS = """\
import glob
import os
import signal
import subprocess
import sys


def _call_everything():
    for args in (["sum", "1", "2"], ["max", "1", "2"], ["clamp", "5", "1", "9"], ["max"]):
        subprocess.run(["./executable", *args], capture_output=True)
"""

CHEATS = {
    "items": "def test_cheat(request):\n    _call_everything()\n"
    "    assert len(request.session.items) == {total}\n",
    "limit": "def test_cheat():\n    _call_everything()\n"
    "    assert signal.getitimer(signal.ITIMER_REAL)[0] > 4\n",
    "argv": "def test_cheat():\n    _call_everything()\n"
    "    assert not any(a.startswith('--suitebench-') and a.split('=')[0] not in {known}\n"
    "                   for a in sys.argv)\n",
    "absent": "def test_cheat(request):\n    _call_everything()\n"
    "    names = {{item.name for item in request.session.items}}\n"
    "    assert names & {{'test_sum_small', 'test_max_last'}}\n",
    "batch": "def test_cheat():\n    _call_everything()\n"
    "    binds = [line.split()[4] for line in open('/proc/self/mountinfo')]\n"
    "    assert sum(a.endswith('/tree') for a in binds) <= 2\n",
}
# The options of the plain engine's reference runs (``argv``: any other tells a mutant's run).
KNOWN = {
    "--suitebench-timeout",
    "--suitebench-rewrite-cache",
    "--suitebench-events",
    "--suitebench-faultlog",
    "--suitebench-end-lingering",
}


def _suite(root: Path, cheats: list[str]) -> Path:
    root.mkdir()
    for name, text in VALID.items():
        (root / name).write_text(text)
    total = len(cheats) + 3
    for name in cheats:
        body = CHEATS[name].format(total=total, known=sorted(KNOWN))
        (root / f"test_cheat_{name}.py").write_text(CALLS + "\n\n" + body)
    return root


@pytest.mark.parametrize(
    ("engine", "fast", "cheats"),
    [
        (Engine.BATCHED, False, ["absent", "batch", "items", "limit"]),
        (Engine.PLAIN, False, ["absent", "argv", "items", "limit"]),  # no batch: one a sandbox
        (Engine.BATCHED, True, ["absent", "batch", "items", "limit"]),
    ],
    ids=["batched", "plain", "fast"],
)
def test_a_test_reading_the_harness_is_invalid(
    stats_instance: Path, tmp_path: Path, engine: Engine, fast: bool, cheats: list[str]
) -> None:
    suite = _suite(tmp_path / "suite", cheats)
    result = score_suite(
        load_instance(stats_instance),
        suite,
        store=Store(tmp_path / "st.db"),
        engine=engine,
        fast=fast,
        limits=LIMITS,
    )
    tests = {t.id: t for t in result.tests}
    for name in ("test_sum_small", "test_sum_overflow", "test_max_last"):
        assert tests[f"tests/test_valid.py::{name}"].valid, tests
    for name in cheats:
        cheat = tests[f"tests/test_cheat_{name}.py::test_cheat"]
        assert not cheat.valid, (name, cheat)
        assert cheat.decoy is not None and cheat.decoy.fails, (name, cheat)
        assert "decoy" in cheat.message, cheat.message
    killed = {m.id for m in result.mutants if m.status is MutantStatus.KILLED}
    assert killed == KILLED, [(m.id, m.killed_by) for m in result.mutants]
    assert result.mutation_score == pytest.approx(2 / 6)
    assert result.validity == pytest.approx(3 / (3 + len(cheats)))


def test_an_honest_suite_keeps_its_figures_with_decoys(
    stats_instance: Path, tmp_path: Path
) -> None:
    """Decoys run the reference: an honest suite fails none of them, so V and M are the ones
    worked out by hand (V = 3/3, M = 2/6)."""
    result = score_suite(
        load_instance(stats_instance),
        _suite(tmp_path / "suite", []),
        store=Store(tmp_path / "st.db"),
        limits=LIMITS,
    )
    assert result.validity == 1.0
    assert all(t.decoy is None for t in result.tests)
    assert result.mutation_score == pytest.approx(2 / 6)


def test_cover_runs_one_mutant_of_each_session() -> None:
    """Worked by hand: m2's {b} and m4's {a} are sessions of their own though m1's {a, b}
    holds their tests; m5 takes m1's tests (in another order: the same session); a mutant
    running every test is one more."""
    chosen = [("m1", ("a", "b")), ("m2", ("b",)), ("m3", ("c",)), ("m4", ("a",))]
    assert cover([*chosen, ("m5", ("b", "a"))]) == ["m1", "m2", "m3", "m4"]
    assert cover([("m1", ("a",)), ("m2", None), ("m3", ("b", "a")), ("m4", None)]) == [
        "m1",
        "m2",
        "m3",
    ]
    assert cover([]) == []
    # --fast runs a mutant's tests in an order of its own: each sequence is a session
    ordered = [("m1", ("a", "b")), ("m2", ("b", "a")), ("m3", ("a", "b")), ("m4", None)]
    assert cover(ordered, ordered=True) == ["m1", "m2", "m4"]
    assert cover(ordered) == ["m1", "m4"]


def test_progress_counts_decoys_without_passing_its_total(tmp_path: Path) -> None:
    """Decoys are runs beyond the total shown (builds, reference runs, a run a mutant): the
    count never goes past the total nor back, and ends at it.  The demo's bad suite (a suite
    from elsewhere, so decoys and the plain engine) once showed "37/36 (103%)"."""
    seen: list[tuple[int, int]] = []
    score_suite(
        load_instance(INSTANCES_DIR / "wordfreq-py"),
        SUITES_DIR / "bad-suite",
        store=Store(tmp_path / "st.db"),
        limits=LIMITS,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen, "no progress reported"
    assert all(done <= total for done, total in seen), seen
    assert [d for d, _ in seen] == sorted(d for d, _ in seen), seen
    assert seen[-1][0] == seen[-1][1], seen
