"""Coverage-guided test selection: a mutant runs only the tests that reach the code it changes,
and the kill matrix is the one running every test gives -- on every bundled instance, on inline
instances with shared fixtures and subprocesses, and on randomly generated mutants."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR
from suitebench.model.instance import load_instance
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.select.patchlines import changed_lines
from suitebench.suite.select.selection import Coverage, python_spans, select_tests

from ..conftest import (
    score_selected_and_full,
    unified_diff,
    write_instance,
    write_python_instance,
)

BUNDLED = sorted(p.parent.name for p in INSTANCES_DIR.glob("*/instance.toml"))


def test_the_bundled_instances_are_all_found() -> None:
    """The selected-equals-full check runs once per instance the glob finds: it must find all
    three, or an empty glob would pass by running nothing."""
    assert BUNDLED == ["intervals-pkg", "rpn-c", "wordfreq-py"]


# -- reading patches ----------------------------------------------------------------------------

HAND_WRITTEN = """\
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -26,8 +26,9 @@

 def total_length(intervals):
     \"\"\"How many integers.\"\"\"
-    return sum(hi - lo + 1 for lo, hi in intervals)
+    return sum(hi - lo for lo, hi in intervals)
+    # a comment changes nothing

 def contains(intervals, value):
+    value = int(value)
     return any(lo <= value <= hi for lo, hi in intervals)
"""


def test_changed_lines_of_a_hand_written_diff() -> None:
    """Empty context lines written without their leading space (editors strip it), comment-only
    lines, and insertions: the reference lines are counted as patch counts them."""
    change = changed_lines(HAND_WRITTEN)["pkg/core.py"]
    assert change.lines == {29}
    # The replacement goes after line 28 (the removed 29 counts already); the new statement
    # after `def contains(...)`, line 31, indented into its body.
    assert change.insertions == [(29, 4), (31, 4)]
    assert not change.whole_file


SOURCE = """\
LIMIT = 10


def helper(x):
    return x + 1


def double(x):
    y = helper(x)
    return 2 * y


class Box:
    size = 3

    def area(self):
        return self.size ** 2
