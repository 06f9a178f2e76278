"""The batched engine's work dir: each program's tests start from what a plain run finds.

The suite is copied again only when the previous program's tests changed something in the work
dir; these checks pin down what counts as a change (including one made within the clock tick
the copy was made in, which timestamps alone cannot see) and that the scratch dirs ($HOME,
$TMPDIR) are emptied before every program.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from suitebench.suite.inside.workdir import WorkDir


@pytest.fixture
def layout(tmp_path: Path) -> WorkDir:
    src = tmp_path / "suite-src" / "tests"
    (src / "data").mkdir(parents=True)
    (src / "test_x.py").write_text("def test_x():\n    pass\n")
    (src / "data" / "input.txt").write_text("1 2 3\n")
    for name in ("work", "home", "tmp"):
        (tmp_path / name).mkdir()
    return WorkDir(
        {
            "workdir": str(tmp_path / "work"),
            "suite_src": str(src),
            "suite_name": "tests",
            "scratch": [str(tmp_path / "home"), str(tmp_path / "tmp")],
        }
    )


def _programs(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        exe = tmp_path / f"prog{i}"
        exe.write_text(f"#!/bin/sh\necho {i}\n")
        exe.chmod(0o755)
        paths.append(str(exe))
    return paths


def test_untouched_work_dir_is_reused_with_the_next_program_linked(
    layout: WorkDir, tmp_path: Path
) -> None:
    for exe in _programs(tmp_path, 4):
        layout.prepare(exe)
        assert os.readlink(layout.path / "executable") == exe
        assert (layout.path / "tests" / "data" / "input.txt").read_text() == "1 2 3\n"
    assert layout.refills == 1  # copied once, then only the link changed


@pytest.mark.parametrize(
    "change",
    [
        "same_size_rewrite",
        "new_file_in_cwd",
        "new_file_in_suite",
        "removed_file",
        "chmod",
        "relinked_executable",
    ],
)
def test_any_change_brings_a_fresh_copy(layout: WorkDir, tmp_path: Path, change: str) -> None:
    first, second = _programs(tmp_path, 2)
    layout.prepare(first)
    data = layout.path / "tests" / "data" / "input.txt"
    if change == "same_size_rewrite":  # right away: within the tick the copy was made in
        data.write_text("9 9 9\n")
    elif change == "new_file_in_cwd":
        (layout.path / "leftover.txt").write_text("x")
    elif change == "new_file_in_suite":
        (layout.path / "tests" / "data" / "out.txt").write_text("x")
    elif change == "removed_file":
        data.unlink()
    elif change == "chmod":
        data.chmod(0o600)
    elif change == "relinked_executable":
        (layout.path / "executable").unlink()
        (layout.path / "executable").symlink_to("/bin/false")
    layout.prepare(second)
    assert layout.refills == 2
    assert data.read_text() == "1 2 3\n"
    assert not (layout.path / "leftover.txt").exists()
    assert not (layout.path / "tests" / "data" / "out.txt").exists()
    assert os.readlink(layout.path / "executable") == second


def test_home_and_tmp_are_emptied_before_every_program(layout: WorkDir, tmp_path: Path) -> None:
    first, second = _programs(tmp_path, 2)
    layout.prepare(first)
    (tmp_path / "home" / ".config").mkdir()
    (tmp_path / "home" / ".config" / "rc").write_text("x")
    (tmp_path / "tmp" / "pytest-of-nobody").mkdir()
    (tmp_path / "tmp" / "link").symlink_to(tmp_path / "home")
    layout.prepare(second)
    assert list((tmp_path / "home").iterdir()) == []
    assert list((tmp_path / "tmp").iterdir()) == []
    assert layout.refills == 1  # the work dir itself was untouched


def test_children_start_from_what_the_suites_setup_left(layout: WorkDir, tmp_path: Path) -> None:
    """Collect-once: files written by configure hooks or at import are part of every start."""
    from suitebench.suite.inside.workdir import tree_state

    first, second = _programs(tmp_path, 2)
    layout.prepare(None)  # the bare copy, as the batch has it before pytest starts
    bare = tree_state(layout.path)
    assert not layout.adopt_setup(bare)  # a set-up that wrote nothing: nothing to keep

    (layout.path / "generated").mkdir()
    (layout.path / "generated" / "case.txt").write_text("1 2 3\n")
    (tmp_path / "tmp" / "configured.txt").write_text("ready")
    assert layout.adopt_setup(bare)

    layout.prepare(first)
    assert (layout.path / "generated" / "case.txt").read_text() == "1 2 3\n"
    assert (tmp_path / "tmp" / "configured.txt").read_text() == "ready"
    assert os.readlink(layout.path / "executable") == first

    (layout.path / "generated" / "case.txt").write_text("changed by a test")
    (tmp_path / "tmp" / "configured.txt").unlink()
    (tmp_path / "home" / "left.txt").write_text("x")
    layout.prepare(second)
    assert (layout.path / "generated" / "case.txt").read_text() == "1 2 3\n"
    assert (tmp_path / "tmp" / "configured.txt").read_text() == "ready"
    assert list((tmp_path / "home").iterdir()) == []
    assert (layout.path / "tests" / "test_x.py").is_file()
