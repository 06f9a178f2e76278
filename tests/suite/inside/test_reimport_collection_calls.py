"""A suite whose collection calls the program (a parametrization built by ``valid_postcode``)
still has its import-time mutants carried into one collection -- but for a change to what
that code reads, which is imported afresh.

Before, any program code run while collecting sent every import-time mutant to a fresh import
of its own (isodate 0.7.2 builds expected ``Duration`` and ``FixedOffset`` values in its
parametrizations: its 215 import-time mutants each collected the suite again, 16.8 s of CPU in a
``--fast`` score whose tests take 2 s).  The shipping package of ``test_reimport.py``, with one
more test module:

* ``zone_us`` (``"US": 1.5`` -> ``1.6``): ``valid_postcode`` reads ``POSTCODE``, not ``ZONES``:
  carried (``reimported``), killed by ``test_us_rate`` alone;
* ``postcode`` (``{5}`` -> ``{4}``): the collection's call reads ``POSTCODE``; a fresh import
  collects ``test_codes_ship[1234]`` instead of ``[12345]`` and ``[99999]``, so it is imported
  afresh (the note names ``POSTCODE``), and killed (``test_postcodes``; the new case fails its
  length check);
* ``limit`` (``LIMIT_KG = 30`` -> ``31``, a class constant no collection-time code reads):
  carried, killed by ``test_parcel_limit``;
* ``mark`` (a default of ``_label_fragile``, which the collection ran through the package's
  ``LABELS`` table, naming neither): imported afresh, as the collection ran the function that
  changed; its one case (``fragile``) is collected as ``"FRAGILE?"`` and fails.  Its test
  names no global that changed: it runs because its file's collection computed otherwise than
  the reference's (``importtime.suite_state``).  Each of the two checks alone leaves that
  cell passed where every test run on a fresh import fails it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from suitebench.run.executor import LocalExecutor

from ..conftest import keep_batches, score_selected_and_full, write_python_instance
from .test_reimport import SHIPPING, TESTS, patched_notes

CODES = """\
import pytest

from shipping.rates import valid_postcode

CANDIDATES = ["12345", "1234", "99999"]


@pytest.mark.parametrize("code", [c for c in CANDIDATES if valid_postcode(c)])
def test_codes_ship(code):
    assert len(code) == 5
"""

LABEL = """

def _label_fragile(name, mark="!"):
    return name.upper() + mark
"""

# the table lives in the package's __init__: running rates.py anew does not rebuild it
INIT = """\
from shipping.rates import _label_fragile

LABELS = {"fragile": _label_fragile}


def label(name):
    return LABELS[name](name)
"""

LABEL_TESTS = """\
import pytest

from shipping import label


@pytest.mark.parametrize("text", [label("fragile")], ids=["fragile"])
def test_labels_are_shouted(text):
    assert text.endswith("!")
"""

MUTANTS = [
    ("zone_us", '"US": 1.5', '"US": 1.6', "reimported"),
    ("mark", 'mark="!"', 'mark="?"', "the suite's collection ran _label_fragile"),
    ("postcode", "{5}", "{4}", "collected reads POSTCODE"),
    ("limit", "LIMIT_KG = 30", "LIMIT_KG = 31", "reimported"),
]


def _score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, init: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The shipping package with ``init`` as its ``__init__``, scored in one batch (one
    collection for every mutant) selected and in full (the same matrix): its mutants by id,
    and the batch's note on each."""
    workspaces = keep_batches(monkeypatch, tmp_path)
    toml = write_python_instance(
        tmp_path / "shipping",
        name="shipping",
        source={"shipping/__init__.py": init, "shipping/rates.py": SHIPPING + LABEL},
        tests={**TESTS, "test_codes.py": CODES, "test_labels.py": LABEL_TESTS},
        spec="# shipping\n\n## Rates\nZones, weights, surcharges, postcodes.\n",
        mutants=[(mid, "shipping/rates.py", old, new) for mid, old, new, _ in MUTANTS],
    )
    with LocalExecutor(1) as one:
        selected, _full = score_selected_and_full(toml, tmp_path, executor=one)  # same matrix
    return {m.id: m for m in selected.mutants}, patched_notes(workspaces, selected.mutants)


def test_a_collection_that_calls_the_program_still_collects_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_id, notes = _score(tmp_path, monkeypatch, INIT)
    assert by_id["zone_us"].killed_by == ["tests/test_rates.py::test_us_rate"]
    assert "tests/test_limits.py::test_postcodes" in by_id["postcode"].killed_by
    assert by_id["limit"].killed_by == ["tests/test_limits.py::test_parcel_limit"]
    # collected afresh, its one label case is "FRAGILE?", which fails
    assert by_id["mark"].killed_by == ["tests/test_labels.py::test_labels_are_shouted[fragile]"]
    for mid, _old, _new, how in MUTANTS:
        assert how in notes.get(mid, ""), (mid, notes.get(mid))


# The label reached by a name the package computes: no import-time change can be shown not
# to reach what the collection built, so none is carried (the collector does not fork them).
COMPUTED_INIT = """\
from shipping import rates


def label(name):
    return getattr(rates, "_label_" + name)(name)
"""


def test_a_collection_reading_computed_names_imports_every_change_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_id, notes = _score(tmp_path, monkeypatch, COMPUTED_INIT)
    assert by_id["zone_us"].killed_by == ["tests/test_rates.py::test_us_rate"]
    assert by_id["limit"].killed_by == ["tests/test_limits.py::test_parcel_limit"]
    assert by_id["mark"].killed_by == ["tests/test_labels.py::test_labels_are_shouted[fragile]"]
    for mid, *_ in MUTANTS:
        assert "fresh import" in notes.get(mid, "") and "computes" in notes[mid], notes.get(mid)
