"""The batched engine (one pytest start-up per batch, fork per program) must give exactly the
kill matrix of the plain engine (one pytest process per program) -- on every instance we have."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR, SUITES_DIR
from suitebench.model.instance import Instance, load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runner import run_batched
from suitebench.suite.execute.runspec import Engine, SuiteLimits, Target
from suitebench.suite.result import SuiteResult
from suitebench.suite.score import score_suite

FIXTURES = INSTANCES_DIR
FIXTURE_INSTANCES = sorted(p.parent.name for p in FIXTURES.glob("*/instance.toml"))


def _both(instance: Instance, tmp_path: Path, suite: Path | None = None) -> list[SuiteResult]:
    results = []
    for engine in (Engine.PLAIN, Engine.BATCHED):
        store = Store(tmp_path / f"{engine}" / "store.sqlite")
        limits = SuiteLimits(per_test=2.0, per_program=300.0)
        results.append(score_suite(instance, suite, store=store, engine=engine, limits=limits))
        store.close()
    return results


def _write_suite(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _assert_same(
    plain: SuiteResult, batched: SuiteResult, skip_files: tuple[str, ...] = ()
) -> None:
    def keep(test: str) -> bool:
        return not any(test.startswith(f) for f in skip_files)

    assert plain.engine == "plain" and batched.engine == "batched"
    assert [t.id for t in plain.tests] == [t.id for t in batched.tests]
    assert {t.id: t.reference for t in plain.tests if keep(t.id)} == {
        t.id: t.reference for t in batched.tests if keep(t.id)
    }
    matrix_plain = {k: v for k, v in plain.kill_matrix().items() if keep(k[0])}
    matrix_batched = {k: v for k, v in batched.kill_matrix().items() if keep(k[0])}
    assert matrix_plain == matrix_batched
    assert matrix_plain, "an empty matrix proves nothing"
    if not skip_files:
        assert plain.mutation_score == batched.mutation_score
        assert plain.validity == batched.validity
        assert [m.status for m in plain.mutants] == [m.status for m in batched.mutants]


def test_same_matrix_inline_c_instance(stats_instance: Path, tmp_path: Path) -> None:
    _assert_same(*_both(load_instance(stats_instance), tmp_path))


def test_same_matrix_inline_python_package(intervals_instance: Path, tmp_path: Path) -> None:
    _assert_same(*_both(load_instance(intervals_instance), tmp_path))


def test_the_bundled_instances_are_all_found() -> None:
    """The parametrised comparisons below run once per instance the glob finds: an empty or
    short glob would leave them skipped or missing, so the glob must find all three."""
    assert FIXTURE_INSTANCES == ["intervals-pkg", "rpn-c", "wordfreq-py"]
    assert (SUITES_DIR / "bad-suite" / "tests").is_dir()


@pytest.mark.slow
@pytest.mark.parametrize("name", FIXTURE_INSTANCES)
def test_same_matrix_on_fixture_instances(name: str, tmp_path: Path) -> None:
    instance = load_instance(FIXTURES / name)
    plain, batched = _both(instance, tmp_path)
    _assert_same(plain, batched)
    assert plain.counts.scored > 0


@pytest.mark.slow
def test_same_matrix_on_fixture_bad_suite(tmp_path: Path) -> None:
    instance = load_instance(FIXTURES / "wordfreq-py")
    plain, batched = _both(instance, tmp_path, SUITES_DIR / "bad-suite" / "tests")
    # A flaky test's rows are random on any engine: everything else must match.
    _assert_same(plain, batched, skip_files=("tests/test_flaky.py",))


MODULE_LEVEL_SUITES = {
    # Resolves ./executable when imported: every program must still be its own.
    "resolved": (
        "import subprocess\nfrom pathlib import Path\n\n"
        "EXE = str(Path('executable').resolve())\n\n"
        "def test_max_last():\n"
        "    out = subprocess.run([EXE, 'max', '1', '9'], capture_output=True, text=True)\n"
        "    assert out.stdout == '9\\n'\n"
    ),
    # Runs the program when imported (a parametrisation from the program's own output).
    "ran": (
        "import subprocess\nimport pytest\n\n"
        "EMPTY = subprocess.run(['./executable', 'max'], capture_output=True, text=True).stdout\n\n"
        "@pytest.mark.parametrize('expected', ['empty\\n'])\n"
        "def test_empty_max_seen_at_import(expected):\n"
        "    assert EMPTY == expected\n"
    ),
}


@pytest.mark.parametrize("kind", sorted(MODULE_LEVEL_SUITES))
def test_suite_that_touches_the_program_at_import(
    kind: str, stats_instance: Path, tmp_path: Path
) -> None:
    suite = _write_suite(
        tmp_path / f"suite_{kind}", {"test_module_level.py": MODULE_LEVEL_SUITES[kind]}
    )
    plain, batched = _both(load_instance(stats_instance), tmp_path, suite)
    _assert_same(plain, batched)
    killed = {m.id for m in batched.mutants if m.killed_by}
    assert killed == ({"max_off_by_one"} if kind == "resolved" else {"max_empty"})


# A suite that leaves things behind where a plain run would start clean: its working directory,
# its own directory, $HOME and $TMPDIR, and pytest's numbered tmp_path.  On the batched engine
# every program must still find them as a fresh process does, or the first test fails there.
STATEFUL_SUITE = """\
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
PLACES = [Path("leftover.txt"), HERE / "leftover.txt",
          Path(os.environ["HOME"]) / ".statsrc", Path(os.environ["TMPDIR"]) / "scratch"]


