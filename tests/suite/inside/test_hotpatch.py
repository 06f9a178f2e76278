"""Collect once, patch per mutant: a ``kind = "python"`` mutant that changes only function
bodies run in tests has its changed functions swapped into one collection of the suite
(:mod:`suitebench.suite.inside.batch.hotpatch`) -- and anything else is imported afresh, as before.

The package is a small shop-pricing module written for these tests, with the bugs such code
has: a bulk-discount boundary (``>=`` -> ``>``), a wrapper made by a decorator at import that
drops its result, a property that counts lines instead of items, a default quantity, a tax rate
changed at module level, a docstring, and a line added (which moves every later function)."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.programs import Builder, build_all
from suitebench.suite.execute.runner import run_batched, run_plain
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.inside.batch.hotpatch import LivePrograms, NotPatchable, apply
from suitebench.suite.score import score_suite

from ..conftest import score_selected_and_full, write_python_instance

PRICING = '''\
"""Order pricing."""
import functools

TAX_RATE = 0.2
BULK = {"pen": 10, "pad": 5}


def logged(func):
    calls = []

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        result = func(*args, **kwargs)
        calls.append(result)
        return result

    return wrapper


def unit_price(item, qty):
    """Price of one item when buying qty of them."""
    base = {"pen": 2.0, "pad": 3.5}[item]
    if qty >= BULK[item]:
        return base * 0.9
    return base


@logged
def total(items):
    return round(sum(unit_price(i, q) * q for i, q in items) * (1 + TAX_RATE), 2)


class Cart:
    def __init__(self):
        self.items = []

    def add(self, item, qty=1):
        self.items.append((item, qty))
        return self

    @property
    def size(self):
        return sum(q for _, q in self.items)

    def checkout(self):
        if not self.items:
            raise ValueError("empty cart")
        return total(self.items)


def quantities(items):
    for _, qty in items:
        yield qty
'''

SOURCE = {
    "shop/__init__.py": '"""shop: prices and carts."""\n',
    "shop/pricing.py": PRICING,
    "shop/report.py": "from shop.pricing import total\n\n\ndef line(items):\n"
    '    return f"total {total(items):.2f}"\n',
}

TESTS = {
    "test_pricing.py": """\
import pytest
from shop.pricing import Cart, total, unit_price


def test_bulk_discount_starts_at_ten_pens():
    assert unit_price("pen", 10) == pytest.approx(1.8)


def test_no_discount_below_bulk():
    assert unit_price("pad", 4) == 3.5


def test_total_with_tax():
    assert total([("pen", 1), ("pad", 2)]) == 10.8


def test_cart_size_counts_items():
    assert Cart().add("pen", 3).add("pad").size == 4


def test_cart_default_quantity_is_one():
    assert Cart().add("pad").checkout() == 4.2


def test_empty_cart_cannot_check_out():
    with pytest.raises(ValueError):
        Cart().checkout()
""",
    "test_docs.py": """\
from shop.pricing import unit_price


def test_unit_price_is_documented():
    assert "one item" in unit_price.__doc__
