"""A ProgramBench task scored as ProgramBench runs it: every branch, each in its workspace.

The fixture ``tests/fixtures/instances/programbench-numtool`` is a small C program (``numtool``:
count, max, mean over files; a sum of stdin with a ``> `` prompt on a terminal) with three test
branches in ProgramBench's layout (its README gives the whole picture):

* ``a1c9e04b``: 6 tests of ``eval/tests/test_cli.py`` reading ``eval/fixtures/`` (by a path
  relative to the workspace, at import time too, and by ``__file__``), through a sibling module
  ``helpers.py``; ``test_help_mentions_version`` is ignored (``gold_fail``);
* ``b7d2f511``: its own ``test_cli.py`` and ``helpers.py`` (the same names, other functions),
  a pty test, ``test_reads_nothing_as_zero`` ignored (``dummy_pass``), and ``test_means.py``
  whose fixture the branch does not ship: it does not import, and tests.json lists 2 tests in it;
* ``c3e8a7f0``: ignored whole (``gold_fail_branch``).

Expected by hand: units of V are the listed tests not ignored, 5 + 4 = 9; valid are a1c9e04b's
5 and b7d2f511's pipe and pty tests, V = 7/9, the two of ``test_means.py`` invalid with its
collection error.  Mutants (``mutants/operators.json``): m1 (a last line without a newline not
counted) dies by ``test_count_no_trailing_newline``, m2 (max starts from 0) by
``test_max_negative``, m3 (the prompt ``>`` without its space) by the pty test only; m4 (an int
cast in the sum: no test sums past 2^31) and m5 (mean leaves out the first number: only the
broken file tests mean) survive: M = 3/5.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from suitebench.model.programbench import load_programbench_task, programbench_id_to_node_id
from suitebench.run.store import Store
from suitebench.suite.implementation import score_implementation
from suitebench.suite.score import score_suite

from ..conftest import suitebench

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TASK = FIXTURES / "instances" / "programbench-numtool"
SUBMISSION = FIXTURES / "submissions" / "numtool-compile"
A, B, IGNORED_BRANCH = "a1c9e04b", "b7d2f511", "c3e8a7f0"
A_CLI = f"tests/{A}/eval/tests/test_cli.py"
B_CLI = f"tests/{B}/eval/tests/test_cli.py"
MEANS = f"tests/{B}/eval/tests/test_means.py"
PTY = f"{B_CLI}::test_prompt_on_a_terminal"


def _task(tmp_path: Path) -> Path:
    task = tmp_path / "numtool"
    shutil.copytree(TASK, task)
    return task


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The task scored once with every test on every mutant (the matrix compared below)."""
    tmp = tmp_path_factory.mktemp("numtool")
    store = Store(tmp / "store.sqlite")
    try:
        result = score_suite(
            load_programbench_task(_task(tmp)),
            store=store,
            cache_dir=tmp / "builds",
            all_tests=True,
        )
    finally:
        store.close()
    return {"result": result, "tmp": tmp}


@pytest.mark.slow
def test_every_branch_is_scored_together_in_its_workspace(scored: dict[str, object]) -> None:
    result = scored["result"]
    assert result.counts.tests == 9 and result.counts.valid == 7  # type: ignore[attr-defined]
    assert result.validity == pytest.approx(7 / 9)  # type: ignore[attr-defined]
    assert result.mutation_score == pytest.approx(3 / 5)  # type: ignore[attr-defined]
    tests = {t.id: t for t in result.tests}  # type: ignore[attr-defined]
    assert not any(IGNORED_BRANCH in t for t in tests)
    valid = {t for t, info in tests.items() if info.valid}
    assert valid == {
        f"{A_CLI}::test_count_three",
        f"{A_CLI}::test_count_no_trailing_newline",
        f"{A_CLI}::TestMax::test_max",
        f"{A_CLI}::TestMax::test_max_negative",
        f"{A_CLI}::test_missing_file_exits_2",
        f"{B_CLI}::test_sum_from_pipe",
        PTY,
    }
    for name in ("test_mean_of_table", "test_mean_rounds_toward_zero"):
        broken = tests[f"{MEANS}::{name}"]  # each listed test a unit, the file's error its reason
        assert not broken.valid and broken.reference == ["error"] * 3
        assert "No such file or directory: 'eval/fixtures/means.txt'" in broken.message
    assert result.excluded_tests == {  # type: ignore[attr-defined]
        f"{A_CLI}::test_help_mentions_version": ["gold_fail"],
        f"{B_CLI}::test_reads_nothing_as_zero": ["dummy_pass"],
    }
    killed = {m.id: m.killed_by for m in result.mutants}  # type: ignore[attr-defined]
    assert killed == {
        "m1": [f"{A_CLI}::test_count_no_trailing_newline"],
        "m2": [f"{A_CLI}::TestMax::test_max_negative"],
        "m3": [PTY],
        "m4": [],
        "m5": [],
    }


