"""The direct protocol (:mod:`suitebench.suite.inside.batch.direct`): a batch's child runs each
test's phases itself where only pytest's own plugins take part -- and the kill matrix is pytest's,
cell for cell and message for message.

The package is a small invoicing module written for these tests; its suite uses what real
suites use: parametrization, fixtures of every scope with teardowns, xunit ``setup_method`` and
``setup_module``, ``tmp_path``, ``monkeypatch``, ``request``, indirect parameters, imperative
skips and xfails, an xfail mark a test adds while it runs, ``pytest.warns`` and a
``filterwarnings`` mark, ``pytest.raises``, a test that reads ``PYTEST_CURRENT_TEST``, one that
prints a lot -- and, run by pytest's own hooks, ``capsys``, ``caplog``, skip/xfail marks and a
``unittest.TestCase``.  The mutants are the bugs such code gets: an off-by-one discount
threshold, a rounding digit, a lost tie-break, a missed zero-quantity case, a warning's
category, a log level, an exception type, a receipt's format, a ledger whose close fails, a
receipt that prints forever."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.result import SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import keep_batches, write_python_instance

INVOICE = '''\
"""Invoices: lines, discounts, VAT, receipts."""
import logging
import re
import warnings

log = logging.getLogger("invoicing")

VAT = 0.2
BULK = 100
MIN_CHARGE = 0.5


class Ledger:
    def __init__(self, path):
        self.path = path
        self.rows = []

    def add(self, row):
        self.rows.append(row)

    def close(self):
        with open(self.path, "w") as fh:
            fh.write("\\n".join(self.rows))
        return len(self.rows)


def line_total(price, qty):
    if qty < 0:
        log.warning("negative quantity %s", qty)
        raise ValueError("quantity must not be negative")
    if qty == 0:
        return 0.0
    total = max(price * qty, MIN_CHARGE)
    if qty >= BULK:
        total *= 0.9
    return round(total, 2)


def with_vat(amount):
    return round(amount * (1 + VAT), 2)


def ranked(lines):
    return sorted(lines, key=lambda line: (-line[1], line[0]))


def old_total(lines):
    warnings.warn("old_total is deprecated; use line_total", DeprecationWarning)
    return sum(line_total(p, q) for p, q in lines)


def receipt(lines):
    for name, amount in lines:
        if not re.fullmatch(r"[a-z]+", name):
            raise ValueError(f"bad item name {name!r}")
        print(f"{name:<10}{amount:>8.2f}")
    return len(lines)
'''

CONFTEST = """\
import pytest


@pytest.fixture(scope="session")
def currency():
    return "EUR"


@pytest.fixture(scope="module")
def ledger_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ledgers")


@pytest.fixture
def ledger(ledger_dir, request):
    from invoicing.invoice import Ledger

    book = Ledger(ledger_dir / f"{request.node.name}.txt")
    yield book
    assert book.close() == len(book.rows)
"""

TEST_LINES = """\
import os

import pytest

from invoicing.invoice import BULK, line_total, ranked, receipt, with_vat

STATE = {"setup_module": 0}


def setup_module():
    STATE["setup_module"] += 1


@pytest.mark.parametrize(
    "price, qty, total",
    [(2.5, 4, 10.0), (1.0, 99, 99.0), (1.0, 100, 90.0), (3.0, 0, 0.0), (0.2, 3, 0.6)],
)
def test_line_total(price, qty, total):
    assert line_total(price, qty) == total


@pytest.mark.parametrize("amount, gross", [(10.0, 12.0), (0.05, 0.06), (99.99, 119.99)])
def test_with_vat(amount, gross):
    assert with_vat(amount) == gross


def test_ranking_breaks_ties_by_name():
    lines = [("pear", 3.0), ("apple", 3.0), ("fig", 5.0)]
    assert [name for name, _ in ranked(lines)] == ["fig", "apple", "pear"]


def test_negative_quantity_is_refused():
    with pytest.raises(ValueError, match="negative"):
        line_total(1.0, -1)


def test_bulk_threshold_is_a_hundred():
    assert BULK == 100 and line_total(1.0, BULK) < BULK


def test_setup_module_ran_once():
    assert STATE["setup_module"] == 1


def test_current_test_is_named():
    assert os.environ["PYTEST_CURRENT_TEST"].endswith("test_current_test_is_named (call)")


def test_zero_quantity_skips_when_free():
    if line_total(5.0, 0) == 0.0:
        pytest.skip("free line")
    assert line_total(5.0, 0) > 0


