"""Scoring suites on real instances: V, M, the kill matrix, build errors, --fast, R, resume."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.execute import jobs
from suitebench.suite.execute.programs import Builder, build_all
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.implementation import score_implementation
from suitebench.suite.records import TestStatus
from suitebench.suite.result import NOT_COMPUTED, MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store" / "store.sqlite")


def test_stats_at_o1_lists_the_tie_as_equivalent(stats_instance: Path, store: Store) -> None:
    """Built at -O1 (one gcc command), ``x <= lo`` and ``x < lo`` give the same executable
    (checked by hand with ``cmp``): the tie mutant is equivalent by trivial compiler
    equivalence, not run and out of M, which is then 5 killed of 5 (at -O0, 5 of 6)."""
    (stats_instance.parent / "src" / "build.sh").write_text("gcc -O1 -o executable stats.c\n")
    result = score_suite(load_instance(stats_instance), store=store)
    by_id = {m.id: m for m in result.mutants}
    assert by_id["clamp_tie_equivalent"].status is MutantStatus.EQUIVALENT
    assert result.counts.equivalent == 1 and result.counts.scored == 5
    assert result.counts.killed == 5
    assert result.mutation_score == pytest.approx(1.0)


def test_stats_reference_suite(stats_instance: Path, store: Store) -> None:
    instance = load_instance(stats_instance)
    seen: list[tuple[int, int]] = []
    result = score_suite(instance, store=store, progress=lambda d, t: seen.append((d, t)))
    by_id = {m.id: m for m in result.mutants}
    assert seen[-1][0] == seen[-1][1]  # progress ends complete ...
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # ... and never goes back

    # Every reference test passes three times: all valid, none flaky.
    assert result.counts.tests == 9 and result.counts.valid == 9 and result.counts.flaky == 0
    assert result.validity == 1.0
    assert all(t.reference == [TestStatus.PASSED] * 3 for t in result.tests)

    # A stale patch and a compile error are build errors, with their reason, outside M.
    assert by_id["stale_patch"].status is MutantStatus.BUILD_ERROR
    assert "does not apply" in by_id["stale_patch"].message
    assert by_id["does_not_compile"].status is MutantStatus.BUILD_ERROR
    assert "error" in by_id["does_not_compile"].message
    assert result.counts.build_errors == 2 and result.counts.scored == 6

    # The equivalent tie-break mutant survives; every real bug is killed by its target.
    assert by_id["clamp_tie_equivalent"].status is MutantStatus.SURVIVED
    assert by_id["clamp_tie_equivalent"].killed_by == []
    for mid in ("sum_no_overflow_check", "sum_neg_overflow", "max_off_by_one", "max_empty"):
        assert by_id[mid].status is MutantStatus.KILLED
        assert instance.mutant(mid).target in by_id[mid].killed_by
    assert set(by_id["sum_no_overflow_check"].killed_by) == {
        "tests/test_sum.py::test_sum_overflow",
        "tests/test_sum.py::test_sum_negative_overflow",
    }
    assert result.mutation_score == pytest.approx(5 / 6)
    assert result.per_section == {"Sum": 1.0, "Max": 1.0, "Clamp": 0.5}

    # The full matrix: every test has a row on every scored mutant.
    assert all(len(by_id[m].outcomes) == 9 for m in by_id if by_id[m].status.scored)
    assert by_id["max_off_by_one"].outcomes["tests/test_max.py::test_max_first"] is (
        TestStatus.PASSED
    )
    assert by_id["max_off_by_one"].outcomes["tests/test_max.py::test_max_last"] is (
        TestStatus.FAILED
    )


def test_outputs_results_json_and_kills_csv(
    stats_instance: Path, store: Store, tmp_path: Path
) -> None:
    result = score_suite(load_instance(stats_instance), store=store)
    paths = result.write(tmp_path / "out")
    data = json.loads(paths[0].read_text())
    for key in ("validity", "mutation_score", "per_section", "counts", "limits", "backend"):
        assert key in data
    assert data["counts"]["build_errors"] == 2
    assert data["versions"]["pytest"]
    assert SuiteResult.read(tmp_path / "out") == result
    with paths[1].open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 9 * 6  # tests x scored mutants
    killing = {(r["test"], r["mutant"]) for r in rows if r["kills"] == "1"}
    expected = {(t, m.id) for m in result.mutants for t in m.killed_by}
    assert killing == expected
    # The compact form says the same as the long form, cell by cell; build errors not computed.
    with np.load(paths[2]) as npz:
        tests, mutants, statuses = list(npz["tests"]), list(npz["mutants"]), list(npz["statuses"])
        outcomes, valid = npz["outcomes"], npz["valid"]
    assert tests == result.test_ids() and mutants == [m.id for m in result.mutants]
    from_npz = {
        (tests[i], mutants[j]): statuses[outcomes[i, j]]
        for i in range(len(tests))
        for j in range(len(mutants))
        if outcomes[i, j] != NOT_COMPUTED
    }
    assert from_npz == {(r["test"], r["mutant"]): r["outcome"] for r in rows}
    assert list(valid) == [t.valid for t in result.tests]
    unscored = [j for j, m in enumerate(result.mutants) if not m.status.scored]
    assert len(unscored) == 2 and all((outcomes[:, j] == NOT_COMPUTED).all() for j in unscored)


def test_fast_mode_gives_the_same_mutation_score(stats_instance: Path, store: Store) -> None:
    instance = load_instance(stats_instance)
    full = score_suite(instance, store=store)
    fast = score_suite(instance, store=store, fast=True)
    assert fast.mode == "fast"
    assert fast.mutation_score == full.mutation_score
    assert {m.id: m.status for m in fast.mutants} == {m.id: m.status for m in full.mutants}
    killed_fast = [m for m in fast.mutants if m.status is MutantStatus.KILLED]
    # Each killed mutant stopped at its first kill: exactly one killing test was run to failure.
    assert all(len(m.killed_by) == 1 for m in killed_fast)
    assert sum(m.tests_run for m in fast.mutants) < sum(m.tests_run for m in full.mutants)


def test_python_package_instance(intervals_instance: Path, store: Store) -> None:
    result = score_suite(load_instance(intervals_instance), store=store)
    by_id = {m.id: m for m in result.mutants}
    assert result.validity == 1.0
    assert result.mutation_score == 1.0
    assert by_id["touching_not_merged"].killed_by == ["tests/test_merge.py::test_merge_touching"]
    assert by_id["length_off_by_one"].killed_by == ["tests/test_merge.py::test_total_length"]
    # A mutant that breaks the import breaks collection of the file: all its tests error.
    broken = by_id["import_error"]
    assert set(broken.outcomes.values()) == {TestStatus.ERROR}
    assert len(broken.killed_by) == 5
    # each kill says why: the collection error of the test's file
    assert broken.kill_messages == {t: "ImportError: broken" for t in broken.killed_by}


def test_python_mutants_build_while_the_reference_runs(tmp_path: Path, store: Store) -> None:
    """A Python package's mutants build beside the reference's runs: one that does not compile
    is still a build error, the others are scored as ever, and progress still counts builds
    and runs once each, never going back."""
    source = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
    toml = write_python_instance(
        tmp_path / "avg",
        name="avg",
        source={"avg/__init__.py": source},
        tests={
            "test_mean.py": "from avg import mean\n\n\ndef test_mean():\n"
            "    assert mean([1, 2, 3]) == 2\n\n\ndef test_empty():\n    assert mean([]) == 0.0\n"
        },
        spec="# avg\n\n## Mean\nThe mean, 0 for nothing.\n",
        mutants=[
            ("off_by_one", "avg/__init__.py", "/ len(xs)", "/ (len(xs) + 1)"),
            ("no_guard", "avg/__init__.py", "return 0.0", "pass"),
            ("syntax", "avg/__init__.py", "return sum(xs)", "return sum(xs) +"),
        ],
    )
    seen: list[tuple[int, int]] = []
    result = score_suite(
        load_instance(toml), store=store, progress=lambda d, t: seen.append((d, t))
    )
    by_id = {m.id: m for m in result.mutants}
    assert by_id["syntax"].status == MutantStatus.BUILD_ERROR
    assert by_id["off_by_one"].killed_by == ["tests/test_mean.py::test_mean"]
    assert by_id["no_guard"].killed_by == ["tests/test_mean.py::test_empty"]
    assert result.counts.build_errors == 1 and result.counts.scored == 2
    assert seen[-1][0] == seen[-1][1]
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_store_resumes_without_rerunning(stats_instance: Path, store: Store) -> None:
    instance = load_instance(stats_instance)
    first = score_suite(instance, store=store)
    runs = store.count("suite-run")
    assert runs == 3 + 6  # three reference runs, six buildable mutants
    again = score_suite(instance, store=store)
    assert store.count("suite-run") == runs
    assert again.model_dump(exclude={"wall_time", "phases"}) == first.model_dump(
        exclude={"wall_time", "phases"}
    )
    # Forget one mutant's run, as if the process had been killed before committing it.
    victim = next(m for m in first.mutants if m.id == "max_empty")
    # The store holds the mutant's own run: the tests selected for it (all without coverage).
    ran = victim.covered_by if victim.covered_by is not None else list(victim.outcomes)
    own = {t: victim.outcomes[t] for t in ran}
    keys = [k for k in store.keys("suite-run") if store.get(k)["tests"] == own]
    assert keys
    store.delete_many(keys[:1])
    resumed = score_suite(instance, store=store)
    assert store.count("suite-run") == runs
    assert {m.id: m.outcomes for m in resumed.mutants} == {m.id: m.outcomes for m in first.mutants}


def test_reference_pass_rate_of_implementations(
    stats_instance: Path, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = load_instance(stats_instance)
    buggy = tmp_path / "impl"
    shutil.copytree(instance.source, buggy)
    code = (buggy / "stats.c").read_text()
    (buggy / "stats.c").write_text(code.replace('puts("empty");', 'puts("nothing");'))
    batches: list[int] = []
    original = jobs.run_batched

    def counting(suite: Path, targets: list[Any], **kwargs: Any) -> Any:
        batches.append(len(targets))
        return original(suite, targets, **kwargs)

    monkeypatch.setattr(jobs, "run_batched", counting)
    result = score_implementation(instance, buggy, store=store)
    # the three reference runs and the candidate's: each a process (and sandbox) of its own
    assert sorted(batches) == [1, 1, 1, 1]
    assert result.build_status == "ok"
    assert result.total == 9 and result.passed == 8
    assert result.reference_pass_rate == pytest.approx(8 / 9)
    assert result.failing == {"tests/test_max.py::test_max_empty": TestStatus.FAILED}

    (buggy / "stats.c").write_text(code.replace("int main", "int main("))
    broken = score_implementation(instance, buggy, store=store)
    assert broken.build_status == "build_error"
    assert broken.reference_pass_rate == 0.0
    assert len(broken.failing) == 9


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_generated_suite_against_instance(
    stats_instance: Path, store: Store, tmp_path: Path, engine: Engine
) -> None:
    """A weaker suite: one file only, one invalid test. V and M are computed on it alone."""
    suite = tmp_path / "generated"
    suite.mkdir()
    (suite / "test_gen.py").write_text(
        "import subprocess\n\n"
        "def out(*a):\n"
        "    return subprocess.run(['./executable', *a], capture_output=True, text=True).stdout\n\n"
        "def test_max():\n    assert out('max', '3', '7') == '7\\n'\n\n"
        "def test_wrong_expectation():\n    assert out('sum', '1', '1') == '3\\n'\n"
    )
    result = score_suite(load_instance(stats_instance), suite, store=store, engine=engine)
    assert result.counts.tests == 2 and result.counts.valid == 1
    assert result.validity == 0.5
    # test_max sees the last element is the max: it kills the off-by-one mutant and nothing else;
    # the invalid test fails everywhere but kills nothing.
    killed = {m.id for m in result.mutants if m.status is MutantStatus.KILLED}
    assert killed == {"max_off_by_one"}
    assert result.mutation_score == pytest.approx(1 / 6)


def test_equivalent_patches_build_once_in_parallel(stats_instance: Path, tmp_path: Path) -> None:
    text = stats_instance.read_text()
    twin = '\n[[mutants]]\nid = "max_empty_twin"\npatch = "mutants/max_empty.diff"\n'
    stats_instance.write_text(text + twin)
    instance = load_instance(stats_instance)
    builder = Builder(instance, tmp_path / "builds")
    with LocalExecutor(4) as executor:
        reference, built = build_all(builder, list(instance.mutants), executor=executor)
    assert reference.ok and reference.executable is not None
    assert built["max_empty"].ok and built["max_empty_twin"].ok
    assert built["max_empty"].program_id == built["max_empty_twin"].program_id
    assert built["max_empty"].program_id != reference.program_id
    assert not built["stale_patch"].ok and not built["does_not_compile"].ok
    kept = ("by-patch", ".staging", "recording-compilers")
    dirs = [p for p in (tmp_path / "builds").iterdir() if p.is_dir() and p.name not in kept]
    # the reference, its build recorded once (what incremental builds start from), and seven
    # distinct patched trees (the twin shared)
    assert len(dirs) == 2 + 7
    assert not list((tmp_path / "builds" / ".staging").iterdir())  # no copy left behind
    # one note per patch that applied (the twin's bytes are max_empty's: one note for both)
    assert len(list((tmp_path / "builds" / "by-patch").iterdir())) == 7
    # The built mutant really is the mutant: its empty max prints 0.
    out = subprocess.run([built["max_empty"].executable or "", "max"], capture_output=True)
    assert out.stdout == b"0\n"
