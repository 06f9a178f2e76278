"""The test modules' asserts are rewritten once on the host; a run must not tell the difference.

Every sandboxed pytest start used to rewrite every test module's asserts.  The worker that
launches the sandbox now compiles them once per suite (``suite/execute/rewritecache.py``; served
inside by ``suite/inside/batch/rewrite.py``) and
pytest's pyc lookup answers from that code when a file's bytes are the ones compiled.  These tests
run real suites in the sandbox with and without the host's code, on both engines, and check that a
failure explains itself the same way, that a suite enabling the assertion pass hook still has
it called, that a file changed or broken after the host compiled it is pytest's to handle, and
that the cache is in fact what served the modules.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from suitebench.suite.execute import rewritecache
from suitebench.suite.execute.runner import run_batched, run_plain
from suitebench.suite.execute.runspec import SuiteLimits, Target
from suitebench.suite.inside.batch import rewrite
from suitebench.suite.records import SuiteRun, TestStatus

LIMITS = SuiteLimits(per_test=5.0, per_program=120.0)

CALC = "def add(a, b):\n    return a + b\n\n\ndef mean(xs):\n    return sum(xs) // len(xs)\n"

TEST_CALC = """\
from calc import add, mean


def test_add_explained():
    assert add(2, 2) == 5


def test_mean_of_halves():
    values = [1, 2]
    assert mean(values) == 1.5, "mean truncates"


def test_add_ok():
    assert add(1, 2) == 3
"""

CONFTEST = """\
import pytest


@pytest.fixture
def pair():
    return (2, 2)
"""

TEST_FIXTURE = """\
from calc import add


def test_pair(pair):
    assert add(*pair) == sum(pair) + 1
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


@pytest.fixture
def program(tmp_path: Path) -> Target:
    src = _write(tmp_path / "src", {"calc.py": CALC})
    return Target(pythonpath=str(src), binds=(str(src),))


def _served(workspace: Path) -> list[str]:
    path = workspace / "out" / rewrite.SERVED_NAME
    return sorted(path.read_text().split()) if path.is_file() else []


# What a run tells of each test: its status, its one-line message, the files that broke.
Outcome = tuple[dict[str, TestStatus], dict[str, str], tuple[str, ...]]


def _outcome(run: SuiteRun) -> Outcome:
    assert run.status == "ok", run.message
    return run.statuses(), run.to_dict()["messages"], run.collect_errors


def _plain(suite: Path, target: Target, ws: Path, cache: bool) -> tuple[Outcome, list[str]]:
    run = run_plain(suite, target, limits=LIMITS, workspace=ws, rewrite_cache=cache)
    return _outcome(run), _served(ws)


def _batched(
    suite: Path, targets: list[Target], ws: Path, cache: bool, collect_once: bool = False
) -> tuple[list[Outcome], list[str]]:
    runs = run_batched(
        suite, targets, collect_once=collect_once, limits=LIMITS, workspace=ws, rewrite_cache=cache
    )
    return [_outcome(run) for run in runs], _served(ws)


def test_failures_explain_themselves_the_same_with_the_hosts_code(
    tmp_path: Path, program: Target
) -> None:
    suite = _write(
        tmp_path / "suite",
        {"conftest.py": CONFTEST, "test_calc.py": TEST_CALC, "test_fixture.py": TEST_FIXTURE},
    )
    plain_off, served = _plain(suite, program, tmp_path / "p0", cache=False)
    assert served == []
    plain_on, served = _plain(suite, program, tmp_path / "p1", cache=True)
    assert plain_on == plain_off
    # Every module pytest rewrote came from the host's code, once each.
    assert served == ["conftest.py", "test_calc.py", "test_fixture.py"]
    messages = plain_on[1]
    assert messages["tests/test_calc.py::test_add_explained"] == "assert 4 == 5"
    assert messages["tests/test_calc.py::test_mean_of_halves"].startswith(
        "AssertionError: mean truncates"
    )
    assert messages["tests/test_fixture.py::test_pair"] == "assert 4 == (4 + 1)"

    # The batched engine, configured once: the parent imports the conftest, each child the
    # test modules.
    targets = [program, program]
    batched_off, served = _batched(suite, targets, tmp_path / "b0", cache=False)
    assert served == []
    batched_on, served = _batched(suite, targets, tmp_path / "b1", cache=True)
    assert (tmp_path / "b1" / "out" / "batch-mode.txt").read_text().strip() == "configure-once"
    assert batched_on == batched_off
    assert batched_on == [plain_on, plain_on]
    assert served == ["conftest.py", *["test_calc.py"] * 2, *["test_fixture.py"] * 2]