""",
}

# (id, old, new): changes inside function bodies (patched in) and outside them (fresh import)
MUTANTS = [
    ("boundary", "    if qty >= BULK[item]:", "    if qty > BULK[item]:"),
    ("wrapper", "        return result\n", "        return None\n"),
    ("size", "sum(q for _, q in self.items)", "sum(1 for _, q in self.items)"),
    ("default", "def add(self, item, qty=1):", "def add(self, item, qty=2):"),
    ("tax", "TAX_RATE = 0.2", "TAX_RATE = 0.25"),
    ("doc", "Price of one item", "Price of an item"),
    ("shift", "    base = {", "    base = None\n    base = {"),
    # inside the wrapper's body, but the wrapper made at import no longer fits: fresh import
    ("closure", "        calls.append(result)\n", "        print(result)\n"),
    # a table entry no test reaches the boundary of: survives
    ("pad_bulk", '"pad": 5}', '"pad": 6}'),
]
BODY_ONLY = ["boundary", "wrapper", "size", "shift", "closure"]


def _mutated(old: str, new: str) -> str:
    assert PRICING.count(old) == 1, old
    return PRICING.replace(old, new)


# -- the patching itself, in this process -----------------------------------------------------


@pytest.fixture
def shop(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Any]]:
    """The reference package imported under a name of its own; yields (root, module)."""
    name = f"shop_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}"
    root = tmp_path / "ref"
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (root / name / "pricing.py").write_text(PRICING)
    sys.path.insert(0, str(root))
    try:
        module = __import__(f"{name}.pricing", fromlist=["pricing"])
        yield root, module
    finally:
        sys.path.remove(str(root))
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def _mutant_root(tmp_path: Path, module: Any, text: str) -> Path:
    package = module.__name__.split(".")[0]
    root = tmp_path / "mutant"
    (root / package).mkdir(parents=True, exist_ok=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "pricing.py").write_text(text)
    return root


def _plan(tmp_path: Path, shop: tuple[Path, Any], old: str, new: str) -> list[tuple[Any, Any]]:
    root, module = shop
    rel = f"{module.__name__.split('.')[0]}/pricing.py"
    live = LivePrograms(str(root), {rel})
    return live.plan(str(_mutant_root(tmp_path, module, _mutated(old, new))), [rel])


def test_a_changed_body_reaches_every_reference_to_the_function(
    tmp_path: Path, shop: tuple[Path, Any]
) -> None:
    _, module = shop
    held = module.unit_price  # what a test module's ``from shop.pricing import unit_price`` holds
    assert held("pen", 10) == pytest.approx(1.8)
    apply(_plan(tmp_path, shop, *MUTANTS[0][1:]))
    assert held("pen", 10) == 2.0  # the boundary bug, through the old reference
    assert module.total([("pen", 10)]) == 24.0


def test_a_wrapper_made_at_import_runs_its_changed_body(
    tmp_path: Path, shop: tuple[Path, Any]
) -> None:
    _, module = shop
    assert module.total([("pad", 1)]) == 4.2
    steps = _plan(tmp_path, shop, *MUTANTS[1][1:])
    # the decorator, and the wrapper it made for ``total`` at import (named so by wraps)
    assert [f.__qualname__ for f, _ in steps] == ["logged", "total"]
    apply(steps)
    assert module.total([("pad", 1)]) is None


def test_a_property_and_a_method_are_patched(tmp_path: Path, shop: tuple[Path, Any]) -> None:
    _, module = shop
    cart = module.Cart().add("pen", 3).add("pad")
    apply(_plan(tmp_path, shop, *MUTANTS[2][1:]))
    assert cart.size == 2  # the instance made before the patch sees the new getter


@pytest.mark.parametrize(
    ("mid", "why"),
    [("default", "a constant of Cart"), ("tax", "a constant of <module>")],
)
def test_code_run_on_import_is_not_patched(
    tmp_path: Path, shop: tuple[Path, Any], mid: str, why: str
) -> None:
    old, new = next((o, n) for m, o, n in MUTANTS if m == mid)
    with pytest.raises(NotPatchable, match=why):
        _plan(tmp_path, shop, old, new)


def test_a_changed_docstring_is_the_functions_doc(tmp_path: Path, shop: tuple[Path, Any]) -> None:
    _, module = shop
    apply(_plan(tmp_path, shop, *MUTANTS[5][1:]))
    assert module.unit_price.__doc__ == "Price of an item when buying qty of them."


def test_a_moved_function_reports_its_new_lines(tmp_path: Path, shop: tuple[Path, Any]) -> None:
    _, module = shop
    steps = _plan(tmp_path, shop, *MUTANTS[6][1:])
    names = {f.__qualname__ for f, _ in steps}
    assert {"unit_price", "total", "Cart.checkout", "Cart.add"} <= names
    apply(steps)
    with pytest.raises(ValueError) as caught:
        module.Cart().checkout()
    line = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert (
        line.lineno
        == _mutated(*MUTANTS[6][1:])
        .splitlines()
        .index('            raise ValueError("empty cart")')
        + 1
    )


def test_a_suspended_generator_of_the_old_code_is_not_patched(
    tmp_path: Path, shop: tuple[Path, Any]
) -> None:
    _, module = shop
    running = module.quantities([("pen", 2), ("pad", 1)])
    assert next(running) == 2  # suspended inside the old code
    with pytest.raises(NotPatchable, match="suspended generator"):
        _plan(tmp_path, shop, "        yield qty", "        yield qty + 1")


def test_a_closure_whose_captures_change_is_not_patched(
    tmp_path: Path, shop: tuple[Path, Any]
) -> None:
    # the wrapper made at import for ``total`` no longer captures ``calls``
    with pytest.raises(NotPatchable, match="closure"):
        _plan(tmp_path, shop, "        calls.append(result)\n", "        print(result)\n")


def test_two_functions_on_one_line_are_not_told_apart(tmp_path: Path) -> None:
    root = tmp_path / "ref"
    (root / "oneline_pkg").mkdir(parents=True)
    text = "ROUND = lambda x: round(x, 2); FLOOR = lambda x: int(x)\n"
    (root / "oneline_pkg" / "__init__.py").write_text(text)
    mutant = tmp_path / "mutant"
    (mutant / "oneline_pkg").mkdir(parents=True)
    (mutant / "oneline_pkg" / "__init__.py").write_text(text.replace("int(x)", "int(x) + 1"))
    sys.path.insert(0, str(root))
    try:
        import oneline_pkg  # noqa: F401

        live = LivePrograms(str(root), {"oneline_pkg/__init__.py"})
        with pytest.raises(NotPatchable, match="two definitions"):
            live.plan(str(mutant), ["oneline_pkg/__init__.py"])
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("oneline_pkg", None)


def test_a_module_not_imported_is_left_to_the_child(tmp_path: Path, shop: tuple[Path, Any]) -> None:
    root, module = shop
    package = module.__name__.split(".")[0]
    (root / package / "extra.py").write_text("def f():\n    return 1\n")
    mutant = _mutant_root(tmp_path, module, PRICING)
    (mutant / package / "extra.py").write_text("def f():\n    return 2\n")
    live = LivePrograms(str(root), {f"{package}/extra.py"})
    assert live.plan(str(mutant), [f"{package}/extra.py"]) == []


# -- through the batched engine ---------------------------------------------------------------


def write_shop(root: Path) -> Path:
    return write_python_instance(
        root,
        name="shop",
        source=SOURCE,
        tests=TESTS,
        spec="# shop\n\n## Pricing\nPrices, tax and carts.\n",
        mutants=[(mid, "shop/pricing.py", old, new) for mid, old, new in MUTANTS],
    )


def test_mutants_patched_into_one_collection_give_the_full_matrix(tmp_path: Path) -> None:
    toml = write_shop(tmp_path / "shop")
    selected, _full = score_selected_and_full(toml, tmp_path, engine=Engine.BATCHED)
    by_id = {m.id: m for m in selected.mutants}
    killed = {m.id for m in selected.mutants if m.status == "killed"}
    assert killed == {"boundary", "wrapper", "size", "default", "tax", "doc"}
    assert {by_id[m].status for m in ("shift", "closure")} == {"survived"}
    assert {m for m in by_id if by_id[m].selection_reason == "coverage"} == set(BODY_ONLY)
    # a docstring and a constant are seen without entering the function: import-time
    for mid in ("doc", "tax"):
        assert by_id[mid].selection_reason.startswith("import-time change"), mid
    # a default argument: by the tests that leave it to the default (test_default_arguments)
    assert by_id["default"].selection_reason == "a default argument: the tests that use it"
    # (both tests add a "pad" at the default quantity: 4.2 and 4 items on the reference)
    assert set(by_id["default"].killed_by) == {
        "tests/test_pricing.py::test_cart_default_quantity_is_one",
        "tests/test_pricing.py::test_cart_size_counts_items",
    }
    assert by_id["doc"].killed_by == ["tests/test_docs.py::test_unit_price_is_documented"]


def test_one_collection_patched_per_mutant_runs_as_a_plain_run_does(tmp_path: Path) -> None:
    instance = load_instance(write_shop(tmp_path / "shop"))
    builder = Builder(instance, tmp_path / "builds")
    mutants = [m for m in instance.mutants if m.id in BODY_ONLY]
    _reference, built = build_all(builder, mutants)
    targets = [replace(built[m.id].target(), patched_files=("shop/pricing.py",)) for m in mutants]
    workspace = tmp_path / "batch"
    batched = run_batched(instance.tests, targets, collect_once=False, workspace=workspace)
    notes = (workspace / "out" / "patched.txt").read_text().splitlines()
    assert len(notes) == len(mutants), notes
    for i, mutant in enumerate(mutants):
        note = next(n for n in notes if n.split()[0] == str(i))
        if mutant.id == "closure":
            assert "fresh import" in note and "closure" in note, note
        else:
            assert " patched: " in note, note
        plain = run_plain(instance.tests, built[mutant.id].target())
        assert batched[i].statuses() == plain.statuses(), mutant.id
        assert batched[i].status == plain.status, mutant.id
    assert (workspace / "out" / "batch-mode.txt").read_text().strip() == "configure-once"


def test_a_coverage_run_batched_with_a_reference_run_records_what_a_plain_one_does(
    tmp_path: Path,
) -> None:
    """The batched engine runs a package's coverage run in the first reference run's batch (one
    start-up less): its record is the plain engine's, test by test."""
    instance = load_instance(write_shop(tmp_path / "shop"))
    reference = Builder(instance, tmp_path / "builds").reference()
    traced = replace(reference.target(), coverage_root=reference.pythonpath)
    plain = run_plain(instance.tests, traced)
    first, batched = run_batched(instance.tests, [reference.target(), traced], collect_once=False)
    assert first.coverage is None and batched.coverage is not None and plain.coverage
    for key in ("contexts", "fixtures", "spawned", "preloaded", "names", "test_names"):
        assert batched.coverage[key] == plain.coverage[key], key
    assert batched.coverage["contexts"]["tests/test_pricing.py::test_total_with_tax"]
    assert batched.statuses() == plain.statuses() == first.statuses()


