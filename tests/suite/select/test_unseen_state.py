"""State the fingerprint cannot see into carries a mutant's effect to later tests that never
enter the mutated function: the selected matrix runs them too.

**Results cached by ``functools.lru_cache``.**
``cellwidth`` measures text in terminal cells, caching each character's width (as wcwidth
0.2.13 does).  ``test_title`` measures ``日本`` first: it fills the cache through ``_wide``.
``test_reversed`` measures ``本日`` afterwards: both widths come from the cache, ``_wide`` is
not entered.  Worked out for ``narrow_cjk`` (the CJK range's end ``0xA4CF`` -> ``0x4000``, so
日 U+65E5 and 本 U+672C are one cell each): ``test_title`` gets 2 where 4 is expected and
fails, and so does ``test_reversed`` in the same run, reading the cached widths -- as every
test run on the mutant shows (``--all-tests``); ``test_ascii`` passes.

The selected matrix runs ``test_reversed`` only if it is tied to ``test_title`` by the state
the first leaves.  A filled cache's results cannot be fingerprinted; before, that made the
program's whole state unknown, no test was taken to depend on another's, and
``test_reversed`` was left at its reference outcome (passed): on wcwidth 0.2.13, 405 of 7,332
cells (every status still right).  The coverage run now takes a cached function by the results
it computed (each one stored is a miss), so ``test_title`` writes ``width`` and
``test_reversed``, which reads it through ``text_width``, runs after it.
"""

from __future__ import annotations

from pathlib import Path

from ..conftest import score_selected_and_full, write_python_instance

SOURCE = '''\
"""Text width in terminal cells."""

from functools import lru_cache


def _wide(ch):
    code = ord(ch)
    return 0x1100 <= code <= 0x115F or 0x2E80 <= code <= 0xA4CF or 0xAC00 <= code <= 0xD7A3


@lru_cache(maxsize=None)
def width(ch):
    return 2 if _wide(ch) else 1


def text_width(text):
    return sum(width(ch) for ch in text)
'''

TESTS = """\
from cellwidth import text_width


def test_title():
    assert text_width("日本") == 4


def test_reversed():
    assert text_width("本日") == 4


def test_ascii():
    assert text_width("ab") == 2
"""

MUTANTS = [("narrow_cjk", "cellwidth/__init__.py", "<= 0xA4CF", "<= 0x4000")]


def test_a_cached_result_reaches_the_later_tests(tmp_path: Path):
    toml = write_python_instance(
        tmp_path / "cellwidth",
        name="cellwidth",
        source={"cellwidth/__init__.py": SOURCE},
        tests={"test_cellwidth.py": TESTS},
        spec="# cellwidth\n\nText width in cells.\n",
        mutants=MUTANTS,
    )
    _selected, full = score_selected_and_full(toml, tmp_path)  # asserts the same matrix
    assert sorted(full.mutants[0].killed_by) == [
        "tests/test_cellwidth.py::test_reversed",
        "tests/test_cellwidth.py::test_title",
    ]


# A random generator's state lives in C: the fingerprint cannot see into it.  Worked out with
# ``random.Random(7)`` in plain Python: two choices from CARDS are queen, king and the next is
# jack; with three dealt (queen, king, jack) the next is nine.
DECK = """\
import random

_RNG = random.Random(7)
CARDS = ["ace", "king", "queen", "jack", "ten", "nine"]


def deal_pair():
    return [_RNG.choice(CARDS) for _ in range(2)]


def draw():
    return _RNG.choice(CARDS)
"""

DECK_TESTS = """\
from deck import CARDS, deal_pair, draw


def test_pair():
    assert deal_pair() == ["queen", "king"]


def test_draw():
    assert draw() == "jack"


def test_cards():
    assert len(CARDS) == 6
"""


def test_a_generator_drawn_from_ties_the_later_tests_drawing_from_it(tmp_path: Path):
    """**A random generator** (the program's ``_RNG``): ``three_cards`` (``range(2)`` ->
    ``range(3)`` in ``deal_pair``) fails ``test_pair`` (three cards) and, drawing one more,
    ``test_draw`` (nine, not jack), which never enters ``deal_pair``; ``test_cards`` names no
    generator and passes.  Before, the generator made the whole state unknown and
    ``test_draw`` was left at its reference outcome; now ``_RNG`` alone is unknown, and every
    test naming it (through the functions it runs) is taken to change it."""
    toml = write_python_instance(
        tmp_path / "deck",
        name="deck",
        source={"deck/__init__.py": DECK},
        tests={"test_deck.py": DECK_TESTS},
        spec="# deck\n\nCards dealt at random.\n",
        mutants=[("three_cards", "deck/__init__.py", "range(2)", "range(3)")],
    )
    selected, _full = score_selected_and_full(toml, tmp_path)  # asserts the same matrix
    assert sorted(selected.mutants[0].killed_by) == [
        "tests/test_deck.py::test_draw",
        "tests/test_deck.py::test_pair",
    ]
