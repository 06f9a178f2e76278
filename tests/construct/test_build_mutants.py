"""``build mutants`` on the bundled instances (a C CLI, a Python CLI, a Python package) and on
small programs in C++, Rust and Go: the diffs apply with ``patch -p1``, none is a duplicate or
no-op, the ones written build and are scored, the reference suites kill a known set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from suitebench.construct.mutants import BLOCK_BEGIN, MANIFEST, write_mutants
from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.score import score_suite

BUNDLED = Path(__file__).parents[2] / "src" / "suitebench" / "data" / "instances"
NAMES = ["rpn-c", "wordfreq-py", "intervals-pkg"]

# With --seed 0 --max 16, the operator mutants the bundled reference suites leave alive.  Each
# was read and is a real gap or an equivalent mutant, e.g. rpn-c's 'depth < 2' -> 'depth < 1'
# in swap (no test swaps a one-value stack), intervals' max(last.hi, hi) -> max(hi, last.hi).
SURVIVORS = {
    "rpn-c": {
        "rpn.c:75: integer 2 -> 1",
        "rpn.c:129: integer 1 -> 0",
    },
    "wordfreq-py": {
        'wordfreq/cli.py:19: None -> ""',
        'wordfreq/cli.py:26: string "Rank words by frequency." -> "XXRank words by frequency.XX"',
        'wordfreq/cli.py:40: string "-" -> "XX-XX"',
        'wordfreq/cli.py:50: string "replace" -> "XXreplaceXX"',
        'wordfreq/cli.py:54: None -> ""',
        "wordfreq/counting.py:13: False -> True",
    },
    "intervals-pkg": {"intervals/core.py:21: arguments last.hi, hi swapped"},
}
# The ones trivially equivalent, out of M: rpn-c's '*blank = 1' -> '*blank = 2' (blank is only
# ever tested for zero, and gcc -O2 gives the same executable: checked by hand with cmp).
EQUIVALENT = {"rpn-c": {"rpn.c:93: integer 1 -> 2"}, "wordfreq-py": set(), "intervals-pkg": set()}


def _apply(source: Path, patch: Path, dest: Path) -> bytes:
    shutil.copytree(source, dest)
    proc = subprocess.run(
        ["patch", "-p1", "--fuzz=0", "--batch", "-d", str(dest), "-i", str(patch)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return b"".join(
        p.relative_to(dest).as_posix().encode() + b"\0" + p.read_bytes()
        for p in sorted(dest.rglob("*"))
        if p.is_file()
    )


@pytest.mark.parametrize("name", NAMES)
def test_bundled_mutants_apply_and_are_distinct(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    report = write_mutants(
        load_instance(BUNDLED / name), out=out, seed=0, cache_dir=tmp_path / "builds"
    )
    assert len(report.mutants) >= 40
    instance = load_instance(out)  # the written instance.toml loads strictly
    listed = {m.id: m for m in instance.mutants}
    reference = _apply(instance.source, Path(os.devnull), tmp_path / "ref")
    trees = set()
    for index, record in enumerate(report.mutants):
        spec = listed[record.id]
        assert spec.operator == record.operator
        assert spec.description == record.description
        assert record.description.startswith(f"{record.file}:{record.line}: ")
        tree = _apply(instance.source, spec.patch, tmp_path / f"m{index}")
        assert tree != reference, f"{record.id} is a no-op"
        trees.add(tree)
    assert len(trees) == len(report.mutants), "two mutants give the same program"
    # The hand-written mutants are kept, the generated ones follow in the marked block.
    original = load_instance(BUNDLED / name)
    assert [m.id for m in instance.mutants][: len(original.mutants)] == [
        m.id for m in original.mutants
    ]
    manifest = json.loads((out / "mutants" / MANIFEST).read_text())
    assert [m["id"] for m in manifest["mutants"]] == [m.id for m in report.mutants]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_reference_suite_kills_the_known_set(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    report = write_mutants(
        load_instance(BUNDLED / name),
        out=out,
        seed=0,
        max_total=16,
        cache_dir=tmp_path / "builds",
    )
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(
        load_instance(out),
        store=store,
        cache_dir=tmp_path / "builds",
        mutant_ids=[m.id for m in report.mutants],
    )
    store.close()
    statuses = {m.description: str(m.status) for m in result.mutants}
    assert "build_error" not in statuses.values()  # mutants that do not build were dropped
    assert {d for d, s in statuses.items() if s == "survived"} == SURVIVORS[name]
    assert {d for d, s in statuses.items() if s == "equivalent"} == EQUIVALENT[name]
    killed = len(report.mutants) - len(SURVIVORS[name]) - len(EQUIVALENT[name])
    assert sum(s == "killed" for s in statuses.values()) == killed


def test_mutants_that_do_not_build_are_reported_and_dropped(tmp_path: Path) -> None:
    # rpn.c builds with -Wall -Werror: deleting '*out = value;' leaves 'value' unused.
    report = write_mutants(
        load_instance(BUNDLED / "rpn-c"),
        out=tmp_path / "rpn",
        operators={"delete_statement"},
        cache_dir=tmp_path / "builds",
    )
    dropped = {e["description"]: e for e in report.build_errors}
    error = dropped["rpn.c:40: statement '*out = value;' deleted"]
    assert "unused" in str(error["message"])
    assert all(m.description not in dropped for m in report.mutants)
    assert report.mutants and all(m.operator == "delete_statement" for m in report.mutants)


def test_same_seed_same_mutants_and_caps_hold(tmp_path: Path) -> None:
    def run(seed: int, where: str) -> list[tuple[str, str, bytes]]:
        report = write_mutants(
            load_instance(BUNDLED / "wordfreq-py"),
            out=tmp_path / where,
            seed=seed,
            max_total=25,
            max_per_function=4,
            cache_dir=tmp_path / "builds",
        )
        assert len(report.mutants) == 25
        per_function: dict[str, int] = {}
        for m in report.mutants:
            key = f"{m.file}::{m.function}"
            per_function[key] = per_function.get(key, 0) + 1
        assert max(per_function.values()) <= 4
        return [
            (m.id, m.description, (tmp_path / where / m.patch).read_bytes()) for m in report.mutants
        ]

    first = run(7, "a")
    assert run(7, "b") == first
    assert run(8, "c") != first


def test_rerun_in_place_replaces_only_the_generated_block(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED / "intervals-pkg", tmp_path / "inst")
    hand_written = [m.id for m in load_instance(tmp_path / "inst").mutants]
    first = write_mutants(load_instance(tmp_path / "inst"), cache_dir=tmp_path / "b")
    second = write_mutants(load_instance(tmp_path / "inst"), max_total=5, cache_dir=tmp_path / "b")
    text = (tmp_path / "inst" / "instance.toml").read_text()
    assert text.count(BLOCK_BEGIN) == 1
    ids = [m.id for m in load_instance(tmp_path / "inst").mutants]
    assert ids == hand_written + [m.id for m in second.mutants]
    left = sorted(p.name for p in (tmp_path / "inst" / "mutants").glob("op*.diff"))
    assert len(left) == 5 < len(first.mutants)


CPP_BUILD = "#!/bin/sh\nset -eu\ng++ -O1 -o executable clamp.cpp\n"


def test_cpp_instance_mutants_build_with_the_instance_recipe(
    tmp_path: Path, programs: dict[str, str]
) -> None:
    src = tmp_path / "inst" / "src"
    (tmp_path / "inst" / "tests").mkdir(parents=True)
    src.mkdir()
    (src / "clamp.cpp").write_text(programs["clamp.cpp"])
    (src / "build.sh").write_text(CPP_BUILD)
    (tmp_path / "inst" / "instance.toml").write_text(
        'name = "clamp"\nsource = "src/"\ntests = "tests/"\n'
    )
    report = write_mutants(
        load_instance(tmp_path / "inst"), max_total=6, seed=1, cache_dir=tmp_path / "b"
    )
    assert len(report.mutants) + len(report.build_errors) == 6
    assert len(report.mutants) >= 4
    assert {m.file for m in report.mutants} == {"clamp.cpp"}


def test_a_reference_that_does_not_build_is_an_error_naming_the_source(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED / "rpn-c", tmp_path / "inst")
    rpn = tmp_path / "inst" / "src" / "rpn.c"
    rpn.write_text(rpn.read_text().replace("int main", "int main oops", 1))
    with pytest.raises(RuntimeError, match="reference does not build"):
        write_mutants(load_instance(tmp_path / "inst"), max_total=3, cache_dir=tmp_path / "b")


@pytest.mark.parametrize("name", ["clamp.rs", "clamp.go"])
def test_rust_and_go_mutants_parse_and_rust_ones_compile(
    name: str, tmp_path: Path, programs: dict[str, str]
) -> None:
    from suitebench.construct.mutants import mutation_sites
    from suitebench.construct.treesitter_ops import _parser
    from suitebench.run.toolchain import Language, available, build, program_from_path

    source = programs[name].encode()
    sites = mutation_sites(name, source)
    # clamp has comparisons, a &&, a +=, a *, literals, ifs and statements: every operator
    # finds a site (an empty list would make the parse check below vacuous)
    assert {s.operator for s in sites} >= {
        "relational",
        "logical",
        "assignment",
        "arithmetic",
        "constant",
        "negate_condition",
        "delete_statement",
    }
    assert len(sites) >= 20
    parser = _parser("rust" if name.endswith(".rs") else "go")
    for site in sites:
        if site.operator != "delete_statement":
            assert not parser.parse(site.mutated(source)).root_node.has_error, site.description
    if not name.endswith(".rs"):
        return  # no Go toolchain is assumed: Go mutants are checked by re-parsing only
    ok, why = available(Language.RUST)
    if not ok:
        pytest.skip(f"no Rust toolchain: {why}")
    built = 0
    for index, site in enumerate(sites[:6]):
        path = tmp_path / f"m{index}" / name
        path.parent.mkdir()
        path.write_bytes(site.mutated(source))
        result = build(program_from_path(path), cache_dir=tmp_path / "cache")
        built += str(result.status) == "ok"
    assert built >= 4


def test_cli_build_mutants_json(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "suitebench"
    proc = subprocess.run(
        [str(exe), "--store", str(tmp_path / "s.sqlite"), "--json", "build", "mutants",
         str(BUNDLED / "intervals-pkg"), "--out", str(tmp_path / "out"), "--max", "7"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert len(data["mutants"]) == 7
    assert len(load_instance(tmp_path / "out").mutants) == 11 + 7
    bad = subprocess.run(
        [str(exe), "build", "mutants", str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "nowhere" in bad.stderr and "instance.toml" in bad.stderr


SCOPED = '''\
"""Rates."""
LIMIT = 10
TABLE = {"a": 1}


def price(kind, qty=2):
    """The price."""
    if qty > LIMIT:
        return TABLE[kind] * qty - 1
    return TABLE[kind] * qty


class Cart:
    SIZE = 3

    def total(self, n):
        return n + self.SIZE
'''


def test_scope_functions_keeps_only_what_runs_when_a_function_is_called(tmp_path: Path) -> None:
    """``--scope functions`` (what mutmut mutates): the bodies of functions and methods; not
    the module's constants and tables, a default argument or a class constant, which run on
    import."""
    from suitebench.construct.mutants import generate_operator_mutants, mutation_sites

    every = mutation_sites("rates.py", SCOPED.encode())
    lines = SCOPED.splitlines()
    inside = {lines[s.line - 1].strip() for s in every if s.in_body}
    outside = {lines[s.line - 1].strip() for s in every if not s.in_body}
    assert inside == {"if qty > LIMIT:", "return TABLE[kind] * qty - 1", "return TABLE[kind] * qty",
                      "return n + self.SIZE"}  # fmt: skip
    assert outside == {"LIMIT = 10", 'TABLE = {"a": 1}', "def price(kind, qty=2):", "SIZE = 3"}

    root = tmp_path / "inst"
    (root / "src" / "rates").mkdir(parents=True)
    (root / "src" / "rates" / "__init__.py").write_text(SCOPED)
    (root / "tests").mkdir()
    (root / "instance.toml").write_text(
        'name = "rates"\nkind = "python"\npackage = "rates"\nsource = "src"\ntests = "tests"\n'
    )
    instance = load_instance(root)
    kept, report = generate_operator_mutants(instance, scope="functions")
    assert {s.line for s, _ in kept} == {s.line for s in every if s.in_body}
    assert report.out_of_scope == sum(not s.in_body for s in every)
    with pytest.raises(ValueError, match="scope 'module'"):
        generate_operator_mutants(instance, scope="module")
    exe = Path(sys.executable).parent / "suitebench"
    bad = subprocess.run(
        [str(exe), "build", "mutants", str(root), "--scope", "module"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "expected one of all, functions" in bad.stderr


def test_c_scope_functions_leaves_global_initializers(tmp_path: Path) -> None:
    from suitebench.construct.mutants import mutation_sites

    source = b"static int limit = 10;\n\nint over(int n) {\n    return n > limit;\n}\n"
    sites = mutation_sites("over.c", source)
    assert {s.line for s in sites if s.in_body} == {4}
    assert {s.line for s in sites if not s.in_body} == {1}