"""


def _coverage(contexts: dict[str, dict[str, list[int]]], tmp_path: Path) -> Coverage:
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "m.py").write_text(SOURCE)
    record = {
        "contexts": contexts,
        "fixtures": {t: (["shared"] if t == "t.py::t_fixture" else []) for t in contexts},
        "spawned": [],
    }
    record["fixtures"].setdefault("t.py::t_none", [])
    return Coverage.from_record(record, tmp_path)


def _patch(old: str, new: str) -> str:
    return unified_diff("pkg/m.py", SOURCE, SOURCE.replace(old, new, 1))


def test_selection_by_function(tmp_path: Path) -> None:
    # co_firstlineno of helper is 4, of double 8, of Box.area 16; module code is 0.
    coverage = _coverage(
        {
            "<outside tests>": {"pkg/m.py": [0]},
            "t.py::t_helper": {"pkg/m.py": [4]},
            "t.py::t_double": {"pkg/m.py": [8, 4]},
            "t.py::t_area": {"pkg/m.py": [16]},
            "fixture:shared": {"pkg/m.py": [16]},
            "t.py::t_fixture": {},
        },
        tmp_path,
    )
    tests = ["t.py::t_helper", "t.py::t_double", "t.py::t_area", "t.py::t_fixture", "t.py::t_none"]
    assert select_tests(coverage, _patch("x + 1", "x - 1"), tests).tests == (
        "t.py::t_helper",
        "t.py::t_double",
    )
    assert select_tests(coverage, _patch("2 * y", "3 * y"), tests).tests == ("t.py::t_double",)
    # The fixture shared beyond one test reached Box.area: its users run too.
    assert select_tests(coverage, _patch("** 2", "** 3"), tests).tests == (
        "t.py::t_area",
        "t.py::t_fixture",
    )
    # Module- and class-level code runs on import: every test.
    for old, new in (("LIMIT = 10", "LIMIT = 11"), ("size = 3", "size = 4")):
        selection = select_tests(coverage, _patch(old, new), tests)
        assert selection.tests is None and "outside any function body" in selection.reason


def test_unknown_coverage_and_new_files_run_every_test(tmp_path: Path) -> None:
    coverage = _coverage({"t.py::t_helper": {"pkg/m.py": [4]}}, tmp_path)
    new_file = "--- /dev/null\n+++ b/pkg/extra.py\n@@ -0,0 +1 @@\n+X = 1\n"
    assert select_tests(coverage, new_file, ["t.py::t_helper"]).tests is None
    other = unified_diff("pkg/other.py", "def f():\n    return 1\n", "def f():\n    return 2\n")
    selection = select_tests(coverage, other, ["t.py::t_helper"])
    assert selection.tests is None and "no coverage of pkg/other.py" in selection.reason


# -- selected == full ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", BUNDLED)
def test_selected_matrix_equals_full_on_bundled_instances(name: str, tmp_path: Path) -> None:
    toml = INSTANCES_DIR / name / "instance.toml"
    selected, full = score_selected_and_full(toml, tmp_path)
    # Python packages are traced, the C program rebuilt with gcc --coverage; wordfreq-py's
    # tests run a Python program in a process of its own: unknown coverage, every test.
    if name == "wordfreq-py":
        assert selected.coverage.status == "unknown"
        assert selected.test_selection == "all"
    else:
        assert selected.coverage.status == "ok"
        assert selected.test_selection in ("coverage", "mixed")
        ran = sum(m.tests_run for m in selected.mutants)
        assert ran < sum(m.tests_run for m in full.mutants)


_OPERATOR_SWAPS = [
    (r" \+ ", " - "),
    (r" - ", " + "),
    (r" <= ", " < "),
    (r" < ", " <= "),
    (r" >= ", " > "),
    (r" == ", " != "),
    (r"\band\b", "or"),
    (r"\bnot ", ""),
    (r"\b1\b", "2"),
    (r"\b0\b", "1"),
]


def random_mutants(instance_dir: Path, root: Path, count: int, seed: int) -> Path:
    """A copy of a Python instance whose mutants are ``count`` random one-operator changes
    anywhere in its package (module-level code included), written as patches."""
    shutil.copytree(instance_dir, root, ignore=shutil.ignore_patterns("mutants"))
    (root / "mutants").mkdir()
    original = load_instance(instance_dir)
    source = root / original.source.relative_to(original.root)
    rng = random.Random(seed)
    files = sorted(p for p in source.rglob("*.py"))
    text = (root / "instance.toml").read_text()
    toml = text[: text.index("[[mutants]]")] if "[[mutants]]" in text else text
    made = 0
    while made < count:
        path = rng.choice(files)
        lines = path.read_text().splitlines(keepends=True)
        number = rng.randrange(len(lines))
        pattern, replacement = rng.choice(_OPERATOR_SWAPS)
        if lines[number].lstrip().startswith(("#", '"""')):
            continue
        mutated, n = re.subn(pattern, replacement, lines[number], count=1)
        if n == 0:
            continue
        after = "".join([*lines[:number], mutated, *lines[number + 1 :]])
        rel = path.relative_to(source).as_posix()
        made += 1
        mid = f"r{made:02d}"
        (root / "mutants" / f"{mid}.diff").write_text(unified_diff(rel, "".join(lines), after))
        toml += f'\n[[mutants]]\nid = "{mid}"\npatch = "mutants/{mid}.diff"\n'
    (root / "instance.toml").write_text(toml)
    return root / "instance.toml"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_selected_matrix_equals_full_on_random_mutants(seed: int, tmp_path: Path) -> None:
    toml = random_mutants(INSTANCES_DIR / "intervals-pkg", tmp_path / "inst", 12, seed)
    selected, _full = score_selected_and_full(toml, tmp_path)
    assert selected.coverage.status == "ok"
    guided = [m for m in selected.mutants if m.test_selection == "coverage"]
    assert guided and any(m.tests_run < len(selected.tests) for m in guided)


