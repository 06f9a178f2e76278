"""Incremental mutant builds of a C program whose build compiles and links in one command
(``gcc -o executable src/*.c ...``, no object left behind): the units are compiled once alone
from the recorded command, and a mutant's build links the kept object of every unit its change
does not reach (``suite/execute/incremental_units.py``). On ``tally`` (``tally_program.py``)
with such a ``build.sh``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from suitebench.construct.mutants import write_mutants
from suitebench.model.instance import Instance, MutantSpec, load_instance
from suitebench.suite.execute.incremental_units import UNITS_DIR, UnitsBase
from suitebench.suite.execute.programs import Builder, BuiltProgram

from .tally_program import write_tally

ONE_COMMAND = (
    "#!/bin/sh\nset -eu\n"
    "gcc -O2 -Wall -Iinclude -Ithird_party/minimath -o executable"
    " src/main.c src/stats.c src/debug.c third_party/minimath/minimath.c\n"
)


def _diff(file: str, line: int, old: str, new: str) -> str:
    return f"--- a/{file}\n+++ b/{file}\n@@ -{line} +{line} @@\n-{old}\n+{new}\n"


# One-line mutants, each with what ``executable 3 9 4`` prints (worked out by hand from
# tally_program.py: count 3, sum 16, max 9, smallest 3 so mid 3 + (9 - 3) / 2 = 6,
# weight WEIGHTS[3 % 5] + debug_enabled() = 5 + 0).
MUTANTS = {
    "minus": (
        _diff(
            "src/stats.c",
            4,
            "    for (int i = 0; i < n; i++) total += xs[i];",
            "    for (int i = 0; i < n; i++) total -= xs[i];",
        ),
        "count 3\nsum -16\nmax 9\nmid 6\nweight 5\n",
    ),
    "mid": (  # a header two units read: mid 3 + (9 - 3) / 3 = 5
        _diff(
            "include/stats.h",
            5,
            "static inline long midpoint(long a, long b) { return a + (b - a) / 2; }",
            "static inline long midpoint(long a, long b) { return a + (b - a) / 3; }",
        ),
        "count 3\nsum 16\nmax 9\nmid 5\nweight 5\n",
    ),
    "debug": (  # weight 5 + 2
        _diff(
            "src/debug.c",
            2,
            "int debug_enabled(void) { return 0; }",
            "int debug_enabled(void) { return 2; }",
        ),
        "count 3\nsum 16\nmax 9\nmid 6\nweight 7\n",
    ),
    "minmax": (  # third-party: mm_min keeps the largest, 9: mid 9 + 0 = 9
        _diff(
            "third_party/minimath/minimath.c",
            4,
            "    for (int i = 1; i < n; i++) if (xs[i] < m) m = xs[i];",
            "    for (int i = 1; i < n; i++) if (xs[i] > m) m = xs[i];",
        ),
        "count 3\nsum 16\nmax 9\nmid 9\nweight 5\n",
    ),
    "scale": (  # stats_scale is static inline and never called: no code changes
        _diff(
            "src/stats.c",
            16,
            "static inline long stats_scale(long x) { return x * 3; }",
            "static inline long stats_scale(long x) { return x * 7; }",
        ),
        "count 3\nsum 16\nmax 9\nmid 6\nweight 5\n",
    ),
}


@pytest.fixture(scope="module")
def tally(tmp_path_factory: pytest.TempPathFactory) -> tuple[Instance, dict[str, MutantSpec]]:
    root = write_tally(tmp_path_factory.mktemp("tally1"))
    (root / "src" / "build.sh").write_text(ONE_COMMAND)
    patches = root / "patches"
    patches.mkdir()
    mutants = {}
    for name, (diff, _) in MUTANTS.items():
        (patches / f"{name}.diff").write_text(diff)
        mutants[name] = MutantSpec(id=name, patch=patches / f"{name}.diff")
    return load_instance(root), mutants


def _prints(built: BuiltProgram) -> str:
    assert built.ok and built.executable, built.message
    proc = subprocess.run([built.executable, "3", "9", "4"], capture_output=True, timeout=30)
    return proc.stdout.decode()


def _units(builder: Builder) -> UnitsBase:
    """The builder's kept units (a one-command build: one object per unit)."""
    base = builder.incremental_base()
    assert isinstance(base, UnitsBase)
    return base


