"""The doctests a project's pytest configuration collects are part of its suite.

``paging`` is a small package whose pytest configuration says ``--doctest-modules
--doctest-glob=README.rst``; its doctests catch what its two unit tests miss:

    def page_count(items, per_page):       # doctest: page_count(10, 5) == 2, (11, 5) == 3
        return (items + per_page - 1) // per_page
    def average(values):                   # doctest: average([1, 2, 2]) prints 1.67
        return round(sum(values) / len(values), 2)
    def page_of(index, per_page):          # no doctest; README.rst: page_of(0, 10) == 1,
        return index // per_page + 1       #   page_of(10, 10) == 2

    tests/test_paging.py: page_count(0, 5) == 0; average([4, 4]) == 4

``build mutants`` gives 16 operator mutants; worked out by hand (D1 the doctest of
page_count, D2 of average, R the README, T1 and T2 the unit tests):

    page_count  return None             D1 (prints nothing), T1 (None != 0)
                items - per_page - 1    D1 (4 // 5 = 0), T1 (-6 // 5 = -2)
                items + per_page + 1    D1 (16 // 5 = 3), T1 (6 // 5 = 1)
                items + per_page - 2    D1 only: 13 // 5 = 2 right, 14 // 5 = 2 for (11, 5);
                                        T1 gets 3 // 5 = 0
                items + per_page - 0    D1 (15 // 5 = 3), T1 (5 // 5 = 1)
                ... / per_page          D1 (2.8), T1 (0.8)
    average     return None             D2, T2
                round(2, mean)          D2, T2 (TypeError: a float as ndigits)
                sum * len               D2 (15), T2 (16)
                ndigits 3               D2 only (1.667; T2's 4.0 == 4)
                ndigits 1               D2 only (1.7; T2's 4.0 == 4)
    page_of     return None, index / per_page + 1 (1.0 printed), - 1, + 2, + 0: R only

So M = 16/16 with the doctests, and 8/16 without them (the three D-only mutants and the five
of page_of survive).  A doctest's id is its module's path in the source root
(``paging/__init__.py::paging.page_count``), a text file's its own (``README.rst::README.rst``).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.suite.execute.programs import Builder, build_all
from suitebench.suite.execute.projectconfig import carry_config, stage_beside
from suitebench.suite.execute.runner import run_batched, run_plain

from ..conftest import suitebench

SOURCE = '''"""Paging through a list of results."""


def page_count(items, per_page):
    """How many pages ``items`` results fill, ``per_page`` to a page.

    >>> page_count(10, 5)
    2
    >>> page_count(11, 5)
    3
    """
    return (items + per_page - 1) // per_page


def average(values):
    """The mean of ``values`` to two places.

    >>> average([1, 2, 2])
    1.67
    """
    return round(sum(values) / len(values), 2)


def page_of(index, per_page):
    """The page, counting from 1, that shows the result at ``index``, counting from 0."""
    return index // per_page + 1
'''

TESTS = """from paging import average, page_count


def test_no_items_no_pages():
    assert page_count(0, 5) == 0


def test_average_of_equal_values():
    assert average([4, 4]) == 4
"""

README = """paging
======

Which page shows a result:

>>> from paging import page_of
>>> page_of(0, 10)
1
>>> page_of(10, 10)
2
"""

PYPROJECT = """[project]
name = "paging"
version = "1.0"

