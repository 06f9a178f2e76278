"""A mutant built before is found in the build cache without copying the source and applying
its patch again (scoring many suites against one instance pays for its builds once); a changed
reference source or patch, or a build removed from the cache, means building again."""

from __future__ import annotations

import concurrent.futures
import shutil
from pathlib import Path
from typing import Any

import pytest

from suitebench.model.instance import Instance, load_instance
from suitebench.suite.execute import programs as build
from suitebench.suite.execute.programs import Builder, BuildStatus


def _count_patches(monkeypatch: pytest.MonkeyPatch, instance: Instance) -> list[str]:
    """The mutants whose patch is applied from now on (by our exact patcher or by ``patch``:
    the first that takes it, once)."""
    applied: list[str] = []
    by_bytes = {m.patch.read_bytes(): m.id for m in instance.mutants}
    exact, patch = build.apply_exact, build.apply_patch

    def counting_exact(tree: Path, diff: bytes) -> bool:
        done = exact(tree, diff)
        if done:
            applied.append(by_bytes[diff])
        return done

    def counting(tree: Path, path: Path) -> Any:
        applied.append(path.stem)
        return patch(tree, path)

    monkeypatch.setattr(build, "apply_exact", counting_exact)
    monkeypatch.setattr(build, "apply_patch", counting)
    return applied


