"""Collect once, run an import-time mutant's module anew beside it: a ``kind = "python"``
mutant that changes a rule table, a constant, a pattern, a default argument or a helper called
on import has its module's new state carried into one collection of the suite
(:mod:`suitebench.suite.inside.batch.reimport`) -- and anything that cannot be shown equal to a
fresh import is imported afresh, as before.

The package is a small shipping-rate module written for these tests, with the changes such
code gets: a zone's price, the heavy-parcel threshold, a postcode pattern, a surcharge a
helper registers on import (and the helper itself), a default rounding, a class limit."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.run.executor import LocalExecutor
from suitebench.suite.inside.batch.hotpatch import LivePrograms, NotPatchable
from suitebench.suite.inside.batch.reimport import Reimport, plain_data
from suitebench.suite.result import MutantResult

from ..conftest import keep_batches, score_selected_and_full, write_python_instance

SHIPPING = '''\
"""Shipping rates."""
import re

ZONES = {"EU": 1.0, "US": 1.5, "ASIA": 2.0}
HEAVY_KG = 20
POSTCODE = re.compile(r"^[0-9]{5}$")
SURCHARGES = [("fragile", 3.0), ("express", 5.0)]


def _register(name, fee):
    SURCHARGES.append((name, fee))


_register("insured", 2.5)


def rate(zone, kg, extras=(), rounding=2):
    base = ZONES[zone] * kg
    if kg >= HEAVY_KG:
        base *= 1.2
    fees = sum(fee for name, fee in SURCHARGES if name in extras)
    return round(base + fees, rounding)


def valid_postcode(code):
    return bool(POSTCODE.match(code))


class Parcel:
    LIMIT_KG = 30

    def __init__(self, kg):
        self.kg = kg

    def accepted(self):
        return self.kg <= self.LIMIT_KG
'''

TESTS = {
    "test_rates.py": """\
from shipping.rates import rate


def test_eu_rate():
    assert rate("EU", 2) == 2.0


def test_us_rate():
    assert rate("US", 2) == 3.0


def test_insured_surcharge():
    assert rate("ASIA", 1, extras=("insured",)) == 4.5


def test_rounding_to_cents():
    assert rate("EU", 1.26) == 1.26
""",
    "test_limits.py": """\
import shipping.rates as rates
from shipping.rates import HEAVY_KG, Parcel


def test_heavy_parcels_cost_more():
    assert rates.rate("EU", HEAVY_KG) == 24.0


def test_just_below_heavy():
    assert rates.rate("EU", HEAVY_KG - 1) == 19.0


def test_parcel_limit():
    assert Parcel(30).accepted() and not Parcel(31).accepted()


def test_postcodes():
    assert rates.valid_postcode("12345") and not rates.valid_postcode("1234")
""",
}

# (id, old, new, how its child runs: "reimported" or why it is imported afresh); the batch's
# collector imports a mutant whose change lies in a function body (the reference's import)
MUTANTS = [
    ("accepts", "self.kg <= self.LIMIT_KG", "self.kg < self.LIMIT_KG", "patched: "),
    ("zone_us", '"US": 1.5', '"US": 1.6', "reimported"),
    ("heavy", "HEAVY_KG = 20", "HEAVY_KG = 21", "names HEAVY_KG"),
    ("postcode", "{5}", "{4}", "reimported"),
    ("insured", '_register("insured", 2.5)', '_register("insured", 2.0)', "reimported"),
    ("register", "SURCHARGES.append((name, fee))", "SURCHARGES.insert(0, (name, 0))", "reimported"),
    ("rounding", "rounding=2", "rounding=1", "reimported"),
    ("limit", "LIMIT_KG = 30", "LIMIT_KG = 31", "reimported"),
]


def write_shipping(root: Path) -> Path:
    return write_python_instance(
        root,
        name="shipping",
        source={"shipping/__init__.py": "", "shipping/rates.py": SHIPPING},
        tests=TESTS,
        spec="# shipping\n\n## Rates\nZones, weights, surcharges.\n",
        mutants=[(mid, "shipping/rates.py", old, new) for mid, old, new, _ in MUTANTS],
    )


def test_import_time_mutants_carried_into_one_collection_give_the_full_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every import-time mutant's tests see the mutant's state, whether its module was run
    anew beside the collection or imported afresh: the selected matrix is the one of every
    test run on a fresh import, and each child says which way it went."""
    workspaces = keep_batches(monkeypatch, tmp_path)
    toml = write_shipping(tmp_path / "shipping")
    with LocalExecutor(1) as one:  # one batch: one collection for every mutant
        selected, _full = score_selected_and_full(toml, tmp_path, executor=one)
    by_id = {m.id: m for m in selected.mutants}
    killed = {mid for mid, m in by_id.items() if m.status == "killed"}
    assert killed == {mid for mid, *_ in MUTANTS}
    assert by_id["zone_us"].killed_by == ["tests/test_rates.py::test_us_rate"]
    assert by_id["postcode"].killed_by == ["tests/test_limits.py::test_postcodes"]
    for m in by_id.values():
        if m.id == "rounding":  # a default argument: by the tests that use it
            assert m.selection_reason == "a default argument: the tests that use it"
            assert m.killed_by == ["tests/test_rates.py::test_rounding_to_cents"]
        elif m.id != "accepts":
            assert m.selection_reason.startswith("import-time change"), (m.id, m.selection_reason)

    notes = patched_notes(workspaces, selected.mutants)
    for mid, _old, _new, how in MUTANTS:
        assert how in notes[mid], (mid, notes.get(mid))
    # a program the collector gave back ran in the batch's parent: its end is recorded too
    assert by_id["heavy"].wall_time > 0
    for workspace in workspaces:
        programs = json.loads((workspace / "spec.json").read_text())["programs"]
        for program in programs:
            assert (workspace / "out" / f"{program['index']}.exit.json").is_file(), program


