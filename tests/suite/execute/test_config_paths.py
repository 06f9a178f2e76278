"""A ``setup.cfg`` written as semver 3.0.2 writes its pytest section: ``addopts`` over several
lines with a quoted glob and a flag whose value is on the same line, and ``pythonpath = src
tests`` so that the tests' ``conftest.py`` imports a helper module of the tests' folder by name
under ``--import-mode=importlib``.

Before: each line of ``addopts`` was one token (``--doctest-glob='*.rst'`` with its quotes,
``--doctest-report ndiff`` as one unknown flag) and ``pythonpath`` was dropped whole, so the
conftest's import failed, pytest stopped with a usage error (exit code 4) on the reference, and
the score had no test at all (0 cells, every mutant "crashed").  Now ``addopts`` is read as
pytest reads it (one shell-like string) and ``pythonpath``'s folders inside the suite are
carried (``tests``), the source's dropped (suitebench puts the program on ``sys.path``).

``vercmp.compare`` orders dotted versions; its mutants, by hand:

* ``as_text``: compares the strings, not the numbers -- ``"1.10.0" < "1.9.0"`` as text, so
  ``test_minor_ten`` fails, and ``compare("1.2", "1.2.0")`` pads ``["1", "2"]`` with the int 0
  and compares it with ``"0"`` (a TypeError), so ``test_short_equals_padded`` fails too;
  ``test_equal`` and ``test_patch`` still pass ("1.2.3" vs "1.2.4" orders the same as text);
* ``no_pad``: a missing part is not 0 -- ``compare("1.2", "1.2.0")`` gives -1 (the shorter
  list is less), so ``test_short_equals_padded`` fails, and nothing else.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.projectconfig import carry_config
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import SELECTION_LIMITS, write_python_instance
from ..conftest import VERCMP_SETUP_CFG as SETUP_CFG
from ..conftest import VERCMP_SOURCE as SOURCE

HELPER = """\
PAIRS = {"equal": ("1.2.3", "1.2.3", 0), "patch": ("1.2.3", "1.2.4", -1)}
"""

CONFTEST = """\
import pytest
from versionpairs import PAIRS


@pytest.fixture
def pairs():
    return PAIRS
"""

TESTS = """\
from vercmp import compare


def test_equal(pairs):
    a, b, want = pairs["equal"]
    assert compare(a, b) == want


def test_patch(pairs):
    a, b, want = pairs["patch"]
    assert compare(a, b) == want


def test_minor_ten():
    assert compare("1.10.0", "1.9.0") == 1


def test_short_equals_padded():
    assert compare("1.2", "1.2.0") == 0
"""

T = "tests/test_vercmp.py::test_"


def _instance(root: Path) -> Path:
    toml = write_python_instance(
        root,
        name="vercmp",
        source={"vercmp/__init__.py": SOURCE},
        tests={"versionpairs.py": HELPER, "conftest.py": CONFTEST, "test_vercmp.py": TESTS},
        spec="# vercmp\n",
        mutants=[
            ("as_text", "vercmp/__init__.py", "[int(p) for p in", "[p for p in"),
            (
                "no_pad",
                "vercmp/__init__.py",
                "    x += [0] * (width - len(x))\n    y += [0] * (width - len(y))\n",
                "",
            ),
        ],
    )
    (root / "setup.cfg").write_text(SETUP_CFG)
    toml.write_text(
        toml.read_text().replace('tests = "tests"', 'tests = "tests"\npytest_config = "setup.cfg"')
    )
    return toml


def _score(toml: Path, tmp_path: Path) -> SuiteResult:
    store = Store(tmp_path / "store.sqlite")
    try:
        return score_suite(
            load_instance(toml), store=store, cache_dir=tmp_path / "builds", limits=SELECTION_LIMITS
        )
    finally:
        store.close()


def test_addopts_lines_are_one_string_and_the_suites_pythonpath_is_carried(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "setup.cfg").write_text(SETUP_CFG)
    config = carry_config(tmp_path / "setup.cfg", "vercmp", tmp_path / "tests")
    assert config.carried["pythonpath"] == "tests"
    addopts = config.carried["addopts"]
    assert isinstance(addopts, str)
    # as pytest splits it: the glob without its quotes, the report flag with its value
    assert shlex.split(addopts) == [
        "--import-mode=importlib",
        "--doctest-glob=*.rst",
        "--doctest-report",
        "ndiff",
    ]
    assert set(config.dropped) == {"testpaths", "pythonpath src"}


def test_a_semver_style_config_scores_every_test(tmp_path: Path) -> None:
    toml = _instance(tmp_path / "vercmp")
    result = _score(toml, tmp_path)
    assert result.harness_errors == []
    assert (result.counts.tests, result.counts.valid) == (4, 4)
    status = {m.id: (m.status, sorted(m.killed_by)) for m in result.mutants}
    assert status == {
        "as_text": (MutantStatus.KILLED, [T + "minor_ten", T + "short_equals_padded"]),
        "no_pad": (MutantStatus.KILLED, [T + "short_equals_padded"]),
    }


def test_a_suite_that_cannot_start_says_why(tmp_path: Path) -> None:
    """Without its ``pythonpath`` (under ``--import-mode=importlib``, which puts no test folder
    on ``sys.path``), the tests' conftest cannot import its helper: pytest stops before any
    test, and the harness error names the import that failed."""
    toml = _instance(tmp_path / "vercmp")
    cfg = tmp_path / "vercmp" / "setup.cfg"
    cfg.write_text(cfg.read_text().replace("pythonpath = src tests\n", ""))
    result = _score(toml, tmp_path)
    assert result.counts.tests == 0
    (error,) = result.harness_errors
    assert error.stage == "reference"
    assert "No module named 'versionpairs'" in error.message, error.message


def test_a_config_in_project_beside_its_suite_reads_its_paths_from_its_own_folder(
    tmp_path: Path,
) -> None:
    """The project kept whole in ``project/`` (its ``setup.cfg``, ``src`` and ``tests`` there,
    ``instance.toml`` one folder up, as a hand-made instance or the mutmut bench lays it out):
    ``pythonpath = src tests`` is read from ``project/``, where the suite is.  Before, any
    configuration in a ``project/`` folder was read from the instance's root, as ``build init``
    lays out an instance (its suite in the root's ``tests/``): ``tests`` was the root's, not the
    suite, and was dropped -- semver 3.0.2 scored so had no test (``No module named 'coerce'``)."""
    root = tmp_path / "vercmp"
    toml = _instance(root / "project")
    text = toml.read_text()
    for key in ("source", "tests", "pytest_config", "spec"):
        text = re.sub(rf'^{key} = "', f'{key} = "project/', text, flags=re.M)
    text = text.replace('patch = "mutants/', 'patch = "project/mutants/')
    (root / "instance.toml").write_text(text)
    toml.unlink()
    result = _score(root / "instance.toml", tmp_path)
    assert result.harness_errors == []
    assert (result.counts.tests, result.counts.valid) == (4, 4)
    assert {m.id: m.status for m in result.mutants} == {
        "as_text": MutantStatus.KILLED,
        "no_pad": MutantStatus.KILLED,
    }
