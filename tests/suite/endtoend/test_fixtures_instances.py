"""The project's suite-mode instances are sound, and score to the figures their READMEs record.

Each instance under ``tests/fixtures/instances/`` (a Python CLI, a C CLI and a Python package)
carries ``expected.toml``: validity V, mutation_score M and the full kill matrix of its reference
suite.  These tests check the fixtures themselves with plain tools -- ``patch``, the instance's
``build.sh``, one ``pytest --junitxml`` per program on the host -- and then that ``score_suite``
(sandboxed, batched) yields exactly the recorded figures.  A fixture whose mutants no longer
apply, or a scorer that drifts from plain pytest, fails here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from suitebench.data import INSTANCES_DIR
from suitebench.model.instance import Instance, InstanceKind, MutantSpec, load_instance
from suitebench.suite import score as score_module

INSTANCES = INSTANCES_DIR
SCORED = ["wordfreq-py", "rpn-c", "intervals-pkg"]


def expected(name: str) -> dict[str, Any]:
    with (INSTANCES / name / "expected.toml").open("rb") as fh:
        return tomllib.load(fh)


@cache
def instance(name: str) -> Instance:
    return load_instance(INSTANCES / name)


def _patch(tree: Path, patch: Path, *, dry_run: bool) -> bool:
    """The documented way to apply a mutant: ``patch -p1`` in the source copy, no fuzz."""
    argv = ["patch", "-p1", "--batch", "--fuzz=0", "--no-backup-if-mismatch", "-s", "-i"]
    argv.append(str(patch))
    if dry_run:
        argv.append("--dry-run")
    return subprocess.run(argv, cwd=tree, capture_output=True).returncode == 0


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SUITEBENCH_"))}
    env.pop("PYTHONPATH", None)
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")]),
        SUITEBENCH_PYTHON=sys.executable,
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTHONDONTWRITEBYTECODE="1",
        **extra,
    )
    return env


def prepare(inst: Instance, mutant: MutantSpec | None, dest: Path) -> str:
    """Copy the source to ``dest/src``, apply the mutant, build: "ok", "patch_error" or
    "build_error"."""
    src = dest / "src"
    shutil.copytree(inst.source, src)
    if mutant is not None and not _patch(src, mutant.patch, dry_run=False):
        return "patch_error"
    if inst.kind is InstanceKind.PYTHON:
        check = "import compileall, sys; sys.exit(not compileall.compile_dir(sys.argv[1], quiet=1))"
        proc = subprocess.run([sys.executable, "-c", check, str(src)], capture_output=True)
        return "ok" if proc.returncode == 0 else "build_error"
    assert inst.build is not None
    proc = subprocess.run(["sh", inst.build], cwd=src, env=_env(), capture_output=True)
    if proc.returncode != 0 or not (src / "executable").is_file():
        return "build_error"
    return "ok"


def _node_id(work: Path, classname: str, name: str) -> str:
    """JUnit ``classname`` + ``name`` -> pytest node id (``tests/test_a.py::Class::test``).

    A file that did not collect has no classname and the module as name: its node id is the
    file."""
    if not classname:
        return name.replace(".", "/") + ".py"
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        module = Path(*parts[:cut]).with_suffix(".py")
        if (work / module).is_file():
            return "::".join([module.as_posix(), *parts[cut:], name])
    raise AssertionError(f"no file for {classname}")


def run_plain(inst: Instance, dest: Path) -> dict[str, str]:
    """One host pytest run of the reference suite against the program prepared in ``dest``:
    node id -> "passed" / "failed"."""
    work = dest / "work"
    shutil.copytree(inst.tests, work / "tests")
    extra: dict[str, str] = {}
    if inst.kind is InstanceKind.PYTHON:
        extra["PYTHONPATH"] = str(dest / "src")
    else:
        os.symlink(dest / "src" / "executable", work / "executable")
        extra["SUITEBENCH_EXECUTABLE"] = str(work / "executable")
    report = dest / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", "."]
    argv += ["-o", "junit_family=xunit1", f"--junitxml={report}", "tests"]
    subprocess.run(argv, cwd=work, env=_env(**extra), capture_output=True, timeout=300)
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        node = _node_id(work, case.get("classname", ""), case.get("name", ""))
        outcomes[node] = "failed" if failed else "passed"
    return outcomes


@cache
def reference_outcomes(name: str, base: str) -> dict[str, str]:
    dest = Path(base) / name / "reference"
    dest.mkdir(parents=True)
    assert prepare(instance(name), None, dest) == "ok"
    return run_plain(instance(name), dest)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("fixtures"))


@pytest.mark.parametrize("name", SCORED)
def test_fixture_loads_with_sections_targets_and_bug_descriptions(name: str, workdir: str) -> None:
    inst = instance(name)
    exp = expected(name)
    sections = set(inst.spec_sections())
    reference_tests = set(reference_outcomes(name, workdir))
    assert len(inst.mutants) == exp["mutants"]
    assert len(sections) >= 5, "a spec of several sections"
    for mutant in inst.mutants:
        assert mutant.section in sections, (mutant.id, mutant.section)
        assert mutant.target in reference_tests, (mutant.id, mutant.target)
        assert mutant.description and mutant.operator, mutant.id
    assert set(exp["kills"]) == {m.id for m in inst.mutants} - set(exp["build_errors"])


@pytest.mark.parametrize("name", SCORED)
def test_every_mutant_patch_applies_except_the_stale_one(name: str, tmp_path: Path) -> None:
    inst = instance(name)
    tree = tmp_path / "src"
    shutil.copytree(inst.source, tree)
    failing = [m.id for m in inst.mutants if not _patch(tree, m.patch, dry_run=True)]
    assert failing == expected(name)["patch_errors"]


@pytest.mark.parametrize("name", SCORED)
def test_every_mutant_builds_except_the_broken_one(name: str, tmp_path: Path) -> None:
    inst = instance(name)
    exp = expected(name)
    applicable = [m for m in inst.mutants if m.id not in exp["patch_errors"]]

    def build(mutant: MutantSpec) -> tuple[str, str]:
        dest = tmp_path / mutant.id
        dest.mkdir()
        return mutant.id, prepare(inst, mutant, dest)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(pool.map(build, applicable))
    broken = sorted(m for m, status in results.items() if status != "ok")
    assert broken == sorted(set(exp["build_errors"]) - set(exp["patch_errors"]))
    assert all(status in ("ok", "build_error") for status in results.values())


@pytest.mark.parametrize("name", SCORED)
def test_reference_suite_passes_on_the_reference(name: str, workdir: str) -> None:
    outcomes = reference_outcomes(name, workdir)
    assert len(outcomes) == expected(name)["tests"]
    assert [t for t, o in outcomes.items() if o != "passed"] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", SCORED)
def test_recorded_kill_matrix_matches_plain_pytest(name: str, tmp_path: Path) -> None:
    """The README's M comes from a real kill matrix: one host pytest run per mutant."""
    inst = instance(name)
    exp = expected(name)

    def kills(mutant: MutantSpec) -> tuple[str, list[str]]:
        dest = tmp_path / mutant.id
        dest.mkdir()
        assert prepare(inst, mutant, dest) == "ok"
        outcomes = run_plain(inst, dest)
        return mutant.id, sorted(t for t, o in outcomes.items() if o == "failed")

    scored = [m for m in inst.mutants if m.id not in exp["build_errors"]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        matrix = dict(pool.map(kills, scored))
    assert matrix == exp["kills"]
    killed = sum(1 for killers in matrix.values() if killers)
    assert killed == exp["killed"]
    assert killed / len(scored) == pytest.approx(exp["mutation_score"], abs=1e-6)
    for mutant in scored:
        if matrix[mutant.id]:
            assert mutant.target in matrix[mutant.id], f"{mutant.id}: its target does not kill it"


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["batched", "plain"])
@pytest.mark.parametrize("name", SCORED)
def test_score_suite_yields_the_recorded_figures(name: str, engine: str, tmp_path: Path) -> None:
    """Both engines -- one pytest per program, or a batch forked from one warm pytest -- give
    the recorded figures and kill matrix."""
    score = score_module
    from suitebench.run.store import Store
    from suitebench.suite.execute.runspec import Engine

    inst = instance(name)
    exp = expected(name)
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score.score_suite(
            inst, store=store, cache_dir=tmp_path / "builds", engine=Engine(engine)
        )
    finally:
        store.close()
    assert result.validity == exp["validity"]
    assert result.counts.tests == exp["tests"]
    assert result.counts.valid == exp["valid"]
    assert result.counts.mutants == exp["mutants"]
    assert result.counts.build_errors == len(exp["build_errors"])
    assert result.counts.killed == exp["killed"]
    assert result.mutation_score == pytest.approx(exp["mutation_score"], abs=1e-6)
    by_id = {m.id: m for m in result.mutants}
    assert sorted(m for m, r in by_id.items() if r.status == "build_error") == sorted(
        exp["build_errors"]
    )
    for mutant_id, killers in exp["kills"].items():
        assert sorted(by_id[mutant_id].killed_by) == killers, mutant_id
        assert by_id[mutant_id].status == ("killed" if killers else "survived"), mutant_id
    # M per spec section, recomputed from the recorded matrix.
    per_section: dict[str, list[int]] = {}
    for mutant in inst.mutants:
        if mutant.id in exp["kills"]:
            entry = per_section.setdefault(mutant.section or "", [0, 0])
            entry[0] += bool(exp["kills"][mutant.id])
            entry[1] += 1
    assert result.per_section == {s: pytest.approx(k / n) for s, (k, n) in per_section.items()}