def test_a_mutant_built_before_is_found_without_patching(
    stats_instance: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = load_instance(stats_instance)
    cache = tmp_path / "builds"
    applied = _count_patches(monkeypatch, instance)
    first = {m.id: Builder(instance, cache).mutant(m) for m in instance.mutants}
    # every patch applied (one whose build failed from the reference's kept objects is tried
    # once more from scratch: does_not_compile)
    assert sorted(set(applied)) == sorted(m.id for m in instance.mutants)
    statuses = {mid: b.status for mid, b in first.items()}
    assert statuses["stale_patch"] is BuildStatus.BUILD_ERROR
    assert sum(s is BuildStatus.OK for s in statuses.values()) == 6

    applied.clear()
    again = {m.id: Builder(instance, cache).mutant(m) for m in instance.mutants}
    assert applied == ["stale_patch"]  # a patch that does not apply is no build to find
    assert again == first

    # a build removed from the cache is built again, under the same id
    victim = next(mid for mid, b in first.items() if b.ok)
    shutil.rmtree(cache / first[victim].program_id[:32])
    applied.clear()
    mutant = next(m for m in instance.mutants if m.id == victim)
    rebuilt = Builder(instance, cache).mutant(mutant)
    assert applied == [victim] and rebuilt.program_id == first[victim].program_id
    assert rebuilt.ok and Path(rebuilt.executable or "").is_file()


def test_an_edited_reference_builds_its_mutants_again(
    stats_instance: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = load_instance(stats_instance)
    cache = tmp_path / "builds"
    mutant = next(m for m in instance.mutants if m.id == "sum_no_overflow_check")
    before = Builder(instance, cache).mutant(mutant)
    source = instance.source / "stats.c"
    source.write_text(source.read_text() + "/* a comment: the source changed */\n")
    applied = _count_patches(monkeypatch, instance)
    after = Builder(load_instance(stats_instance), cache).mutant(mutant)
    assert applied == ["sum_no_overflow_check"]
    assert after.ok and after.program_id != before.program_id


def test_a_built_package_carries_bytecode_but_for_modules_that_warn(tmp_path: Path) -> None:
    """The bytecode saves every process a test starts compiling the package again; a module
    whose compile draws a SyntaxWarning gets none, so that importing it warns as the
    project's own run does (an error under ``filterwarnings = error``)."""
    from suitebench.run.pycompile import compile_check

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "clean.py").write_text("def f(x):\n    return x is None\n")
    (pkg / "warns.py").write_text('def f(x):\n    return x is ""\n')
    assert compile_check(pkg) == ""
    cached = sorted(p.name.split(".")[0] for p in (pkg / "__pycache__").iterdir())
    assert cached == ["clean"]


AREA = '''\
"""Areas of plane shapes."""


def rectangle(w, h):
    return w * h


def triangle(b, h):
    return b * h / 2
'''


def test_package_mutants_never_write_the_reference(tmp_path: Path) -> None:
    """A Python package's mutant is a copy of the source with its patch applied -- in place by
    our own exact patcher, or by ``patch`` when its hunk is two lines off where it says -- built
    under the same ids in any cache, and the reference's tree is never written."""
    from suitebench.run.tree import tree_hash, walk

    from ..conftest import write_python_instance

    toml = write_python_instance(
        tmp_path / "shapes",
        name="shapes",
        source={"shapes/__init__.py": '"""shapes."""\n', "shapes/area.py": AREA},
        tests={"test_area.py": "from shapes.area import rectangle\n\n\n"
               "def test_rectangle():\n    assert rectangle(2, 3) == 6\n"},
        spec="# shapes\n",
        mutants=[("times_to_plus", "shapes/area.py", "w * h", "w + h"),
                 ("half_to_third", "shapes/area.py", "h / 2", "h / 3")],
    )  # fmt: skip
    offset = tmp_path / "shapes" / "mutants" / "half_to_third.diff"
    text = offset.read_text()
    header = next(line for line in text.splitlines() if line.startswith("@@"))
    old_start = int(header.split()[1].split(",")[0][1:])
    new_start = int(header.split()[2].split(",")[0][1:])
    moved = f"@@ -{old_start + 2},{header.split()[1].split(',')[1]} "
    moved += f"+{new_start + 2},{header.split()[2].split(',')[1]} @@"
    offset.write_text(text.replace(header, moved))
    instance = load_instance(toml)

    first = Builder(instance, tmp_path / "first")
    reference = first.reference()
    ref_tree = Path(reference.directory)
    before = {p.relative_to(ref_tree): p.read_bytes() for p in walk(ref_tree)}
    ref_hash = tree_hash(ref_tree)
    built = {m.id: first.mutant(m) for m in instance.mutants}
    again = {m.id: Builder(instance, tmp_path / "again").mutant(m) for m in instance.mutants}

    assert {k: b.program_id for k, b in built.items()} == {
        k: b.program_id for k, b in again.items()
    }
    assert all(b.ok for b in built.values())
    assert {p.relative_to(ref_tree): p.read_bytes() for p in walk(ref_tree)} == before
    assert tree_hash(ref_tree) == ref_hash
    times = Path(built["times_to_plus"].directory)
    assert "return w + h" in (times / "shapes" / "area.py").read_text()
    third = Path(built["half_to_third"].directory) / "shapes" / "area.py"
    assert "return b * h / 3" in third.read_text()


@pytest.mark.parametrize("pool", ["processes", "no process pool here"])
def test_mutants_built_beside_are_the_mutants_built_here(
    pool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package's mutants built beside the reference's runs (on worker processes, or on
    threads where no process pool can start) are the very builds made one by one: the same
    program ids, a mutant that does not compile a build error either way."""
    from ..select.test_weak_mutation import _instance

    instance = load_instance(_instance(tmp_path / "i"))
    broken = tmp_path / "i" / "pager" / "mutants" / "broken.diff"
    broken.write_text(
        (tmp_path / "i" / "pager" / "mutants" / "minus.diff")
        .read_text()
        .replace("full - (rest", "full - (rest (")
    )
    unbuildable = instance.mutants[0].model_copy(update={"id": "broken", "patch": broken})
    mutants = [*instance.mutants, unbuildable]
    here = {m.id: Builder(instance, tmp_path / "here").mutant(m) for m in mutants}
    if pool != "processes":

        def no_pool(*args: Any, **kwargs: Any) -> Any:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    beside = Builder(instance, tmp_path / "beside")
    reference, wait = build.build_reference_first(beside, mutants, beside=True)
    assert reference.ok
    got = wait()
    assert {k: (b.program_id, b.status) for k, b in got.items()} == {
        k: (b.program_id, b.status) for k, b in here.items()
    }
    assert got["broken"].status is BuildStatus.BUILD_ERROR
    assert all(got[m.id].ok for m in instance.mutants)
