"""Statement-level selection: a test that entered a mutant's function but never ran the
statement it changes runs on it no more -- unless the change alters the function beyond its
statements (a local turned global, a generator turned function), and then the function's
tests run, as before.  The selected matrix equals the full one throughout.

``grade(score)`` takes one branch per test; the CLI test runs ``python -m grades`` in a
process of its own, traced for that test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine
from suitebench.suite.select.linecover import innermost, same_shape, statements

from ..conftest import score_selected_and_full, write_instance

GRADES = '''\
"""Letter grades."""

import sys


def grade(score):
    if score >= 90:
        letter = "A"
    elif score >= 75:
        letter = "B"
    else:
        letter = "C"
    return letter


def grades(scores):
    for s in scores:
        yield grade(s)


def main(argv):
    print(" ".join(grades(int(a) for a in argv)))
'''
MAIN = "import sys\n\nfrom grades import main\n\nmain(sys.argv[1:])\n"
TESTS = {
    "test_grades.py": (
        "import subprocess, sys\n\nfrom grades import grade, grades\n\n\n"
        "def test_top():\n    assert grade(95) == 'A'\n\n\n"
        "def test_middle():\n    assert grade(80) == 'B'\n\n\n"
        "def test_low():\n    assert grade(10) == 'C'\n\n\n"
        "def test_many():\n    assert list(grades([95, 10])) == ['A', 'C']\n\n\n"
        "def test_cli():\n"
        "    out = subprocess.run([sys.executable, '-m', 'grades', '80'], capture_output=True,\n"
        "                         text=True, check=True).stdout\n"
        "    assert out == 'B\\n'\n"
    )
}
T = "tests/test_grades.py::test_"


def _instance(tmp_path: Path) -> Path:
    return write_instance(
        tmp_path / "grades",
        name="grades",
        source_files={"grades/__init__.py": GRADES, "grades/__main__.py": MAIN},
        build=None,
        spec="# grades\n\n## Grades\nLetters.\n",
        tests=TESTS,
        mutants=[
            ("a_bound", "Grades", None, "90 is not an A", "score >= 90", "score > 90"),
            ("a_from_89", "Grades", None, "89 is an A", "score >= 90", "score >= 89"),
            ("b_bound", "Grades", None, "B starts at 85", "score >= 75", "score >= 85"),
            ("c_letter", "Grades", None, "C becomes D", 'letter = "C"', 'letter = "D"'),
            # Deleting the only "C" assignment leaves ``letter`` local still (other branches
            # assign it): statements alone differ, so the low branch's tests alone run.
            ("no_c", "Grades", None, "C branch does nothing", 'letter = "C"', "pass"),
            # A generator turned into a function: beyond its statements, the function's tests.
            (
                "eager",
                "Grades",
                None,
                "grades returns a list",
                "yield grade(s)",
                "return [grade(s)]",
            ),
        ],
        mutated_file="grades/__init__.py",
        kind="python",
        package="grades",
    )


def test_a_changed_line_maps_to_its_innermost_statement() -> None:
    spans = statements(GRADES)
    # line 7 is `if score >= 90:` (the whole if), 10 `letter = "B"`, 11 `else:` (the if at 9)
    assert innermost(spans, 7) is not None and innermost(spans, 7)[3] == 7  # type: ignore[index]
    assert innermost(spans, 10)[3] == 10  # type: ignore[index]
    assert innermost(spans, 11)[3] == 9  # type: ignore[index]
    assert innermost(spans, 3) is None  # module level
    body = GRADES.encode()
    assert same_shape(body, body.replace(b'letter = "C"', b'letter = "D"'), "g.py")
    assert not same_shape(body, body.replace(b"yield grade(s)", b"return [grade(s)]"), "g.py")
    only = b"def f():\n    x = 1\n    return x\n"
    assert not same_shape(only, only.replace(b"x = 1", b"pass"), "f.py")  # x turns global


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_statement_level_selection_equals_the_full_matrix(engine: Engine, tmp_path: Path) -> None:
    selected, _full = score_selected_and_full(_instance(tmp_path), tmp_path, engine=engine)
    assert selected.coverage.unknown_tests == []
    by_id = {m.id: m for m in selected.mutants}
    # The first `if` runs in every test that calls grade (the CLI's process too), but 90 -> 89
    # changes what it decides only for 89, which no test grades (weak mutation, a constant
    # operand: test_weak_mutation): no test runs.
    assert set(by_id["a_from_89"].covered_by or ()) == set([])
    assert set(by_id["a_from_89"].killed_by or ()) == set([])
    # `>=` -> `>` differs only at 90, which no test grades
    assert set(by_id["a_bound"].covered_by or ()) == set([])
    assert set(by_id["a_bound"].killed_by or ()) == set([])
    # The `elif` runs only where the first test failed (not for 95), and 75 -> 85 changes it
    # only for 75 to 84: 80, in test_middle and in the CLI's process.
    assert set(by_id["b_bound"].covered_by or ()) == set([T + "middle", T + "cli"])
    assert set(by_id["b_bound"].killed_by or ()) == set([T + "middle", T + "cli"])
    assert set(by_id["c_letter"].covered_by or ()) == set([T + "low", T + "many"])
    assert set(by_id["c_letter"].killed_by or ()) == set([T + "low", T + "many"])
    assert set(by_id["no_c"].covered_by or ()) == set([T + "low", T + "many"])
    # grades() is entered by test_many alone in process, and by the CLI's process.
    assert set(by_id["eager"].covered_by or ()) == set([T + "many", T + "cli"])
