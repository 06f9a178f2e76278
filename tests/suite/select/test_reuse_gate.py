"""What ``score --incremental`` takes as a change of everything, and what it reads of code.

The edits an adversary of a reused row would make -- a data file the tests read, a
``conftest.py``, a test module that sets state on import, the package's module-level code, a
decorated function, a new file in the package -- must each rerun every mutant; comments and an
imported module more must not (tests/suite/execute/test_incremental_edits.py scores the rest).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.select.definitions import changed, file_definitions, reachable
from suitebench.suite.select.reuse import Reuse, mutant_key

from ..edit_series import make_project


def _reuse(project: Path, store: Store) -> Reuse:
    instance = load_instance(project)
    runner = SuiteRuns(
        instance.tests,
        kind="python",
        store=store,
        executor=None,
        engine=Engine.BATCHED,
        limits=SuiteLimits(),
        backend=None,
        batch_size=8,
    )
    return Reuse(instance, instance.tests, store, runner)


def _append(rel: str, text: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / rel
        path.write_text((path.read_text() if path.exists() else "") + text)

    return edit


EVERYTHING = [
    ("tests/rates.json", _append("tests/rates.json", " "), "the suite: rates.json changed"),
    ("conftest", _append("tests/conftest.py", "X = 1\n"), "the suite: conftest.py changed"),
    (
        "test module sets state",
        _append("tests/test_cart.py", "\nimport os\nos.environ['TZ'] = 'UTC'\n"),
        "module-level code of test_cart.py changed (beyond imports)",
    ),
    (
        "new test module sets state",
        _append("tests/test_z.py", "from shop import money\nmoney.RATES['USD'] = 1\n"),
        "module-level code of test_z.py changed (beyond imports)",
    ),
    (
        "package constant",
        _append("src/shop/money.py", "\nRATES['CHF'] = 96\n"),
        "module-level code of shop/money.py changed",
    ),
    (
        "decorated function",
        _append("src/shop/money.py", "\n@staticmethod\ndef rate():\n    return 1\n"),
        "shop/money.py::rate changed and is decorated",
    ),
    ("package data", _append("src/shop/rates.csv", "USD,108\n"), "shop/rates.csv added"),
]


@pytest.mark.parametrize(("name", "edit", "why"), EVERYTHING, ids=[e[0] for e in EVERYTHING])
def test_edits_that_rerun_everything(
    tmp_path: Path, name: str, edit: Callable[[Path], None], why: str
) -> None:
    project = make_project(tmp_path / "shop")
    with Store(tmp_path / "store.sqlite") as store:
        first = _reuse(project, store)
        assert first.why_not is not None and "no earlier incremental run" in first.why_not
        first.keep([], {}, {}, {})
        assert _reuse(project, store).why_not is None  # nothing changed: rows may be reused
        edit(project)
        reason = _reuse(project, store).why_not
        assert reason is not None and why in reason


@pytest.mark.parametrize(
    "edit",
    [
        _append("src/shop/cart.py", "\n# A comment at the end.\n"),
        _append("tests/test_cart.py", "\nimport json\n"),
        _append("tests/test_new.py", "import pytest\n\nfrom shop import cart\n"),
    ],
    ids=["comment", "test module imports one more module", "new test module of imports"],
)
def test_edits_that_leave_rows_to_decide(tmp_path: Path, edit: Callable[[Path], None]) -> None:
    project = make_project(tmp_path / "shop")
    with Store(tmp_path / "store.sqlite") as store:
        _reuse(project, store).keep([], {}, {}, {})
        edit(project)
        assert _reuse(project, store).why_not is None


def test_definitions_ignore_comments_and_positions() -> None:
    before = "def f(x):\n    return g(x)\n\n\ndef g(x):\n    return x + 1\n"
    after = "# header\n\ndef f(x):\n    # why\n    return g(x)\n\n\ndef g(x):\n    return x + 1\n"
    old, new = file_definitions("m.py", before), file_definitions("m.py", after)
    assert old is not None and new is not None
    assert changed(old, new) == set()
    edited = file_definitions("m.py", before.replace("x + 1", "x + 2"))
    assert edited is not None and changed(old, edited) == {"m.py::g"}


def test_reach_follows_names_strings_and_classes() -> None:
    source = (
        "class Box:\n"
        "    size = 3\n"
        "    def grow(self):\n"
        "        return helper(self.size)\n"
        "    def __eq__(self, other):\n"
        "        return compare(self, other)\n"
        "def helper(n):\n"
        "    return getattr(Box, 'shrink_table')\n"
        "def shrink_table():\n"
        "    return 0\n"
        "def compare(a, b):\n"
        "    return True\n"
        "def unrelated():\n"
        "    return 1\n"
    )
    defs = file_definitions("m.py", source)
    assert defs is not None
    # From grow: helper by name, shrink_table by the string, the class and so __eq__,
    # and compare through __eq__; never unrelated.
    assert reachable(["m.py::Box.grow"], [defs]) == {
        "m.py::Box.grow",
        "m.py::Box",
        "m.py::Box.__eq__",
        "m.py::helper",
        "m.py::shrink_table",
        "m.py::compare",
    }


def test_a_mutant_is_known_by_what_it_changes_not_where(tmp_path: Path) -> None:
    root = tmp_path / "src"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/m.py").write_text("def f(x):\n    return x + 1\n")
    patch = b"--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -2 +2 @@\n-    return x + 1\n+    return x - 1\n"
    first = mutant_key(root, patch)
    (root / "pkg/m.py").write_text("# moved down\n\ndef f(x):\n    return x + 1\n")
    moved = patch.replace(b"@@ -2 +2 @@", b"@@ -4 +4 @@")
    again = mutant_key(root, moved)
    assert first is not None and again is not None
    assert first == again and first[1] == {"pkg/m.py::f"}
    module_level = b"--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1 +1 @@\n-# moved down\n+X = 1\n"
    assert mutant_key(root, module_level) is None  # import-time: never reused


def test_a_suite_from_elsewhere_reuses_nothing(tmp_path: Path) -> None:
    """A suite from elsewhere meets decoys in every run: a row reused without them could hold
    the kills of a test that tells the reference apart (docs/threat-model.md)."""
    project = make_project(tmp_path / "shop")
    with Store(tmp_path / "store.sqlite") as store:
        _reuse(project, store).keep([], {}, {}, {})
        instance = load_instance(project)
        runner = SuiteRuns(
            instance.tests,
            kind="python",
            store=store,
            executor=None,
            engine=Engine.PLAIN,
            limits=SuiteLimits(),
            backend=None,
            batch_size=8,
        )
        foreign = Reuse(instance, instance.tests, store, runner, own_suite=False)
        assert foreign.why_not is not None and "decoys" in foreign.why_not
        assert not foreign.carry_reference(["a", "b", "c"])
