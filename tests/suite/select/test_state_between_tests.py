"""State one test leaves for the next: a test that reads a cache another test filled sees a
mutant's change without entering the changed function, so coverage alone would skip it.

Found on jmespath 1.0.1, whose parser keeps the expressions it parsed in a class-level cache:
with coverage-guided selection, 8 of 150 operator mutants had cells of the kill matrix that
differed from the full run's (``test_or_repr`` read a parse another test had cached under the
mutant).  The coverage run now fingerprints the program's globals after each test; a selected
test that changed them brings the later tests that read them, and a selected test reading
them brings the earlier tests that changed them (:func:`suitebench.suite.inside.probe.impact.
carried_by_state`).  The package here is a calculator written for this test with the same
cache."""

from __future__ import annotations

from pathlib import Path

from suitebench.suite.inside.probe.impact import carried_by_state

from ..conftest import score_selected_and_full, write_python_instance

CALC = '''\
"""A tiny calculator with a cache of parsed expressions."""


class Parser:
    _CACHE = {}

    def parse(self, text):
        tree = self._CACHE.get(text)
        if tree is None:
            tree = self._parse(text)
            self._CACHE[text] = tree
        return tree

    def _parse(self, text):
        tokens = text.split()
        if len(tokens) == 1:
            return ("num", int(tokens[0]))
        left, op, right = tokens
        return (op, ("num", int(left)), ("num", int(right)))


def evaluate(tree):
    kind = tree[0]
    if kind == "num":
        return tree[1]
    a, b = evaluate(tree[1]), evaluate(tree[2])
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    raise ValueError(kind)


def compute(text):
    return evaluate(Parser().parse(text))
'''

TESTS = {
    "test_calc.py": """\
from calc import Parser, compute


def test_sum():
    assert compute("2 + 3") == 5


def test_difference():
    assert compute("7 - 4") == 3


def test_a_cached_parse_keeps_the_operands_in_order():
    # parsed by test_sum already: read from the cache, _parse is not entered
    assert Parser().parse("2 + 3") == ("+", ("num", 2), ("num", 3))


def test_single_number():
    assert compute("9") == 9
""",
    "test_eval.py": """\
from calc import evaluate


def test_evaluate_a_tree():
    assert evaluate(("-", ("num", 5), ("num", 2))) == 3
""",
}

MUTANTS = [
    # the operands swapped: a sum still adds up, the cached tree does not
    (
        "swap",
        "calc/__init__.py",
        '("num", int(left)), ("num", int(right))',
        '("num", int(right)), ("num", int(left))',
    ),
    (
        "single",
        "calc/__init__.py",
        'return ("num", int(tokens[0]))',
        'return ("num", int(tokens[0]) + 1)',
    ),
    ("unknown_op", "calc/__init__.py", "raise ValueError(kind)", "raise KeyError(kind)"),
]


def test_a_test_reading_what_a_mutant_left_in_a_cache_is_run(tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "calc",
        name="calc",
        source={"calc/__init__.py": CALC},
        tests=TESTS,
        spec="# calc\n\n## Expressions\nParse and evaluate.\n",
        mutants=MUTANTS,
    )
    selected, _full = score_selected_and_full(toml, tmp_path)  # the same matrix
    by_id = {m.id: m for m in selected.mutants}
    cached = "tests/test_calc.py::test_a_cached_parse_keeps_the_operands_in_order"
    assert by_id["swap"].killed_by == [cached, "tests/test_calc.py::test_difference"]
    # the parser's four tests; the one evaluating a tree it built itself is not tied to them
    assert by_id["swap"].tests_run == 4
    assert by_id["single"].killed_by == ["tests/test_calc.py::test_single_number"]
    assert by_id["unknown_op"].status == "survived"


