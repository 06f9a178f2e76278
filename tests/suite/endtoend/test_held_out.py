"""Held-out material out of reach: a suite's tests see the suite, the build tree of the program
under test and scratch directories (plus the system and the interpreter) -- never the instance
directory (mutants, reference source), the store, other programs' builds or the user's tree.
The suite here tries, from inside its tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import suitebench
from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.result import SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import keep_batches, write_instance

MAIN_SH = '#!/bin/sh\necho "$(( $1 + $2 ))"\n'
BUILD = "cp main.sh executable && chmod +x executable\n"
# The checkout suitebench runs from, when it runs from one: the user's tree.
CHECKOUT = Path(suitebench.__file__).resolve().parents[2]

SNOOP = """\
import os
import subprocess
from pathlib import Path

INSTANCE = {instance!r}
STORE = {store!r}
CACHE = {cache!r}
CHECKOUT = {checkout!r}


def test_adds():
    out = subprocess.run(["./executable", "2", "3"], capture_output=True, text=True)
    assert out.stdout == "5\\n"


def test_mutant_patches_are_out_of_reach():
    assert not os.path.exists(os.path.join(INSTANCE, "mutants", "m01.diff"))
    assert not os.path.exists(os.path.join(INSTANCE, "instance.toml"))


def test_reference_source_is_out_of_reach():
    assert not os.path.exists(os.path.join(INSTANCE, "src", "main.sh"))


def test_store_is_out_of_reach():
    assert not os.path.exists(STORE)


def test_other_programs_builds_are_out_of_reach():
    own = Path(os.path.realpath("executable")).parent
    seen = []
    if os.path.isdir(CACHE):
        for entry in os.listdir(CACHE):
            tree = Path(CACHE, entry, "tree")
            if tree != own and (tree / "executable").exists():
                seen.append(entry)
    assert seen == []


def test_users_tree_is_out_of_reach():
    assert not os.path.exists(os.path.join(CHECKOUT, "pyproject.toml"))
"""


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_suite_cannot_see_held_out_material(engine: Engine, tmp_path: Path) -> None:
    toml = write_instance(
        tmp_path / "held",
        name="held",
        source_files={"main.sh": MAIN_SH, "build.sh": BUILD},
        build="build.sh",
        spec="# adder\n\n## Sum\nAdds.\n",
        tests={"test_add.py": "def test_placeholder():\n    pass\n"},
        mutants=[
            ("m01", "Sum", None, "subtracts", "$1 + $2", "$1 - $2"),
            ("m02", "Sum", None, "adds one", "$1 + $2", "$1 + $2 + 1"),
            ("m03", "Sum", None, "multiplies", "$1 + $2", "$1 * $2"),
        ],
        mutated_file="main.sh",
    )
    result = _score_snooping(toml, tmp_path, SNOOP, engine=engine)
    failing = {t.id: t.message for t in result.tests if not t.valid}
    assert failing == {}, failing
    assert result.validity == 1.0
    for mutant in result.mutants:
        # Only the test of the program's behaviour kills: no snooping test fails on a mutant.
        assert mutant.killed_by == ["tests/test_snoop.py::test_adds"], mutant.kill_messages


SNOOP_PY = """\
import os
from pathlib import Path

import adder

INSTANCE = {instance!r}
STORE = {store!r}
CACHE = {cache!r}
CHECKOUT = {checkout!r}


def _seen():
    seen = []
    if os.path.exists(os.path.join(INSTANCE, "mutants", "m01.diff")):
        seen.append("a mutant's patch")
    if os.path.exists(os.path.join(INSTANCE, "src", "adder", "__init__.py")):
        seen.append("the reference source")
    if os.path.exists(STORE):
        seen.append("the store")
    if os.path.exists(os.path.join(CHECKOUT, "pyproject.toml")):
        seen.append("the user's tree")
    if os.path.isdir(os.path.join(CACHE, ".staging")):  # where the builds copy the source
        seen.append("the builds' copies")
    own = Path(os.path.realpath(adder.__file__)).parents[1]
    if os.path.isdir(CACHE):
        for entry in os.listdir(CACHE):
            tree = Path(CACHE, entry, "tree")
            if tree != own and (tree / "adder").exists():
                seen.append("another build")
    return seen


def test_adds_and_sees_nothing_held_out():
    seen = _seen()  # run while the mutated function is reached, so on every mutant too
    assert seen == [], "saw " + ", ".join(seen)
    assert adder.add(2, 3) == 5
"""


def _score_snooping(toml: Path, tmp_path: Path, template: str, **options: Any) -> SuiteResult:
    """Score ``toml`` with a suite that looks for what it must not see (``template``, told
    where the instance, the store, the build cache and the user's tree are)."""
    store_path = tmp_path / "state" / "store.sqlite"
    cache = tmp_path / "state" / "builds"
    suite = tmp_path / "snoop"
    suite.mkdir()
    (suite / "test_snoop.py").write_text(
        template.format(
            instance=str(toml.parent),
            store=str(store_path),
            cache=str(cache),
            checkout=str(CHECKOUT),
        )
    )
    store = Store(store_path)
    try:
        return score_suite(
            load_instance(toml),
            suite,
            store=store,
            cache_dir=cache,
            limits=SuiteLimits(per_test=10.0),
            **options,
        )
    finally:
        store.close()


def test_a_package_suite_cannot_see_held_out_material(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, for a package: mutants that change a function body run in a batch collected
    once and patched per mutant, one that changes a constant read on import has its module run
    anew beside that collection (one worker: one batch, one collection for all four)."""
    from ..conftest import write_python_instance

    source = {"adder/__init__.py": "OFFSET = 0\n\n\ndef add(a, b):\n    return a + b + OFFSET\n"}
    toml = write_python_instance(
        tmp_path / "held",
        name="adder",
        source=source,
        tests={"test_add.py": "def test_placeholder():\n    pass\n"},
        spec="# adder\n\n## Sum\nAdds.\n",
        mutants=[
            ("m01", "adder/__init__.py", "a + b +", "a - b +"),
            ("m02", "adder/__init__.py", "a + b +", "a + b + 1 +"),
            ("m03", "adder/__init__.py", "a + b +", "a * b +"),
            ("m04", "adder/__init__.py", "OFFSET = 0", "OFFSET = 1"),
        ],
    )
    kept = keep_batches(monkeypatch, tmp_path)  # to read how each child ran
    with LocalExecutor(1) as one:
        result = _score_snooping(toml, tmp_path, SNOOP_PY, executor=one, engine=Engine.BATCHED)
    written = [w / "out" / "patched.txt" for w in kept]
    notes = "".join(path.read_text() for path in written if path.exists())
    # the three body mutants and the decoy (the reference run as one of them is) are patched
    assert notes.count("patched: ") == 4 and notes.count("reimported: ") == 1, notes
    assert result.validity == 1.0, {t.id: t.message for t in result.tests}
    for mutant in result.mutants:
        expected = "import-time change" if mutant.id == "m04" else "coverage"
        assert mutant.selection_reason.startswith(expected), (mutant.id, mutant.selection_reason)
        assert mutant.status == "killed", mutant.id
        for message in mutant.kill_messages.values():
            assert "saw" not in message and "assert" in message, (mutant.id, message)
