"""Reading a mutant's module as its changed block gives what reading it whole gives: the same
trivial-compiler-equivalence verdict, the same functions' shape, the same weak-mutation probe
(:mod:`suitebench.run.pyblocks`).

Differential, on standard library modules nobody here wrote (``textwrap``, ``fractions``,
``calendar``, ``colorsys``) and on a module written to hold the awkward places: a bare string
between statements (whole, a no-op: equivalent), two statements on one line, a decorator, a
comment between statements, a ``__future__`` import and a last line without a newline.  Each
text is mutated line by line the way operator mutants change code (an operator, a comparison,
a number, a string, a statement replaced by ``pass``), and every answer is worked out twice:
by block, and with the block reading turned off.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from suitebench.run import pyblocks, pycompile
from suitebench.run.pyblocks import changed_block, spliced_tree
from suitebench.suite.select import infection, linecover

AWKWARD = b'''\
"""A module's docstring."""
from __future__ import annotations

import functools

LIMIT = 10  # a comment
"a bare string between statements"
A = 1; B = 2


@functools.lru_cache(maxsize=32)
def scaled(x, factor=2):
    """Scaled."""
    if x > LIMIT:
        return x * factor
    return x + 1


# a comment between statements
class Box:
    SIZE = 3

    def area(self, n):
        total = 0
        for i in range(n):
            total += i * self.SIZE
        return total == 0 or total < 100
LAST = [1, 2, 3]'''

SWAPS = [
    (r" \+ ", " - "), (r" - ", " + "), (r" \* ", " / "), (r" < ", " <= "), (r" > ", " >= "),
    (r" == ", " != "), (r"\b1\b", "2"), (r"\b0\b", "1"), (r"\b2\b", "3"),
    (r'"([^"]*)"', r'"XX\1XX"'),
]  # fmt: skip


def _mutants(text: bytes, most: int = 120) -> list[bytes]:
    lines = text.decode("utf-8").splitlines(keepends=True)
    found: list[bytes] = []
    for n, line in enumerate(lines):
        for pattern, new in SWAPS:
            changed = re.sub(pattern, new, line, count=1)
            if changed != line:
                found.append("".join([*lines[:n], changed, *lines[n + 1 :]]).encode())
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("#", "@", "def ", "class ", "else", "elif")):
            indent = line[: len(line) - len(stripped)]
            ending = "\n" if line.endswith("\n") else ""
            found.append("".join([*lines[:n], f"{indent}pass{ending}", *lines[n + 1 :]]).encode())
    step = max(1, len(found) // most)
    return found[::step]


def _source(name: str) -> bytes:
    if name == "awkward":
        return AWKWARD
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).read_bytes()


MODULES = ["awkward", "textwrap", "fractions", "calendar", "colorsys"]


@pytest.mark.parametrize("name", MODULES)
def test_a_block_answers_as_the_whole_module(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _source(name)
    mutants = _mutants(text)
    reference = ast.parse(text)
    by_block = []
    for mutated in mutants:
        block = changed_block(text, mutated)
        probe = None
        if block is not None:
            with pycompile.warnings_ignored():  # (as the score reads it)
                tree = spliced_tree(reference, block)
            probe = None if tree is None else infection._probe_of(0, "m.py", reference, tree)
        by_block.append(
            (
                pycompile.same_bytecode(text, mutated, "m.py"),
                linecover.same_shape(text, mutated, "m.py"),
                probe if block is not None else "whole",
            )
        )
    # every mutant either reads as a block or is read whole, and most read as a block
    blocks = sum(1 for _, _, p in by_block if p != "whole")
    assert blocks >= len(mutants) // 2, (blocks, len(mutants))
    monkeypatch.setattr(pycompile, "changed_block", lambda before, after: None)
    monkeypatch.setattr(linecover, "changed_block", lambda before, after: None)
    pycompile._compiled_key.cache_clear()
    for mutated, (same, shape, probe) in zip(mutants, by_block, strict=True):
        assert pycompile.same_bytecode(text, mutated, "m.py") == same, mutated
        assert linecover.same_shape(text, mutated, "m.py") == shape, mutated
        if probe != "whole":
            try:
                with pycompile.warnings_ignored():
                    whole = ast.parse(mutated)
            except SyntaxError:
                assert probe is None
                continue
            assert infection._probe_of(0, "m.py", reference, whole) == probe, mutated


def test_the_awkward_places_read_whole_or_as_blocks_rightly() -> None:
    text = AWKWARD
    # a bare string between statements is a no-op: equivalent, read as a block
    string = text.replace(b'"a bare string', b'"XXa bare string')
    assert changed_block(text, string) is not None
    assert pycompile.same_bytecode(text, string, "m.py")
    # two statements on the changed line: a block of both
    both = changed_block(text, text.replace(b"B = 2", b"B = 3"))
    assert both is not None and (both.first, both.last) == (5, 6)
    # a statement outside the block on its last line, the future import, a comment: whole
    shared = b"import os\nX = (1,\n     2); Y = 3\n"
    assert changed_block(shared, shared.replace(b"(1,", b"(5,")) is None
    assert changed_block(text, text.replace(b"annotations", b"generator_stop")) is None
    assert changed_block(text, text.replace(b"# a comment between", b"# another between")) is None
    # the last line, which has no newline, and a decorator: blocks
    last = changed_block(text, text.replace(b"[1, 2, 3]", b"[1, 2, 4]"))
    assert last is not None and last.before.endswith(b"[1, 2, 3]\n")
    assert not pycompile.same_bytecode(text, text.replace(b"[1, 2, 3]", b"[1, 2, 4]"), "m.py")
    decorated = changed_block(text, text.replace(b"maxsize=32", b"maxsize=33"))
    assert decorated is not None and decorated.before.startswith(b"pass\n@functools")
    assert pyblocks._statements(b"# -*- coding: latin-1 -*-\nx = 1\n") is None
