"""Changes inside lambdas outside any function: a body that runs when called, not on import.

A line outside every ``def`` is code the module runs on import -- unless the change on it lies
in the body of a ``lambda`` (a table of formatters, ``key=lambda ...`` stored in a class): the
lambda's arguments and defaults are evaluated where it is written, its body only when it is
called.  Lines cannot tell the two apart (``"%d": lambda t: "%02d" % t.day`` holds a key, a
lambda header and a body), so this compares the two texts of the module as syntax trees: with
every lambda body and every function body set aside, they must be the same tree; then the
change lies in the bodies, and the lambdas whose bodies differ are named by their first line,
the key coverage records them by (a lambda's ``co_firstlineno``,
:mod:`suitebench.suite.inside.probe.tracer`).  Whether a changed lambda runs on import (a
``sorted(..., key=lambda ...)`` at module level) is then coverage's to say, as for a function.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from suitebench.run.pycompile import warnings_ignored
from suitebench.suite.execute.patching import patched_sources

# A changed lambda: its key (first line, as coverage records it) and its last line.
Changed = tuple[int, int]


class _SetAside(ast.NodeTransformer):
    """Replaces every lambda body by a placeholder, noting it, and every function body after
    its docstring (a function's own changes are told by its lines); the rest is left as is:
    decorators, arguments and defaults are evaluated where they are written."""

    def __init__(self) -> None:
        self.bodies: list[tuple[int, int, str]] = []

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.bodies.append((node.lineno, node.end_lineno or node.lineno, ast.dump(node.body)))
        node.body = ast.Constant(None)
        return node

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        docstring = ast.get_docstring(node, clean=False) is not None
        node.body = [*node.body[: 1 if docstring else 0], ast.Pass()]
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function


@functools.lru_cache(maxsize=16)
def _set_aside(text: bytes) -> tuple[str, tuple[tuple[int, int, str], ...]] | None:
    """The module's tree with every lambda and function body set aside, and those bodies
    (cached: a score checks every mutant of a module against its reference text)."""
    try:
        with warnings_ignored():  # a mutant's SyntaxWarning is its run's to show
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    aside = _SetAside()
    tree = aside.visit(tree)
    return ast.dump(tree), tuple(aside.bodies)


def changed_lambdas(before: bytes, after: bytes) -> list[Changed] | None:
    """The lambdas of ``before`` whose bodies ``after`` changes, when nothing but lambda and
    function bodies differs between the two (None otherwise, or when either does not parse)."""
    old, new = _set_aside(before), _set_aside(after)
    if old is None or new is None or old[0] != new[0] or len(old[1]) != len(new[1]):
        return None
    return [(o[0], o[1]) for o, n in zip(old[1], new[1], strict=True) if o[2] != n[2]]


def lambda_holding(changed: list[Changed], line: int) -> int | None:
    """The key of the innermost changed lambda whose lines hold ``line`` (None: none does)."""
    holding = [c for c in changed if c[0] <= line <= c[1]]
    if not holding:
        return None
    return min(holding, key=lambda c: c[1] - c[0])[0]


def lambda_key(
    source_root: Path | None,
    patch: str,
    path: str,
    line: int,
    found: dict[str, list[Changed] | None],
) -> int | None:
    """The key of the changed lambda whose body holds ``line`` of ``path`` (a line outside
    any function), when the patch changes nothing else there but function bodies; None
    otherwise.  ``found`` keeps each file's answer for the patch's other lines."""
    if not path.endswith(".py") or source_root is None:
        return None
    if path not in found:
        texts = patched_sources(source_root, patch.encode("utf-8"))
        pair = None if texts is None else texts.get(path)
        found[path] = None if pair is None else changed_lambdas(*pair)
    changed = found[path]
    return None if changed is None else lambda_holding(changed, line)
