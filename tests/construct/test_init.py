"""``build init``: an instance from a ProgramBench task and from a plain repository."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suitebench.construct.init import init_instance
from suitebench.model.errors import FormatError
from suitebench.model.instance import load_instance
from suitebench.run.store import Store

TASK = Path(__file__).parents[1] / "fixtures" / "instances" / "programbench-task"
SUITE = "tests/5f1c2e9a7b30/eval/tests/test_lookup.py"


@pytest.mark.slow
def test_init_from_a_programbench_task(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "suitebench"
    out = tmp_path / "kv"
    proc = subprocess.run(
        [str(exe), "--store", str(tmp_path / "s.sqlite"), "--json", "build", "init", str(TASK),
         "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["init"]["ignored_by_task"] == {
        f"{SUITE}::TestErrors::test_inline_comment_is_stripped": ["gold_fail"],
        f"{SUITE}::test_environment_is_not_read": ["dummy_pass", "gold_flaky"],
    }
    instance = load_instance(out)
    # the task's one branch, as ProgramBench lays it out: its eval/ beside ./executable
    suite = (instance.tests.parent / SUITE).read_text()
    assert "test_inline_comment_is_stripped" not in suite
    assert "test_environment_is_not_read" not in suite
    assert "def test_lookup_value" in suite
    assert (instance.source / "kv.sh").is_file() and not (instance.source / "tests").exists()
    assert data["hygiene"]["dropped"] == []  # what is left passes 3 times out of 3
    assert data["hygiene"]["tests"] == 9


def test_init_needs_build_script_and_suite(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text("print('hi')\n")
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(FormatError, match=r"build\.sh"):
        init_instance(repo, tmp_path / "out", store=store)
    (repo / "build.sh").write_text("cp main.py executable\n")
    with pytest.raises(FormatError, match=r"tests.*pytest suite"):
        init_instance(repo, tmp_path / "out", store=store)
    store.close()


@pytest.mark.slow
def test_init_from_a_plain_repository_drops_a_failing_test(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "shout.py").write_text("import sys\nprint(sys.stdin.read().upper(), end='')\n")
    (repo / "build.sh").write_text(
        "printf '#!%s\\n' \"$(command -v python3)\" > executable\n"
        "cat shout.py >> executable\nchmod +x executable\n"
    )
    (repo / "tests" / "test_shout.py").write_text(
        textwrap.dedent(
            """\
            import subprocess

            def run(text):
                return subprocess.run(["./executable"], input=text, capture_output=True,
                                      text=True).stdout

            def test_upper():
                assert run("abc") == "ABC"

            def test_wrong():
                assert run("abc") == "abc"
            """
        )
    )
    store = Store(tmp_path / "s.sqlite")
    summary, report = init_instance(repo, tmp_path / "out", store=store, runs=2)
    store.close()
    assert [(d.id, d.reason) for d in report.dropped] == [
        ("tests/test_shout.py::test_wrong", "fails")
    ]
    assert "def test_upper" in (tmp_path / "out" / "tests" / "test_shout.py").read_text()
    assert summary["ignored_by_task"] == {}


@pytest.mark.slow
def test_init_from_a_python_project_carries_its_config_and_the_files_its_tests_read(
    tmp_path: Path,
) -> None:
    """A src-layout project: its pyproject's ``filterwarnings = error`` makes a test that
    warns fail (dropped by hygiene), and the README its test reads and the root package a
    test imports are copied beside (and the goldens test passes); a test skipped on the
    reference is kept and reported as skipped; the instance is named after the project, not
    the folder it was cloned into."""
    repo = tmp_path / "shouty-checkout"
    (repo / "src" / "shouty").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "docs").mkdir()  # not read by the tests: not copied
    (repo / "docs" / "index.md").write_text("# docs\n")
    (repo / "README.md").write_text("Shouty: `shout('hi')` gives `HI!`\n")
    (repo / "tools").mkdir()  # a root package the tests import, as plain pytest finds it
    (repo / "tools" / "__init__.py").write_text("GOLDEN = {'hi': 'HI!'}\n")
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "shouty"\n\n[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
    )
    (repo / "src" / "shouty" / "__init__.py").write_text(
        "import warnings\n\n\ndef shout(text):\n    return text.upper() + '!'\n\n\n"
        "def whisper(text):\n    warnings.warn('whisper is deprecated', DeprecationWarning)\n"
        "    return text.lower()\n"
    )
    (repo / "tests" / "test_shouty.py").write_text(
        textwrap.dedent(
            """\
            from pathlib import Path

            from shouty import shout, whisper

            def test_shout():
                assert shout("hi") == "HI!"

            def test_readme_example():
                readme = (Path(__file__).parent.parent / "README.md").read_text()
                assert "`shout('hi')` gives `HI!`" in readme

            def test_whisper():
                assert whisper("HI") == "hi"

            def test_goldens():
                from tools import GOLDEN
                assert all(shout(k) == v for k, v in GOLDEN.items())

            import pytest

            @pytest.mark.skipif(True, reason="needs a terminal")
            def test_tty_colours():
                assert shout("hi") == "HI!"
            """
        )
    )
    store = Store(tmp_path / "s.sqlite")
    summary, report = init_instance(repo, tmp_path / "out", store=store, runs=1)
    store.close()
    toml = (tmp_path / "out" / "instance.toml").read_text()
    assert 'kind = "python"' in toml and 'package = "shouty"' in toml
    assert 'pytest_config = "project/pyproject.toml"' in toml
    assert 'beside = ["README.md", "tools"]' in toml
    assert [(d.id, d.reason) for d in report.dropped] == [
        ("tests/test_shouty.py::test_whisper", "fails")
    ]
    # Skipped in every run: kept in its file, listed with pytest's reason, not "fails".
    assert [(d.id, d.reason) for d in report.skipped] == [
        ("tests/test_shouty.py::test_tty_colours", "skipped")
    ]
    assert "needs a terminal" in report.skipped[0].detail
    assert "def test_tty_colours" in (tmp_path / "out" / "tests" / "test_shouty.py").read_text()
    assert report.tests == 5
    assert toml.startswith('name = "shouty"\n')  # pyproject's name, not "shouty-checkout"
    assert summary["python_project"]["beside"] == ["README.md", "tools"]
    assert not (tmp_path / "out" / "docs").exists()
