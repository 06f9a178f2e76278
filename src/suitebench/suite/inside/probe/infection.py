"""Weak mutation in the coverage run: which tests *infect* an operator mutant.

A test can kill a mutant only if it reaches the changed code, the change infects the state
there (the mutated expression's value differs from the reference's), and the difference
propagates to what the test checks.  Coverage-guided selection uses the first; this module
adds the second for the commonest operator mutants: one binary operator (``a + b`` ->
``a - b``) or the one operator of a comparison (``a < b`` -> ``a <= b``) replaced, or one
constant operand of either (``kind == 'auto'`` -> ``kind == 'XXautoXX'``, ``n > 0`` ->
``n > 1``), nothing else of the module changed (the host checks that on the two syntax trees,
:mod:`suitebench.suite.select.infection`).

While the reference's coverage run imports the program, each such node is compiled as a call
of a *probe* that evaluates the operands once, in the same order, computes the reference's
result exactly as the operator does (``operator.add`` is ``+``, ``__radd__`` and all) and
returns it; beside it, the probe computes each probed mutant's result (its operator, or its
constant in place of the reference's operand) and notes the mutant's
site as infected, in the context running now (the test, a shared fixture, outside any test,
or the test that started this process), unless the two results are provably the same:
both operands are plain numbers, strings or bytes (exact types: no user code can run), the
mutant's operator does not raise, and the results are of one type and equal (floats by
``repr``: ``-0.0`` is not ``0.0``).  Anything else -- an operand of another type, an
exception, an operation that could be costly (a power, a left shift by a large count, a
repeated string) -- counts as infected, so a probe can only keep a test that cannot see the
mutant out of its selection.  A test that never infects the mutant runs exactly as on the
reference (the program is deterministic, as validity assumes) and keeps its reference outcome.

Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from typing import Any

PROBE = "__suitebench_probe__"
# Infections are noted as the statements of this pseudo-file, one "line" per site.
INFECTED = "<infection>"

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add,
    "Sub": operator.sub,
    "Mult": operator.mul,
    "Div": operator.truediv,
    "FloorDiv": operator.floordiv,
    "Mod": operator.mod,
    "Pow": operator.pow,
    "LShift": operator.lshift,
    "RShift": operator.rshift,
    "BitAnd": operator.and_,
    "BitOr": operator.or_,
    "BitXor": operator.xor,
    "MatMult": operator.matmul,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
    "Is": operator.is_,
    "IsNot": operator.is_not,
}
OPERATORS = {**_BINARY, **_COMPARE}
_PLAIN = frozenset({int, float, bool, complex, str, bytes, type(None)})
_TEXT = frozenset({str, bytes})


def _costly(after: str, left: Any, right: Any) -> bool:
    """Whether computing the mutant's result could take long or much memory."""
    if after in ("Pow", "MatMult"):
        return True
    if after == "LShift":
        integers = (int, bool)
        if type(left) not in integers or type(right) not in integers:
            return True
        return not 0 <= right <= 4096 or abs(left).bit_length() > 65536
    if after in ("Mult", "Mod"):
        return type(left) in _TEXT or type(right) in _TEXT
    return False


def same(a: Any, b: Any) -> bool:
    """The same plain value: of one type and equal (floats by ``repr``)."""
    if type(a) is not type(b):
        return False
    if type(a) in (float, complex):
        return repr(a) == repr(b)
    return bool(a == b)


def _unchanged(after: str, left: Any, right: Any, result: Any) -> bool:
    """Whether the mutant's operator on its operands provably gives the reference's ``result``."""
    if type(left) not in _PLAIN or type(right) not in _PLAIN or _costly(after, left, right):
        return False
    try:
        other = OPERATORS[after](left, right)
    except Exception:
        return False
    return same(result, other)


# A mutant's alternative: (site, its operator, the operand its constant replaces or "", the
# constant).  An operator mutant replaces no operand.
Alternative = tuple[int, str, str, Any]


def make_probe(note: Callable[[str, int], None]) -> Callable[..., Any]:
    """The probe the instrumented code calls; ``note(INFECTED, site)`` records an infection."""

    def probe(alternatives: tuple[Alternative, ...], before: str, left: Any, right: Any) -> Any:
        try:
            result = OPERATORS[before](left, right)
        except BaseException:
            for site, *_ in alternatives:
                note(INFECTED, site)
            raise
        for site, after, operand, constant in alternatives:
            mutant_left = constant if operand == "left" else left
            mutant_right = constant if operand == "right" else right
            if not _unchanged(after, mutant_left, mutant_right, result):
                note(INFECTED, site)
        return result

    return probe


def _key(node: ast.AST, op: ast.AST) -> tuple[Any, ...]:
    return (
        getattr(node, "lineno", None),
        getattr(node, "col_offset", None),
        getattr(node, "end_lineno", None),
        getattr(node, "end_col_offset", None),
        type(node).__name__,
        type(op).__name__,
    )


class _Install(ast.NodeTransformer):
    def __init__(self, wanted: dict[tuple[Any, ...], list[Alternative]]) -> None:
        self.wanted = wanted
        self.installed: set[int] = set()

    def _wrap(self, node: ast.expr, op: ast.AST, left: ast.expr, right: ast.expr) -> ast.expr:
        alternatives = self.wanted.get(_key(node, op))
        if not alternatives:
            return node
        self.installed.update(site for site, *_ in alternatives)
        call = ast.Call(
            ast.Name(PROBE, ast.Load()),
            [
                ast.Tuple(  # folded into one constant by the compiler
                    [
                        ast.Tuple([ast.Constant(part) for part in alternative], ast.Load())
                        for alternative in alternatives
                    ],
                    ast.Load(),
                ),
                ast.Constant(type(op).__name__),
                left,
                right,
            ],
            [],
        )
        return ast.fix_missing_locations(ast.copy_location(call, node))

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        return self._wrap(node, node.op, node.left, node.right)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        return self._wrap(node, node.ops[0], node.left, node.comparators[0])


def install(tree: ast.Module, probes: Iterable[list[Any]]) -> set[int]:
    """Compile each probed node of ``tree`` (one module's) as a call of the probe, in place;
    the sites installed.  A probe is ``[site, file, line, col, end_line, end_col, kind,
    reference operator, mutant]`` (the file already matched by the caller): ``kind`` ``BinOp``
    or ``Compare`` with the mutant's operator, or ``BinOp.left``, ``BinOp.right``,
    ``Compare.left``, ``Compare.right`` with the mutant's constant in place of that operand (a
    number, string, bool or None).  One whose node is not found, or whose operators are
    unknown, is left out."""
    wanted: dict[tuple[Any, ...], list[Alternative]] = {}
    for site, _, line, col, end_line, end_col, kind, before, after in probes:
        node_type, _, operand = str(kind).partition(".")
        if before not in OPERATORS or node_type not in ("BinOp", "Compare"):
            continue
        if operand:  # a constant operand replaced: the operator stays
            if operand not in ("left", "right") or type(after) not in _PLAIN:
                continue
            if before in ("Is", "IsNot"):  # identity: the mutant's own constant object decides
                continue
            alternative: Alternative = (int(site), str(before), operand, after)
        elif after in OPERATORS:
            alternative = (int(site), str(after), "", None)
        else:
            continue
        wanted.setdefault((line, col, end_line, end_col, node_type, before), []).append(alternative)
    if not wanted:
        return set()
    installer = _Install(wanted)
    installer.visit(tree)
    return installer.installed