def _junit(report: Path) -> dict[str, bool]:
    """ProgramBench's reading of a run: JUnit ``classname.name`` -> passed."""
    out = {}
    for case in ET.parse(report).iter("testcase"):
        failed = any(case.find(k) is not None for k in ("failure", "error"))
        out[f"{case.get('classname')}.{case.get('name')}"] = not failed
    return out


def _programbench_way(task: Path, source: Path, branch: str, where: Path) -> dict[str, bool]:
    """Build ``source`` and run ``branch``'s ``eval/run.sh`` command in a workspace of it."""
    shutil.copytree(source, where, ignore=shutil.ignore_patterns("tests", "mutants"))
    subprocess.run(["bash", "build.sh"], cwd=where, check=True, capture_output=True)
    shutil.copytree(task / "tests" / branch / "eval", where / "eval")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    # run.sh's pytest stops at a file that does not collect and runs no test of the branch;
    # suitebench runs the others (that file's tests alone are invalid), so compare with that.
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    argv += ["--continue-on-collection-errors", "eval/tests/"]
    xml = where / "eval" / "results.xml"
    subprocess.run([*argv, f"--junitxml={xml}"], cwd=where, env=env, capture_output=True)
    return _junit(xml)


@pytest.mark.slow
def test_the_matrix_agrees_with_plain_pytest_run_the_programbench_way(
    scored: dict[str, object], tmp_path: Path
) -> None:
    """Cell for cell: each mutant built and each branch run as ``eval/run.sh`` runs it."""
    result = scored["result"]
    task = _task(tmp_path)
    inst = load_programbench_task(task)
    ours = {m.id: m.outcomes for m in result.mutants}  # type: ignore[attr-defined]
    reference = {t.id: t.reference[0] for t in result.tests}  # type: ignore[attr-defined]
    cells = 0
    for mutant in [None, *inst.mutants]:
        source = tmp_path / f"src-{mutant.id if mutant else 'ref'}"
        shutil.copytree(task, source, ignore=shutil.ignore_patterns("tests", "mutants"))
        if mutant is not None:
            subprocess.run(["patch", "-p1", "-i", str(mutant.patch)], cwd=source, check=True)
        for branch in (A, B):
            plain = _programbench_way(task, source, branch, tmp_path / f"ws-{source.name}-{branch}")
            suite = task / "tests" / branch / "eval" / "tests"
            for junit_id, passed in plain.items():
                if junit_id.endswith("eval.tests.test_means"):
                    continue  # the broken module: pytest's one case names it, not its tests
                node = programbench_id_to_node_id(junit_id, suite, branch)
                if node in result.excluded_tests:  # type: ignore[attr-defined]
                    continue
                row = reference if mutant is None else ours[mutant.id]
                status = row.get(node, reference.get(node))
                assert (status == "passed") == passed, (mutant and mutant.id, node, status)
                cells += 1
    assert cells == 6 * 7  # the reference and 5 mutants x the 7 tests that collect