[tool.pytest.ini_options]
addopts = "--doctest-modules --doctest-glob=README.rst"
pythonpath = ["src"]
"""

D1 = "paging/__init__.py::paging.page_count"
D2 = "paging/__init__.py::paging.average"
R = "README.rst::README.rst"
T1 = "tests/test_paging.py::test_no_items_no_pages"
T2 = "tests/test_paging.py::test_average_of_equal_values"

# The changed line of each mutant (stripped) -> the tests that kill it, worked out above.
KILLED_BY = {
    "return None@page_count": {D1, T1},
    "return (items - per_page - 1) // per_page": {D1, T1},
    "return (items + per_page + 1) // per_page": {D1, T1},
    "return (items + per_page - 2) // per_page": {D1},
    "return (items + per_page - 0) // per_page": {D1, T1},
    "return (items + per_page - 1) / per_page": {D1, T1},
    "return None@average": {D2, T2},
    "return round(2, sum(values) / len(values))": {D2, T2},
    "return round(sum(values) * len(values), 2)": {D2, T2},
    "return round(sum(values) / len(values), 3)": {D2},
    "return round(sum(values) / len(values), 1)": {D2},
    "return None@page_of": {R},
    "return index / per_page + 1": {R},
    "return index // per_page - 1": {R},
    "return index // per_page + 2": {R},
    "return index // per_page + 0": {R},
}


def write_project(root: Path) -> Path:
    (root / "src" / "paging").mkdir(parents=True)
    (root / "src" / "paging" / "__init__.py").write_text(SOURCE)
    (root / "tests").mkdir()
    (root / "tests" / "test_paging.py").write_text(TESTS)
    (root / "README.rst").write_text(README)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """``build init`` and ``build mutants`` of the project: (store dir, project, instance)."""
    home = tmp_path_factory.mktemp("paging")
    project = write_project(home / "project")
    instance = home / "instance"
    proc = suitebench(home, "build", "init", str(project), "--out", str(instance))
    assert proc.returncode == 0, proc.stderr
    proc = suitebench(home, "build", "mutants", str(instance))
    assert proc.returncode == 0, proc.stderr
    return home, project, instance


_FUNCTION_OF = {  # each function's one line of code: where a ``return None`` went
    "return (items + per_page - 1) // per_page": "page_count",
    "return round(sum(values) / len(values), 2)": "average",
    "return index // per_page + 1": "page_of",
}


def _changes(instance: Path) -> dict[str, str]:
    """Mutant id -> its changed line, named as ``KILLED_BY`` names it."""
    names = {}
    for diff in sorted((instance / "mutants").glob("*.diff")):
        lines = diff.read_text().splitlines()
        old = next(line[1:].strip() for line in lines if line.startswith("- "))
        new = next(line[1:].strip() for line in lines if line.startswith("+ "))
        names[diff.stem] = f"{new}@{_FUNCTION_OF[old]}" if new == "return None" else new
    return names


def _score(home: Path, instance: Path, out: str, *args: str) -> dict[tuple[str, str], str]:
    """Score the instance; its kill matrix as (test, mutant) -> outcome."""
    proc = suitebench(home, "score", str(instance), "--out", str(home / out), *args)
    assert proc.returncode == 0, proc.stderr
    with open(home / out / "kills.csv", newline="") as fh:
        return {(row["test"], row["mutant"]): row["outcome"] for row in csv.DictReader(fh)}


def _killers(matrix: dict[tuple[str, str], str], changes: dict[str, str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {change: set() for change in changes.values()}
    for (test, mutant), outcome in matrix.items():
        if outcome != "passed":
            found[changes[mutant]].add(test)
    return found


@pytest.fixture(scope="module")
def matrix(built: tuple[Path, Path, Path]) -> dict[tuple[str, str], str]:
    home, _, instance = built
    return _score(home, instance, "batched")


def test_build_init_keeps_the_doctests_in_the_suite(built: tuple[Path, Path, Path]) -> None:
    _, _, instance = built
    assert (instance / "README.rst").read_text() == README
    assert 'beside = ["README.rst"]' in (instance / "instance.toml").read_text()
    hygiene = json.loads((instance / "hygiene.json").read_text())
    # the five tests the project's pytest runs (two doctests, the README, two unit tests)
    assert hygiene["tests"] == 5 and hygiene["dropped"] == []


def test_doctests_kill_what_only_they_catch(
    built: tuple[Path, Path, Path], matrix: dict[tuple[str, str], str]
) -> None:
    _, _, instance = built
    changes = _changes(instance)
    assert sorted(changes.values()) == sorted(KILLED_BY)
    assert _killers(matrix, changes) == KILLED_BY
    assert {test for test, _ in matrix} == {D1, D2, R, T1, T2}
    # a killing doctest says which example gave what (13 // 5 = 2 for page_count(11, 5); a
    # float as round's ndigits raises), with no path of the tree it ran from
    home = built[0]
    for change, message in [
        ("return (items + per_page - 2) // per_page", ">>> page_count(11, 5): expected 3, got 2"),
        ("return round(2, sum(values) / len(values))", ">>> average([1, 2, 2]): TypeError("),
    ]:
        mutant = next(m for m, c in changes.items() if c == change)
        shown = suitebench(home, "show", mutant, "--results", str(home / "batched"))
        assert f"{D2 if 'average' in message else D1}: {message}" in shown.stdout, shown.stdout


@pytest.mark.parametrize(
    "args",
    [("--engine", "plain"), ("--all-tests",), ("--all-tests", "--engine", "plain")],
    ids=["plain", "all-tests", "all-tests-plain"],
)
def test_every_engine_and_selection_give_the_same_matrix(
    built: tuple[Path, Path, Path], matrix: dict[tuple[str, str], str], args: tuple[str, ...]
) -> None:
    home, _, instance = built
    assert _score(home, instance, "-".join(args).strip("-"), *args) == matrix


def test_the_matrix_is_the_projects_own_pytest(
    built: tuple[Path, Path, Path], matrix: dict[tuple[str, str], str], tmp_path: Path
) -> None:
    """The differential: each mutant applied to a copy of the project, whose own pytest (its
    configuration, run in its root) fails exactly the tests that kill it in the matrix."""
    _, project, instance = built
    for diff in sorted((instance / "mutants").glob("*.diff")):
        copy = tmp_path / diff.stem
        shutil.copytree(project, copy)
        subprocess.run(["patch", "-s", "-p1", "-d", str(copy / "src"), "-i", str(diff)], check=True)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE"],
            cwd=copy,
            capture_output=True,
            text=True,
            env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
        )
        failed = set(re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, re.M))
        failed = {t.removeprefix("src/").split(" - ")[0] for t in failed}
        killers = {
            t for (t, m), outcome in matrix.items() if m == diff.stem and outcome != "passed"
        }
        assert failed == killers, (diff.stem, proc.stdout)


def test_without_the_doctest_options_only_the_unit_tests_run(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    home, _, instance = built
    plain = tmp_path / "instance"
    shutil.copytree(instance, plain)
    config = plain / "project" / "pyproject.toml"
    config.write_text(config.read_text().replace('addopts = "--doctest-modules', '# "'))
    found = _killers(_score(home, plain, "undocumented"), _changes(plain))
    assert found == {change: tests - {D1, D2, R} for change, tests in KILLED_BY.items()}
    assert sum(1 for tests in found.values() if tests) == 8  # M = 8/16


def test_mutants_patched_into_one_collection_run_their_doctests(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """The batched engine's collector: the suite, doctests included, collected once and each
    mutant's function bodies patched in -- the same outcomes as a plain run per mutant."""
    _, _, path = built
    instance = load_instance(path)
    beside = stage_beside(instance, tmp_path / "cache")
    assert beside is not None and beside.config is not None
    assert beside.config.doctests == "paging" and beside.config.doctest_files == ("README.rst",)
    builder = Builder(instance, tmp_path / "builds")
    _reference, programs = build_all(builder, list(instance.mutants))
    patched = ("paging/__init__.py",)
    targets = [replace(programs[m.id].target(), patched_files=patched) for m in instance.mutants]
    workspace = tmp_path / "batch"
    batched = run_batched(
        instance.tests, targets, collect_once=False, workspace=workspace, beside=beside.path
    )
    notes = (workspace / "out" / "patched.txt").read_text()
    assert notes.count(" patched: ") == len(targets), notes
    for mutant, run in zip(instance.mutants, batched, strict=True):
        plain = run_plain(instance.tests, programs[mutant.id].target(), beside=beside.path)
        assert run.statuses() == plain.statuses(), mutant.id
        assert set(run.statuses()) == {D1, D2, R, T1, T2}, mutant.id