def test_vat_rounding_known_issue():
    if with_vat(0.125) == 0.15:
        pytest.xfail("0.125 * 1.2 rounds down to the cent")
    assert with_vat(0.125) == 0.16


def test_rounding_marked_while_running(request):
    request.node.add_marker(pytest.mark.xfail(reason="rounding still open", strict=False))
    assert with_vat(1.005) == 1.2


def test_receipt_counts_its_lines():
    assert receipt([("tea", 1.0), ("cake", 2.0)]) == 2


def test_many_lines_printed():
    for i in range(2000):
        print("line", i, line_total(1.0, i % 7))
    assert True
"""

TEST_LEDGER = """\
import sys
import unittest
import warnings

import pytest

from invoicing.invoice import Ledger, line_total, old_total, receipt


class TestLedger:
    def setup_method(self):
        self.lines = [("tea", 2.0), ("cake", 3.5)]

    def test_rows_are_written(self, ledger, currency):
        for name, amount in self.lines:
            ledger.add(f"{name} {amount} {currency}")
        assert len(ledger.rows) == 2

    def test_file_in_tmp_path(self, tmp_path):
        book = Ledger(tmp_path / "book.txt")
        book.add("x")
        assert book.close() == 1 and (tmp_path / "book.txt").read_text() == "x"


@pytest.fixture(params=[1, 10, 100])
def quantity(request):
    return request.param


def test_indirect_quantities(quantity):
    assert line_total(1.0, quantity) <= quantity


def test_env_from_monkeypatch(monkeypatch):
    monkeypatch.setenv("INVOICE_CURRENCY", "GBP")
    import os

    assert os.environ["INVOICE_CURRENCY"] == "GBP"


def test_old_total_warns():
    with pytest.warns(DeprecationWarning):
        assert old_total([(1.0, 2)]) == 2.0


@pytest.mark.filterwarnings("error::UserWarning")
def test_old_total_is_only_deprecated():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert old_total([(2.0, 2)]) == 4.0


def test_receipt_format(capsys):
    receipt([("tea", 2.0)])
    assert capsys.readouterr().out == "tea           2.00\\n"


def test_negative_is_logged(caplog):
    with pytest.raises(ValueError):
        line_total(1.0, -2)
    assert [r.levelname for r in caplog.records] == ["WARNING"]


@pytest.mark.skipif(sys.platform == "win32", reason="ledgers are written with \\n")
def test_zero_line_marked():
    assert line_total(9.0, 0) == 0.0


@pytest.mark.xfail(strict=True, reason="bulk discount is not cumulative")
def test_bulk_is_cumulative():
    assert line_total(1.0, 200) == 160.0


class LegacyTotals(unittest.TestCase):
    def test_vat(self):
        self.assertEqual(line_total(2.0, 3), 6.0)
"""

# (id, old, new): the bugs such code gets
MUTANTS = [
    ("bulk_off_by_one", "qty >= BULK", "qty > BULK"),
    ("vat_digit", "round(amount * (1 + VAT), 2)", "round(amount * (1 + VAT), 1)"),
    ("lost_tiebreak", "(-line[1], line[0])", "(-line[1],)"),
    ("zero_case", "    if qty == 0:\n        return 0.0\n", ""),
    ("warning_category", "DeprecationWarning)", "UserWarning)"),
    ("log_level", 'log.warning("negative', 'log.info("negative'),
    ("error_type", 'raise ValueError("quantity', 'raise TypeError("quantity'),
    ("receipt_width", "{amount:>8.2f}", "{amount:>9.2f}"),
    ("close_count", "return len(self.rows)", "return len(self.rows) + 1"),
    # prints its first line forever: each test that reaches it hangs until the per-test limit
    (
        "receipt_forever",
        "for name, amount in lines:",
        "for name, amount in iter(lambda: lines[0], None):",
    ),
]


def write_invoicing(root: Path, conftest: str = CONFTEST) -> Path:
    return write_python_instance(
        root,
        name="invoicing",
        source={"invoicing/__init__.py": "", "invoicing/invoice.py": INVOICE},
        tests={"conftest.py": conftest, "test_lines.py": TEST_LINES, "test_ledger.py": TEST_LEDGER},
        spec="# invoicing\n\n## Totals\nLines, discounts, VAT, receipts.\n",
        mutants=[(mid, "invoicing/invoice.py", old, new) for mid, old, new in MUTANTS],
    )


def _score(
    toml: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str, all_tests: bool
) -> tuple[SuiteResult, list[str]]:
    """Score with one worker (one batch: one collection), keeping the batches' workspaces;
    returns the result and the batches' ``protocol.txt`` notes."""
    kept = keep_batches(monkeypatch, tmp_path, f"{protocol}-{all_tests}-batch")
    store = Store(tmp_path / f"store-{protocol}-{all_tests}" / "store.sqlite")
    try:
        with LocalExecutor(1) as one:
            result = score_suite(
                load_instance(toml),
                store=store,
                cache_dir=tmp_path / "builds",
                limits=SuiteLimits(per_test=2.0, per_program=300.0, protocol=protocol),
                all_tests=all_tests,
                executor=one,
            )
    finally:
        store.close()
    notes = [
        line
        for w in kept
        if (w / "out" / "protocol.txt").is_file()
        for line in (w / "out" / "protocol.txt").read_text().splitlines()
    ]
    return result, notes


