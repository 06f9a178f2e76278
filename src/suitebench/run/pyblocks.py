"""The top-level statements of a module a change lies in, so that a mutant's module is read
as its changed block rather than whole.

A score reads every mutant of a package several times on the host -- compiled for trivial
compiler equivalence, parsed for its weak-mutation probe, compiled again for its functions'
shape -- and a mutant changes a line or two of a module of hundreds.  When both texts have
as many lines and every changed line lies within a run of whole top-level statements that
shares no line with the statements around it, everything outside that run is the same text at
the same lines, so the two modules differ exactly as the two runs of statements do, each read
alone: compiled alone they give the same code but for the module's own (as
:func:`suitebench.run.pycompile.same_bytecode` and the selection's shapes compare them), and
a tree of the mutant is the reference's with the run's statements replaced
(:func:`spliced_tree`).  A chunk but the module's first is read after a ``pass`` line, so
that a string statement opening it stays a statement, not the module's docstring; a change
at or before a ``__future__`` import, a chunk naming one, a file with a coding declaration, or
a text that does not parse is read whole, as before.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

_LEAD = b"pass\n"  # before each chunk: no statement of it can be a docstring


@dataclass(frozen=True)
class Block:
    """Statements ``first``..``last`` (indices into the module's body) of the reference,
    on lines ``start``..``end``, and those lines of both texts (after a ``pass`` line, unless
    the block opens the module)."""

    first: int
    last: int
    start: int
    end: int
    before: bytes
    after: bytes


@functools.lru_cache(maxsize=16)
def _statements(source: bytes) -> tuple[tuple[int, int], ...] | None:
    """Each top-level statement's first line (its first decorator's) and last line, from the
    first statement after the module's ``__future__`` imports (those before are ``(0, 0)``: a
    change there, or to the docstring before them, can make them misplaced), or None when the
    text does not parse or declares its coding (cached: a score reads every mutant of a module
    against one reference text)."""
    if b"coding" in b"\n".join(source.splitlines()[:2]):
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    future = max(
        (
            i
            for i, stmt in enumerate(tree.body)
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        ),
        default=-1,
    )
    found = []
    for i, stmt in enumerate(tree.body):
        decorators = getattr(stmt, "decorator_list", ())
        first = min([stmt.lineno, *(d.lineno for d in decorators)])
        found.append((0, 0) if i <= future else (first, stmt.end_lineno or stmt.lineno))
    return tuple(found)


def changed_block(before: bytes, after: bytes) -> Block | None:
    """The block of top-level statements of ``before`` that holds every line ``after``
    changes, or None when the module must be read whole (see the module's doc)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    if len(old) != len(new) or before == after:
        return None
    changed = [n for n, (x, y) in enumerate(zip(old, new, strict=True), start=1) if x != y]
    spans = _statements(before)
    if not spans:
        return None
    low, high = changed[0], changed[-1]
    inside = [i for i, (start, end) in enumerate(spans) if end >= low and start <= high]
    if not inside:
        return None
    first, last = inside[0], inside[-1]
    start, end = spans[first][0], spans[last][1]
    if start == 0 or low < start or high > end:
        return None  # a changed line outside the statements (a comment between them)
    if first > 0 and spans[first - 1][1] >= start:
        return None  # ``a = 1; b = 2``: another statement on the block's first line
    if last + 1 < len(spans) and spans[last + 1][0] <= end:
        return None
    chunk_old = b"".join(old[start - 1 : end])
    chunk_new = b"".join(new[start - 1 : end])
    if b"__future__" in chunk_old or b"__future__" in chunk_new:
        return None
    if not chunk_old.endswith((b"\n", b"\r")):
        chunk_old, chunk_new = chunk_old + b"\n", chunk_new + b"\n"
    lead = _LEAD if first > 0 else b""  # the module's first statement may be its docstring
    return Block(first, last, start, end, lead + chunk_old, lead + chunk_new)


def spliced_tree(reference: ast.Module, block: Block) -> ast.Module | None:
    """The mutant's tree: ``reference`` (the tree of the block's ``before`` text, whole) with
    the block's statements replaced by the mutant's, at their lines; None when the mutant's
    chunk does not parse."""
    lead = 1 if block.first > 0 else 0  # the ``pass`` line before the chunk
    try:  # blank lines before it: its nodes at their lines, no walk to move them there
        chunk = ast.parse(b"\n" * max(0, block.start - 1 - lead) + block.after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = [*reference.body[: block.first], *chunk.body[lead:], *reference.body[block.last + 1 :]]
    return ast.Module(body=body, type_ignores=[])