CALC = '''\
"""calc: small arithmetic."""


def scale(x):
    return x * 3


def offset(x):
    return x + 1


def untested(x):
    return x - 1
'''

CALC_TESTS = {
    "conftest.py": (
        "import pytest\nimport calc\n\n\n"
        "@pytest.fixture(scope='module')\n"
        "def table():\n"
        "    return [calc.scale(i) for i in range(5)]\n"
    ),
    "test_table.py": (
        "def test_table_is_multiples_of_three(table):\n"
        "    assert table == [0, 3, 6, 9, 12]\n\n\n"
        "def test_table_length(table):\n"
        "    assert len(table) == 5\n"
    ),
    "test_offset.py": (
        "import subprocess\nimport sys\n\nimport calc\n\n\n"
        "def test_offset():\n"
        "    assert calc.offset(1) == 2\n\n\n"
        "def test_offset_in_a_subprocess():\n"
        "    out = subprocess.run([sys.executable, '-c', 'import calc; print(calc.untested(5))'],\n"
        "                         capture_output=True, text=True, check=True).stdout\n"
        "    assert out == '4\\n'\n\n\n"
        "def test_offset_through_a_shell():\n"
        "    out = subprocess.run(f\"{sys.executable} -c 'import calc; print(calc.offset(1))'\",\n"
        "                         shell=True, capture_output=True, text=True).stdout\n"
        "    assert out == '2\\n'\n"
    ),
}


def _calc_instance(tmp_path: Path) -> Path:
    return write_instance(
        tmp_path / "calc",
        name="calc",
        source_files={"calc/__init__.py": CALC},
        build=None,
        spec="# calc\n\n## Arithmetic\nSums.\n",
        tests=CALC_TESTS,
        mutants=[
            ("scale", "Arithmetic", None, "scale by 2", "x * 3", "x * 2"),
            ("offset", "Arithmetic", None, "offset by 2", "x + 1", "x + 2"),
            ("sub", "Arithmetic", None, "untested", "x - 1", "x - 2"),
        ],
        mutated_file="calc/__init__.py",
        kind="python",
        package="calc",
    )


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_shared_fixtures_and_subprocesses_are_selected(engine: Engine, tmp_path: Path) -> None:
    """A module-scoped fixture computed by the mutated function is seen by every test using it,
    not only the first; a Python process a test starts is traced for that test (it reaches
    ``untested`` alone), while a test that starts a shell has unknown coverage and always runs."""
    toml = _calc_instance(tmp_path)
    selected, _full = score_selected_and_full(toml, tmp_path, engine=engine)
    by_id = {m.id: m for m in selected.mutants}
    table = "tests/test_table.py::test_table_is_multiples_of_three"
    spawn = "tests/test_offset.py::test_offset_in_a_subprocess"
    shell = "tests/test_offset.py::test_offset_through_a_shell"
    assert by_id["scale"].killed_by == [table]
    assert set(by_id["scale"].covered_by or []) == {
        table,
        "tests/test_table.py::test_table_length",
        shell,
    }
    assert by_id["offset"].covered_by == ["tests/test_offset.py::test_offset", shell]
    assert by_id["offset"].killed_by == ["tests/test_offset.py::test_offset", shell]
    assert by_id["sub"].covered_by == [spawn, shell]
    assert by_id["sub"].killed_by == [spawn]
    assert selected.coverage.unknown_tests == [shell]
    assert selected.test_selection == "coverage"


CRASHY_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int twice(int x) { return 2 * x; }

