"""A project's suite scored as the project runs it: its pytest configuration carried into the
sandbox, its files beside the suite.

Libraries set ``filterwarnings = error``: a mutant turning ``x is None`` into ``x is ""`` draws
a ``SyntaxWarning`` when its module compiles, which the project's own pytest raises as an
error, so every test importing the module fails to collect and the mutant is killed.  Scored
without the configuration it survived; and a test reading ``README.md`` beside the suite was
invalid (``FileNotFoundError``).  The package here is written for this test: ``words.py`` holds
the warning mutant, ``shout.py`` an ordinary one.  Both engines, coverage-guided selection
against every test, and both against the project's own pytest run on the patched copy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from suitebench.model.instance import InstanceError, load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.projectconfig import WARNS_REASON, carry_config, find_pytest_config
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import SELECTION_LIMITS, score_selected_and_full, write_python_instance

PYPROJECT = """\
[project]
name = "textkit"
version = "1.0"

[tool.pytest.ini_options]
filterwarnings = ["error"]
markers = ["slow: a slow test"]
xfail_strict = true
addopts = "-ra --strict-markers -p no:randomly"
testpaths = ["tests"]
cache_dir = ".cache/pytest"
"""

WORDS = '''\
"""Words of a text."""


def first_word(text, default=None):
    words = text.split()
    if words:
        return words[0]
    if default is None:
        return ""
    return default


def count_words(text):
    return len(text.split())
'''

SHOUT = '''\
"""Shouting."""


def shout(text):
    return text.upper() + "!"
'''

TESTS = {
    "test_words.py": """\
from textkit.words import count_words, first_word


def test_first_word():
    assert first_word("hello world") == "hello"


def test_count_words():
    assert count_words("a b c") == 3
""",
    "test_shout.py": """\
from pathlib import Path

import pytest

from textkit.shout import shout


def test_shout():
    assert shout("hi") == "HI!"


@pytest.mark.slow
def test_readme_shows_shout():
    readme = Path(__file__).parent.parent / "README.md"
    assert "shout(" in readme.read_text()