def _rows(result: SuiteResult) -> dict[str, Any]:
    return {
        m.id: (m.status, m.killed_by, m.kill_messages, dict(m.outcomes), m.tests_run)
        for m in result.mutants
    }


@pytest.mark.parametrize("conftest", ["lazy", "eager"])
def test_direct_protocol_gives_pytests_matrix_cell_for_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conftest: str
) -> None:
    """Every test on every mutant, each mutant's suite collected for itself: after one
    configuration of pytest for the batch, or (``eager``: the conftest imports the package)
    configured anew for each mutant."""
    toml = write_invoicing(
        tmp_path / "invoicing", conftest=CONFTEST if conftest == "lazy" else EAGER_CONFTEST
    )
    direct, notes = _score(toml, tmp_path, monkeypatch, "direct", all_tests=True)
    hooks, hook_notes = _score(toml, tmp_path, monkeypatch, "pytest", all_tests=True)
    failing = [t.id for t in direct.tests if t.reference[0] in ("failed", "error")]
    assert not failing, failing
    assert _rows(direct) == _rows(hooks)
    assert direct.kill_matrix() == hooks.kill_matrix()

    # the reference's runs are pytest's; each mutant's ran most tests directly and left to
    # pytest the ones its plugins serve phase by phase (capsys, caplog, marks, unittest)
    reference = "pytest: the reference's runs"
    assert notes.count(reference) == 3, notes
    mutants = [n for n in notes if n != reference]
    # one note per mutant, and one per valid test's timeout confirmed by a run of it alone:
    # none, the printing test used its limit of CPU time (a kill without running it again)
    alone = [n for n in mutants if n.endswith(" of 1 tests")]
    mutants = [n for n in mutants if n not in alone]
    assert not alone, alone
    assert len(mutants) == len(MUTANTS) and len(set(mutants)) == 1, notes
    ran, _, total = mutants[0].removeprefix("direct: ").removesuffix(" tests").partition(" of ")
    assert int(total) == len(direct.tests) and int(ran) == int(total) - 5, mutants[0]
    assert {n for n in hook_notes if n != reference} == {"pytest: score --protocol pytest"}

    # every mutant is caught, each by the tests that see its bug
    by_id = {m.id: m for m in direct.mutants}
    assert {m.id for m in direct.mutants if m.status.detected} == {mid for mid, *_ in MUTANTS}
    assert by_id["log_level"].killed_by == ["tests/test_ledger.py::test_negative_is_logged"]
    assert by_id["receipt_width"].killed_by == ["tests/test_ledger.py::test_receipt_format"]
    assert by_id["lost_tiebreak"].killed_by == [
        "tests/test_lines.py::test_ranking_breaks_ties_by_name"
    ]
    closed = by_id["close_count"].outcomes
    # a fixture's teardown that fails is an error of the test that used it
    assert closed["tests/test_ledger.py::TestLedger::test_rows_are_written"] == "error"
    assert closed["tests/test_ledger.py::TestLedger::test_file_in_tmp_path"] == "failed"
    zero = by_id["zero_case"].outcomes
    assert zero["tests/test_lines.py::test_line_total[3.0-0-0.0]"] == "failed"
    assert zero["tests/test_lines.py::test_zero_quantity_skips_when_free"] == "passed"
    assert zero["tests/test_ledger.py::test_zero_line_marked"] == "failed"
    warned = set(by_id["warning_category"].killed_by)
    assert warned == {
        "tests/test_ledger.py::test_old_total_warns",
        "tests/test_ledger.py::test_old_total_is_only_deprecated",
    }
    # a test printing forever ends at the per-test limit, run directly or by pytest alike
    forever = by_id["receipt_forever"]
    assert forever.status == "timeout", forever
    assert forever.outcomes["tests/test_lines.py::test_receipt_counts_its_lines"] == "timeout"
    assert forever.outcomes["tests/test_ledger.py::test_receipt_format"] == "timeout"
    assert all("of CPU time" in m for m in forever.kill_messages.values()), forever
    refused = "tests/test_lines.py::test_negative_quantity_is_refused"
    message = by_id["error_type"].kill_messages[refused]
    assert message.startswith("TypeError: quantity must not be negative"), message
    # a test that adds an xfail mark while it runs: xfailed on the reference, an XPASS (not
    # strict: passed) where the VAT loses a digit -- never a kill
    marked = "tests/test_lines.py::test_rounding_marked_while_running"
    assert by_id["vat_digit"].outcomes[marked] == "passed"
    assert all(marked not in m.killed_by for m in direct.mutants)
    reference = {t.id: t.reference for t in direct.tests}
    assert reference["tests/test_lines.py::test_rounding_marked_while_running"][0] == "skipped"
    assert reference["tests/test_lines.py::test_vat_rounding_known_issue"][0] == "skipped"


