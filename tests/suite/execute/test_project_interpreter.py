"""An instance names the interpreter its tests run on: a project's venv with its own test
dependencies, read-only in the sandbox, recorded in the results and in every run's key.

The venv is made here by ``python -m venv`` with pytest (and what pytest needs) copied into
it from this interpreter's installation, plus ``slugdep``, a small test dependency that
suitebench's own interpreter does not have -- as ``text-unidecode`` is for python-slugify.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import pytest

from suitebench.model.instance import InstanceError, load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.interpreter import probe
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance

SLUGIFY = '''\
"""Slugs for titles."""

from slugdep import fold


def slugify(text, sep="-"):
    words = fold(text).lower().split()
    return sep.join(w for w in words if w.isalnum())
'''
TESTS = {
    "test_slug.py": """\
import slugdep
from slugs import slugify


def test_words_joined():
    assert slugify("Hello Big World") == "hello-big-world"


def test_accents_folded():
    assert slugify("Caf\\u00e9 Cr\\u00e8me") == "cafe-creme"


def test_separator():
    assert slugify("a b", sep="_") == "a_b"


def test_the_project_s_plugin_fixture(spaced):
    assert slugify(spaced) == "a-b"


def test_runs_on_the_project_s_venv_alone():
    import importlib.util, sys
    assert sys.prefix.endswith("/slugs/venv")
    assert importlib.util.find_spec("typer") is None  # suitebench's own venv has it