""",
}

MUTANTS = [
    ("m01", "textkit/words.py", "if default is None:", 'if default is "":'),
    ("m02", "textkit/shout.py", "text.upper()", "text.lower()"),
]


def _instance(root: Path, *, carried: bool) -> Path:
    source = {
        "textkit/__init__.py": '"""Text helpers."""\n',
        "textkit/words.py": WORDS,
        "textkit/shout.py": SHOUT,
        "README.md": "# textkit\n\n`shout(text)` shouts.\n",
    }
    if carried:
        source["pyproject.toml"] = PYPROJECT
    toml = write_python_instance(
        root, name="textkit", source=source, tests=TESTS, spec="# Words\n", mutants=MUTANTS
    )
    if carried:
        text = toml.read_text().replace(
            'tests = "tests"\n', 'tests = "tests"\nbeside = ["src/README.md"]\n', 1
        )
        toml.write_text(text)
    return toml


def _project_kills(toml: Path, tmp_path: Path) -> dict[str, set[str]]:
    """What the project's own pytest (this interpreter's, reading the project's pyproject.toml
    itself) says kills each mutant: tests that fail or whose file does not collect."""
    instance = load_instance(toml)
    kills: dict[str, set[str]] = {}
    for mutant in instance.mutants:
        copy = tmp_path / f"project-{mutant.id}"
        shutil.copytree(instance.source, copy)
        shutil.copytree(instance.tests, copy / "tests")
        subprocess.run(["patch", "-p1", "-s", "-i", str(mutant.patch)], cwd=copy, check=True)
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-rA", "-q"],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
        )
        out = done.stdout
        failed = set(re.findall(r"^FAILED (\S+::\S+)", out, re.M))
        broken = set(re.findall(r"^ERROR (tests/\S+\.py)\b", out, re.M))
        tests = set(re.findall(r"^(?:PASSED|FAILED) (\S+::\S+)", out, re.M))
        for file in broken:
            names = re.findall(r"^def (test_\w+)", (copy / file).read_text(), re.M)
            tests |= {f"{file}::{n}" for n in names}
            failed |= {f"{file}::{n}" for n in names}
        assert tests, out
        kills[mutant.id] = failed
    return kills


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_carried_config_and_beside_files_score_as_the_project_runs(
    tmp_path: Path, engine: Engine
) -> None:
    toml = _instance(tmp_path / "textkit", carried=True)
    selected, full = score_selected_and_full(toml, tmp_path, engine=engine)
    for result in (selected, full):
        # by hand: the README test is valid (4/4); m01's SyntaxWarning is an error in the
        # two tests importing words.py, m02 fails test_shout alone
        assert (result.counts.tests, result.counts.valid) == (4, 4)
        status = {m.id: (m.status, sorted(m.killed_by)) for m in result.mutants}
        assert status == {
            "m01": (
                MutantStatus.KILLED,
                ["tests/test_words.py::test_count_words", "tests/test_words.py::test_first_word"],
            ),
            "m02": (MutantStatus.KILLED, ["tests/test_shout.py::test_shout"]),
        }
        assert result.pytest_config is not None
        assert result.pytest_config["source"].endswith("src/pyproject.toml")
        carried = result.pytest_config["carried"]
        assert carried["filterwarnings"] == ["error"]
        assert carried["addopts"] == "-ra --strict-markers"
        assert set(result.pytest_config["dropped"]) == {
            "testpaths",
            "cache_dir",
            "addopts -p no:randomly",
        }
    m01 = next(m for m in selected.mutants if m.id == "m01")
    assert m01.selection_reason == WARNS_REASON
    m02 = next(m for m in selected.mutants if m.id == "m02")
    assert m02.selection_reason == "coverage"
    # the figure the project's own pytest gives on each patched copy
    project = _project_kills(toml, tmp_path)
    assert {m.id: set(m.killed_by) for m in full.mutants} == project


def test_without_the_config_the_warning_mutant_survives(tmp_path: Path) -> None:
    """The figure before: no configuration carried, nothing beside the suite."""
    toml = _instance(tmp_path / "textkit", carried=False)
    store = Store(tmp_path / "store" / "store.sqlite")
    try:
        result = score_suite(
            load_instance(toml),
            store=store,
            cache_dir=tmp_path / "builds",
            engine=Engine.PLAIN,
            limits=SELECTION_LIMITS,
        )
    finally:
        store.close()
    assert result.pytest_config is None
    assert (result.counts.tests, result.counts.valid) == (4, 3)
    assert {m.id: m.status for m in result.mutants} == {
        "m01": MutantStatus.SURVIVED,
        "m02": MutantStatus.KILLED,
    }


def test_ini_files_are_read_by_pytests_precedence(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(
        "[tool:pytest]\nfilterwarnings =\n    error\n    ignore::DeprecationWarning\n"
        "addopts = -n 4 --cov=pkg -W error::UserWarning\ntimeout = 5\n"
    )
    config = carry_config(tmp_path / "setup.cfg")
    assert config.carried == {
        "filterwarnings": ["error", "ignore::DeprecationWarning"],
        "addopts": "-W error::UserWarning",
    }
    assert set(config.dropped) == {"addopts -n 4", "addopts --cov=pkg", "timeout"}
    assert config.warning_filters() == (
        ["error", "ignore::DeprecationWarning"],
        ["error::UserWarning"],
    )
    assert "filterwarnings =\n    error\n    ignore::DeprecationWarning" in config.ini_text()


def test_pytest_9s_own_pyproject_table_is_read_with_its_toml_values(tmp_path: Path) -> None:
    """pytest 9 reads ``[tool.pytest]`` itself (lists and booleans as TOML has them), ahead of
    ``[tool.pytest.ini_options]``; humanize 4.17.0 configures ``filterwarnings = error`` so."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.pytest]\nfilterwarnings = ["error"]\n'
        'xfail_strict = true\naddopts = ["--strict-markers", "-p", "no:randomly"]\n'
        '\n[tool.pytest.ini_options]\nfilterwarnings = ["ignore"]\n'
    )
    assert find_pytest_config(tmp_path) == tmp_path / "pyproject.toml"
    config = carry_config(tmp_path / "pyproject.toml")
    assert config.carried == {
        "filterwarnings": ["error"],
        "xfail_strict": "true",
        "addopts": "--strict-markers",
    }
    assert set(config.dropped) == {"addopts -p no:randomly"}
    assert config.warning_filters() == (["error"], [])


def test_beside_may_not_show_what_is_held_out(tmp_path: Path) -> None:
    toml = _instance(tmp_path / "textkit", carried=True)
    text = toml.read_text()
    toml.write_text(text.replace('beside = ["src/README.md"]', 'beside = ["mutants"]'))
    with pytest.raises(InstanceError, match=r"beside\[0\].*held out"):
        load_instance(toml)
    toml.write_text(text.replace('beside = ["src/README.md"]', 'beside = ["src"]'))
    with pytest.raises(InstanceError, match=r"beside\[0\].*held out"):
        load_instance(toml)