def test_doctests_follow_where_the_configuration_looks(tmp_path: Path) -> None:
    """pytest walks the package only where no ``testpaths`` leave it out; text files are
    those of ``--doctest-glob`` (``test*.txt`` without one) in a root it walks."""
    config = tmp_path / "pytest.ini"
    names = ["README.rst", "test_cases.txt", "notes.txt"]
    config.write_text("[pytest]\naddopts = --doctest-modules\n")
    carried = carry_config(config, "paging")
    assert carried.doctests == "paging"
    assert carried.doctest_text_files(names) == ["test_cases.txt"]
    config.write_text("[pytest]\naddopts = --doctest-modules\ntestpaths = tests\n")
    carried = carry_config(config, "paging")
    assert carried.doctests is None and carried.doctest_text_files(names) == []
    config.write_text("[pytest]\naddopts = --doctest-modules\ntestpaths = src/paging tests\n")
    assert carry_config(config, "paging").doctests == "paging"
    config.write_text("[pytest]\naddopts = --doctest-glob *.rst\n")
    carried = carry_config(config, "paging")
    assert carried.doctests is None and carried.doctest_text_files(names) == ["README.rst"]
    assert "--suitebench-doctests" not in carried.ini_text()


def test_hygiene_never_takes_a_doctest_for_a_file_of_the_suite(tmp_path: Path) -> None:
    """A package module that does not import under ``--doctest-modules`` (an optional
    dependency missing) is a collection error named ``paging/test_io.py``; a doctest failing
    on the reference is ``paging/__init__.py::paging.f``.  Neither is in the suite's files:
    removing ``tests/test_io.py`` or editing ``tests/__init__.py`` for them would drop real
    tests.  Both are left where they are and reported as not removed."""
    from suitebench.construct.hygiene import remove_tests

    suite = tmp_path / "tests"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "test_io.py").write_text("def test_read():\n    assert True\n")
    ids = {"paging/test_io.py", "paging/__init__.py::paging.f", "README.rst::README.rst"}
    changed, missing = remove_tests(suite, ids)
    assert changed == [] and sorted(missing) == sorted(ids)
    assert (suite / "test_io.py").read_text() == "def test_read():\n    assert True\n"


