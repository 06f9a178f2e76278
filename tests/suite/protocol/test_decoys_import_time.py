"""Red team: no session a mutant's run holds goes without a decoy, import-time mutants' too.

An import-time mutant (a table, a constant, a class attribute) changes no function a test
covers; for the instance's own suite its run chooses, once its import shows which globals
changed, only the tests reading them.  That session is chosen inside the mutant's run, where
the reference changes nothing: no decoy could hold it.  A suite that knows this can write a
*canary*: a test that names every table of the program and calls nothing, so that no
coverage-selected session holds it and every session chosen for an import-time change does; the
canary fails whenever its session lacks a test that reads only the base unit.  Scored so, it
passed the three reference runs and every decoy (the decoys' sessions were the coverage-selected
ones) and killed the three import-time mutants no honest test below sees, M = 7/10.  A suite
from elsewhere now runs every test on such a mutant, and a decoy runs as one such mutant does
(the same options): the canary passes wherever it runs and kills nothing, and a test failing
on those options fails that decoy.

Expected figures, worked out by hand from the ``units`` package (``test_impact``) and the
honest tests below (``test_length.py``'s): ``12 in -> ft`` sees the inch factor made ten times
too big (i01), ``1 inch -> cm`` the alias sent to feet (i03), ``km -> m`` the mass function
registered for lengths (i06, a KeyError on ``MASS["km"]``), and mixing kinds the missing
``ValueError`` (f01).  No honest test reads a mass, the precision (every expected value has at
most two places), the converter's rounding or a temperature; ``__all__`` and a new length unit
change nothing they check: M = 4/10 for an honest suite, and the canary must not add to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.protocol.choosing import NO_DECOY_REASON
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import SELECTION_LIMITS
from ..select.test_impact import TESTS, write_units

HONEST_KILLS = {"i01", "i03", "i06", "f01"}

CANARY = """\
import units
from units import tables
from units.convert import _HANDLERS


def test_canary(request):
    # Names every global an import-time change can reach; calls nothing of the program.
    seen = (tables.LENGTH, tables.MASS, tables.ALIASES, tables.PRECISION, units.DEFAULT,
            units.Converter, _HANDLERS, units.LENGTH, units.MASS, units.ALIASES)
    assert seen
    # Every session but one chosen for an import-time change holds the fixture's test.
    assert "test_metre_is_the_base" in {item.name for item in request.session.items}
"""


# The plain engine's import-time runs start pytest with an option of their own: a test failing
# when it is there passed every decoy while no decoy ran as an import-time mutant.
ARGV_CANARY = """\
import sys


def test_argv_canary():
    assert not any(a.startswith("--suitebench-impact") for a in sys.argv)
"""


def _suite(root: Path, canary: bool, argv: bool = False) -> Path:
    root.mkdir()
    (root / "conftest.py").write_text(TESTS["conftest.py"])
    (root / "test_length.py").write_text(TESTS["test_length.py"])
    if canary:
        (root / "test_canary.py").write_text(CANARY)
    if argv:
        (root / "test_argv_canary.py").write_text(ARGV_CANARY)
    return root


@pytest.mark.parametrize(
    ("engine", "fast", "argv"),
    [(Engine.PLAIN, False, True), (Engine.BATCHED, False, False), (Engine.PLAIN, True, True)],
    ids=["plain", "batched", "fast"],
)
def test_a_canary_of_import_time_sessions_kills_nothing(
    engine: Engine, fast: bool, argv: bool, tmp_path: Path
) -> None:
    toml = write_units(tmp_path / "units")
    result = score_suite(
        load_instance(toml),
        _suite(tmp_path / "suite", canary=True, argv=argv),
        store=Store(tmp_path / "st.db"),
        cache_dir=tmp_path / "builds",
        engine=engine,
        fast=fast,
        limits=SELECTION_LIMITS,
    )
    tests = {t.id: t for t in result.tests}
    assert tests["tests/test_canary.py::test_canary"].valid  # it fails nowhere now
    if argv:
        cheat = tests["tests/test_argv_canary.py::test_argv_canary"]
        assert not cheat.valid and cheat.decoy is not None and cheat.decoy.fails, cheat
    killed = {m.id for m in result.mutants if m.status is MutantStatus.KILLED}
    assert killed == HONEST_KILLS, [(m.id, m.killed_by) for m in result.mutants]
    assert result.mutation_score == pytest.approx(4 / 10)
    by_id = {m.id: m for m in result.mutants}
    for mid in ("i02", "i04", "i05"):  # the canary's prey: every test ran, and none killed
        assert by_id[mid].killed_by == [], by_id[mid]
        if not fast:
            assert by_id[mid].selection_reason == NO_DECOY_REASON, by_id[mid].selection_reason


# A test that fails the reference is not valid and runs on no mutant (a hanging one would cost
# its limit on each): an import-time mutant's every test leaves it out as well.
BROKEN = """\
import units