@pytest.mark.slow
def test_one_branch_with_branch(tmp_path: Path) -> None:
    """``--branch b7d2f511``: its 4 listed tests not ignored (2 valid); only m3 dies there."""
    task = _task(tmp_path)
    out = tmp_path / "out"
    proc = suitebench(tmp_path, "score", str(task), "--branch", B, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "V = 50.0% (2/4 valid" in proc.stdout
    assert "M = 20.0% (1/5 killed" in proc.stdout
    results = json.loads((out / "results.json").read_text())
    assert all(t["id"].startswith(f"tests/{B}/") for t in results["tests"])


def test_a_wrong_branch_names_the_choices(tmp_path: Path) -> None:
    task = _task(tmp_path)
    agent = ["--out", str(tmp_path / "run"), "--agent-cmd", "true"]
    for command, extra in (
        (["score"], []),
        (["build", "mutants"], []),
        (["build", "stats"], []),
        (["build", "init"], ["--out", str(tmp_path / "inst")]),
        (["agent", "run", "suite"], agent),
    ):
        proc = suitebench(tmp_path, *command, str(task), *extra, "--branch", "nosuch")
        assert proc.returncode == 2, (command, proc.stderr)
        assert "Traceback" not in proc.stderr
        text = " ".join(proc.stderr.split())
        assert f"the branches are ['{A}', '{B}'] (ignored: ['{IGNORED_BRANCH}'])" in text
    proc = suitebench(tmp_path, "score", str(task), "--branch", IGNORED_BRANCH)
    assert proc.returncode == 2 and "gold_fail_branch" in proc.stderr


def _zip(path: Path) -> Path:
    """The submission as ProgramBench publishes it: ``submission/`` in a zip, compile.sh in it."""
    with zipfile.ZipFile(path, "w") as zf:
        for file in sorted(SUBMISSION.iterdir()):
            info = zipfile.ZipInfo(f"submission/{file.name}")
            info.external_attr = (0o100755 if os.access(file, os.X_OK) else 0o100644) << 16
            zf.writestr(info, file.read_bytes())
    return path


@pytest.mark.slow
def test_r_of_a_compile_sh_submission_given_as_a_zip_or_a_directory(tmp_path: Path) -> None:
    """The submission starts max from 0 (m2's bug): it fails test_max_negative alone of the 7
    valid tests, R = 6/7, whether given as its zip, a .tar.gz or its directory."""
    task = _task(tmp_path)
    inst = load_programbench_task(task)
    archive = _zip(tmp_path / "submission.zip")
    tarball = tmp_path / "submission.tar.gz"
    subprocess.run(["tar", "-czf", str(tarball), "-C", str(SUBMISSION), "."], check=True)
    store = Store(tmp_path / "store.sqlite")
    try:
        for given in (archive, tarball, SUBMISSION):
            r = score_implementation(inst, given, store=store, cache_dir=tmp_path / "builds")
            assert r.build_status == "ok", (given, r.build_message)
            assert (r.passed, r.total) == (6, 7), given
            assert list(r.failing) == [f"{A_CLI}::TestMax::test_max_negative"]
            assert set(r.excluded_invalid) == {
                f"{MEANS}::test_mean_of_table",
                f"{MEANS}::test_mean_rounds_toward_zero",
            }
    finally:
        store.close()


def test_a_submission_archive_with_a_path_outside_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path)
    evil = tmp_path / "submission.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("compile.sh", "touch ../../escaped\n")
        zf.writestr("../escaped.c", "int main(void) { return 0; }\n")
    proc = suitebench(tmp_path, "score", str(task), "--implementation", str(evil))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "member '../escaped.c' leads outside" in " ".join(proc.stderr.split())
    assert not (tmp_path / "escaped.c").exists()