def test_collected_once_suite_is_served_once(tmp_path: Path) -> None:
    """``kind = "cli"``: the batch's parent collects (imports) the suite once."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "executable"
    exe.write_text('#!/bin/sh\necho "$(($1 + $2))"\n')
    exe.chmod(0o755)
    suite = _write(
        tmp_path / "suite",
        {
            "test_cli.py": (
                "import subprocess\n\n\n"
                "def run(*args):\n"
                '    return subprocess.run(["./executable", *args], capture_output=True,'
                " text=True).stdout.strip()\n\n\n"
                "def test_sum():\n"
                '    assert run("2", "2") == "5"\n'
            )
        },
    )
    target = Target(executable=str(exe), binds=(str(bin_dir),))
    off, served_off = _batched(suite, [target, target], tmp_path / "b0", False, collect_once=True)
    on, served_on = _batched(suite, [target, target], tmp_path / "b1", True, collect_once=True)
    assert (tmp_path / "b1" / "out" / "batch-mode.txt").read_text().strip() == "collect-once"
    assert on == off
    assert on[0][1]["tests/test_cli.py::test_sum"] == "AssertionError: assert '4' == '5'"
    assert (served_off, served_on) == ([], ["test_cli.py"])


PASS_HOOK_CONFTEST = """\
def pytest_assertion_pass(item, lineno, orig, expl):
    with open("passed-asserts.txt", "a") as fh:
        fh.write(f"{item.name}: {orig}\\n")
"""

PASS_HOOK_TESTS = """\
from pathlib import Path

from calc import add


def test_a_passes():
    assert add(1, 2) == 3


def test_b_hook_saw_it():
    seen = Path("passed-asserts.txt").read_text()
    assert "test_a_passes: add(1, 2) == 3" in seen
"""


def test_suite_enabling_the_assertion_pass_hook_still_has_it_called(
    tmp_path: Path, program: Target
) -> None:
    """The host compiles with ``enable_assertion_pass_hook`` false: a suite that sets it true
    must get pytest's own rewriting, which calls the hook on every passing assert."""
    suite = _write(
        tmp_path / "suite",
        {
            "pytest.ini": "[pytest]\nenable_assertion_pass_hook = true\n",
            "conftest.py": PASS_HOOK_CONFTEST,
            "test_hook.py": PASS_HOOK_TESTS,
        },
    )
    outcome, served = _plain(suite, program, tmp_path / "p", cache=True)
    assert outcome[0] == {
        "tests/test_hook.py::test_a_passes": "passed",
        "tests/test_hook.py::test_b_hook_saw_it": "passed",
    }
    assert served == []
    runs, served = _batched(suite, [program], tmp_path / "b", cache=True)
    assert runs == [outcome]
    assert served == []


# The conftest rewrites a test module when it is imported: after the host compiled it.
CHANGING_CONFTEST = """\
from pathlib import Path

late = Path(__file__).parent / "test_late.py"
late.write_text(late.read_text().replace("== 5", "== 6"))
"""

TEST_LATE = """\
from calc import add


def test_late():
    assert add(2, 2) == 5
"""