def patched_notes(workspaces: list[Path], mutants: list[MutantResult]) -> dict[str, str]:
    """Each mutant's note in its batch's ``out/patched.txt`` (how its child ran), by mutant id:
    the batch's spec lists the mutants' build trees, whose names end in the program id."""
    notes: dict[str, str] = {}
    for workspace in workspaces:
        path = workspace / "out" / "patched.txt"
        if not path.is_file():
            continue
        programs = json.loads((workspace / "spec.json").read_text())["programs"]
        for line in path.read_text().splitlines():
            index, _, note = line.partition(" ")
            tree = programs[int(index)]["pythonpath"]
            notes[next(m.id for m in mutants if m.program_id[:32] in tree)] = note
    return notes


# -- the merge itself, in this process --------------------------------------------------------


@pytest.fixture
def shipping(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, str]]:
    """The reference package imported under a name of its own; yields (root, package)."""
    name = "ship_" + re.sub(r"\W", "_", request.node.name)
    root = tmp_path / "ref"
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (root / name / "rates.py").write_text(SHIPPING)
    (root / name / "extras.py").write_text(
        f"from {name}.rates import ZONES\n\n\ndef zones(table=ZONES):\n    return sorted(table)\n"
    )
    sys.path.insert(0, str(root))
    try:
        __import__(f"{name}.rates")
        __import__(f"{name}.extras")
        yield root, name
    finally:
        sys.path.remove(str(root))
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def _merge(tmp_path: Path, shipping: tuple[Path, str], text: str) -> tuple[dict[str, str], list]:
    root, name = shipping
    rel = f"{name}/rates.py"
    mutant = tmp_path / "mutant"
    (mutant / name).mkdir(parents=True)
    (mutant / name / "rates.py").write_text(text)
    suite = tmp_path / "suite"
    suite.mkdir()
    state = Reimport(str(root), LivePrograms(str(root), {rel}), str(suite))
    assert not state.why_not
    return state.merge(str(mutant), [rel])


def test_a_default_argument_reaches_the_function_a_test_holds(
    tmp_path: Path, shipping: tuple[Path, str]
) -> None:
    _, name = shipping
    held = sys.modules[f"{name}.rates"].rate  # what ``from pkg.rates import rate`` holds
    assert held("EU", 1.26) == 1.26
    _found, carried = _merge(tmp_path, shipping, SHIPPING.replace("rounding=2", "rounding=1"))
    assert carried == [f"{name}.rates:rate"]
    assert held("EU", 1.26) == 1.3  # one decimal now


def test_a_table_changed_on_import_is_rebound(tmp_path: Path, shipping: tuple[Path, str]) -> None:
    _, name = shipping
    module = sys.modules[f"{name}.rates"]
    text = SHIPPING.replace('_register("insured", 2.5)', '_register("insured", 2.0)')
    _found, carried = _merge(tmp_path, shipping, text)
    assert carried == [f"{name}.rates:SURCHARGES"]
    assert module.rate("ASIA", 1, extras=("insured",)) == 4.0


def test_a_value_another_module_holds_is_not_rebound(
    tmp_path: Path, shipping: tuple[Path, str]
) -> None:
    """``extras`` imported ZONES and made it a default argument: a fresh import would give
    both the new table, a rebinding only the module's global."""
    with pytest.raises(NotPatchable, match="ZONES is referenced outside"):
        _merge(tmp_path, shipping, SHIPPING.replace('"US": 1.5', '"US": 1.6'))


def test_a_module_that_changes_another_on_import_is_not_carried(
    tmp_path: Path, shipping: tuple[Path, str]
) -> None:
    _, name = shipping
    text = SHIPPING + f'\nimport sys as _sys\n_sys.modules["{name}.extras"].LOADED = True\n'
    with pytest.raises(NotPatchable, match="changed another module of the program"):
        _merge(tmp_path, shipping, text)


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("class Parcel:", "class Parcel(dict):", "the bases of Parcel changed"),
        ('"ASIA": 2.0}', '"ASIA": 2.0}\nZONES["EU"] = ZONES["MARS"]', "raised KeyError"),
    ],
    ids=["class", "raises"],
)
def test_what_cannot_be_shown_equal_to_a_fresh_import_is_declined(
    tmp_path: Path, shipping: tuple[Path, str], old: str, new: str, why: str
) -> None:
    with pytest.raises(NotPatchable, match=why):
        _merge(tmp_path, shipping, SHIPPING.replace(old, new))


def test_plain_data_is_what_can_be_rebound() -> None:
    assert plain_data({"a": [1, (2.0, "x")], "b": {frozenset({b"y"})}, "c": re.compile("z")})
    assert not plain_data([object()])
    assert not plain_data({"f": len})