def test_units_compiled_and_linked_at_once_are_reused_into_the_clean_builds_programs(
    tally: Any, tmp_path: Path
) -> None:
    instance, mutants = tally
    incremental = Builder(instance, tmp_path / "inc")
    clean = Builder(instance, tmp_path / "clean", incremental=False)
    base = _units(incremental)
    # The four units of the one command have a kept object each.
    plan = json.loads((base.wrappers / "plan.json").read_text())
    [units] = plan.values()
    assert len(units) == 4
    for name, (_diff_text, expected) in MUTANTS.items():
        a, b = clean.mutant(mutants[name]), incremental.mutant(mutants[name])
        assert _prints(a) == _prints(b) == expected, name
        # gcc without -g, the same directory layout: the same bytes.
        assert Path(a.executable or "").read_bytes() == Path(b.executable or "").read_bytes()


def test_a_unit_the_change_does_not_reach_is_linked_from_its_kept_object(
    tally: Any, tmp_path: Path
) -> None:
    instance, mutants = tally
    builder = Builder(instance, tmp_path / "cache")
    base = _units(builder)
    # Swap debug.c's kept object for one whose debug_enabled() returns 1: a build that links
    # the kept object prints weight 5 + 1 = 6, one that compiles debug.c prints 5 + 0.
    [units] = json.loads((base.wrappers / "plan.json").read_text()).values()
    [debug] = [u for u in units if "src/debug.c" in u["reads"] and len(u["reads"]) == 1]
    marked = tmp_path / "marked.c"
    marked.write_text("int debug_enabled(void) { return 1; }\n")
    subprocess.run(["gcc", "-O2", "-c", str(marked), "-o", debug["object"]], check=True)
    # stats.c changed: debug.c's object is the kept one (weight 6), sum -16 compiled anew.
    assert _prints(builder.mutant(mutants["minus"])) == "count 3\nsum -16\nmax 9\nmid 6\nweight 6\n"
    # debug.c changed: it is compiled (return 2: weight 7), never its kept object.
    assert _prints(builder.mutant(mutants["debug"])) == MUTANTS["debug"][1]


def test_one_command_builds_trivial_equivalence_and_what_is_built_from_scratch(
    tally: Any, tmp_path: Path
) -> None:
    instance, mutants = tally
    builder = Builder(instance, tmp_path / "cache")
    base = _units(builder)
    # The program of stats_scale's mutant is the reference's bytes; the sum's is not.
    for name, equivalent in (("scale", True), ("minus", False)):
        built = builder.mutant(mutants[name])
        patch = mutants[name].patch.read_bytes()
        assert base.same_objects(Path(built.directory or ""), patch) is equivalent, name
    # A change of the build script is read by no unit: built from scratch.
    script = b"--- a/build.sh\n+++ b/build.sh\n@@ -2 +2 @@\n-set -eu\n+set -e\n"
    assert base.stale_objects(script) is None
    assert base.stale_objects(mutants["mid"].patch.read_bytes()) == ["src/main.c", "src/stats.c"]
    # A mutant that does not compile fails, with or without the kept objects.
    broken = tmp_path / "broken.diff"
    broken.write_text(_diff("src/stats.c", 3, "    long total = 0;", "    long total = 0"))
    assert not builder.mutant(MutantSpec(id="broken", patch=broken)).ok


def test_build_mutants_on_a_one_command_build_scopes_and_marks_equivalents(tmp_path: Path) -> None:
    root = write_tally(tmp_path / "tally")
    (root / "src" / "build.sh").write_text(ONE_COMMAND)
    report = write_mutants(load_instance(root), cache_dir=root / "builds")
    # By hand, from the command: tools/bench.c is never compiled, the rest as with make.
    assert report.left_out_files["tools/bench.c"] == "not_compiled"
    assert report.left_out_files["include/table.h"] == "generated"
    assert report.left_out["compiled_out"] > 0
    # stats_scale's mutants compile to the reference's program: equivalent, listed.
    at_16 = {(e["file"], e["line"]) for e in report.equivalent}
    assert ("src/stats.c", 16) in at_16
    assert ("src/stats.c", 4) not in at_16
    assert (root / "builds").is_dir() and any((root / "builds").glob(f"*/{UNITS_DIR}"))
    shutil.rmtree(root / "builds")
