"""Red team: a suite that looks at the program's tree instead of its behaviour moves no figure.

A test sees the tree of the program under test (``./executable`` and what its build left beside
it, or the imported package).  Before, a mutant's tree differed from the reference's in what its
history left there, not only in the bytes its patch changed: the patched file was newer than
its neighbours (the reference's were copied with the instance's times, years old in a checked-out
project) and, in a Python package, it was the one file not hard-linked to the reference's.  A
suite of one such test, knowing nothing of the program, killed every mutant of a C instance and
of a package (M = 100%).  And a test given the reference executable (the paper's ablation) could
compare its bytes.  Now every built tree is sealed (one time on every file, no links between
trees) and a native executable is execute-only to the tests.

Expected figures, worked out by hand:

* ``stats`` (C, the valid suite of ``test_hostile_tests``): M = 2/6 (``sum_no_overflow_check``
  and ``max_off_by_one``); the snooping tests kill nothing: the times test passes everywhere and
  the test reading the executable is invalid (it cannot open it).
* ``shapes`` (a package of two modules): ``rectangle(2, 3) == 6`` kills ``times_to_plus``
  (2 + 3 = 5); nothing checks ``triangle``, so ``half_to_third`` lives: M = 1/2.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run import sandbox
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.run.tree import SEALED_TIME_NS, walk
from suitebench.suite.execute.programs import Builder
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance
from .test_hostile_tests import KILLED, VALID

LIMITS = SuiteLimits(per_test=5.0, per_program=90.0, memory_mb=256)
YEARS_AGO = 1_600_000_000  # 2020: a project checked out long before it is scored

# Knows nothing of the program: fails when one file of its tree is newer than the others.
SNOOP_TIMES = """\
import os
import subprocess


def test_sources_are_as_old_as_each_other():
    subprocess.run(["./executable", "sum", "1", "2"], capture_output=True)
    subprocess.run(["./executable", "max", "1", "2"], capture_output=True)
    tree = os.path.dirname(os.path.realpath("executable"))
    times = {n: os.stat(os.path.join(tree, n)).st_mtime for n in ("stats.c", "build.sh")}
    assert len(set(times.values())) == 1, times
"""

# Knows the reference's bytes (an agent given the executable does).
SNOOP_BYTES = """\
import hashlib
import subprocess


