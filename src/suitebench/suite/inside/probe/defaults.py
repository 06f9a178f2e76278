"""Weak mutation of a default argument: which tests call the function *with* the default.

A mutant that changes one constant default of a function defined once, on import (at module
level or in a module-level class: ``def slugify(text, entities=True)`` -> ``entities=False``),
changes nothing but that function's ``__defaults__`` (or ``__kwdefaults__``).  A call that
passes the argument runs alike on the reference and on the mutant; only a call that leaves
it to the default, or code reading the defaults themselves, can tell the two apart.  So while
the reference's coverage run imports the program, each probed function starts with a call of
a probe that notes the mutant's site as infected, in the context running now, when the
parameter holds a value equal to the default (of its exact type: the default itself, or an
argument passed that equals it -- counted too, so a probe can only keep a test out that never
left the parameter to its default).  Reading the defaults is caught where Python reads them:
``inspect.signature`` and everything built on it go through ``inspect._signature_from_function``,
which is watched to note every probed site of the function it is given.  Where that function
does not exist (another Python), no default probe is installed.  The host leaves out default
probes for a program or suite whose source names ``__defaults__`` or ``__kwdefaults__``
(:mod:`suitebench.suite.select.infection`).

Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from suitebench.suite.inside.probe.infection import INFECTED, same

DEFAULT_PROBE = "__suitebench_default__"
DEFAULT_KIND = "Default"
# The probed sites of each function, by (the file relative to the root, its first line as the
# code object has it: its first decorator's, else its ``def``'s).
_SITES: dict[tuple[str, int], list[int]] = {}
_WATCHING: list[bool] = []


def make_default_probe(note: Callable[[str, int], None]) -> Callable[[int, Any, Any], None]:
    """The probe a probed function calls first; ``note(INFECTED, site)`` records an infection."""

    def probe(site: int, value: Any, default: Any) -> None:
        if value is default or (type(value) is type(default) and same(value, default)):
            note(INFECTED, site)

    return probe


def watch_signatures(note: Callable[[str, int], None]) -> bool:
    """Note every probed site of a function whose signature ``inspect`` computes; False when
    this Python's ``inspect`` has no ``_signature_from_function`` to watch."""
    if _WATCHING:
        return True
    import inspect

    original = getattr(inspect, "_signature_from_function", None)
    if original is None:
        return False

    def watched(cls: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        code = getattr(func, "__code__", None)
        filename = getattr(code, "co_filename", "")
        for (rel, first), sites in _SITES.items():
            if getattr(code, "co_firstlineno", None) == first and _is_file(filename, rel):
                for site in sites:
                    note(INFECTED, site)
        return original(cls, func, *args, **kwargs)

    inspect._signature_from_function = watched  # type: ignore[attr-defined]
    _WATCHING.append(True)
    return True


def _is_file(filename: str, rel: str) -> bool:
    return filename == rel or filename.endswith("/" + rel)


def install_defaults(tree: ast.Module, rel: str, probes: Iterable[list[Any]]) -> set[int]:
    """Start each probed function of ``tree`` (one module's, the file ``rel``) with its probe,
    in place; the sites installed.  A probe is ``[site, file, line, col, end_line, end_col,
    "Default", parameter, None]``, the position the function's ``def``; one whose function is
    not found at module or module-level class level, or whose default there is not a constant,
    is left out (and all are, unless signatures are watched)."""
    wanted: dict[tuple[int, int, int, int], list[tuple[int, str]]] = {}
    for site, _, line, col, end_line, end_col, kind, parameter, _ in probes:
        if kind == DEFAULT_KIND:
            wanted.setdefault((line, col, end_line, end_col), []).append((int(site), parameter))
    if not wanted or not _WATCHING:
        return set()
    installed: set[int] = set()
    for node in _defined_on_import(tree):
        key = (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
        calls = []
        for site, parameter in wanted.get(key, ()):
            default = _default_of(node.args, parameter)
            if default is None:
                continue
            call = ast.Call(
                ast.Name(DEFAULT_PROBE, ast.Load()),
                [ast.Constant(site), ast.Name(parameter, ast.Load()), ast.Constant(default.value)],
                [],
            )
            calls.append(ast.Expr(call))
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            _SITES.setdefault((rel, first), []).append(site)
            installed.add(site)
        if calls:
            at = 1 if ast.get_docstring(node, clean=False) is not None else 0
            where = node.body[at] if at < len(node.body) else node.body[-1]
            node.body[at:at] = [
                ast.fix_missing_locations(ast.copy_location(c, where)) for c in calls
            ]
    return installed


def _defined_on_import(tree: ast.Module) -> Iterable[ast.FunctionDef | ast.AsyncFunctionDef]:
    functions = ast.FunctionDef | ast.AsyncFunctionDef
    for stmt in tree.body:
        if isinstance(stmt, functions):
            yield stmt
        elif isinstance(stmt, ast.ClassDef):
            yield from (s for s in stmt.body if isinstance(s, functions))


def defaulted(args: ast.arguments) -> list[tuple[ast.arg, ast.expr]]:
    """Each parameter of ``args`` that has a default, with its default's expression."""
    positional = [*args.posonlyargs, *args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    pairs = list(zip(with_default, args.defaults, strict=True))
    keywords = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    return pairs + [(a, d) for a, d in keywords if d is not None]


def _default_of(args: ast.arguments, parameter: str) -> ast.Constant | None:
    for arg, default in defaulted(args):
        if arg.arg == parameter:
            return default if isinstance(default, ast.Constant) else None
    return None