PEEK = """\
import gc

def _found(value, needle, depth=3):
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if isinstance(value, str):
        return needle in value
    if depth and isinstance(value, dict):
        return any(_found(v, needle, depth - 1) for v in list(value.values()))
    return False

def test_no_other_mutant_in_memory():
    # another mutant's change, built here so that this module's constants do not hold it
    needle = "if qty " + ">" + " BULK[item]"
    gc.unfreeze()  # what the batch froze is listed too
    for obj in gc.get_objects():
        for referent in gc.get_referents(obj):
            assert not _found(referent, needle), f"another mutant's source in {type(obj)}"
"""


def test_a_patched_child_holds_no_other_mutants_source(tmp_path: Path) -> None:
    """The collector imported the first mutant's tree and read its changed files to compare:
    a later mutant's tests must not find that source in their process."""
    root = tmp_path / "shop"
    write_shop(root)
    (root / "tests" / "test_peek.py").write_text(PEEK)
    instance = load_instance(root / "instance.toml")
    by_id = {m.id: m for m in instance.mutants}
    _reference, built = build_all(Builder(instance, tmp_path / "builds"), list(by_id.values()))
    first, second = (
        replace(built[mid].target(), patched_files=("shop/pricing.py",))
        for mid in ("boundary", "size")
    )
    workspace = tmp_path / "batch"
    runs = run_batched(instance.tests, [first, second], collect_once=False, workspace=workspace)
    notes = (workspace / "out" / "patched.txt").read_text()
    assert "1 patched: " in notes, notes
    peek = "tests/test_peek.py::test_no_other_mutant_in_memory"
    assert runs[1].status_of(peek) == "passed", runs[1].to_dict()["messages"].get(peek)


def test_fast_tries_an_import_time_survivor_only_on_its_readers(tmp_path: Path) -> None:
    """``--fast`` stops a mutant at its first kill; a survivor runs all it may run -- for an
    import-time mutant, the tests that read a global its import changed, not every test."""
    toml = write_shop(tmp_path / "shop")
    results = {}
    for fast in (False, True):
        store = Store(tmp_path / f"store-{fast}.sqlite")
        try:
            results[fast] = score_suite(
                load_instance(toml), store=store, cache_dir=tmp_path / "builds", fast=fast
            )
        finally:
            store.close()
    full, fast_run = results[False], results[True]
    assert [m.status for m in fast_run.mutants] == [m.status for m in full.mutants]
    survivor = next(m for m in fast_run.mutants if m.id == "pad_bulk")
    assert survivor.status == "survived"
    assert survivor.selection_reason.startswith("import-time change; globals changed: BULK")
    readers = next(m for m in full.mutants if m.id == "pad_bulk").tests_run
    assert survivor.tests_run == readers < len(full.tests)
