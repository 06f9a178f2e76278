"""ProgramBench tasks as they are published, through the commands a user runs on them.

``programbench-notests`` ships without ``tests.json`` (build.sh, ``tests/main/eval/tests`` and
the ``eval/run.sh`` ProgramBench runs them with); ``programbench-task`` has one and a shell
program.  The expected figures are read off the fixtures (see their READMEs): calc.py has four
arithmetic operators and the five tests never try ``div``, so V = 5/5 and M = 3/4.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ..conftest import suitebench

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "instances"


def _task(tmp_path: Path, name: str) -> Path:
    task = tmp_path / name
    shutil.copytree(FIXTURES / name, task)
    return task


def test_task_without_tests_json_builds_mutants_and_scores(tmp_path: Path) -> None:
    task = _task(tmp_path, "programbench-notests")
    built = suitebench(tmp_path, "build", "mutants", str(task), "--operator", "arithmetic")
    assert built.returncode == 0, built.stderr
    assert f"4 mutants written to {task}/mutants" in built.stdout
    assert sorted(p.name for p in (task / "mutants").glob("*.diff")) == [
        "op0001.diff", "op0002.diff", "op0003.diff", "op0004.diff"
    ]  # fmt: skip
    assert not (task / "instance.toml").exists()  # the task stays a task
    out = tmp_path / "out"
    scored = suitebench(tmp_path, "score", str(task), "--out", str(out))
    assert scored.returncode == 0, scored.stderr
    assert "V = 100.0% (5/5 valid" in scored.stdout
    assert "M = 75.0% (3/4 killed" in scored.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["mutation_score"] == 3 / 4
    survivors = [m for m in results["mutants"] if m["status"] == "survived"]
    assert [m["description"] for m in survivors] == ["calc.py:15: '//' -> '/'"]


def test_bundled_task_builds_mutants_without_a_traceback(tmp_path: Path) -> None:
    """Its program is a shell script (``kv.sh``): it gets operator mutants (tree-sitter's bash
    grammar), in place and with --out, and its build script none."""
    task = _task(tmp_path, "programbench-task")
    for extra in ([], ["--out", str(tmp_path / "copy")]):
        proc = suitebench(tmp_path, "build", "mutants", str(task), *extra)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "mutants written" in proc.stdout and "no operator" not in proc.stdout
        written = sorted((Path(extra[1]) if extra else task).glob("mutants/*.diff"))
        assert written
        assert all("+++ b/kv.sh" in p.read_text() for p in written), written
    assert (tmp_path / "copy" / "tests.json").is_file()  # --out is a copy of the task


def test_init_takes_the_branch_as_its_workspace(tmp_path: Path) -> None:
    task = _task(tmp_path, "programbench-notests")
    out = tmp_path / "calc"
    proc = suitebench(tmp_path, "build", "init", str(task), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "5 reference tests kept of 5" in proc.stdout
    suite = sorted(p.relative_to(out / "tests").as_posix() for p in (out / "tests").rglob("*"))
    # The branch as the workspace its tests expect: its whole eval/, beside ./executable
    assert suite == [
        "main", "main/eval", "main/eval/run.sh", "main/eval/tests",
        "main/eval/tests/test_calc.py", "main/executable",
    ]  # fmt: skip
    assert os.readlink(out / "tests" / "main" / "executable") == "../../executable"
    assert sorted(p.name for p in (out / "src").iterdir()) == ["README.md", "build.sh", "calc.py"]


@pytest.mark.parametrize("step", ["hygiene", "targets", "refine", "spec"])
def test_steps_that_need_an_instance_say_so_on_a_task(tmp_path: Path, step: str) -> None:
    task = _task(tmp_path, "programbench-notests")
    proc = suitebench(tmp_path, "build", step, str(task))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "a ProgramBench task has no instance.toml" in proc.stderr
    assert f"suitebench build init {task} --out DIR" in proc.stderr


def test_stats_reads_a_task(tmp_path: Path) -> None:
    task = _task(tmp_path, "programbench-notests")
    proc = suitebench(tmp_path, "--json", "build", "stats", str(task))
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["instances"]
    assert row["reference_tests"] == 5 and row["mutants"] == 0


def test_a_directory_that_is_neither_names_both_forms(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    proc = suitebench(tmp_path, "score", str(tmp_path / "repo"))
    assert proc.returncode == 2
    assert "instance.toml" in proc.stderr and "ProgramBench task" in proc.stderr
