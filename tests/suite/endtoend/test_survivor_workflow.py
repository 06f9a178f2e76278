"""The daily workflow on a project's own suite: survivors listed first, ``show`` and ``apply``
one of them, gate CI on M (``--fail-under``), with the settings the project keeps in its own
``pyproject.toml`` and an ``instance.toml`` written by hand at the project's root.

The project is small enough to work every figure out by hand:

    def clamp(x, lo, hi):          # line 1
        \"\"\"x limited to [lo, hi].\"\"\"
        if x < lo:                 # line 3
            return lo
        if x > hi:                 # line 5
            return hi              # line 6
        return x

Its tests clamp -5 and 5 into [0, 10] (never a value above 10, never x == lo) and check that
the README's example holds (reading ``README.md`` from the project's root). Three mutants:

* ``k1``: ``x < lo`` -> ``x > lo``: clamp(-5, 0, 10) returns -5 and clamp(5, 0, 10) returns 0,
  so both clamp tests kill it;
* ``s1``: ``return hi`` -> ``return lo`` at line 6: no test goes above ``hi``: survives;
* ``s2``: ``x < lo`` -> ``x <= lo`` at line 3: only differs at ``x == lo``: survives.

So M = 1/3 = 33.3%, and no test can kill either survivor: line 6 never runs (no value above
``hi``), and line 3 runs but ``-5 < 0`` and ``-5 <= 0`` are both true, ``5 < 0`` and ``5 <= 0``
both false (the score's infection probe sees that). k1 runs on the two clamp tests (both
reach line 3 and get a different value there); the README test never calls ``clamp``. V = 3/3
only if the README is carried beside the tests, with the project's ``filterwarnings = error``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ..conftest import suitebench

SOURCE = '''def clamp(x, lo, hi):
    """x limited to [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''

TESTS = """from pathlib import Path

from clamp import clamp


def test_below():
    assert clamp(-5, 0, 10) == 0


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_readme_example():
    readme = Path(__file__).parent.parent / "README.md"
    assert "clamp(-5, 0, 10) == 0" in readme.read_text(encoding="utf-8")
"""

PYPROJECT = """[project]
name = "clamp"
version = "1.0"

[tool.pytest.ini_options]
pythonpath = ["src"]
filterwarnings = ["error"]

[tool.suitebench.score]
per-test-timeout = 7
"""

INSTANCE = """name = "clamp"
kind = "python"
source = "src/"
package = "clamp"
tests = "tests/"

[[mutants]]
id = "k1"
patch = "mutants/k1.diff"

[[mutants]]
id = "s1"
patch = "mutants/s1.diff"

[[mutants]]
id = "s2"
patch = "mutants/s2.diff"
"""


def _diff(line: int, old: str, new: str) -> str:
    """A one-line change of SOURCE at ``line`` with no context (``patch -p1`` from src/)."""
    return (
        f"--- a/clamp/__init__.py\n+++ b/clamp/__init__.py\n@@ -{line} +{line} @@\n-{old}\n+{new}\n"
    )


def _git(project: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, a git repository with an ``instance.toml`` written at its root."""
    root = tmp_path_factory.mktemp("clamp-project")
    (root / "src" / "clamp").mkdir(parents=True)
    (root / "src" / "clamp" / "__init__.py").write_text(SOURCE)
    (root / "tests").mkdir()
    (root / "tests" / "test_clamp.py").write_text(TESTS)
    (root / "README.md").write_text("# clamp\n\n`clamp(-5, 0, 10) == 0`\n")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "instance.toml").write_text(INSTANCE)
    (root / "mutants").mkdir()
    (root / "mutants" / "k1.diff").write_text(_diff(3, "    if x < lo:", "    if x > lo:"))
    (root / "mutants" / "s1.diff").write_text(_diff(6, "        return hi", "        return lo"))
    (root / "mutants" / "s2.diff").write_text(_diff(3, "    if x < lo:", "    if x <= lo:"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "clamp")
    return root


@pytest.fixture(scope="module")
def scored(project: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """One score of the project (the store in its own directory): (store dir, stdout, err)."""
    home = tmp_path_factory.mktemp("score")
    proc = suitebench(home, "score", str(project), "--out", str(home / "out"))
    assert proc.returncode == 0, proc.stderr
    return home, proc.stdout, proc.stderr


def test_survivors_are_listed_first_with_place_change_and_reaching_tests(
    scored: tuple[Path, str, str],
) -> None:
    _, out, _ = scored
    assert "V = 100.0% (3/3 valid" in out  # README carried, so the README test is valid
    assert "M = 33.3% (1/3 killed" in out
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if "2 survived" in line)
    killed = next(i for i, line in enumerate(lines) if line.startswith("1 killed"))
    assert first < killed  # survivors before the killed summary
    block = "\n".join(lines[first:killed])
    assert "s1  clamp/__init__.py:6 in clamp" in block
    assert "s2  clamp/__init__.py:3 in clamp" in block
    assert "return hi  ->  return lo" in block
    assert "if x < lo:  ->  if x <= lo:" in block
    assert block.count("no test reaches the change") == 2
    assert "k1" not in block  # the killed one is counted, not listed
    assert "M per file: clamp/__init__.py 33.3% (1/3)" in out


def test_results_are_relative_to_the_instance_and_carry_the_diff(
    scored: tuple[Path, str, str], project: Path
) -> None:
    home, _, _ = scored
    results = json.loads((home / "out" / "results.json").read_text())
    assert results["instance_dir"] == str(project)
    s1 = next(m for m in results["mutants"] if m["id"] == "s1")
    assert s1["patch"] == "mutants/s1.diff"
    assert "+        return lo" in s1["diff"]
    assert (s1["file"], s1["line"], s1["function"]) == ("clamp/__init__.py", 6, "clamp")
    # The project's own configuration was found from tests/ upward and carried.
    assert results["pytest_config"]["source"] == str(project / "pyproject.toml")
    assert results["pytest_config"]["carried"]["filterwarnings"] == ["error"]
    # [tool.suitebench.score] per-test-timeout = 7 became the default
    assert results["limits"]["per_test"] == 7


def test_show_prints_diff_status_and_tests(scored: tuple[Path, str, str]) -> None:
    home, _, _ = scored
    proc = suitebench(home, "show", "s2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("s2  survived  clamp/__init__.py:3 in clamp")
    assert "+    if x <= lo:" in proc.stdout and "no test reaches the change" in proc.stdout
    proc = suitebench(home, "show", "k1", "--results", str(home / "out"))
    assert proc.stdout.startswith("k1  killed  clamp/__init__.py:3 in clamp")
    assert "killed by 2 test(s):" in proc.stdout
    assert "tests/test_clamp.py::test_below" in proc.stdout
    proc = suitebench(home, "show", "nope")
    assert proc.returncode == 2 and "no mutant 'nope'" in proc.stderr


def test_apply_writes_the_mutant_and_refuses_a_dirty_tree(
    scored: tuple[Path, str, str], project: Path
) -> None:
    home, _, _ = scored
    source = project / "src" / "clamp" / "__init__.py"
    try:
        proc = suitebench(home, "apply", "s1")
        assert proc.returncode == 0, proc.stderr
        assert "        return lo\n    return x" in source.read_text()
        proc = suitebench(home, "apply", "s2")  # the tree now has a change
        assert proc.returncode == 2 and "uncommitted changes" in proc.stderr
        assert "x <= lo" not in source.read_text()
        proc = suitebench(home, "apply", "s2", "--force")
        assert proc.returncode == 0 and "x <= lo" in source.read_text()
    finally:
        _git(project, "checkout", "--", ".")


def test_fail_under_gates_on_m(scored: tuple[Path, str, str], project: Path) -> None:
    home, _, _ = scored
    # M = 33.3%: below 50 fails with exit 5, 33 passes (the runs come from the store)
    proc = suitebench(home, "score", str(project), "--fail-under", "50")
    assert proc.returncode == 5
    assert "M = 33.3% is below 50%: exit 5" in proc.stderr
    proc = suitebench(home, "score", str(project), "--fail-under", "33")
    assert proc.returncode == 0, proc.stderr


def test_json_puts_machine_output_on_stdout_and_human_on_stderr(
    scored: tuple[Path, str, str], project: Path
) -> None:
    home, _, _ = scored
    proc = suitebench(home, "score", str(project), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["counts"]["survived"] == 2
    assert "2 survived" in proc.stderr and "M = 33.3%" in proc.stderr


def test_unknown_setting_is_a_one_line_error(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.suitebench.score]\nfail-undr = 80\n")
    (project / "instance.toml").write_text("name = 'p'\n")
    proc = suitebench(tmp_path, "score", str(project))
    assert proc.returncode == 2
    assert f"{project / 'pyproject.toml'}: [tool.suitebench.score] fail-undr: no such option" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_report_leads_with_survivors_and_has_no_spec_charts(
    scored: tuple[Path, str, str], tmp_path: Path
) -> None:
    home, _, _ = scored
    page = tmp_path / "r.html"
    proc = suitebench(home, "report", str(home / "out"), "--out", str(page))
    assert proc.returncode == 0, proc.stderr
    text = page.read_text(encoding="utf-8")
    # the score's part opens on its survivors, grouped by file, before the mutant table
    assert "<details open>" in text
    survivors = text.index("Survivors: the changes no valid test notices")
    assert survivors < text.index("<h4>Mutants</h4>")
    assert "<code>clamp/__init__.py</code>: 2 survived" in text
    assert "<code>clamp/__init__.py:6 in clamp</code>" in text
    # killed green and survived red, as Stryker and PIT colour them
    assert ".killed,.Killed,.timeout{background:#d9ead3}" in text
    assert ".survived,.Survived{background:#f8d7d3}" in text
    # no spec: no chart of spec sections, no paper figure, no sections-vs-M correlation
    assert "M per spec section" not in text and "Figure 12" not in text
    assert "spec sections (with mutants) vs M" not in text
    # nor an empty "M per section" column in the scores' table
    assert "M per section" not in text
