"""A module the coverage run never imported is reached only by the tests whose coverage is
unknown.

``pathfmt`` shortens a path under the home directory to ``~``; it imports its POSIX backend
here and its Windows one only where ``os.name == "nt"``.  Before, a mutant of the Windows
backend found "no coverage" of its file and ran every test (fasteners 0.20's sixteen
``pywin32`` mutants ran its whole 26 s suite each, 15% of its ``--fast`` time).  Worked out:

* ``boundary`` (``h + SEP`` -> ``h``): ``/home/bobby`` counts as under ``/home/bob`` --
  ``test_other_user_not_shortened`` fails; every test entered ``shorten``: 4 run;
* ``win_sep`` and ``win_home`` change ``_windows.py``, which no test imports here: only
  ``test_shell_sees_the_same_home``, which starts a shell (what a shell runs is not seen), can
  reach them -- 1 run each, and both survive, as on the full matrix.
"""

from __future__ import annotations

from pathlib import Path

from suitebench.run.executor import LocalExecutor

from ..conftest import score_selected_and_full, write_python_instance

INIT = '''\
"""Paths shown to users: a home directory shortened to ~."""

import os

if os.name == "nt":
    from pathfmt._windows import SEP, home
else:
    from pathfmt._posix import SEP, home


def shorten(path):
    h = home()
    if path == h or path.startswith(h + SEP):
        return "~" + path[len(h):]
    return path
'''
POSIX = """\
import os

SEP = "/"


def home():
    return os.environ.get("HOME", "/")
"""
WINDOWS = """\
import os

SEP = "\\\\"


def home():
    return os.environ.get("USERPROFILE", "C:\\\\")
"""
TESTS = """\
import subprocess

from pathfmt import shorten


def test_home_itself(monkeypatch):
    monkeypatch.setenv("HOME", "/home/bob")
    assert shorten("/home/bob") == "~"


def test_inside_home(monkeypatch):
    monkeypatch.setenv("HOME", "/home/bob")
    assert shorten("/home/bob/notes.txt") == "~/notes.txt"


def test_other_user_not_shortened(monkeypatch):
    monkeypatch.setenv("HOME", "/home/bob")
    assert shorten("/home/bobby/notes.txt") == "/home/bobby/notes.txt"


def test_shell_sees_the_same_home(monkeypatch):
    monkeypatch.setenv("HOME", "/home/bob")
    said = subprocess.run(["/bin/sh", "-c", 'printf %s "$HOME"'], capture_output=True, text=True)
    assert shorten(said.stdout) == "~"
"""
MUTANTS = [
    ("boundary", "pathfmt/__init__.py", "path.startswith(h + SEP)", "path.startswith(h)"),
    ("win_sep", "pathfmt/_windows.py", 'SEP = "\\\\"', 'SEP = "/"'),
    ("win_home", "pathfmt/_windows.py", '"USERPROFILE"', '"HOME"'),
]


def test_a_module_never_imported_runs_only_the_tests_of_unknown_coverage(tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "pathfmt",
        name="pathfmt",
        source={
            "pathfmt/__init__.py": INIT,
            "pathfmt/_posix.py": POSIX,
            "pathfmt/_windows.py": WINDOWS,
        },
        tests={"test_paths.py": TESTS},
        spec="# pathfmt\n\n## Paths\nA home directory shortened to ~.\n",
        mutants=MUTANTS,
    )
    selected, full = score_selected_and_full(toml, tmp_path, executor=LocalExecutor(2))
    by_id = {m.id: m for m in selected.mutants}
    assert {m.id: str(m.status) for m in full.mutants} == {
        "boundary": "killed",
        "win_sep": "survived",
        "win_home": "survived",
    }
    assert by_id["boundary"].killed_by == ["tests/test_paths.py::test_other_user_not_shortened"]
    assert by_id["boundary"].tests_run == 4
    for mid in ("win_sep", "win_home"):
        assert by_id[mid].tests_run == 1, (mid, by_id[mid].selection_reason)
        assert by_id[mid].covered_by == ["tests/test_paths.py::test_shell_sees_the_same_home"]
        assert "pathfmt/_windows.py never imported" in by_id[mid].selection_reason
