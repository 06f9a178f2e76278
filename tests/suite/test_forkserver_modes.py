"""How the fork server runs a batch, and that each way gives the plain engine's matrix.

* ``collect-once`` (``kind = "cli"``): pytest configures and collects once, a child per program
  runs the tests;
* ``configure-once`` (``kind = "python"``): pytest configures once (plugins, conftest files,
  ``pytest_configure`` hooks), a child per program collects -- importing the package under test
  fresh -- and runs;
* ``per-program``: a child per program runs a whole ``pytest.main``; taken when configuring the
  suite imports the package under test, which would otherwise be imported once, without any
  program's source root on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.result import SuiteResult
from suitebench.suite.runner import Engine, SuiteLimits, Target, run_batched
from suitebench.suite.score import score_suite


def _mode(suite: Path, targets: list[Target], collect_once: bool, workspace: Path) -> str:
    runs = run_batched(suite, targets, collect_once=collect_once, workspace=workspace)
    assert all(run.status == "ok" for run in runs), [run.message for run in runs]
    return (workspace / "out" / "batch-mode.txt").read_text().strip()


def _both(instance_toml: Path, tmp_path: Path, suite: Path | None) -> list[SuiteResult]:
    results = []
    for engine in (Engine.PLAIN, Engine.BATCHED):
        store = Store(tmp_path / f"{engine}" / "store.sqlite")
        limits = SuiteLimits(per_test=5.0, per_program=300.0)
        instance = load_instance(instance_toml)
        results.append(score_suite(instance, suite, store=store, engine=engine, limits=limits))
        store.close()
    return results


def _same(plain: SuiteResult, batched: SuiteResult) -> None:
    assert [(t.id, t.reference) for t in plain.tests] == [
        (t.id, t.reference) for t in batched.tests
    ]
    assert plain.kill_matrix() == batched.kill_matrix()
    assert [m.status for m in plain.mutants] == [m.status for m in batched.mutants]


def test_cli_suite_is_collected_once(stats_instance: Path, tmp_path: Path) -> None:
    root = stats_instance.parent
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "stats"
    exe.write_text("#!/bin/sh\necho 0\n")
    exe.chmod(0o755)
    target = Target(executable=str(exe), binds=(str(tmp_path / "bin"),))
    assert _mode(root / "tests", [target, target], True, tmp_path / "ws") == "collect-once"


def test_python_suite_is_configured_once(intervals_instance: Path, tmp_path: Path) -> None:
    root = intervals_instance.parent
    target = Target(pythonpath=str(root / "src"), binds=(str(root),))
    mode = _mode(root / "tests", [target, target], False, tmp_path / "ws")
    assert mode == "configure-once"


CONFTESTS = {
    # The package under test imported while pytest loads the conftest.
    "import_at_load": (
        "import pytest\nfrom intervals import merge\n\n\n"
        "@pytest.fixture\ndef merged():\n    return merge([(1, 2), (3, 4)])\n"
    ),
    # Imported in a configure hook, with a silent fallback that would hide a missing package.
    "import_in_configure": (
        "def pytest_configure(config):\n"
        "    try:\n"
        "        from intervals import merge\n"
        "    except ImportError:\n"
        "        merge = None\n"
        "    config.merged = merge([(1, 2), (3, 4)]) if merge else None\n\n\n"
        "import pytest\n\n\n"
        "@pytest.fixture\ndef merged(request):\n    return request.config.merged\n"
    ),
}

TEST_WITH_FIXTURE = (
    "from intervals import total_length\n\n\n"
    "def test_touching_merged_at_configure(merged):\n"
    "    assert merged == [(1, 4)]\n\n\n"
    "def test_length():\n"
    "    assert total_length([(1, 3), (10, 10)]) == 4\n"
)


@pytest.mark.parametrize("kind", sorted(CONFTESTS))
def test_conftest_that_imports_the_package_is_configured_per_program(
    kind: str, intervals_instance: Path, tmp_path: Path
) -> None:
    suite = tmp_path / f"suite_{kind}"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTESTS[kind])
    (suite / "test_fixture.py").write_text(TEST_WITH_FIXTURE)
    root = intervals_instance.parent
    target = Target(pythonpath=str(root / "src"), binds=(str(root),))
    assert _mode(suite, [target], False, tmp_path / "ws") == "per-program"

    plain, batched = _both(intervals_instance, tmp_path, suite)
    _same(plain, batched)
    assert all(t.valid for t in batched.tests)
    killed = {m.id for m in batched.mutants if m.killed_by}
    assert killed >= {"touching_not_merged", "length_off_by_one"}
    # A package that raises on import breaks a conftest importing it: pytest stops before
    # any test (not scored); imported by a test module, it breaks that module's tests.
    broken = next(m for m in batched.mutants if m.id == "import_error")
    assert (broken.status == "crashed") == (kind == "import_at_load")