@pytest.mark.slow
def test_init_lays_out_the_workspaces_and_says_what_hygiene_dropped(tmp_path: Path) -> None:
    """``build init``: both branches as workspaces (fixtures included); the two ignored tests
    removed with their reasons; hygiene drops test_means.py (it does not collect) and names
    both of its listed tests on the console: 7 kept of the 9 tests.json counts."""
    task = _task(tmp_path)
    out = tmp_path / "inst"
    proc = suitebench(tmp_path, "build", "init", str(task), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "7 reference tests kept of 9" in text
    assert f"fails {MEANS} the file does not collect: FileNotFoundError" in text
    for name in ("test_mean_of_table", "test_mean_rounds_toward_zero"):
        assert f"fails {MEANS}::{name} (its file: see above)" in text
    assert f"ignored {A_CLI}::test_help_mentions_version (gold_fail)" in text
    suite = out / "tests"
    assert sorted(p.name for p in suite.iterdir()) == [A, B]
    assert os.readlink(suite / A / "executable") == "../../executable"
    assert (suite / A / "eval" / "fixtures" / "negatives.txt").is_file()
    assert not (suite / B / "eval" / "tests" / "test_means.py").exists()
    assert (
        "test_reads_nothing_as_zero"
        not in (suite / B / "eval" / "tests" / "test_cli.py").read_text()
    )
    hygiene = json.loads((out / "hygiene.json").read_text())
    assert [d["id"] for d in hygiene["dropped"]] == [MEANS] and hygiene["not_removed"] == []
    # The new instance runs its tests in the same workspaces: all 7 left are valid.
    scored = suitebench(tmp_path, "score", str(out))
    assert scored.returncode == 0, scored.stderr
    assert "V = 100.0% (7/7 valid" in scored.stdout


@pytest.mark.slow
def test_a_pty_test_works_under_the_unshare_backend_too(tmp_path: Path) -> None:
    task = _task(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    try:
        from suitebench.run.outcome import Backend

        result = score_suite(
            load_programbench_task(task, B),
            store=store,
            cache_dir=tmp_path / "builds",
            reference_runs=1,
            mutant_ids=[],
            backend=Backend.UNSHARE,
        )
    finally:
        store.close()
    pty = next(t for t in result.tests if t.id == PTY)
    assert pty.valid, pty.message


PEEK = """
import os


def test_nothing_held_out_is_in_sight():
    assert sorted(os.listdir(".")) == ["eval", "executable"]  # the workspace
    beside_program = set(os.listdir(os.path.join("..", "..")))  # the program's build tree
    assert "numtool.c" in beside_program
    assert not {"mutants", "tests.json", "spec.md"} & beside_program
"""


@pytest.mark.slow
def test_a_suite_in_the_workspace_shape_sees_no_mutant_and_no_list(tmp_path: Path) -> None:
    """A suite given with ``--suite`` as ``eval/tests/`` runs in a workspace of its own; the
    task's mutants and tests.json (its root is the program's source) are not in the build
    tree the tests see: were they, a suite could tell a mutant from the reference by them."""
    task = _task(tmp_path)
    (task / "spec.md").write_text("# numtool\n")
    suite = tmp_path / "agent"
    (suite / "eval" / "tests").mkdir(parents=True)
    (suite / "eval" / "tests" / "test_peek.py").write_text(PEEK)
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score_suite(
            load_programbench_task(task),
            suite,
            store=store,
            cache_dir=tmp_path / "builds",
            mutant_ids=["m1"],
            reference_runs=1,
        )
    finally:
        store.close()
    (test,) = result.tests
    assert test.id == "tests/agent/eval/tests/test_peek.py::test_nothing_held_out_is_in_sight"
    assert test.valid, test.message
    assert [m.status for m in result.mutants] == ["survived"]


def test_stats_counts_the_listed_tests_of_the_branches_scored(tmp_path: Path) -> None:
    """9 listed and not ignored over the two branches (the ignored branch's test left out);
    with --branch b7d2f511, its 4."""
    task = _task(tmp_path)
    for extra, count in (([], 9), (["--branch", B], 4)):
        proc = suitebench(tmp_path, "--json", "build", "stats", str(task), *extra)
        assert proc.returncode == 0, proc.stderr
        (row,) = json.loads(proc.stdout)["instances"]
        assert (row["reference_tests"], row["mutants"]) == (count, 5)


def test_a_directory_that_does_not_collect_fails_each_listed_test_under_it() -> None:
    """A ``conftest.py`` that does not import fails its directory's collection: each listed
    test below it is an error with that reason, and the directory is no unit of its own
    (V's denominator stays the listed tests)."""
    from suitebench.suite.protocol.tally import test_universe
    from suitebench.suite.records import RunStatus, SuiteRun, TestStatus

    broken = f"tests/{B}/eval/tests"
    run = SuiteRun.from_maps(
        status=RunStatus.OK,
        tests={f"{A_CLI}::test_count_three": TestStatus.PASSED},
        collect_errors=(broken,),
        messages={broken: "FileNotFoundError: eval/fixtures/one-two.txt"},
    )
    listed = (f"{A_CLI}::test_count_three", f"{B_CLI}::test_sum_from_pipe", PTY)
    assert test_universe([run], listed) == list(listed)
    assert run.status_of(PTY) is TestStatus.ERROR
    assert run.message_of(PTY) == "FileNotFoundError: eval/fixtures/one-two.txt"
    assert run.status_of(f"{A_CLI}::test_count_three") is TestStatus.PASSED
    assert run.status_of("tests/b7d2f5110/eval/tests/x.py::t") is TestStatus.NOT_RUN  # no prefix
