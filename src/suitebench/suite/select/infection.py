"""Which mutants the coverage run probes for infection (weak mutation), and where.

A mutant is probed when its patch changes one Python file of the package, and the two syntax
trees -- the reference's and the mutant's, positions aside -- are the same but for one binary
operator (``BinOp``) or the operator of a one-operator comparison (``Compare``), or but for
the value of one constant (a number, string, bool or None) that is an operand of either: what
the ``arithmetic``, ``comparison``, ``constant`` and ``string`` operators of ``build mutants``
write there, and any hand-written patch of that shape (an identity comparison's constant
aside: ``is`` depends on the object).  Then the mutant's program is the reference with that
node's operator or operand replaced, and :mod:`suitebench.suite.inside.probe.infection` can tell,
in the coverage run, which tests ever evaluate the node with a result the mutant would
change.  Selection (:func:`suitebench.suite.select.selection.select_tests`) runs only those among
the tests that reach the node; the others keep their reference outcome.

Probes are worked out for every mutant of the instance (not only those a score asks for), so
that the coverage run, keyed by them, serves every score of the instance.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.model.instance import MutantSpec
from suitebench.run.pyblocks import changed_block, spliced_tree
from suitebench.run.pycompile import warnings_ignored
from suitebench.suite.execute.patching import patched_sources
from suitebench.suite.inside.probe.defaults import DEFAULT_KIND, defaulted
from suitebench.suite.inside.probe.infection import OPERATORS

__all__ = ["Probes", "probes_for"]

# The operators of ``build mutants`` (``construct.python_ops``) that never write a lone BinOp
# or Compare change: their mutants are not tried.
_OTHER_OPERATORS = frozenset(
    {
        "assignment", "boolean", "unary", "return_value",
        "delete_statement", "remove_call", "slice_bound", "range_bound", "swap_arguments",
        "break_continue",
    }
)  # fmt: skip
# (site, file, line, col, end line, end col, kind, reference operator, mutant): kind the node
# type, the mutant its operator; or "BinOp.left" (.right, "Compare.left", ...), the mutant the
# constant in place of that operand (:func:`suitebench.suite.inside.probe.infection.install`); or
# "Default" at the function's ``def``, with the parameter's name and None
# (:func:`suitebench.suite.inside.probe.defaults.install_defaults`)
Probe = tuple[int, str, int, int, int, int, str, str, Any]
# The constants a probe carries (in JSON, into the sandbox): what the mutant's operand may be.
_CARRIED = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Probes:
    """The probes of one coverage run and the site of each probed mutant."""

    probes: tuple[Probe, ...] = ()
    sites: dict[str, int] = field(default_factory=dict)

    def is_default(self, site: int | None) -> bool:
        """``site`` probes a default argument (not an operator or operand)."""
        return (
            site is not None
            and 0 <= site < len(self.probes)
            and (self.probes[site][6] == DEFAULT_KIND)
        )

    def digest(self) -> str:
        text = json.dumps([list(p) for p in self.probes], separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class _NotOne(Exception):
    """The trees differ in more than one operator, or in anything else."""


def _parse(text: bytes) -> ast.Module | None:
    try:
        with warnings_ignored():
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _unchanged_lines(before: bytes, after: bytes) -> Callable[[ast.AST, ast.AST], bool] | None:
    """A test of whether two statements stand at the same place on lines the texts share (so
    their trees are equal: a statement's tree is its text's), when the texts have as many
    lines; None otherwise."""
    old, new = before.splitlines(), after.splitlines()
    if len(old) != len(new):
        return None
    differing = [0]  # differing[i]: how many of the first i lines differ
    for x, y in zip(old, new, strict=True):
        differing.append(differing[-1] + (x != y))

    def same(a: ast.AST, b: ast.AST) -> bool:
        if not isinstance(a, ast.stmt) or not isinstance(b, ast.stmt):
            return False
        where = (a.lineno, a.col_offset, a.end_lineno, a.end_col_offset)
        if where != (b.lineno, b.col_offset, b.end_lineno, b.end_col_offset):
            return False
        # A definition's decorators stand on lines before its own.
        start = min([a.lineno, *(d.lineno for d in getattr(a, "decorator_list", ()))])
        end = a.end_lineno if a.end_lineno is not None else len(old)
        return differing[end] == differing[start - 1]

    return same


def _one_change(
    before: ast.AST, after: ast.AST, same: Callable[[ast.AST, ast.AST], bool] | None = None
) -> tuple[ast.AST, str, ast.AST, ast.AST]:
    """The one place the trees differ: (the parent node, the field, the node in ``before``, in
    ``after``) -- an operator, or a constant's value; raises :class:`_NotOne` otherwise.
    ``same``: statements known equal without a walk (:func:`_unchanged_lines`)."""
    found: list[tuple[ast.AST, str, ast.AST, ast.AST]] = []

    def walk(a: Any, b: Any, parent: ast.AST | None, name: str) -> None:
        if isinstance(a, ast.AST) and isinstance(b, ast.AST):
            if same is not None and same(a, b):
                return
            if type(a) is not type(b):
                if _is_operator(a) and _is_operator(b) and isinstance(parent, ast.expr):
                    found.append((parent, name, a, b))
                    return
                raise _NotOne
            if isinstance(a, ast.Constant) and isinstance(b, ast.Constant) and parent is not None:
                if _same_constant(a, b):
                    return
                if a.kind != b.kind:
                    raise _NotOne
                found.append((parent, name, a, b))
                return
            for field in a._fields:
                walk(getattr(a, field, None), getattr(b, field, None), a, field)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                raise _NotOne
            for x, y in zip(a, b, strict=True):
                walk(x, y, parent, name)
        elif type(a) is not type(b) or a != b:
            raise _NotOne

    walk(before, after, None, "")
    if len(found) != 1:
        raise _NotOne
    return found[0]


def _same_constant(a: ast.Constant, b: ast.Constant) -> bool:
    return type(a.value) is type(b.value) and repr(a.value) == repr(b.value) and a.kind == b.kind


def _is_operator(node: ast.AST) -> bool:
    return isinstance(node, ast.operator | ast.cmpop)


def _probe_of(
    site: int,
    rel: str,
    before: ast.Module,
    after: ast.Module,
    defaults: bool = True,
    same: Callable[[ast.AST, ast.AST], bool] | None = None,
) -> Probe | None:
    try:
        node, field, old, new = _one_change(before, after, same)
    except _NotOne:
        return None
    if isinstance(node, ast.arguments) and isinstance(old, ast.Constant):
        return _default_probe(site, rel, before, node, old) if defaults else None
    if isinstance(old, ast.Constant) and isinstance(new, ast.Constant):
        return _constant_probe(site, rel, node, field, new.value)
    if isinstance(node, ast.BinOp):
        if node.op is not old:
            return None  # an augmented assignment's or another node's operator
    elif not (isinstance(node, ast.Compare) and len(node.ops) == 1 and node.ops[0] is old):
        return None
    old_name, new_name = type(old).__name__, type(new).__name__
    if old_name not in OPERATORS or new_name not in OPERATORS:
        return None
    return _located(site, rel, node, type(node).__name__, old_name, new_name)


def _constant_probe(site: int, rel: str, node: ast.AST, field: str, value: Any) -> Probe | None:
    """The probe of a constant operand of a BinOp or a one-operator Compare, replaced by
    ``value``."""
    if type(value) not in _CARRIED or (type(value) is float and not math.isfinite(value)):
        return None
    if isinstance(node, ast.BinOp) and field in ("left", "right"):
        op: ast.AST = node.op
        operand = field
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and field in ("left", "comparators"):
        op, operand = node.ops[0], "left" if field == "left" else "right"
    else:
        return None
    name = type(op).__name__
    if name not in OPERATORS or name in ("Is", "IsNot"):
        return None
    return _located(site, rel, node, f"{type(node).__name__}.{operand}", name, value)


def _default_probe(
    site: int, rel: str, tree: ast.Module, args: ast.arguments, default: ast.Constant
) -> Probe | None:
    """The probe of a constant default of a function defined on import (at module level or
    in a module-level class: :mod:`suitebench.suite.inside.probe.defaults`)."""
    functions = ast.FunctionDef | ast.AsyncFunctionDef
    owners = [s for s in tree.body if isinstance(s, functions)]
    for cls in (s for s in tree.body if isinstance(s, ast.ClassDef)):
        owners += [s for s in cls.body if isinstance(s, functions)]
    owner = next((f for f in owners if f.args is args), None)
    if owner is None:
        return None
    parameter = next((a.arg for a, d in defaulted(args) if d is default), None)
    if parameter is None:
        return None
    return _located(site, rel, owner, DEFAULT_KIND, parameter, None)


def _reads_defaults(roots: Iterable[Path]) -> bool:
    """Whether a Python file under ``roots`` names a function's defaults (reads or writes them
    past ``inspect``, which the default probes watch)."""
    for root in roots:
        for path in root.rglob("*.py"):
            try:
                text = path.read_bytes()
            except OSError:
                return True
            if b"__defaults__" in text or b"__kwdefaults__" in text:
                return True
    return False


def _located(site: int, rel: str, node: ast.AST, kind: str, old: str, new: Any) -> Probe | None:
    line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
    end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if line is None or col is None or end_line is None or end_col is None:
        return None
    return (site, rel, line, col, end_line, end_col, kind, old, new)


def probes_for(root: Path, mutants: Iterable[MutantSpec], suite: Path | None = None) -> Probes:
    """The probes for ``mutants`` against the reference tree at ``root`` (the coverage run's
    root: patch paths are relative to it); no default probes where the tree or the ``suite``
    names ``__defaults__``."""
    defaults = not _reads_defaults([root] if suite is None else [root, suite])
    parsed: dict[str, ast.Module | None] = {}
    probes: list[Probe] = []
    sites: dict[str, int] = {}
    for mutant in mutants:
        if mutant.operator in _OTHER_OPERATORS:
            continue  # build mutants says what it changed: not an operator of this shape
        try:
            diff = mutant.patch.read_bytes()
        except OSError:
            continue
        files = patched_sources(root, diff)
        if files is None or len(files) != 1:
            continue
        ((rel, (text, patched)),) = files.items()
        if not rel.endswith(".py"):
            continue
        if rel not in parsed:
            parsed[rel] = _parse(text)
        before = parsed[rel]
        if before is None:
            continue
        block = changed_block(text, patched)  # the changed statements alone, where it can
        if block is None:
            after = _parse(patched)
        else:
            with warnings_ignored():
                after = spliced_tree(before, block)
        if after is None:
            continue
        same = _unchanged_lines(text, patched)
        probe = _probe_of(len(probes), rel, before, after, defaults, same)
        if probe is not None:
            sites[mutant.id] = probe[0]
            probes.append(probe)
    return Probes(tuple(probes), sites)