def test_selected_matrix_by_the_direct_protocol_is_the_full_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Coverage-guided selection: the body mutants' children share one collection, patched
    (:mod:`suitebench.suite.inside.batch.collector`), and run their tests directly."""
    toml = write_invoicing(tmp_path / "invoicing")
    selected, notes = _score(toml, tmp_path, monkeypatch, "direct", all_tests=False)
    full, _ = _score(toml, tmp_path, monkeypatch, "pytest", all_tests=True)
    assert selected.kill_matrix() == full.kill_matrix()
    assert [(m.id, m.status, m.killed_by, m.kill_messages) for m in selected.mutants] == [
        (m.id, m.status, m.killed_by, m.kill_messages) for m in full.mutants
    ]
    assert any(n.startswith("direct: ") for n in notes), notes
    assert "pytest: the reference's runs" in notes
    patched = [
        line
        for path in tmp_path.glob("direct-False-batch*/out/patched.txt")
        for line in path.read_text().splitlines()
    ]
    assert sum(" patched: " in line for line in patched) >= 5, patched
    # the mutants' batches compile what the reference's coverage run compiled, once
    specs = [json.loads(p.read_text()) for p in tmp_path.glob("direct-False-batch*/spec.json")]
    assert any(["[a-z]+", 0] in spec["patterns"] for spec in specs if not spec["reference"])


# a conftest that imports the package: pytest is configured anew for every program
EAGER_CONFTEST = "from invoicing.invoice import Ledger  # noqa: F401\n" + CONFTEST

# Hooks of a suite's own: on a phase (as many suites have), and a protocol of its own that
# runs each test once more when it fails (as rerun plugins do), which the direct protocol,
# standing in for pytest's runner, would otherwise skip.
HOOKS = {
    "pytest_runtest_setup": """
def pytest_runtest_setup(item):
    item.user_properties.append(("checked", True))
""",
    "pytest_runtest_protocol": """
from _pytest.runner import runtestprotocol


def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = runtestprotocol(item, nextitem=nextitem, log=False)
    if any(r.failed for r in reports):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
""",
}


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_a_suite_with_hooks_of_its_own_is_run_by_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook: str
) -> None:
    toml = write_invoicing(tmp_path / "invoicing", conftest=CONFTEST + HOOKS[hook])
    result, notes = _score(toml, tmp_path, monkeypatch, "direct", all_tests=True)
    assert notes and all(n.startswith("pytest: ") for n in notes), notes
    hooked = {n for n in notes if n != "pytest: the reference's runs"}
    assert len(hooked) == 1 and "conftest" in str(hooked), notes
    assert f"implements {hook}" in str(hooked), notes
    killed = {m.id for m in result.mutants if m.status.detected}
    assert killed == {mid for mid, *_ in MUTANTS}
    # each phase has its budget, a rerun's too: the test printing forever times out (not a run
    # ended by the watchdog)
    forever = next(m for m in result.mutants if m.id == "receipt_forever")
    assert forever.status == "timeout" and forever.run_status == "ok", forever
    spec = json.loads(next(tmp_path.glob("direct-True-batch*/spec.json")).read_text())
    assert spec["protocol"] == "direct"
