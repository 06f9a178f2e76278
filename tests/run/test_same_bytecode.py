"""Trivial compiler equivalence for Python: a mutant whose module compiles to the reference's
code objects, line numbers aside, is equivalent -- and nothing a test can observe at run time
(a constant's type or sign, a docstring, an annotation, a compile-time warning) may be
compared away."""

from __future__ import annotations

import pytest

from suitebench.run.pycompile import same_bytecode

REFERENCE = '''\
"""Percentages."""


def percent(part, whole):
    """Integer percentage, rounded down."""
    return (100 * part) // whole


def ratio(part: int, whole: int) -> float:
    def scaled(x):
        return x * 1.0

    return scaled(part) / whole
'''


def _mutant(old: str, new: str) -> str:
    assert REFERENCE.count(old) == 1, old
    return REFERENCE.replace(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # (100 * part) // whole parses to the same tree as 100 * part // whole (left to right).
        ("(100 * part) // whole", "100 * part // whole"),
        # A blank line moves every later line: positions differ, code does not.
        ('"""Percentages."""\n', '"""Percentages."""\n\n'),
        # Constant folding: 2 * 50 is 100 at compile time.
        ("(100 * part)", "(2 * 50 * part)"),
        # Spacing and a line break inside brackets.
        ("scaled(part) / whole", "scaled(\n        part\n    )/whole"),
    ],
)
def test_a_respelling_compiling_to_the_same_code_is_equivalent(old: str, new: str) -> None:
    assert same_bytecode(REFERENCE.encode(), _mutant(old, new).encode(), "pct.py")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # 1.0 == 1 == True in Python, but x * 1 is an int for an int x: a test can see it.
        ("x * 1.0", "x * 1"),
        ("x * 1.0", "x * True"),
        ("x * 1.0", "x * -1.0"),
        # A docstring is read at run time (help(), doctests): a changed one is a change.
        ("Integer percentage, rounded down.", "Integer percentage, rounded up."),
        # Annotations are evaluated into __annotations__: a changed one is a change.
        ("-> float:", "-> int:"),
        # A nested function's code is a constant of its parent's: compared too.
        ("return x * 1.0", "return x * 2.0"),
        ("100 * part", "10 * part"),
        # An operator that compiles to another instruction.
        ("// whole", "/ whole"),
    ],
)
def test_a_change_a_test_could_see_is_not_equivalent(old: str, new: str) -> None:
    assert not same_bytecode(REFERENCE.encode(), _mutant(old, new).encode(), "pct.py")


def test_a_new_compile_time_warning_is_not_equivalent() -> None:
    # "\d" and "\\d" are the same string, but the first draws a SyntaxWarning (a
    # DeprecationWarning before 3.12) when compiled: under the project's
    # filterwarnings = error, importing the mutant fails.
    reference = b'PATTERN = "\\\\d+"\n'
    mutant = b'PATTERN = "\\d+"\n'
    assert not same_bytecode(reference, mutant, "pat.py")
    assert same_bytecode(reference, b'PATTERN = ("\\\\d+")\n', "pat.py")


def test_a_mutant_that_does_not_compile_is_not_equivalent() -> None:
    assert not same_bytecode(REFERENCE.encode(), _mutant("// whole", "// whole)").encode(), "p.py")
