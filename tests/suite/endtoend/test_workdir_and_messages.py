"""What tests see and what a user is told: the build's whole tree beside ``./executable``
(ProgramBench runs tests where the build happened), and why each invalid test failed, why each
mutant was killed, with skipped tests counted apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.report.mutation_report import mutation_report
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.score import score_suite

from ..conftest import write_instance
from .test_suite_cli import suitebench

MAIN_PY = '''\
"""greet: prints a greeting from the word list shipped next to it."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    with open(os.path.join(HERE, "data", "greetings.txt")) as fh:
        greetings = dict(line.split("=", 1) for line in fh.read().splitlines())
    lang = argv[1] if len(argv) > 1 else "en"
    if lang not in greetings:
        print(f"unknown language: {lang}", file=sys.stderr)
        return 2
    print(greetings[lang] + ", " + (argv[2] if len(argv) > 2 else "world"))
    return 0


sys.exit(main(sys.argv))
'''

BUILD_SH = """\
set -eu
mkdir -p data
printf 'en=hello\\nfr=bonjour\\nde=hallo\\n' > data/greetings.txt
printf '#!/bin/sh\\nexec python3 "$(dirname "$0")/main.py" "$@"\\n' > executable
chmod +x executable
"""

GREET_TESTS = {
    "test_greet.py": (
        "import os\nimport subprocess\n\n\n"
        "def run(*args, exe='./executable'):\n"
        "    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=30)\n\n\n"
        "def test_default_language():\n"
        "    assert run().stdout == 'hello, world\\n'\n\n\n"
        "def test_french():\n"
        "    assert run('fr', 'Ada').stdout == 'bonjour, Ada\\n'\n\n\n"
        "def test_unknown_language_fails():\n"
        "    done = run('xx')\n"
        "    assert done.returncode == 2 and 'unknown language' in done.stderr\n\n\n"
        "def test_by_absolute_path():\n"
        "    exe = os.environ['SUITEBENCH_EXECUTABLE']\n"
        "    assert run('de', exe=exe).stdout == 'hallo, world\\n'\n\n\n"
        "def test_data_file_is_beside_the_executable():\n"
        "    assert open('data/greetings.txt').read().startswith('en=hello')\n"
    ),
}


def _greet_instance(tmp_path: Path, tests: dict[str, str]) -> Path:
    """The launcher program with its data files, one mutant (French by default), ``tests``."""
    return write_instance(
        tmp_path / "greet",
        name="greet",
        source_files={"main.py": MAIN_PY, "build.sh": BUILD_SH},
        build="build.sh",
        spec="# greet\n\n## Languages\nGreetings.\n",
        tests=tests,
        mutants=[("fr_en", "Languages", None, "default is French", 'else "en"', 'else "fr"')],
        mutated_file="main.py",
    )


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_launcher_finds_its_files_beside_the_executable(engine: Engine, tmp_path: Path) -> None:
    """A build whose ``./executable`` is a launcher running ``"$(dirname "$0")/main.py"``, with
    data files next to it: every test passes on the reference (V = 1.0), as under pytest in
    the build directory."""
    toml = _greet_instance(tmp_path, GREET_TESTS)
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(
        load_instance(toml), store=store, engine=engine, limits=SuiteLimits(per_test=10.0)
    )
    store.close()
    assert result.counts.tests == 5
    assert result.validity == 1.0, [(t.id, t.reference, t.message) for t in result.tests]
    assert result.mutants[0].killed_by == ["tests/test_greet.py::test_default_language"]


WHY_SOURCE = {
    "calc/__init__.py": ("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
}
WHY_TESTS = {
    "test_calc.py": (
        "import pytest\nimport calc\n\n\n"
        "def test_add():\n    assert calc.add(2, 2) == 4\n\n\n"
        "def test_mul():\n    assert calc.mul(3, 3) == 9\n\n\n"
        "def test_wrong_expectation():\n    assert calc.add(1, 1) == 3\n\n\n"
        "def test_raises():\n    raise ValueError('no such thing as a free lunch')\n\n\n"
        "@pytest.mark.skip(reason='not written yet')\n"
        "def test_later():\n    pass\n"
    ),
    "test_broken.py": "import calc.missing_module\n\n\ndef test_never():\n    pass\n",
}


def _why_instance(tmp_path: Path) -> Path:
    return write_instance(
        tmp_path / "why",
        name="why",
        source_files=WHY_SOURCE,
        build=None,
        spec="# calc\n\n## Sums\nSums.\n",
        tests=WHY_TESTS,
        mutants=[("add_sub", "Sums", None, "add subtracts", "a + b", "a - b")],
        mutated_file="calc/__init__.py",
        kind="python",
        package="calc",
    )


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_why_tests_failed_and_mutants_died(engine: Engine, tmp_path: Path) -> None:
    toml = _why_instance(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(load_instance(toml), store=store, engine=engine)
    store.close()
    why = {t.id: t.message for t in result.tests}
    assert why["tests/test_calc.py::test_wrong_expectation"] == "assert 2 == 3"
    assert why["tests/test_calc.py::test_raises"] == "ValueError: no such thing as a free lunch"
    assert "No module named 'calc.missing_module'" in why["tests/test_broken.py"]
    assert why["tests/test_calc.py::test_later"] == "not written yet"
    assert why["tests/test_calc.py::test_add"] == ""
    assert result.counts.skipped == 1 and result.counts.valid == 2
    mutant = result.mutants[0]
    assert mutant.killed_by == ["tests/test_calc.py::test_add"]
    assert mutant.kill_messages == {"tests/test_calc.py::test_add": "assert 0 == 4"}
    report = mutation_report(load_instance(toml), result)
    entry = next(m for f in report["files"].values() for m in f["mutants"])
    assert "tests/test_calc.py::test_add: assert 0 == 4" in entry["statusReason"]


def test_cli_shows_why(tmp_path: Path) -> None:
    toml = _why_instance(tmp_path)
    out = tmp_path / "out"
    proc = suitebench(tmp_path, "score", str(toml.parent), "--out", str(out), "--show-failures")
    assert proc.returncode == 0, proc.stderr
    got = proc.stdout
    assert "tests/test_calc.py::test_wrong_expectation  [failed]  assert 2 == 3" in got
    assert "1 skipped test(s)" in got and "tests/test_calc.py::test_later  not written yet" in got
    assert "add_sub killed by tests/test_calc.py::test_add: assert 0 == 4" in got
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["skipped"] == 1
    assert results["test_selection"] == "coverage"


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_why_a_file_did_not_collect_on_a_cli_program(engine: Engine, tmp_path: Path) -> None:
    """A command-line program's suite is collected once per batch: the reason a file did not
    collect is still the one pytest gives."""
    tests = {**GREET_TESTS, "test_syntax.py": "def test_broken(:\n    pass\n"}
    toml = _greet_instance(tmp_path, tests)
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(load_instance(toml), store=store, engine=engine)
    store.close()
    why = {t.id: t.message for t in result.tests if not t.valid}
    assert list(why) == ["tests/test_syntax.py"]
    assert why["tests/test_syntax.py"].startswith("SyntaxError")