def test_state_ties_tests_in_both_directions_to_a_fixpoint() -> None:
    readers = {"CACHE": {2, 4}, "COUNT": {3}}
    writers = {1: frozenset({"CACHE"}), 2: frozenset({"COUNT"})}
    # a chosen writer brings the later readers, and a reader that writes brings its readers
    assert carried_by_state({1}, writers, readers, set()) == {1, 2, 3, 4}
    # a chosen reader brings the earlier writer (the state a full run builds)
    assert carried_by_state({4}, writers, readers, set()) == {1, 2, 3, 4}
    # a reader before the writer is not tied to it
    assert carried_by_state({0}, writers, {"CACHE": {0}}, set()) == {0}
    # a test whose reads are unknown reads everything
    assert carried_by_state({1}, writers, readers, {0, 5}) == {1, 2, 3, 4, 5}
    assert carried_by_state({3}, {}, readers, set()) == {3}


# A module a test imports first (a golden table, a reference implementation kept beside the
# package) is not state that test left: a later test importing it in a run without that test
# builds the same globals.  Found on python-slugify 9.2.0, whose golden test imports
# ``tools.legacy_reference`` (``from slugify import slugify``): every one of its globals
# counted as written, so every later test naming ``slugify`` was tied to that 78 ms test and it
# to them -- 416 cells of it where its own coverage reaches 225.  A module imported after the
# test changed the program's globals (a patched separator captured on import) still ties.
TEXTKIT = '''\
"""Small text helpers."""

SEP = "-"


def shout(text):
    return text.upper() + "!"


def title(text):
    return " ".join(word[:1].upper() + word[1:] for word in text.split(" "))


def join(words):
    return SEP.join(words)
'''

HELPERS = {
    "helpers/__init__.py": "",
    "helpers/reference.py": """\
from textkit import shout, title

EXPECTED = {"hi": "HI!", "a b": "A B!", "": "!"}


def check():
    for text, want in EXPECTED.items():
        assert shout(text) == want, (text, shout(text))
    return len(EXPECTED)
""",
    "helpers/captured.py": """\
import textkit

SEP = textkit.SEP  # read once, on import
""",
}

TEXT_TESTS = {
    "test_text.py": """\
import textkit
from textkit import join, shout, title


def test_reference_table():
    from helpers import reference
    assert reference.check() == 3


def test_title():
    assert title("ab cd") == "Ab Cd"


def test_shout_keeps_digits():
    assert shout("r2d2") == "R2D2!"


def test_separator_seen_while_patched(monkeypatch):
    monkeypatch.setattr(textkit, "SEP", "+")
    from helpers import captured
    assert join(["a", "b"]) == "a+b"


def test_captured_separator():
    from helpers import captured  # imported by the test before, separator patched
    assert captured.SEP + shout("x") == "+X!"
"""
}

TEXT_MUTANTS = [
    ("title_lower", "textkit/__init__.py", "word[:1].upper()", "word[:1].lower()"),
    ("shout_strip", "textkit/__init__.py", "text.upper() + ", "text.upper().strip() + "),
    ("shout_mark", "textkit/__init__.py", '+ "!"', '+ "?"'),
]


def test_a_module_a_test_imports_first_does_not_tie_later_tests(tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "textkit",
        name="textkit",
        source={"textkit/__init__.py": TEXTKIT, **HELPERS},
        tests=TEXT_TESTS,
        spec="# textkit\n\n## Helpers\nShout, title, join.\n",
        mutants=TEXT_MUTANTS,
    )
    selected, _full = score_selected_and_full(toml, tmp_path)  # the same matrix
    by_id = {m.id: m for m in selected.mutants}
    t = "tests/test_text.py::"
    # title's change reaches test_title alone; the reference table imported before it is
    # not state it reads (2 tests run before: the table's test was tied to it by `title`)
    assert by_id["title_lower"].tests_run == 1
    assert by_id["title_lower"].killed_by == [t + "test_title"]
    # shout's: the three tests calling it, and the test that imported `captured` while the
    # separator was patched (its import read that patch): 4, not all 5
    assert by_id["shout_strip"].tests_run == 4
    assert by_id["shout_strip"].status == "survived"  # no test shouts a padded text
    assert by_id["shout_mark"].tests_run == 4
    assert by_id["shout_mark"].killed_by == [
        t + "test_captured_separator",
        t + "test_reference_table",
        t + "test_shout_keeps_digits",
    ]
