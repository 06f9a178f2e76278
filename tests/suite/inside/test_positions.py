"""The reference's names for a mutant's parametrized tests (:mod:`suitebench.suite.inside.
positions`), through a real pytest with the plugin: the reference's run records each
parametrized test's position, a mutant's run collects under the reference's names.

``menu`` exports the dishes a kitchen serves; the suite parametrizes over them.  Worked out:

* the reference (``soup``, ``salad``) records ``test_served[dish=0]`` -> ``[soup]`` and
  ``test_served[dish=1]`` -> ``[salad]``, and ``test_price`` (not parametrized) none;
* a mutant serving ``stew``, ``soup``, ``pie``: positions 0 and 1 take the reference's names
  (``[soup]``, ``[salad]``: the cases at those places), position 2 is none of the reference's
  and keeps its own name, ``[pie]``;
* a mutant serving ``tea``, ``stew``, ``soup``: position 2's own name, ``[soup]``, is now
  position 0's, so it is told apart by its position.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MENU = """\
DISHES = {dishes}
PRICES = {{"soup": 4, "salad": 5, "stew": 7, "pie": 3, "tea": 2}}


def price(dish):
    return PRICES[dish]
"""

TESTS = """\
import pytest

from menu import DISHES, price


@pytest.mark.parametrize("dish", DISHES)
def test_served(dish):
    assert dish in ("soup", "salad")


def test_price():
    assert price("soup") == 4
"""

SERVED = "tests/test_menu.py::test_served"


def _project(root: Path, dishes: list[str]) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "menu.py").write_text(MENU.format(dishes=dishes))
    (root / "tests").mkdir()
    (root / "tests" / "test_menu.py").write_text(TESTS)
    return root


def _pytest(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "suitebench.suite.inside.plugin",
            "-q",
            "-rA",
            "-p",
            "no:cacheprovider",
            *options,
            "tests",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _reference_names(tmp_path: Path) -> Path:
    """The reference's run: its fingerprint record's positions, as the host passes them on
    (position -> name)."""
    root = _project(tmp_path / "reference", ["soup", "salad"])
    record = tmp_path / "fingerprint.json"
    _pytest(root, f"--suitebench-fingerprint={record}", "--collect-only")
    positions = json.loads(record.read_text())["positions"]
    assert positions == {
        f"{SERVED}[soup]": f"{SERVED}[dish=0]",
        f"{SERVED}[salad]": f"{SERVED}[dish=1]",
    }
    names = tmp_path / "positions.json"
    names.write_text(json.dumps({p: t for t, p in positions.items()}))
    return names


def _outcomes(run: subprocess.CompletedProcess[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in run.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED"):
            out[rest.split(" - ")[0]] = word
    return out


def test_a_mutants_tests_take_the_reference_names_by_position(tmp_path: Path):
    names = _reference_names(tmp_path)
    mutant = _project(tmp_path / "longer", ["stew", "soup", "pie"])
    run = _pytest(mutant, f"--suitebench-positions={names}")
    assert _outcomes(run) == {
        f"{SERVED}[soup]": "FAILED",  # stew, at soup's place
        f"{SERVED}[salad]": "PASSED",  # soup, at salad's place
        f"{SERVED}[pie]": "FAILED",  # a case of the mutant's own
        "tests/test_menu.py::test_price": "PASSED",
    }, run.stdout
    # without the names, pytest's own: the reference's soup case seems to pass
    plain = _outcomes(_pytest(mutant))
    assert plain[f"{SERVED}[soup]"] == "PASSED"
    assert f"{SERVED}[stew]" in plain


def test_a_name_taken_by_another_position_is_told_apart(tmp_path: Path):
    names = _reference_names(tmp_path)
    mutant = _project(tmp_path / "shifted", ["tea", "stew", "soup"])
    run = _pytest(mutant, f"--suitebench-positions={names}")
    assert _outcomes(run) == {
        f"{SERVED}[soup]": "FAILED",  # tea
        f"{SERVED}[salad]": "FAILED",  # stew
        f"{SERVED}[soup]@{SERVED}[dish=2]": "PASSED",  # soup, at a place of its own
        "tests/test_menu.py::test_price": "PASSED",
    }, run.stdout
