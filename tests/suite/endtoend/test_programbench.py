"""ProgramBench task directories load as suite-mode instances without conversion.

The fixture ``tests/fixtures/instances/programbench-task`` is a small ProgramBench-style task: a
POSIX-shell ``kv`` tool whose ``build.sh`` leaves ``./executable``, two test branches (one marked
``ignored``), and a ``tests.json`` with trailing commas whose ``ignored_tests`` drop a test that
fails on the gold (``gold_fail``) and one that passes on anything (``dummy_pass``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from suitebench.model.instance import Instance, InstanceError
from suitebench.model.programbench import (
    ProgramBenchInstance,
    branch_of,
    ignored_branches,
    is_programbench_task,
    load_programbench_task,
    load_programbench_tasks,
    node_id_to_programbench_id,
    programbench_branches,
    programbench_id_to_node_id,
    read_tests_json,
)
from suitebench.suite import score as score_module

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "instances" / "programbench-task"
BRANCH = "5f1c2e9a7b30"
SUITE = f"tests/{BRANCH}/eval/tests"  # node ids carry the branch: the workspace's path
GOLD_FAIL = f"{SUITE}/test_lookup.py::TestErrors::test_inline_comment_is_stripped"
DUMMY = f"{SUITE}/test_lookup.py::test_environment_is_not_read"


def test_reads_the_active_branch_with_ignored_tests_excluded_and_reasons_kept() -> None:
    inst = load_programbench_task(TASK)
    assert isinstance(inst, Instance) and isinstance(inst, ProgramBenchInstance)
    assert inst.branches == (BRANCH,) and inst.branch == BRANCH
    assert inst.tests == TASK / "tests"
    assert inst.source == TASK and inst.build == "build.sh"
    assert len(inst.expected_tests) == 11
    assert inst.ignored_tests == {GOLD_FAIL: ("gold_fail",), DUMMY: ("dummy_pass", "gold_flaky")}
    scored = inst.scored_tests()
    assert len(scored) == 9
    assert GOLD_FAIL not in scored and DUMMY not in scored
    assert f"{SUITE}/test_lookup.py::TestComments::test_hash_lines_ignored" in scored
    assert branch_of(GOLD_FAIL) == BRANCH
    assert inst.programbench_ids[GOLD_FAIL] == (
        "eval.tests.test_lookup.TestErrors.test_inline_comment_is_stripped"
    )


def test_ignored_branch_is_skipped_and_its_reason_kept() -> None:
    assert is_programbench_task(TASK)
    assert programbench_branches(TASK) == [BRANCH]
    assert ignored_branches(TASK) == {"9d04a6e1c8f2": "gold_fail_branch"}
    assert [i.branch for i in load_programbench_tasks(TASK)] == [BRANCH]
    with pytest.raises(InstanceError, match="gold_fail_branch") as info:
        load_programbench_task(TASK, "9d04a6e1c8f2")
    assert BRANCH in str(info.value)  # the error names the branches there are to choose


def test_a_branch_not_in_the_task_is_an_error_naming_the_choices() -> None:
    with pytest.raises(InstanceError) as info:
        load_programbench_task(TASK, "nosuch")
    assert info.value.field == "branches.nosuch"
    assert f"['{BRANCH}'] (ignored: ['9d04a6e1c8f2'])" in str(info.value)


def test_trailing_commas_are_tolerated_and_nothing_else() -> None:
    text = (TASK / "tests.json").read_text()
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # the fixture really has them
    assert read_tests_json(TASK / "tests.json")["branches"][BRANCH]["ignored"] is False


def test_commas_inside_strings_survive(tmp_path: Path) -> None:
    path = tmp_path / "tests.json"
    path.write_text('{"branches": {"b": {"tests": ["a,]", "x\\",}",],},},}')
    assert read_tests_json(path)["branches"]["b"]["tests"] == ["a,]", 'x",}']


def test_broken_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tests.json"
    path.write_text('{"branches": {"b": {"tests": ["a"]}')
    with pytest.raises(InstanceError) as info:
        read_tests_json(path)
    assert info.value.file == str(path)


def _copy_task(tmp_path: Path) -> Path:
    task = tmp_path / "task"
    shutil.copytree(TASK, task)
    return task


def test_listed_test_without_a_module_is_an_error_naming_the_field(tmp_path: Path) -> None:
    task = _copy_task(tmp_path)
    data = read_tests_json(task / "tests.json")
    data["branches"][BRANCH]["tests"].append("eval.tests.test_gone.test_x")
    (task / "tests.json").write_text(json.dumps(data))
    with pytest.raises(InstanceError) as info:
        load_programbench_task(task)
    assert info.value.field == f"branches.{BRANCH}.tests[11]"
    assert "test_gone" in str(info.value)


def test_missing_build_script_is_an_error(tmp_path: Path) -> None:
    task = _copy_task(tmp_path)
    (task / "build.sh").unlink()
    with pytest.raises(InstanceError, match=r"build\.sh"):
        load_programbench_task(task)


def test_several_active_branches_are_scored_together(tmp_path: Path) -> None:
    """As ProgramBench scores a task: every branch not ignored, its tests' ids carrying it;
    ``--branch`` narrows to one."""
    task = _copy_task(tmp_path)
    data = read_tests_json(task / "tests.json")
    data["branches"]["9d04a6e1c8f2"]["ignored"] = False
    (task / "tests.json").write_text(json.dumps(data))
    both = load_programbench_task(task)
    assert both.branches == (BRANCH, "9d04a6e1c8f2")
    # 11 listed on the first branch + 1 on the second
    assert len(both.expected_tests) == 12
    other = "tests/9d04a6e1c8f2/eval/tests/test_more.py::test_exports_env_format"
    assert both.expected_tests[-1] == other
    assert both.programbench_ids[other] == "eval.tests.test_more.test_exports_env_format"
    with pytest.raises(ValueError, match="2 branches"):
        _ = both.branch
    assert load_programbench_task(task, "9d04a6e1c8f2").expected_tests == (other,)
    assert [i.branch for i in load_programbench_tasks(task)] == [BRANCH, "9d04a6e1c8f2"]


def test_id_forms_round_trip(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "cli").mkdir(parents=True)
    (suite / "cli" / "test_args.py").write_text("")
    (suite / "test_top.py").write_text("")
    cases = {
        "eval.tests.test_top.test_a": "tests/test_top.py::test_a",
        "eval.tests.test_top.TestX.test_b": "tests/test_top.py::TestX::test_b",
        "eval.tests.cli.test_args.test_c[1.5-a.b]": "tests/cli/test_args.py::test_c[1.5-a.b]",
    }
    for programbench_id, node_id in cases.items():
        assert programbench_id_to_node_id(programbench_id, suite) == node_id
        assert node_id_to_programbench_id(node_id) == programbench_id
        in_branch = node_id.replace("tests/", "tests/b7/eval/tests/", 1)
        assert programbench_id_to_node_id(programbench_id, suite, "b7") == in_branch
        assert node_id_to_programbench_id(in_branch) == programbench_id
        assert branch_of(in_branch) == "b7" and branch_of(node_id) is None
    assert (
        programbench_id_to_node_id("eval/tests/cli/test_args.py::TestY::test_d", suite)
        == "tests/cli/test_args.py::TestY::test_d"
    )
    with pytest.raises(ValueError):
        programbench_id_to_node_id("tests.test_top.test_a", suite)
    with pytest.raises(ValueError):
        programbench_id_to_node_id("eval/tests/test_gone.py::test_a", suite)


def _junit_failures(report: Path) -> set[str]:
    failed = set()
    for case in ET.parse(report).iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.add(f"{case.get('classname')}.{case.get('name')}")
    return failed


def test_refined_suite_passes_on_the_gold_and_the_gold_fail_test_does_not(
    tmp_path: Path,
) -> None:
    """Run the branch the ProgramBench way (build.sh, then pytest from the branch directory):
    the only failing test is the one tests.json ignores as gold_fail."""
    inst = load_programbench_task(TASK)
    workspace = tmp_path / "workspace"
    shutil.copytree(inst.source, workspace, ignore=shutil.ignore_patterns("tests", "tests.json"))
    subprocess.run(["sh", "build.sh"], cwd=workspace, check=True)
    shutil.copytree(TASK / "tests" / BRANCH / "eval", workspace / "eval")
    report = tmp_path / "results.xml"
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "eval/tests/"]
    subprocess.run([*argv, f"--junitxml={report}"], cwd=workspace, env=env, capture_output=True)
    failed = _junit_failures(report)
    assert failed == {inst.programbench_ids[GOLD_FAIL]}
    assert {inst.programbench_ids[t] for t in inst.scored_tests()}.isdisjoint(failed)


@pytest.mark.slow
def test_score_suite_scores_the_refined_suite_of_a_programbench_task(tmp_path: Path) -> None:
    """The ignored tests leave the reference suite (reasons reported); the rest is valid."""
    score = score_module
    from suitebench.run.store import Store

    inst = load_programbench_task(TASK)
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score.score_suite(inst, store=store, cache_dir=tmp_path / "builds")
    finally:
        store.close()
    assert set(result.test_ids()) == set(inst.scored_tests())
    assert result.excluded_tests == {t: list(r) for t, r in inst.ignored_tests.items()}
    assert all(t.valid for t in result.tests)
    assert result.validity == 1.0


NOTESTS = TASK.parent / "programbench-notests"


def test_a_task_published_without_tests_json_is_read_with_every_test() -> None:
    """No tests.json: build.sh and tests/<branch>/eval/tests/*.py make the task; nothing is
    ignored and no list restricts the suite (every collected test is in it)."""
    assert not (NOTESTS / "tests.json").exists()
    assert is_programbench_task(NOTESTS)
    inst = load_programbench_task(NOTESTS)
    assert inst.branches == ("main",) and programbench_branches(NOTESTS) == ["main"]
    assert inst.tests == NOTESTS / "tests"
    assert inst.source == NOTESTS and inst.build == "build.sh"
    assert inst.expected_tests == () and inst.ignored_tests == {}
    assert ignored_branches(NOTESTS) == {}


def test_without_tests_json_every_branch_on_disk_is_read(tmp_path: Path) -> None:
    task = tmp_path / "calc"
    shutil.copytree(NOTESTS, task)
    shutil.copytree(task / "tests" / "main", task / "tests" / "a1b2")
    (task / "tests" / "empty" / "eval" / "tests").mkdir(parents=True)  # no *.py: no branch
    assert programbench_branches(task) == ["a1b2", "main"]
    assert load_programbench_task(task).branches == ("a1b2", "main")
    assert load_programbench_task(task, "main").branches == ("main",)
    with pytest.raises(InstanceError, match=r"no tests\.json.*\['a1b2', 'main'\]"):
        load_programbench_task(task, "gone")


def test_an_instance_or_a_bare_tests_dir_is_not_a_task(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_x.py").write_text("")
    (repo / "build.sh").write_text("")
    assert not is_programbench_task(repo)  # tests/test_x.py is not a branch
    task = tmp_path / "task"
    shutil.copytree(NOTESTS, task)
    (task / "instance.toml").write_text("")
    assert not is_programbench_task(task)