static int half(int x) { return x / 2; }

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "crash") == 0) abort();
    int x = atoi(argv[2]);
    printf("%d\\n", strcmp(argv[1], "twice") == 0 ? twice(x) : half(x));
    return 0;
}
"""

CRASHY_TESTS = {
    "test_crashy.py": (
        "import subprocess\n\n\n"
        "def run(*args):\n"
        "    return subprocess.run(['./executable', *args], capture_output=True, text=True)\n\n\n"
        "def test_twice():\n    assert run('twice', '4').stdout == '8\\n'\n\n\n"
        "def test_half():\n    assert run('half', '8').stdout == '4\\n'\n\n\n"
        "def test_crash_is_a_crash():\n    assert run('crash').returncode < 0\n"
    )
}


def test_c_program_selection_from_a_coverage_build(tmp_path: Path) -> None:
    """A C program rebuilt with gcc --coverage: each mutant runs the tests that entered the
    function it changes; a test whose program died without writing its counters (abort) has
    unknown coverage and always runs.  The matrix is the full run's."""
    toml = write_instance(
        tmp_path / "crashy",
        name="crashy",
        source_files={"crashy.c": CRASHY_C, "build.sh": "gcc -O1 -o executable crashy.c\n"},
        build="build.sh",
        spec="# crashy\n\n## Arithmetic\nTwice and half.\n",
        tests=CRASHY_TESTS,
        mutants=[
            ("twice3", "Arithmetic", None, "three times", "2 * x", "3 * x"),
            ("half3", "Arithmetic", None, "a third", "x / 2", "x / 3"),
        ],
        mutated_file="crashy.c",
    )
    selected, _full = score_selected_and_full(toml, tmp_path)
    assert selected.coverage.status == "ok" and "gcov" in selected.coverage.reason
    crash = "tests/test_crashy.py::test_crash_is_a_crash"
    assert selected.coverage.unknown_tests == [crash]
    by_id = {m.id: m for m in selected.mutants}
    assert set(by_id["twice3"].covered_by or ()) == {"tests/test_crashy.py::test_twice", crash}
    assert set(by_id["half3"].covered_by or ()) == {"tests/test_crashy.py::test_half", crash}


def test_what_a_test_sees_without_entering_a_function_is_not_its_body() -> None:
    """A docstring is read as ``f.__doc__``, a ``def`` line fails a call before the body runs:
    neither is body.  A line inserted right after either, at the body's indentation, is."""
    source = (
        "def area(w, h):\n"  # 1
        '    """Area of a w x h rectangle."""\n'  # 2
        "    return w * h\n"  # 3
        "\n"  # 4
        "def perimeter(w, h): return 2 * (w + h)\n"  # 5
        "\n"  # 6
        "def scale(x, k=2):\n"  # 7
        "    return x * k\n"  # 8
    )
    spans = python_spans(source)
    assert [(s[0], s[1]) for s in spans] == [(3, 3), (8, 8)]  # no span for a one-line def
    coverage = Coverage(
        contexts={"t.py::t": {"g.py": {1, 5, 7}}},
        fixtures={"t.py::t": []},
        unknown=frozenset(),
        spans={"g.py": spans},
    )
    edits = [
        ("docstring", "Area", "Size", None),
        ("after the docstring", "    return w", "    w += 0\n    return w", ("t.py::t",)),
        ("a one-line def", "2 *", "3 *", None),
        ("after the def line", "    return x", "    x += 0\n    return x", ("t.py::t",)),
    ]
    for what, old, new, expected in edits:
        patch = unified_diff("g.py", source, source.replace(old, new))
        assert select_tests(coverage, patch, ["t.py::t"]).tests == expected, what


JOINER = """\
from . import settings

SEPARATOR = "-"
LOUD = "!"


def join(words):
    text = SEPARATOR.join(words)
    return text.upper() if settings.SHOUTING else text


def shout(word):
    return word.upper() + LOUD
"""

JOINER_SETTINGS = """\
import os

SHOUTING = os.environ.get("JOINER_SHOUT") == "1"
"""

JOINER_MAIN = """\
import sys

from joiner import join


def main(argv):
    print(join(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
"""