def test_file_changed_after_the_host_compiled_it_is_rewritten_by_pytest(
    tmp_path: Path, program: Target
) -> None:
    suite = _write(
        tmp_path / "suite",
        {
            "conftest.py": CHANGING_CONFTEST,
            "test_late.py": TEST_LATE,
            "test_calc.py": TEST_CALC,
            "test_broken.py": "def test_broken(:\n    assert True\n",
        },
    )
    off, _ = _plain(suite, program, tmp_path / "p0", cache=False)
    on, served = _plain(suite, program, tmp_path / "p1", cache=True)
    assert on == off
    _tests, messages, broken = on
    assert messages["tests/test_late.py::test_late"] == "assert 4 == 6"  # the file as run
    assert broken == ("tests/test_broken.py",)
    assert "SyntaxError" in messages["tests/test_broken.py"]
    assert served == ["conftest.py", "test_calc.py"]  # never the changed or the broken file

    batched_off, _ = _batched(suite, [program, program], tmp_path / "b0", cache=False)
    batched_on, served = _batched(suite, [program, program], tmp_path / "b1", cache=True)
    assert batched_on == batched_off == [on, on]
    assert served == ["conftest.py", "test_calc.py", "test_calc.py"]


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Equal code (``==`` compares bytecode, constants, names, line tables, nested code) with
    the same file name everywhere."""
    if a != b or a.co_filename != b.co_filename:
        return False
    nested = [(x, y) for x, y in zip(a.co_consts, b.co_consts, strict=True)]
    return all(_same_code(x, y) for x, y in nested if isinstance(x, types.CodeType))


def test_host_code_is_the_code_pytest_caches(tmp_path: Path) -> None:
    """pytest, left to write bytecode, caches each rewritten module as a pyc; the host's code
    for the same source, pointed at the same file, is that code."""
    suite = _write(
        tmp_path / "tests",
        {"conftest.py": CONFTEST, "test_calc.py": TEST_CALC, "test_fixture.py": TEST_FIXTURE},
    )
    _write(tmp_path / "src", {"calc.py": CALC})
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    import _pytest

    for name in ("conftest.py", "test_calc.py", "test_fixture.py"):
        path = suite / name
        tag = f"{sys.implementation.cache_tag}-pytest-{_pytest.__version__}"
        pyc = suite / "__pycache__" / f"{name[:-3]}.{tag}.pyc"
        cached = marshal.loads(pyc.read_bytes()[16:])
        host = rewritecache.rewritten_code(path.read_bytes(), rewrite.PLACEHOLDER)
        assert host is not None
        assert not _same_code(host, cached)  # the placeholder name is not the file's
        assert _same_code(rewrite.with_filename(host, str(path)), cached)


def test_host_side_compiles_once_per_suite_and_leaves_out_what_it_must(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 'not for the sandbox'\n")
    suite = _write(
        tmp_path / "suite",
        {
            "test_calc.py": TEST_CALC,
            "test_broken.py": "def test_broken(:\n",
            # pytest warns when rewriting this: under ``filterwarnings = error`` the module
            # does not import, so pytest must meet it in the sandbox.
            "test_tuple.py": "def test_tuple():\n    assert (1 == 2, 'never false')\n",
            "notes.txt": "not python\n",
        },
    )
    (suite / "test_link.py").symlink_to(outside)
    calls: list[str] = []
    original = rewritecache.rewritten_code
    monkeypatch.setattr(rewritecache, "_memo", {})  # this worker may have compiled test_calc.py

    def counting(source: bytes, filename: str) -> types.CodeType | None:
        calls.append(source.decode(errors="replace")[:20])
        return original(source, filename)

    monkeypatch.setattr(rewritecache, "rewritten_code", counting)
    for n in range(2):
        base = tmp_path / f"launch{n}"
        base.mkdir()
        sandbox_root = base / "work" / "tests"
        path = rewritecache.write_rewrite_cache(suite, base, sandbox_root, base / "s.txt")
        record = marshal.loads(path.read_bytes())
        assert sorted(record["modules"]) == ["test_calc.py"]
        assert record["root"] == str(base / "work" / "tests")
    assert len(calls) == 3  # calc, broken, tuple: compiled at the first launch only
    (suite / "test_calc.py").write_text(TEST_CALC + "\n# changed\n")
    rewritecache.write_rewrite_cache(suite, tmp_path, tmp_path / "w", tmp_path / "s.txt")
    assert len(calls) == 4  # new bytes, new code


def test_module_whose_rewriting_warns_is_left_to_pytest(tmp_path: Path, program: Target) -> None:
    """pytest warns when it rewrites an assert on a tuple (always true); a suite that turns
    warnings into errors gets a collection error for that module, with or without the host."""
    suite = _write(
        tmp_path / "suite",
        {
            "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
            "test_tuple.py": "def test_tuple():\n    assert (1 == 2, 'never false')\n",
            "test_calc.py": TEST_CALC,
        },
    )
    off, _ = _plain(suite, program, tmp_path / "p0", cache=False)
    on, served = _plain(suite, program, tmp_path / "p1", cache=True)
    assert on == off
    assert on[2] == ("tests/test_tuple.py",)
    assert "assertion is always true" in on[1]["tests/test_tuple.py"]
    assert served == ["test_calc.py"]