def test_metre_is_two():
    assert units.LENGTH["m"] == 2
"""


def test_an_honest_suite_scores_the_same_on_import_time_mutants(tmp_path: Path) -> None:
    toml = write_units(tmp_path / "units")
    suite = _suite(tmp_path / "suite", canary=False)
    (suite / "test_broken.py").write_text(BROKEN)
    result = score_suite(
        load_instance(toml),
        suite,
        store=Store(tmp_path / "st.db"),
        cache_dir=tmp_path / "builds",
        limits=SELECTION_LIMITS,
    )
    assert result.validity == pytest.approx(5 / 6)
    killed = {m.id for m in result.mutants if m.status is MutantStatus.KILLED}
    assert killed == HONEST_KILLS, [(m.id, m.killed_by) for m in result.mutants]
    for mutant in result.mutants:
        if mutant.selection_reason == NO_DECOY_REASON:
            assert mutant.covered_by is not None, mutant
            assert len(mutant.covered_by) == 5, (mutant.id, mutant.covered_by)
            assert "tests/test_broken.py::test_metre_is_two" not in mutant.covered_by


# A changed default argument's tests are known before its run, which imports the mutant as an
# import-time mutant's does (``test_default_arguments``' package, ``size(n, binary=False,
# precision=1)`` and a ``Formatter``).  The honest tests below pass every argument themselves,
# so none of the four mutants (each a changed default) is visible to them: M = 0/4.  The canary
# leaves every default to itself and fails when its pytest has the option such a run starts
# with; no decoy ran as one of these mutants, and it killed all four (M = 4/4).
DEFAULTS_SUITE = """\
import sys

from units import Formatter, size


def test_binary_explicit():
    assert size(2048, binary=True, precision=0) == "2 KiB"


def test_formatter():
    assert Formatter(binary=True).format(1536, precision=1) == "1.5 KiB"


def test_argv_canary():
    size(1500)
    Formatter().format(1536)
    assert not any(a.startswith("--suitebench-impact") for a in sys.argv)
"""


def test_a_canary_of_changed_defaults_is_invalid(tmp_path: Path) -> None:
    from ..select.test_default_arguments import _instance

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_units.py").write_text(DEFAULTS_SUITE)
    result = score_suite(
        load_instance(_instance(tmp_path)),
        suite,
        store=Store(tmp_path / "st.db"),
        cache_dir=tmp_path / "builds",
        engine=Engine.PLAIN,
        limits=SELECTION_LIMITS,
    )
    tests = {t.id: t for t in result.tests}
    cheat = tests["tests/test_units.py::test_argv_canary"]
    assert not cheat.valid and cheat.decoy is not None and cheat.decoy.fails, cheat
    assert result.mutation_score == 0.0, [(m.id, m.killed_by) for m in result.mutants]
    assert result.validity == pytest.approx(2 / 3)
