"""``suitebench stress``, run as a user runs it (a subprocess), on problems worked by hand.

``pairs`` (tests/fixtures/stress/pairs): count i < j with a_i + a_j = k. Its generator, called
``gen.py 7 SEED``, prints n = 2 + SEED % 3, k = 6 and a_i = (SEED * i + SEED) % 7:

* seed 1: ``3 6 / 1 2 3``: sums 3, 4, 5: 0 pairs.
* seed 2: ``4 6 / 2 4 6 1``: 2 + 4 = 6 (not the last element): 1 pair, and the buggy loop
  (``range(i + 1, n - 1)``, never the last element) finds it too.
* seed 3: ``2 6 / 3 6``: 0 pairs.
* seed 4: ``3 6 / 4 1 5``: 1 + 5 = 6 uses the last element: 1 pair; the buggy solution says 0.

So the first counter-example of ``off_by_one.py`` is seed 4, expected 1, got 0. The input
depends on SEED mod 3 and SEED mod 7 only, so seeds 1..40 give 21 distinct inputs and 19
duplicates.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .test_cli_ledger import suitebench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PAIRS = FIXTURES / "stress" / "pairs"
GUESS = FIXTURES / "interactive" / "guess"


def _stress(tmp_path: Path, problem: Path, solution: Path, *args: str) -> tuple[int, dict, str]:
    proc = suitebench(
        "--json", "stress", str(problem), str(solution), *args, store=tmp_path / "s.db"
    )
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def test_off_by_one_found_at_seed_4(tmp_path: Path) -> None:
    rc, data, err = _stress(
        tmp_path,
        PAIRS,
        PAIRS / "submissions" / "off_by_one.py",
        "--args",
        "7",
        "--out",
        str(tmp_path / "ce"),
    )
    assert rc == 1, err
    ce = data["counterexample"]
    assert (ce["seed"], ce["verdict"]) == (4, "WA")
    assert (ce["input"], ce["expected"], ce["got"]) == ("3 6\n4 1 5\n", "1\n", "0\n")
    assert (data["seeds"], data["tried"], data["duplicates"]) == (4, 4, 0)
    assert data["validated"] is True
    assert (tmp_path / "ce" / "counterexample.input").read_text() == "3 6\n4 1 5\n"


def test_against_brute_force(tmp_path: Path) -> None:
    rc, data, err = _stress(
        tmp_path,
        PAIRS,
        PAIRS / "submissions" / "off_by_one.py",
        "--args",
        "7",
        "--against",
        "brute",
    )
    assert rc == 1, err
    assert data["against"] == ["brute/pairs.py"]
    assert data["counterexample"]["seed"] == 4


def test_a_correct_solution_survives_the_count(tmp_path: Path) -> None:
    rc, data, err = _stress(
        tmp_path, PAIRS, PAIRS / "submissions" / "correct.py", "--args", "7", "--count", "40"
    )
    assert rc == 0, err
    assert data["counterexample"] is None and data["stopped"] == "count"
    assert (data["seeds"], data["tried"], data["duplicates"]) == (40, 21, 19)


def test_a_generator_that_ignores_its_seed_is_named(tmp_path: Path) -> None:
    const = tmp_path / "const_gen.py"
    const.write_text('print("3 6")\nprint("1 2 3")\n')
    rc, _, err = _stress(
        tmp_path, PAIRS, PAIRS / "submissions" / "correct.py", "--generator", str(const)
    )
    assert rc == 4
    assert "const_gen.py gave the same input for seeds 1..16: it ignores its seed" in err


def test_references_that_disagree_are_a_harness_error(tmp_path: Path) -> None:
    """With the buggy program among the references, they disagree first on seed 4."""
    problem = tmp_path / "pairs"
    shutil.copytree(PAIRS, problem)
    shutil.copy(problem / "submissions" / "off_by_one.py", problem / "refs" / "wrong.py")
    rc, _, err = _stress(tmp_path, problem, problem / "submissions" / "correct.py", "--args", "7")
    assert rc == 4
    assert "on seed 4: references disagree: refs/pairs.c vs refs/wrong.py" in err
    assert "refs/wrong.py" in err


def test_stress_an_interactive_solution(tmp_path: Path) -> None:
    """guess's generator gives x = seed; off_by_one is right for x = 1 and wrong for x = 2
    (worked in test_interactive.py): the counter-example is seed 2, judged by the interactor."""
    rc, data, err = _stress(tmp_path, GUESS, GUESS / "submissions" / "rejected" / "off_by_one.py")
    assert rc == 1, err
    ce = data["counterexample"]
    assert (ce["seed"], ce["input"], ce["verdict"]) == (2, "2\n", "WA")
    assert "guessed 1, the number was 2" in ce["message"]
    assert ce["expected"] == "guessed\n"
