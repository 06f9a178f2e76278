"""An import-time mutant's choice of tests (:func:`suitebench.suite.inside.probe.impact.
choose`) asks what its collection computed (a digest of every test module's data and every
parameter: the dearest part of the choice) only of the test files it could still add tests
from -- none when the choice is every test, never a file whose tests are all chosen already --
and chooses what the whole digest would have made it choose.  Figures worked out by hand."""

from __future__ import annotations

from typing import Any

from suitebench.suite.inside.probe.impact import choose

TESTS = ["t/a.py::x", "t/a.py::y", "t/b.py::z", "t/c.py::w"]
REFERENCE_SUITE = {"t/a.py": "A", "t/b.py": "B", "t/c.py": "C"}


def spec(**more: Any) -> dict[str, Any]:
    return {
        "reference": {"m:K": "1", "m:L": "1"},
        "collected": TESTS,
        "tests": TESTS,
        "base": [],
        "readers": {"K": [0, 1], "L": [2]},
        "suite": REFERENCE_SUITE,
        **more,
    }


class Collection:
    """What the mutant's collection computed (``c.py``'s parameters moved), and which files
    the choice asked about."""

    def __init__(self) -> None:
        self.asked: list[set[str]] = []

    def __call__(self, files: set[str]) -> dict[str, str | None]:
        self.asked.append(set(files))
        now = {"t/a.py": "A", "t/b.py": "B", "t/c.py": "C moved"}
        return {f: now[f] for f in files}


def test_only_files_with_a_test_left_to_add_are_digested() -> None:
    # K changed: its readers x and y (both of a.py) are chosen; a.py has nothing left to add,
    # so b.py and c.py alone are asked about; c.py moved, so w runs too: x, y, w.
    collection = Collection()
    chosen, why = choose(spec(), {"m:K": "2", "m:L": "1"}, "", TESTS, collection)
    assert chosen == ["t/a.py::x", "t/a.py::y", "t/c.py::w"]
    assert collection.asked == [{"t/b.py", "t/c.py"}]
    assert (
        why == "import-time change; globals changed: K; the collection of t/c.py computed otherwise"
    )


def test_a_choice_of_every_test_digests_nothing() -> None:
    # Z changed and no test is known not to read it: every test runs, and nothing is asked.
    collection = Collection()
    chosen, _ = choose(spec(), {"m:K": "1", "m:L": "1", "m:Z": "1"}, "", TESTS, collection)
    assert chosen is None
    assert collection.asked == []


def test_a_final_choice_asks_about_the_files_beyond_it() -> None:
    # A changed default's tests are known (z, of b.py): a.py and c.py are asked about, c.py
    # moved: z and w.
    collection = Collection()
    final = spec(base=[2], final="import-time change to a default")
    chosen, why = choose(final, {"m:K": "1", "m:L": "1"}, "", TESTS, collection)
    assert chosen == ["t/b.py::z", "t/c.py::w"]
    assert collection.asked == [{"t/a.py", "t/c.py"}]
    assert why.endswith("the collection of t/c.py computed otherwise")


def test_with_no_global_changed_every_file_is_asked_about() -> None:
    # Neither K nor L changed: no test is chosen yet, so every file is asked about; c.py
    # moved: w alone.
    collection = Collection()
    chosen, why = choose(spec(), {"m:K": "1", "m:L": "1"}, "", TESTS, collection)
    assert chosen == ["t/c.py::w"]
    assert collection.asked == [{"t/a.py", "t/b.py", "t/c.py"}]
    assert why.startswith("import-time change; no global changed")
