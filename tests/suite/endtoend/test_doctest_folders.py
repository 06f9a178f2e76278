"""Text files of doctests in a folder pytest walks are part of the suite, as semver 3.0.2 has
them: ``testpaths = tests docs`` with ``--doctest-glob='*.rst'``, ``pythonpath = src tests``
(the tests' conftest imports a helper of the tests' folder by name) and a docs page whose
examples use a name the tests' autouse fixture puts in the session's ``doctest_namespace``.

Before: ``build init`` carried no ``docs/`` (only the root's text files were looked for), and
read ``pythonpath = tests`` from its copy of the configuration in ``project/`` -- a folder
``project/tests`` that is not the suite -- so the conftest's import failed and the reference
ran no test at all ("0 reference tests kept of 0").

``vercmp.compare`` orders dotted versions.  The project's pytest runs 5 tests: three unit tests
in ``tests/`` and, after them (``testpaths`` lists ``docs`` second), ``docs/usage/compare.rst``
and ``docs/usage/parse.rst``; ``docs/index.rst`` has no example (pytest collects nothing from
it) and ``notes/draft.rst`` is outside ``testpaths`` (its failing example is never run).

The two mutants, by hand:

* ``no_pad`` (a missing part is not 0): ``compare("1.2", "1.2.0")`` compares ``[1, 2]`` with
  ``[1, 2, 0]`` -- the shorter list is less, -1, not 0 -- so ``compare.rst`` fails; every unit
  test compares versions of one length and passes, and so does ``parse.rst`` ("2.0" and
  "10.0").  Only the docs page kills it.
* ``as_text`` (the parts stay strings): ``"10" < "9"`` as text, so ``test_minor_ten`` fails;
  ``parse.rst``'s ``compare("2.0", "10.0")`` gives 1 ("2" > "10"), not -1; ``compare.rst``
  pads ``["1", "2"]`` with the int 0 and compares it with ``"0"``: a TypeError.  The other two
  unit tests compare equal-length versions whose parts order the same as text and pass.
"""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

from ...cli_helpers import run_suitebench
from ..conftest import VERCMP_SETUP_CFG as SETUP_CFG
from ..conftest import VERCMP_SOURCE as SOURCE
from ..conftest import unified_diff

FILES = {
    "setup.cfg": SETUP_CFG,
    "src/vercmp/__init__.py": SOURCE,
    "tests/versionpairs.py": (
        'PAIRS = {"equal": ("1.2.3", "1.2.3", 0), "patch": ("1.2.3", "1.2.4", -1)}\n'
    ),
    "tests/conftest.py": """\
        import pytest
        from versionpairs import PAIRS

        import vercmp


        @pytest.fixture(autouse=True)
        def add_compare(doctest_namespace):
            doctest_namespace["compare"] = vercmp.compare


        @pytest.fixture
        def pairs():
            return PAIRS
        """,
    "tests/test_vercmp.py": """\
        from vercmp import compare


        def test_equal(pairs):
            a, b, want = pairs["equal"]
            assert compare(a, b) == want


        def test_patch(pairs):
            a, b, want = pairs["patch"]
            assert compare(a, b) == want


        def test_minor_ten():
            assert compare("1.10.0", "1.9.0") == 1
        """,
    # ``compare`` comes from the namespace the tests' fixture filled, as in semver's docs
    "docs/usage/compare.rst": """\
        Comparing
        =========

        A missing part counts as 0::

            >>> compare("1.2", "1.2.0")
            0
        """,
    "docs/usage/parse.rst": """\
        Parsing
        =======

        Parts are numbers, not text::

            >>> from vercmp import compare
            >>> compare("2.0", "10.0")
            -1
        """,
    "docs/index.rst": "vercmp\n======\n\nOrders dotted versions.\n",
    "notes/draft.rst": ">>> 1 + 1\n3\n",
}

T = "tests/test_vercmp.py::test_"
COMPARE = "docs/usage/compare.rst::compare.rst"
PARSE = "docs/usage/parse.rst::parse.rst"
MUTANTS = {
    "no_pad": (
        "    x += [0] * (width - len(x))\n    y += [0] * (width - len(y))\n",
        "",
    ),
    "as_text": ("[int(p) for p in", "[p for p in"),
}


