"""``score --incremental`` over a series of real edits to a project in git: at every step its
kill matrix equals a full run's (a fresh store: nothing cached), and what it reuses and reruns
is what each edit allows (tests/suite/edit_series.py describes the project and the edits)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from suitebench.construct.mutants import write_mutants
from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.result import MutantResult, SuiteResult
from suitebench.suite.score import score_suite

from ..edit_series import EDITS, commit, make_project

IMPORT_TIME = "not a coverage selection of function-body tests"


def _score(project: Path, store: Path, incremental: bool) -> SuiteResult:
    with Store(store) as s:
        executor = LocalExecutor(jobs=2)
        try:
            return score_suite(
                load_instance(project),
                store=s,
                executor=executor,
                reference_runs=1,
                incremental=incremental,
            )
        finally:
            executor.close()


def _matrix(result: SuiteResult) -> dict[str, tuple[str, dict[str, str]]]:
    return {m.id: (m.status, {t: str(s) for t, s in m.outcomes.items()}) for m in result.mutants}


def _function(project: Path, m: MutantResult) -> str:
    """The function a mutant's line is in ("<module>" outside any), from its description
    (``shop/cart.py:12: ...``)."""
    file, line = m.description.split(":")[:2]
    tree = ast.parse((project / "src" / file).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno <= int(line) <= node.end_lineno:
            return node.name
    return "<module>"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_incremental_matrix_equals_full_runs_over_edits(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop")
    kept = tmp_path / "incremental.sqlite"
    results: dict[str, SuiteResult] = {}
    for step, (name, edit) in enumerate([("first", None), *EDITS]):
        if edit is not None:
            edit(project)
            commit(project, name)
        write_mutants(load_instance(project), cache_dir=tmp_path / "mutant-builds")
        full = _score(project, tmp_path / f"full-{step}.sqlite", incremental=False)
        inc = _score(project, kept, incremental=True)
        assert _matrix(inc) == _matrix(full), f"{name}: the matrices differ"
        assert inc.mutation_score == full.mutation_score
        assert inc.incremental is not None
        results[name] = inc

    def reused(name: str) -> list[MutantResult]:
        return [m for m in results[name].mutants if m.reused_from is not None]

    def rerun(name: str) -> dict[str, str]:
        info = results[name].incremental
        assert info is not None
        return dict(info["rerun_mutants"])

    # The first run has nothing to reuse; every mutant a test reaches runs.
    assert results["first"].incremental["reused"] == 0  # type: ignore[index]
    # Comments change no definition: every row is reused but the import-time mutants' (the
    # currency table's: module-level code, rerun always).
    assert set(rerun("comment").values()) == {IMPORT_TIME}
    # and nothing that runs changed, so the reference's runs are the first run's too; any
    # other edit runs them again.
    flags = {n: r.incremental["reference_runs_reused"] for n, r in results.items()}  # type: ignore[index]
    assert flags == {n: n == "comment" for n in results}
    assert reused("comment")
    assert {m.reused_from for m in reused("comment")} == {results["first"].incremental["run_id"]}  # type: ignore[index]
    # A new test (HALF): the mutants it reaches rerun, no other.
    half = "tests/test_cart.py::test_half_halves"
    for mid, why in rerun("new_test").items():
        m = next(m for m in results["new_test"].mutants if m.id == mid)
        assert why == IMPORT_TIME or half in (m.covered_by or []), (mid, why)
    # A changed function (discount): no row of a mutant whose tests reach it is reused --
    # the cart_total tests call it -- and some rows are (line_total's error path,
    # the money module's).
    callers = {"tests/test_cart.py::test_tenoff_takes_ten_euros", half}
    callers |= {"tests/test_cart.py::test_cart_total_with_fee"}
    callers |= {"tests/test_cart.py::test_cart_total_large"}
    assert reused("changed_function")
    for m in reused("changed_function"):
        assert not callers & set(m.covered_by or []), m.id
        assert _function(project, m) != "discount"
    # A changed helper (round_cents): nothing that calls it, directly or not, is reused.
    for m in reused("changed_helper"):
        assert _function(project, m) not in {"round_cents", "convert", "cart_total"}, m.id
    # A helper only a mutant's path reaches (express_fee): some mutant of cart_total has a
    # different row than before the edit -- reusing it by the reference's coverage alone
    # would have been wrong -- and it reran.
    before = {m.description: m for m in results["changed_helper"].mutants}
    moved = [
        m
        for m in results["mutant_path_helper"].mutants
        if m.description in before and m.outcomes != before[m.description].outcomes
    ]
    assert moved, "the edit changed no row: the series does not test what it says"
    assert all(m.reused_from is None for m in moved)
    # A data file the tests read: nothing is reused.
    info = results["data_file"].incremental
    assert info is not None and info["reused"] == 0
    assert "rates.json" in info["everything_reruns"]