def test_the_executable_is_the_reference():
    subprocess.run(["./executable", "sum", "1", "2"], capture_output=True)
    subprocess.run(["./executable", "max", "1", "2"], capture_output=True)
    with open("executable", "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == {digest!r}
"""

AREA = '''\
"""Areas of plane shapes."""


def rectangle(w, h):
    return w * h


def triangle(b, h):
    return b * h / 2
'''

SHAPES_TESTS = {
    "test_area.py": (
        "from shapes import rectangle\n\n\ndef test_rectangle():\n    assert rectangle(2, 3) == 6\n"
    ),
    # Calls everything (so every mutant runs it), then asks which module is newer or shared
    # with fewer trees than its neighbour.
    "test_snoop.py": (
        "import os\n\nimport shapes\nfrom shapes import area\n\n\n"
        "def _stats():\n"
        "    area.rectangle(1, 1), area.triangle(1, 1)\n"
        "    here = os.path.dirname(shapes.__file__)\n"
        "    return [os.stat(os.path.join(here, n)) for n in ('__init__.py', 'area.py')]\n\n\n"
        "def test_modules_are_as_old_as_each_other():\n"
        "    a, b = _stats()\n"
        "    assert a.st_mtime == b.st_mtime\n\n\n"
        "def test_modules_are_shared_alike():\n"
        "    a, b = _stats()\n"
        "    assert a.st_nlink == b.st_nlink\n"
    ),
}


def _shapes(tmp_path: Path) -> Path:
    """The two-module package, its source checked out years ago; its instance.toml."""
    toml = write_python_instance(
        tmp_path / "shapes",
        name="shapes",
        source={"shapes/__init__.py": "from shapes.area import rectangle, triangle\n",
                "shapes/area.py": AREA},
        tests=SHAPES_TESTS,
        spec="# shapes\n",
        mutants=[("times_to_plus", "shapes/area.py", "w * h", "w + h"),
                 ("half_to_third", "shapes/area.py", "h / 2", "h / 3")],
    )  # fmt: skip
    _age(tmp_path / "shapes" / "src")
    return toml


def _age(root: Path) -> None:
    for path in walk(root):
        os.utime(path, (YEARS_AGO, YEARS_AGO))


def _killed(result: SuiteResult) -> set[str]:
    return {m.id for m in result.mutants if m.status is MutantStatus.KILLED}


def _sandboxed() -> Backend:
    available = sandbox.available_backends()
    for backend in (Backend.BWRAP, Backend.UNSHARE):
        if available[backend] is None:
            return backend
    pytest.fail(f"no sandboxing backend here: {available}")


def test_a_c_suite_cannot_tell_a_mutant_by_its_tree(stats_instance: Path, tmp_path: Path) -> None:
    _age(stats_instance.parent / "src")
    instance = load_instance(stats_instance)
    reference = Builder(instance, tmp_path / "probe").reference()
    digest = hashlib.sha256(Path(reference.executable or "").read_bytes()).hexdigest()
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in VALID.items():
        (suite / name).write_text(text)
    (suite / "test_snoop_times.py").write_text(SNOOP_TIMES)
    (suite / "test_snoop_bytes.py").write_text(SNOOP_BYTES.format(digest=digest))
    result = score_suite(
        instance, suite, store=Store(tmp_path / "st.db"), backend=_sandboxed(), limits=LIMITS
    )
    tests = {t.id: t for t in result.tests}
    times = tests["tests/test_snoop_times.py::test_sources_are_as_old_as_each_other"]
    assert times.valid, times
    read = tests["tests/test_snoop_bytes.py::test_the_executable_is_the_reference"]
    assert not read.valid and "PermissionError" in read.message, read
    assert _killed(result) == KILLED, [(m.id, m.killed_by) for m in result.mutants]
    assert result.mutation_score == pytest.approx(2 / 6)


def test_a_package_suite_cannot_tell_a_mutant_by_its_tree(tmp_path: Path) -> None:
    result = score_suite(
        load_instance(_shapes(tmp_path)),
        store=Store(tmp_path / "st.db"),
        backend=_sandboxed(),
        limits=LIMITS,
    )
    assert result.validity == 1.0, [(t.id, t.message) for t in result.tests if not t.valid]
    assert _killed(result) == {"times_to_plus"}, [(m.id, m.killed_by) for m in result.mutants]
    assert result.mutation_score == pytest.approx(1 / 2)


def test_every_built_tree_is_sealed_alike(tmp_path: Path) -> None:
    """The reference's tree and a mutant's: the same files, each of one link, every time the
    sealed one; the unchanged module's bytecode made from the sealed source (its header says
    the sealed time), so importing it compiles nothing."""
    instance = load_instance(_shapes(tmp_path))
    builder = Builder(instance, tmp_path / "builds")
    trees = [
        Path(builder.reference().directory),
        Path(builder.mutant(instance.mutants[0]).directory),
    ]
    shapes = []
    for tree in trees:
        entries = sorted(os.walk(tree))
        shape = []
        for dirpath, dirnames, filenames in entries:
            for name in [*filenames, *dirnames, "."]:
                st = os.lstat(os.path.join(dirpath, name))
                rel = os.path.relpath(os.path.join(dirpath, name), tree)
                shape.append((rel, st.st_mode, st.st_uid, st.st_nlink))
                assert st.st_mtime_ns == SEALED_TIME_NS, rel
                if not os.path.isdir(os.path.join(dirpath, name)):
                    assert st.st_nlink == 1, rel
        shapes.append(shape)
        pyc = next((tree / "shapes" / "__pycache__").glob("__init__.*.pyc")).read_bytes()
        assert int.from_bytes(pyc[8:12], "little") == SEALED_TIME_NS // 1_000_000_000
    assert shapes[0] == shapes[1]
