"""``suitebench score`` end to end, as a user runs it: real processes, real output files."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from ...cli_helpers import run_suitebench, suitebench_argv
from ..conftest import suitebench

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "instances"


def test_score_writes_results_kills_and_mutation_report(
    stats_instance: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    proc = suitebench(tmp_path, "score", str(stats_instance), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "M = 83.3%" in proc.stdout and "V = 100.0%" in proc.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["mutation_score"] == 5 / 6
    assert results["counts"]["build_errors"] == 2
    assert (out / "kills.csv").read_text().startswith("test,mutant,outcome,valid,kills")
    report = json.loads((out / "mutation-report.json").read_text())
    assert report["schemaVersion"] == "2"
    statuses = {m["id"]: m["status"] for f in report["files"].values() for m in f["mutants"]}
    assert statuses["clamp_tie_equivalent"] == "Survived"
    assert statuses["max_empty"] == "Killed"


def test_score_json_and_fast(stats_instance: Path, tmp_path: Path) -> None:
    proc = suitebench(
        tmp_path, "--json", "score", str(stats_instance), "--fast", "--engine", "plain"
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "fast" and data["engine"] == "plain"
    assert data["mutation_score"] == 5 / 6


def test_score_implementation_reports_r(stats_instance: Path, tmp_path: Path) -> None:
    impl = tmp_path / "candidate"
    shutil.copytree(stats_instance.parent / "src", impl)
    code = (impl / "stats.c").read_text()
    (impl / "stats.c").write_text(code.replace("if (x > hi) x = hi;", ""))  # no upper clamp
    proc = suitebench(tmp_path, "score", str(stats_instance), "--implementation", str(impl))
    assert proc.returncode == 0, proc.stderr
    assert "R = 100.0%" in proc.stdout  # the reference suite never clamps from above: R misses it
    (impl / "stats.c").write_text(code.replace("best = x;", "best = x + 1;"))
    proc = suitebench(tmp_path, "score", str(stats_instance), "--implementation", str(impl))
    assert "R = 88.9%" in proc.stdout  # max of "1 2 9" is off; "9 1 2" never updates
    assert "tests/test_max.py::test_max_last" in proc.stdout


def test_bad_instance_is_a_clear_error(stats_instance: Path, tmp_path: Path) -> None:
    stats_instance.write_text(stats_instance.read_text().replace('source = "src"', "source = 1"))
    proc = suitebench(tmp_path, "score", str(stats_instance))
    assert proc.returncode == 2
    assert "field 'source'" in proc.stderr and str(stats_instance) in proc.stderr


def test_programbench_task_directory(tmp_path: Path) -> None:
    task = FIXTURES / "programbench-task"
    assert (task / "tests.json").is_file(), f"the ProgramBench fixture is missing: {task}"
    proc = suitebench(tmp_path, "--json", "score", str(task))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["counts"]["tests"] > 0
    assert data["validity"] == 1.0  # ignored (gold_fail, flaky, ...) tests are refined out
    assert data["excluded_tests"]
    assert not set(data["excluded_tests"]) & {t["id"] for t in data["tests"]}


def _batches(store_path: Path) -> dict[str, float]:
    if not store_path.exists():
        return {}
    try:
        with sqlite3.connect(store_path, timeout=30) as conn:
            rows = conn.execute("SELECT key, created FROM outcomes WHERE kind = 'suite-batch'")
            return dict(rows.fetchall())
    except sqlite3.OperationalError:  # the store is being created
        return {}


@pytest.mark.slow
def test_killed_score_resumes_without_redoing_committed_batches(
    stats_instance: Path, tmp_path: Path
) -> None:
    store_path = tmp_path / "s.sqlite"
    argv = suitebench_argv("--jobs", "1", "score", stats_instance, store=store_path)
    argv += ["--batch-size", "1", "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    try:
        while len(_batches(store_path)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "no batch committed in time"
            time.sleep(0.01)
    finally:
        proc.kill()  # SIGKILL: no clean-up, no final commit
        proc.wait()
    before = _batches(store_path)
    assert before, "the run finished before it could be killed"
    assert not (tmp_path / "out" / "results.json").exists()

    resumed = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    after = _batches(store_path)
    # Committed batches were reused as they were, not run again; the rest were added.
    assert {k: after[k] for k in before} == before
    assert len(after) > len(before)
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    assert result["mutation_score"] == 5 / 6 and result["validity"] == 1.0
    fresh = suitebench(tmp_path / "fresh", "--json", "score", str(stats_instance))

    def rows(mutants: list[dict[str, object]]) -> dict[object, object]:
        return {m["id"]: (m["status"], m["killed_by"], m["outcomes"]) for m in mutants}

    assert rows(json.loads(fresh.stdout)["mutants"]) == rows(result["mutants"])


# A broken harness stops ``score`` loudly (exit 4) unless ``--keep-going``: a reference that does
# not build (before: exit 1) and reference runs that do not finish, a conftest killing pytest
# before any test in every fresh run too (before: exit 0 and a warning), are named on stderr
# and listed under ``harness_errors`` in results.json.


def test_a_reference_that_does_not_build_is_a_harness_error(
    stats_instance: Path, tmp_path: Path
) -> None:
    source = stats_instance.parent / "src" / "stats.c"
    source.write_text(source.read_text().replace("return 0;\n}", "return 0\n}", 1))
    proc = suitebench(tmp_path, "score", str(stats_instance), "--mutant", "max_empty")
    assert proc.returncode == 4, proc.stderr
    assert "harness error:" in proc.stderr and "does not build" in proc.stderr
    kept = suitebench(
        tmp_path, "score", str(stats_instance), "--mutant", "max_empty", "--keep-going"
    )
    assert kept.returncode == 0 and "harness error:" in kept.stderr


def test_reference_runs_that_never_finish_are_a_harness_error(
    stats_instance: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "broken_conftest"
    suite.mkdir()
    (suite / "conftest.py").write_text("import os\nos._exit(7)\n")
    (suite / "test_x.py").write_text("def test_x():\n    pass\n")
    out = tmp_path / "out"
    args = ["score", str(stats_instance), "--suite", str(suite), "--mutant", "max_empty"]
    proc = suitebench(tmp_path, *args, "--reference-runs", "1", "--out", str(out))
    assert proc.returncode == 4, proc.stderr
    assert "harness error: reference reference (1 run(s)): pytest did not finish" in proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert [e["stage"] for e in results["harness_errors"]] == ["reference"]
    assert results["mutation_score"] is None  # nothing measured is not zero
    kept = suitebench(tmp_path, *args, "--reference-runs", "1", "--keep-going")
    assert kept.returncode == 0, kept.stderr


def test_a_sound_score_has_no_harness_errors(stats_instance: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = suitebench(
        tmp_path, "score", str(stats_instance), "--mutant", "max_empty", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert "harness error" not in proc.stderr
    assert json.loads((out / "results.json").read_text())["harness_errors"] == []


def test_python_m_suitebench_scores_a_package_whose_mutants_build_beside(
    tmp_path: Path,
) -> None:
    """``python -m suitebench`` on a package: its mutants build on a pool of worker processes
    beside the reference's runs (started afresh, so they import the command line's modules
    again).  The pager's six mutants: every one killed but ``rest > 1``, which no leftover of
    these tests meets (worked out in ``test_weak_mutation``)."""
    from ..select.test_weak_mutation import _instance

    instance = _instance(tmp_path)
    out = tmp_path / "out"
    proc = run_suitebench(
        "--json", "score", instance, "--out", out, store=tmp_path / "s.sqlite", module=True
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["validity"] == 1.0 and results["mutation_score"] == 5 / 6
    survived = [m["id"] for m in results["mutants"] if m["status"] == "survived"]
    assert survived == ["more_than_one"]


def test_a_package_whose_build_runs_python3_builds_every_mutant_beside(tmp_path: Path) -> None:
    """A package's build recipe that runs ``python3`` (it writes a module the package imports)
    runs in the sandbox for the reference and for each mutant built beside the reference's
    runs; the pager's figures are those of the package without a recipe (a tree without the
    written module fails every test: V would be 0, and ``rest > 1`` killed)."""
    from ..conftest import write_python_instance
    from ..select.test_weak_mutation import MAIN, MUTANTS, PAGER, TESTS

    pager = PAGER.replace(
        "def page_slice(page, per_page):",
        "from pager._per_page import DEFAULT\n\n\ndef page_slice(page, per_page=DEFAULT):",
    )
    stamp = "from pathlib import Path\n\nPath('pager/_per_page.py').write_text('DEFAULT = 10\\n')\n"
    toml = write_python_instance(
        tmp_path / "pager",
        name="pager",
        source={"pager/__init__.py": pager, "pager/__main__.py": MAIN, "stamp.py": stamp},
        tests=TESTS,
        spec="# pager\n\n## Pages\nCount them.\n",
        mutants=MUTANTS,
    )
    toml.write_text(
        toml.read_text().replace('source = "src"', 'source = "src"\nbuild = "python3 stamp.py"')
    )
    out = tmp_path / "out"
    proc = suitebench(tmp_path, "score", str(toml), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["build_errors"] == 0
    assert results["validity"] == 1.0 and results["mutation_score"] == 5 / 6
