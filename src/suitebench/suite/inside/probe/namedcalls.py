"""Where ``getattr(obj, NAME)``-like calls name their attribute by constants (import-time
impact, :mod:`suitebench.suite.inside.probe.impact`).

``getattr(m, "NAME")`` reads ``NAME`` as ``m.NAME`` does; so does a choice between constants
(``getattr(m, "A" if c else "B")``), and a loop variable over a literal sequence of constant
names (``for option in ("algorithm", "backend"): getattr(args, option)``, as python-slugify's
command line copies its options): whatever the loop's turn, the name is one of those.  A loop
variable counts only in the loop's own body (not its ``else``, nor a function, lambda or class
defined in it, which may run later), and only where nothing in the body binds that name again
(an assignment, ``del``, ``global``/``nonlocal``, an ``import ... as``, ``except ... as``, a
walrus, a nested loop, a ``def`` or ``class`` of that name).  A comprehension's variable over
such a sequence counts in the comprehension (Python forbids rebinding it there).  Anything
else is a read by a computed name.

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import ast
import os

NAMED_BY_ARGUMENT = frozenset({"getattr", "hasattr", "setattr", "delattr"})

# filename -> (its size and modification time, where its constant-named calls are)
_SITES: dict[str, tuple[tuple[int, int], dict[tuple[int, int], frozenset[str]]]] = {}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = (*_DEFINITIONS, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
Choices = dict[str, frozenset[str]]


def choices(node: ast.expr, env: Choices | None = None) -> frozenset[str] | None:
    """The strings an expression can be when it is a string constant, a choice between such
    (``"A" if c else "B"``) or a variable ``env`` knows; None for anything computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset({node.value})
    if isinstance(node, ast.IfExp):
        body, orelse = choices(node.body, env), choices(node.orelse, env)
        return None if body is None or orelse is None else body | orelse
    if isinstance(node, ast.Name) and env:
        return env.get(node.id)
    return None


def _literal_names(node: ast.expr) -> frozenset[str] | None:
    """The names a literal tuple, list or set of identifier strings holds; else None."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
        return None
    found: set[str] = set()
    for elt in node.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        found.add(elt.value)
    return frozenset(found)


def _rebinds(body: list[ast.stmt], name: str) -> bool:
    """Whether anything in ``body`` (nested scopes included) can bind ``name`` again."""
    for stmt in body:
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Name)
                and node.id == name
                and not isinstance(node.ctx, ast.Load)
            ):
                return True
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return True
            if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
                return True
            if isinstance(node, ast.ExceptHandler) and node.name == name:
                return True
            if isinstance(node, _DEFINITIONS) and node.name == name:
                return True
            if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
                return True
            if isinstance(node, ast.MatchMapping) and node.rest == name:
                return True
    return False


def _visit(node: ast.AST, env: Choices, sites: dict[tuple[int, int], frozenset[str]]) -> None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        call = node.func
        if (
            call.id in NAMED_BY_ARGUMENT
            and not node.keywords
            and len(node.args) >= 2
            and not any(isinstance(arg, ast.Starred) for arg in node.args)
        ):
            found = choices(node.args[1], env)
            if found is not None and all(name.isidentifier() for name in found):
                sites[(call.lineno, call.col_offset)] = found
    if isinstance(node, _SCOPES):  # runs when called, maybe after the loop moved on
        env = {}
    if isinstance(node, (ast.For, ast.AsyncFor)):
        _visit(node.target, env, sites)
        _visit(node.iter, env, sites)
        inner = env
        names = _literal_names(node.iter)
        if isinstance(node.target, ast.Name) and names is not None:
            if not _rebinds(node.body, node.target.id):
                inner = {**env, node.target.id: names}
            else:
                inner = {k: v for k, v in env.items() if k != node.target.id}
        elif isinstance(node.target, ast.AST):
            bound = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            inner = {k: v for k, v in env.items() if k not in bound}
        for stmt in node.body:
            _visit(stmt, inner, sites)
        for stmt in node.orelse:  # an outer loop's variable is bound nowhere in its body
            _visit(stmt, env, sites)
        return
    if isinstance(node, _COMPREHENSIONS):
        inner = dict(env)
        for gen in node.generators:
            _visit(gen.iter, inner, sites)
            names = _literal_names(gen.iter)
            bound = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            inner = {k: v for k, v in inner.items() if k not in bound}
            if isinstance(gen.target, ast.Name) and names is not None:
                inner[gen.target.id] = names
            for cond in gen.ifs:
                _visit(cond, inner, sites)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            _visit(part, inner, sites)
        return
    for child in ast.iter_child_nodes(node):
        _visit(child, env, sites)


def constant_sites(filename: str) -> dict[tuple[int, int], frozenset[str]]:
    """Where in a source file ``getattr(obj, NAME)``-like calls name their attribute by
    constants: the (line, column) of the called name -> the names (empty when the file cannot
    be read: every such call then counts as a read by a computed name)."""
    try:
        info = os.stat(filename)
    except (OSError, ValueError):
        return {}
    stamp = (info.st_size, info.st_mtime_ns)
    known = _SITES.get(filename)
    if known is not None and known[0] == stamp:
        return known[1]
    sites: dict[tuple[int, int], frozenset[str]] = {}
    try:
        with open(filename, "rb") as fh:
            tree: ast.AST | None = ast.parse(fh.read(), filename)
    except (OSError, SyntaxError, ValueError, RecursionError):
        tree = None
    if tree is not None:
        try:
            _visit(tree, {}, sites)
        except RecursionError:  # a pathologically nested source: every call is computed
            sites = {}
    _SITES[filename] = (stamp, sites)
    return sites