JOINER_TESTS = {
    "test_joiner.py": (
        "import os\nimport subprocess\nimport sys\n\nimport joiner\n"
        "from joiner.__main__ import main\n\n\n"
        "def test_join():\n"
        "    assert joiner.join(['a', 'b']) == 'a-b'\n\n\n"
        "def test_shout():\n"
        "    assert joiner.shout('a') == 'A!'\n\n\n"
        "def test_main(capsys):\n"
        "    main(['x', 'y'])\n"
        "    assert capsys.readouterr().out == 'x-y\\n'\n\n\n"
        "def test_cli():\n"
        "    out = subprocess.run([sys.executable, '-m', 'joiner', 'a', 'b'],\n"
        "                         capture_output=True, text=True, check=True).stdout\n"
        "    assert out == 'a-b\\n'\n\n\n"
        "def test_cli_shouting():\n"
        "    env = dict(os.environ, JOINER_SHOUT='1')\n"
        "    out = subprocess.run([sys.executable, '-m', 'joiner', 'a', 'b'], env=env,\n"
        "                         capture_output=True, text=True, check=True).stdout\n"
        "    assert out == 'A-B\\n'\n"
    ),
}


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_an_import_in_a_started_process_runs_the_tests_reading_what_changed(
    engine: Engine, tmp_path: Path
) -> None:
    """A module's own code that a test's ``python -m package`` runs is an import in that
    process, not in the suite's: an import-time mutant runs on that test when what the process
    ran reads what the change made (the suite's own import shows it), not on every test, as a
    module first imported inside a test of the suite's own process would -- and always when
    the change is to the module the process ran as ``__main__``, whose script code no import
    runs, or to a module whose own code reads what its process was started with (an
    environment variable the test sets for that process alone).  Found on python-slugify
    9.2.0: three such tests ran on all 87 import-time mutants (81 of those cells passing),
    30 s of its tests' time."""
    toml = write_python_instance(
        tmp_path / "joiner",
        name="joiner",
        source={
            "joiner/__init__.py": JOINER,
            "joiner/__main__.py": JOINER_MAIN,
            "joiner/settings.py": JOINER_SETTINGS,
        },
        spec="# joiner\n\n## Joining\nWords.\n",
        tests=JOINER_TESTS,
        mutants=[
            ("sep", "joiner/__init__.py", 'SEPARATOR = "-"', 'SEPARATOR = "+"'),
            ("loud", "joiner/__init__.py", 'LOUD = "!"', 'LOUD = "?"'),
            # the program's name joined too
            ("args", "joiner/__main__.py", "main(sys.argv[1:])", "main(sys.argv[0:])"),
            # shouts on another value of the variable: only where the test sets it
            ("shout_env", "joiner/settings.py", '== "1"', '== "2"'),
        ],
    )
    selected, full = score_selected_and_full(toml, tmp_path, engine=engine)
    by_id = {m.id: m for m in selected.mutants}
    t = "tests/test_joiner.py::"
    cli, loud_cli = t + "test_cli", t + "test_cli_shouting"
    join, main, shout = t + "test_join", t + "test_main", t + "test_shout"
    assert sorted(by_id["sep"].killed_by) == [cli, loud_cli, join, main]
    assert "while a test runs" not in by_id["sep"].selection_reason
    assert sorted(by_id["sep"].covered_by) == [cli, loud_cli, join, main]  # not test_shout
    # the command line never shouts: the tests starting it do not run
    assert by_id["loud"].covered_by == [shout]
    assert by_id["loud"].killed_by == [shout]
    # the script's own code: the tests that run it as __main__, and nothing the suite imports
    assert sorted(by_id["args"].killed_by) == [cli, loud_cli]
    assert sorted(by_id["args"].covered_by) == [cli, loud_cli]
    # the suite's process reads no JOINER_SHOUT: its import of settings changes nothing there
    assert by_id["shout_env"].killed_by == [loud_cli]
    assert sorted(by_id["shout_env"].covered_by) == [cli, loud_cli]
    assert all(m.covered_by is None for m in full.mutants)