def test_a_clean_start(tmp_path_factory):
    assert [p for p in PLACES if p.exists()] == []
    assert tmp_path_factory.getbasetemp().name == "pytest-0"
    assert (HERE / "data.txt").read_text() == "1 2 3\\n"


def test_b_leave_things_behind(tmp_path):
    for place in PLACES:
        place.write_text("left by an earlier program")
    (HERE / "data.txt").write_text("9 9 9\\n")  # same size, within the same clock tick
    (tmp_path / "x").write_text("x")


def test_c_max_of_the_data():
    out = subprocess.run(["./executable", "max", "1", "2", "3"], capture_output=True, text=True)
    assert out.stdout == "3\\n"
"""


def test_suite_that_leaves_state_behind(stats_instance: Path, tmp_path: Path) -> None:
    suite = _write_suite(
        tmp_path / "suite_stateful", {"test_state.py": STATEFUL_SUITE, "data.txt": "1 2 3\n"}
    )
    plain, batched = _both(load_instance(stats_instance), tmp_path, suite)
    _assert_same(plain, batched)
    clean_start = next(t for t in batched.tests if t.id.endswith("test_a_clean_start"))
    assert clean_start.valid
    assert all(not m.killed_by or clean_start.id not in m.killed_by for m in batched.mutants)
    assert {m.id for m in batched.mutants if m.killed_by} == {"max_off_by_one"}


# A suite whose set-up writes files: a test module that generates its data when imported and a
# conftest that prepares a scratch file at configure time.  A plain run does this before every
# program's tests; the batched engine collects once, so its children must start from the work
# dir as that set-up left it, not from the bare copy of the suite.
SETUP_CONFTEST = """\
import os
from pathlib import Path


def pytest_configure(config):
    Path(os.environ["TMPDIR"], "configured.txt").write_text("ready")
"""

SETUP_SUITE = """\
import os
import subprocess
from pathlib import Path

CASES = Path("generated")
CASES.mkdir(exist_ok=True)
(CASES / "max.txt").write_text("1 2 3\\n")


def test_generated_data_is_there():
    assert (CASES / "max.txt").read_text() == "1 2 3\\n"
    assert Path(os.environ["TMPDIR"], "configured.txt").read_text() == "ready"


def test_max_of_generated_data():
    args = (CASES / "max.txt").read_text().split()
    out = subprocess.run(["./executable", "max", *args], capture_output=True, text=True)
    assert out.stdout == "3\\n"
