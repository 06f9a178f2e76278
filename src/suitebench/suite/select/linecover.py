"""Statement-level selection: a test that entered a mutant's function but never ran the
statement it changes cannot tell the mutant from the reference.

The mutant and the reference run alike until the mutant first runs a changed statement; a test
that never ran that statement on the reference never runs it on the mutant either, so its
outcome is the reference's.  This holds when nothing but the changed statements differs between
the two programs' code -- checked here by compiling both and comparing every function's code
object in all but its statements: the same names of locals, cells and free variables, the same
flags (a ``yield`` removed turns a generator into a function; an assignment removed turns a
local into a global for the whole function), the same arguments and first lines.  Where that
does not hold, or a line is not inside a statement of a function body, or the coverage run
recorded no statements (a C program's gcov, an older record), selection stays at the function.

A changed line maps to the innermost statement holding it (a continuation line to its
statement, an ``else:``, ``except X:`` or ``finally:`` line to the compound statement), whose
first line is what the tracer notes (:mod:`suitebench.suite.inside.probe.tracer`).  Lines a hunk
puts in place of removed ones stand where those stood (their statements run where the removed ones
ran) unless they are indented out of the innermost statement's block; any other inserted line
is the function's.
"""

from __future__ import annotations

import ast
import functools
from types import CodeType

from suitebench.run.pyblocks import changed_block
from suitebench.run.pycompile import warnings_ignored

# The innermost statement of a function body that holds each line: (first, last, column, key)
Statement = tuple[int, int, int, int]


def statements(source: str) -> list[Statement]:
    """Every statement inside a function body (nested blocks included), with its span from
    its first decorator to its last line; the key is its first line (``lineno``)."""
    out: list[Statement] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in node.body:
            for stmt in ast.walk(inner):
                if isinstance(stmt, ast.stmt):
                    decorators = getattr(stmt, "decorator_list", ())
                    first = min([stmt.lineno, *(d.lineno for d in decorators)])
                    out.append(
                        (first, stmt.end_lineno or stmt.lineno, stmt.col_offset, stmt.lineno)
                    )
    return out


def innermost(spans: list[Statement], line: int) -> Statement | None:
    best: Statement | None = None
    for span in spans:
        if span[0] <= line <= span[1] and (best is None or span[1] - span[0] < best[1] - best[0]):
            best = span
    return best


def _shape(code: CodeType) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = []
    stack = [code]
    while stack:
        current = stack.pop()
        found.append(
            (
                current.co_name,
                current.co_firstlineno,
                current.co_argcount,
                current.co_posonlyargcount,
                current.co_kwonlyargcount,
                current.co_flags,
                current.co_varnames,
                current.co_cellvars,
                current.co_freevars,
            )
        )
        stack.extend(c for c in current.co_consts if isinstance(c, CodeType))
    return sorted(found, key=repr)


Shape = list[tuple[object, ...]]


def shape_of(text: bytes, path: str) -> Shape | None:
    """Every function's code object of a module in all but its statements (None: it does not
    compile)."""
    try:
        with warnings_ignored():  # a mutant's SyntaxWarning is the run's to show
            return _shape(compile(text, path, "exec", dont_inherit=True))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def same_shape(before: bytes, after: bytes, path: str, reference: Shape | None = None) -> bool:
    """Both texts compile, and their functions differ in nothing but their statements
    (``reference``: ``before``'s shape, already worked out)."""
    block = changed_block(before, after)
    if block is not None:  # the changed statements alone (:mod:`suitebench.run.pyblocks`)
        old, new = _block_shape(block.before, path), shape_of(block.after, path)
        if old is not None and new is not None:
            return old == new
    first = reference if reference is not None else shape_of(before, path)
    return first is not None and first == shape_of(after, path)


@functools.lru_cache(maxsize=256)
def _block_shape(text: bytes, path: str) -> Shape | None:
    return shape_of(text, path)