"""
}
MUTANTS = [
    ("sep_ignored", "slugs/__init__.py", "return sep.join(", 'return "-".join('),
    ("no_lower", "slugs/__init__.py", "fold(text).lower()", "fold(text)"),
]
SLUGDEP = '''\
"""Folds accents away (the project's test dependency)."""

import unicodedata


def fold(text):
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
'''


def _copy_distribution(name: str, site: Path) -> None:
    dist = metadata.distribution(name)
    for rel in dist.files or ():
        src = Path(str(dist.locate_file(rel)))
        if src.is_file() and ".." not in rel.parts:
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, site / rel)


def make_venv(root: Path, *, with_pytest: bool = True) -> Path:
    """A project venv: pytest and its requirements, and ``slugdep`` with its dist-info."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    py = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = root / "lib" / py / "site-packages"
    assert site.is_dir(), sysconfig.get_paths()
    if with_pytest:
        for name in ("pytest", "pluggy", "iniconfig", "packaging", "pygments"):
            _copy_distribution(name, site)
    (site / "slugdep.py").write_text(SLUGDEP)
    _distribution(site, "slugdep", "")
    # A pytest plugin of the project's (a fixture its tests use), and one that reorders tests,
    # which suitebench leaves out (loading it would fail every run).
    (site / "slugplug.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef spaced():\n    return 'a  b'\n"
    )
    _distribution(site, "slugplug", "[pytest11]\nslugplug = slugplug\n")
    (site / "pytest_randomly.py").write_text("raise RuntimeError('must not be loaded')\n")
    _distribution(site, "pytest-randomly", "[pytest11]\nrandomly = pytest_randomly\n")
    return root / "bin" / "python"


def _distribution(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text("")
    if entry_points:
        (info / "entry_points.txt").write_text(entry_points)


def _instance(tmp_path: Path, python: str | None) -> Path:
    toml = write_python_instance(
        tmp_path / "slugs",
        name="slugs",
        source={"slugs/__init__.py": SLUGIFY},
        tests=TESTS,
        spec="# Slugs\n",
        mutants=MUTANTS,
    )
    if python is not None:
        toml.write_text(
            toml.read_text().replace('tests = "tests"', f'tests = "tests"\npython = "{python}"')
        )
    return toml


def test_a_suite_runs_on_the_interpreter_its_instance_names(tmp_path: Path) -> None:
    make_venv(tmp_path / "slugs" / "venv")
    toml = _instance(tmp_path, "venv/bin/python")
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(load_instance(toml), store=store)
    assert [t.message for t in result.tests if not t.valid] == []
    assert result.validity == 1.0
    by_id = {m.id: m for m in result.mutants}
    assert by_id["sep_ignored"].killed_by == ["tests/test_slug.py::test_separator"]
    assert by_id["no_lower"].status is MutantStatus.KILLED
    assert set(by_id["no_lower"].killed_by) == {
        "tests/test_slug.py::test_words_joined",
        "tests/test_slug.py::test_accents_folded",
    }
    assert result.versions["interpreter"] == str(tmp_path / "slugs" / "venv" / "bin" / "python")
    # A venv of suitebench's own Python compiles as this process does: its programs are
    # compiled here, with bytecode for the processes its tests start; another compiler's not.
    python = probe(str(tmp_path / "slugs" / "venv" / "bin" / "python"))
    assert python.compiles_here
    assert not replace(python, compiler=python.compiler + "+").compiles_here
    assert list((tmp_path / "builds").glob("*/tree/slugs/__pycache__/*.pyc"))
    assert result.versions["pytest"] == pytest.__version__
    assert result.versions["pytest_plugins"] == "slugplug"
    assert result.versions["pytest_plugins_left_out"] == "randomly: reorders tests"
    first = result.versions["packages"]

    # A package installed into the venv later: new runs, not the store's.
    site = next((tmp_path / "slugs" / "venv" / "lib").glob("python3*/site-packages"))
    info = site / "extra-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: extra\nVersion: 2.0\n")
    again = score_suite(load_instance(toml), store=store)
    assert again.versions["packages"] != first
    assert again.validity == 1.0


def test_without_the_project_s_interpreter_its_tests_cannot_import_their_dependency(
    tmp_path: Path,
) -> None:
    result = score_suite(load_instance(_instance(tmp_path, None)), store=Store(tmp_path / "s.db"))
    assert result.validity == 0.0
    assert all("slugdep" in t.message for t in result.tests), [t.message for t in result.tests]


def test_an_interpreter_that_cannot_run_suites_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InstanceError, match=r"instance.toml.*python.*no file"):
        load_instance(_instance(tmp_path / "a", "nowhere/bin/python"))
    make_venv(tmp_path / "b" / "slugs" / "bare", with_pytest=False)
    toml = _instance(tmp_path / "b", "bare/bin/python")
    with pytest.raises(InstanceError, match=r"python.*no pytest; install pytest >= 8 into it"):
        score_suite(load_instance(toml), store=Store(tmp_path / "s.db"))


def test_the_interpreter_is_probed_in_the_sandbox(tmp_path: Path) -> None:
    """A venv's ``.pth`` lines run whenever its interpreter starts: the probe starts it in the
    sandbox, where what they try to write outside its scratch directory is not written."""
    python = make_venv(tmp_path / "slugs" / "venv")
    site = next((tmp_path / "slugs" / "venv" / "lib").glob("python3*/site-packages"))
    marker = tmp_path / "written-by-the-venv"
    (site / "zz_startup.pth").write_text(
        f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran here')\n"
    )
    subprocess.run([str(python), "-c", "pass"], check=True)  # unsandboxed, it writes
    assert marker.read_text() == "ran here"
    marker.unlink()
    toml = _instance(tmp_path, "venv/bin/python")
    result = score_suite(load_instance(toml), store=Store(tmp_path / "s.db"))
    assert result.versions["interpreter"] == str(python)
    assert not marker.exists()


def test_a_project_s_pytest_the_direct_protocol_does_not_know_runs_by_pytest_s_and_says_so(
    tmp_path: Path,
) -> None:
    """The project's venv says its pytest is 8.4.2 (this pytest, relabelled: a pytest the
    direct protocol was not written for).  Its mutants' tests run through pytest's hooks, with
    the same verdicts as on suitebench's own pytest (the first test here), and results.json
    says which protocol ran and why."""
    make_venv(tmp_path / "slugs" / "venv")
    site = next((tmp_path / "slugs" / "venv" / "lib").glob("python3*/site-packages"))
    version = site / "_pytest" / "_version.py"
    text = version.read_text()
    version.write_text(text.replace(f"'{pytest.__version__}'", "'8.4.2'"))
    python = probe(str(tmp_path / "slugs" / "venv" / "bin" / "python"))
    assert python.pytest == "8.4.2"
    assert python.direct_off == (
        "pytest 8.4.2: the direct protocol knows pytest>=9,<10; every test runs through "
        "pytest's hooks, as with --protocol pytest"
    )
    toml = _instance(tmp_path, "venv/bin/python")
    result = score_suite(load_instance(toml), store=Store(tmp_path / "store.sqlite"))
    assert result.limits["protocol"] == "pytest"
    assert result.limits["protocol_note"] == f"the direct protocol is off: {python.direct_off}"
    assert result.versions["pytest"] == "8.4.2"
    assert result.validity == 1.0
    by_id = {m.id: m for m in result.mutants}
    assert by_id["sep_ignored"].killed_by == ["tests/test_slug.py::test_separator"]
    assert set(by_id["no_lower"].killed_by) == {
        "tests/test_slug.py::test_words_joined",
        "tests/test_slug.py::test_accents_folded",
    }