def test_an_instance_written_in_the_project_runs_its_doctests(tmp_path: Path) -> None:
    """An ``instance.toml`` at the project's root, no ``pytest_config`` nor ``beside``: the
    configuration pytest finds from ``tests/`` upward is carried, the README's doctest with
    it.  Two mutants written by hand: ``+ 1`` -> ``+ 0`` in page_of gives page 0 for index 0,
    which only the README checks; ``- 1`` -> ``- 2`` in page_count gives 14 // 5 = 2 for
    page_count(11, 5), which only page_count's doctest checks.  M = 2/2, each killed by one."""
    project = write_project(tmp_path / "project")
    (project / "mutants").mkdir()
    changes = {
        "pageof": ("    return index // per_page + 1", "    return index // per_page + 0"),
        "count": (
            "    return (items + per_page - 1) // per_page",
            "    return (items + per_page - 2) // per_page",
        ),
    }
    lines = SOURCE.splitlines()
    toml = 'name = "paging"\nkind = "python"\nsource = "src/"\npackage = "paging"\n'
    toml += 'tests = "tests/"\n'
    for mid, (old, new) in changes.items():
        at = lines.index(old) + 1
        diff = "--- a/paging/__init__.py\n+++ b/paging/__init__.py\n"
        diff += f"@@ -{at} +{at} @@\n-{old}\n+{new}\n"
        (project / "mutants" / f"{mid}.diff").write_text(diff)
        toml += f'\n[[mutants]]\nid = "{mid}"\npatch = "mutants/{mid}.diff"\n'
    (project / "instance.toml").write_text(toml)
    matrix = _score(tmp_path, project, "out", "--engine", "plain")
    killers = {
        m: {t for (t, mm), o in matrix.items() if mm == m and o != "passed"} for m in changes
    }
    assert killers == {"pageof": {R}, "count": {D1}}


def test_a_suite_from_elsewhere_is_scored_without_the_projects_doctests(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """The doctests are the project's suite's tests: a suite from elsewhere (here a copy of
    the unit tests) gets no kills from them -- the three mutants only a doctest catches, and
    the five of page_of, survive it (M = 8/16, as without the doctest options)."""
    home, project, instance = built
    suite = tmp_path / "agent-suite"
    shutil.copytree(project / "tests", suite)
    matrix = _score(home, instance, "elsewhere", "--suite", str(suite))
    assert {test for test, _ in matrix} == {T1, T2}
    killed = {m for (_, m), outcome in matrix.items() if outcome != "passed"}
    assert len(killed) == 8


def _implementation(instance: Path, root: Path, edits: dict[str, str]) -> Path:
    """A candidate implementation: the reference's package with ``edits`` made."""
    package = root / "paging"
    shutil.copytree(instance / "src" / "paging", package)
    text = (package / "__init__.py").read_text()
    for old, new in edits.items():
        assert old in text
        text = text.replace(old, new)
    (package / "__init__.py").write_text(text)
    return root


def _r(home: Path, instance: Path, implementation: Path) -> dict:
    proc = suitebench(
        home, "--json", "score", str(instance), "--implementation", str(implementation)
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_an_implementation_is_held_to_the_projects_suite_not_its_own_docstrings(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """R of a generated implementation counts the reference suite's tests: the unit tests, the
    README's doctest and the reference's docstring examples (5), run against the candidate;
    not doctests the implementation wrote into its own docstrings (``>>> 1 + 1`` giving ``3``
    fails, and is not a test of the reference suite)."""
    home, _, instance = built
    candidate = _implementation(
        instance,
        tmp_path / "implementation",
        {
            'def page_of(index, per_page):\n    """': (
                'def page_of(index, per_page):\n    """>>> 1 + 1\n    3\n\n    '
            )
        },
    )
    found = _r(home, instance, candidate)
    assert (found["passed"], found["total"]) == (5, 5)
    assert found["failing"] == {}


def test_an_implementation_cannot_pass_the_reference_examples_with_its_own(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A candidate whose ``page_count`` is off by one (``items + per_page - 2``: 0 for (0, 5),
    so T1 passes; 2 for (10, 5) and for (11, 5), where the reference's example says 3), with
    its docstring rewritten to agree with itself (``>>> page_count(11, 5)`` / ``2``).  Run
    against the reference's example, D1 fails: R = 4/5, D1 the one failing test.  Before, R
    left every module doctest out (3/3, as a correct implementation)."""
    home, _, instance = built
    candidate = _implementation(
        instance,
        tmp_path / "off-by-one",
        {
            "(items + per_page - 1) // per_page": "(items + per_page - 2) // per_page",
            ">>> page_count(11, 5)\n    3": ">>> page_count(11, 5)\n    2",
        },
    )
    found = _r(home, instance, candidate)
    assert (found["passed"], found["total"]) == (4, 5)
    assert list(found["failing"]) == [D1]
