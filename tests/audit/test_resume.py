"""Resuming: an audit killed with SIGKILL halfway and restarted reruns nothing already stored
and ends with the same ledger; adding an arm judges only the new inputs."""

from __future__ import annotations

import csv
import json
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.arms import arm_from_dir, arm_from_generator, parse_arm, problem_arms
from suitebench.audit.pipeline import run_audit
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import load_problem
from suitebench.run.outcome import sha256_bytes

from ..cli_helpers import suitebench_argv
from .conftest import PROBLEMS

ARMS = ["--arm", "gen=generator@60", "--arm", "hand=arms/handmade"]


def cli(store: Path, out: Path, cache: Path) -> list[str]:
    return suitebench_argv(
        "--jobs",
        "2",
        "audit",
        str(PROBLEMS / "mean"),
        *ARMS,
        "--build-cache",
        str(cache),
        "--out",
        out,
        store=store,
    )


def rows(store: Path, kind: str) -> dict[str, float]:
    with sqlite3.connect(store) as db:
        return dict(db.execute("SELECT key, created FROM outcomes WHERE kind = ?", (kind,)))


def ledger(out: Path) -> list[dict[str, str]]:
    with (out / "ledger.csv").open() as fh:
        return sorted(csv.DictReader(fh), key=lambda r: (r["arm"], r["submission_id"]))


def test_killed_audit_resumes_without_rerunning(tmp_path: Path, build_cache: Path) -> None:
    # the reference: one uninterrupted audit
    fresh = tmp_path / "fresh.sqlite"
    subprocess.run(
        cli(fresh, tmp_path / "fresh-out", build_cache),
        check=True,
        capture_output=True,
        timeout=600,
    )

    store = tmp_path / "store.sqlite"
    proc = subprocess.Popen(
        cli(store, tmp_path / "out", build_cache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if store.exists():
            try:
                if len(rows(store, "audit-run")) >= 60:
                    break
            except sqlite3.OperationalError:
                pass  # schema not created yet
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL, "the audit finished before it was killed"
    before = rows(store, "audit-run")
    assert before and len(before) < len(rows(fresh, "audit-run"))

    subprocess.run(
        cli(store, tmp_path / "out", build_cache), check=True, capture_output=True, timeout=600
    )
    after = rows(store, "audit-run")
    # every run stored before the kill is still the same row: nothing was run again
    assert {k: after[k] for k in before} == before
    # and the work done in two parts is exactly the work of one uninterrupted audit
    assert set(after) == set(rows(fresh, "audit-run"))
    assert ledger(tmp_path / "out") == ledger(tmp_path / "fresh-out")
    assert ledger(tmp_path / "out")  # the comparison is not vacuous

    # a third run finds everything stored
    subprocess.run(
        cli(store, tmp_path / "out", build_cache), check=True, capture_output=True, timeout=600
    )
    runs = json.loads((tmp_path / "out" / "results.json").read_text())["runs"]
    assert runs["executed"] == 0 and runs["cached"] > 0


def test_adding_an_arm_judges_only_the_new_inputs(make_engine: Callable[..., AuditEngine]) -> None:
    problem = load_problem(PROBLEMS / "mean")
    first = make_engine()
    run_audit([problem], [parse_arm("hand=arms/handmade")], first)
    assert first.executed_runs > 0

    again = AuditEngine(first.store, first.executor, first.cache_dir)
    res = run_audit(
        [problem], [parse_arm("hand=arms/handmade"), parse_arm("gen=generator@10")], again
    )
    old = {c.sha256 for a in problem_arms(problem) for c in a.inputs}
    old |= {c.sha256 for c in arm_from_dir("hand", PROBLEMS / "mean/arms/handmade").inputs}
    gen = arm_from_generator("gen", problem.generator, 10, again)  # type: ignore[arg-type]
    new = {c.sha256 for c in gen.inputs} - old
    seeds = {sha256_bytes(f"{s}\n".encode()) for s in range(10)}
    assert new and again.executed_runs > 0
    assert again.executed_stdins & old == set()
    assert again.executed_stdins <= new | seeds
    assert again.executed_stdins & new == new  # every new input was judged
    assert res.results["problems"]["mean"]["arms"]["gen"]["counts"]["scored"] == len(gen.inputs)


@pytest.mark.dask
def test_dask_and_local_pool_certify_the_same_ledger(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    pytest.importorskip("dask.distributed")
    from suitebench.run.executor import make_executor
    from suitebench.run.store import Store

    arms = [parse_arm("hand=arms/handmade"), parse_arm("gen=generator@6")]
    local = run_audit([PROBLEMS / "mean"], arms, make_engine(), out_dir=tmp_path / "local")
    store = Store(tmp_path / "dask.sqlite")
    ex = make_executor(jobs=2, dask="local")
    try:
        engine = AuditEngine(store, ex, make_engine().cache_dir)
        dask = run_audit([PROBLEMS / "mean"], arms, engine, out_dir=tmp_path / "dask")
    finally:
        ex.close()
        store.close()
    assert engine.executed_runs > 0
    assert ledger(tmp_path / "dask") == ledger(tmp_path / "local")
    assert local.results["arms"] == dask.results["arms"]