"""


def test_suite_whose_setup_writes_files(stats_instance: Path, tmp_path: Path) -> None:
    suite = _write_suite(
        tmp_path / "suite_setup", {"conftest.py": SETUP_CONFTEST, "test_generated.py": SETUP_SUITE}
    )
    plain, batched = _both(load_instance(stats_instance), tmp_path, suite)
    _assert_same(plain, batched)
    assert all(t.valid for t in batched.tests)
    assert {m.id for m in batched.mutants if m.killed_by} == {"max_off_by_one"}


# -- how the fork server runs a batch ---------------------------------------------------------
#
# How the fork server runs a batch, and that each way gives the plain engine's matrix.
#
# * ``collect-once`` (``kind = "cli"``): pytest configures and collects once, a child per program
#   runs the tests;
# * ``configure-once`` (``kind = "python"``): pytest configures once (plugins, conftest files,
#   ``pytest_configure`` hooks), a child per program collects -- importing the package under test
#   fresh -- and runs;
# * ``per-program``: a child per program runs a whole ``pytest.main``; taken when configuring the
#   suite imports the package under test, which would otherwise be imported once, without any
#   program's source root on ``sys.path``.


def _mode(suite: Path, targets: list[Target], collect_once: bool, workspace: Path) -> str:
    runs = run_batched(suite, targets, collect_once=collect_once, workspace=workspace)
    assert all(run.status == "ok" for run in runs), [run.message for run in runs]
    return (workspace / "out" / "batch-mode.txt").read_text().strip()


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


def test_configured_once_children_keep_pytests_assert_rewriting(
    intervals_instance: Path, tmp_path: Path
) -> None:
    """The parent rewrites the test modules' asserts once for every child: a failure on a
    mutant must still be explained as pytest explains it (a plain ``assert`` says nothing)."""
    root = intervals_instance.parent
    mutant = tmp_path / "mutant"
    shutil.copytree(root / "src", mutant)
    init = mutant / "intervals" / "__init__.py"
    init.write_text(init.read_text().replace("lo <= result[-1][1] + 1", "lo <= result[-1][1]"))
    targets = [
        Target(pythonpath=str(root / "src"), binds=(str(root),)),
        Target(pythonpath=str(mutant), binds=(str(mutant),)),
    ]
    assert _mode(root / "tests", targets, False, tmp_path / "ws") == "configure-once"
    log = (tmp_path / "ws" / "out" / "1.log").read_text()
    assert "assert [(1, 2), (3, 4)] == [(1, 4)]" in log
    assert "At index 0 diff: (1, 2) != (1, 4)" in log
    assert "FAILED" not in (tmp_path / "ws" / "out" / "0.log").read_text()


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
    suite = _write_suite(
        tmp_path / f"suite_{kind}",
        {"conftest.py": CONFTESTS[kind], "test_fixture.py": TEST_WITH_FIXTURE},
    )
    root = intervals_instance.parent
    target = Target(pythonpath=str(root / "src"), binds=(str(root),))
    assert _mode(suite, [target], False, tmp_path / "ws") == "per-program"

    plain, batched = _both(load_instance(intervals_instance), tmp_path, suite)
    _assert_same(plain, batched)
    assert all(t.valid for t in batched.tests)
    killed = {m.id for m in batched.mutants if m.killed_by}
    assert killed >= {"touching_not_merged", "length_off_by_one"}
    # A package that raises on import breaks a conftest importing it: pytest stops before
    # any test, in a fresh run too, where the reference's runs finish -- the mutant's doing,
    # so every valid test errors on it; imported by a test module, it breaks that module's
    # tests.  Killed either way, never "crashed" and out of the count.
    broken = next(m for m in batched.mutants if m.id == "import_error")
    assert broken.status == "killed"
    if kind == "import_at_load":
        assert broken.run_status == "crashed"
        assert all(o == "error" for o in broken.outcomes.values())