def _project(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def _add_mutants(instance: Path) -> None:
    (instance / "mutants").mkdir(exist_ok=True)
    toml = (instance / "instance.toml").read_text()
    for mid, (old, new) in MUTANTS.items():
        after = SOURCE.replace(old, new)
        assert after != SOURCE
        diff = unified_diff("vercmp/__init__.py", SOURCE, after)
        (instance / "mutants" / f"{mid}.diff").write_text(diff)
        toml += f'\n[[mutants]]\nid = "{mid}"\npatch = "mutants/{mid}.diff"\n'
    (instance / "instance.toml").write_text(toml)


def test_build_init_and_score_run_the_docs_folders_doctests(tmp_path: Path) -> None:
    project = _project(tmp_path / "vercmp")
    instance = tmp_path / "instance"
    store = tmp_path / "store"
    proc = run_suitebench("build", "init", project, "--out", instance, store=store)
    assert proc.returncode == 0, proc.stderr
    assert "5 reference tests kept of 5" in proc.stdout + proc.stderr
    assert 'beside = ["docs"]' in (instance / "instance.toml").read_text()
    init = json.loads((instance / "init.json").read_text())["python_project"]
    # the three .rst files under docs/ match the glob; notes/ is not in testpaths
    assert init["doctest_files"] == [
        "docs/index.rst",
        "docs/usage/compare.rst",
        "docs/usage/parse.rst",
    ]
    _add_mutants(instance)
    out = tmp_path / "score"
    proc = run_suitebench("score", instance, "--out", out, store=store)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["harness_errors"] == []
    tests = {t["id"] for t in results["tests"]}
    assert tests == {T + "equal", T + "patch", T + "minor_ten", COMPARE, PARSE}
    assert results["counts"]["valid"] == 5
    with open(out / "kills.csv", newline="") as fh:
        matrix = {(r["test"], r["mutant"]): r["outcome"] for r in csv.DictReader(fh)}
    killers = {
        mid: {test for (test, m), outcome in matrix.items() if m == mid and outcome != "passed"}
        for mid in MUTANTS
    }
    assert killers == {"no_pad": {COMPARE}, "as_text": {T + "minor_ten", COMPARE, PARSE}}
    # the reason under --doctest-report ndiff: the example, the line expected and the one got
    (no_pad,) = [m for m in results["mutants"] if m["id"] == "no_pad"]
    assert no_pad["kill_messages"] == {COMPARE: '>>> compare("1.2", "1.2.0"): expected 0, got -1'}


def test_without_the_docs_the_mutant_only_they_catch_survives(tmp_path: Path) -> None:
    """The same project with ``testpaths = tests`` alone: 3 tests, ``no_pad`` survives."""
    project = _project(tmp_path / "vercmp")
    cfg = project / "setup.cfg"
    cfg.write_text(cfg.read_text().replace("testpaths = tests docs", "testpaths = tests"))
    instance = tmp_path / "instance"
    store = tmp_path / "store"
    proc = run_suitebench("build", "init", project, "--out", instance, store=store)
    assert proc.returncode == 0, proc.stderr
    assert "beside" not in (instance / "instance.toml").read_text()
    _add_mutants(instance)
    out = tmp_path / "score"
    proc = run_suitebench("score", instance, "--out", out, store=store)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["valid"] == 3
    assert {m["id"]: m["status"] for m in results["mutants"]} == {
        "no_pad": "survived",
        "as_text": "killed",
    }


def test_build_init_says_why_the_reference_ran_no_test(tmp_path: Path) -> None:
    """Without ``pythonpath`` (``--import-mode=importlib`` puts no test folder on
    ``sys.path``) the tests' conftest cannot import its helper and pytest stops before any
    test. ``build init`` said only "0 reference tests kept of 0"; it now names the cause."""
    project = _project(tmp_path / "vercmp")
    cfg = project / "setup.cfg"
    cfg.write_text(cfg.read_text().replace("pythonpath = src tests\n", ""))
    instance = tmp_path / "instance"
    proc = run_suitebench("build", "init", project, "--out", instance, store=tmp_path / "store")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert "0 reference tests kept of 0" in out
    assert "the reference's runs did not finish" in out
    assert "No module named 'versionpairs'" in out
    hygiene = json.loads((instance / "hygiene.json").read_text())
    assert len(hygiene["harness_errors"]) == 1
    assert "No module named 'versionpairs'" in hygiene["harness_errors"][0]
