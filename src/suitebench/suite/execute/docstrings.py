"""The reference package's docstring examples, read from its source without running it.

A project whose pytest collects its modules' doctests (``--doctest-modules``) has them in its
suite: ``paging/__init__.py::paging.page_count`` is a test like any other, and R holds a
candidate implementation to it.  But the candidate's docstrings are its own -- an
implementation that wrote ``>>> page_count(11, 5)`` / ``2`` into its docstring would pass a
doctest it wrote itself -- so R's runs take the examples from the reference's docstrings and
run each in the namespace of the module of that name the run imports (the reference's in the
reference's runs, the candidate's in its own): :mod:`suitebench.suite.inside.doctests`.

The docstrings are found as :class:`doctest.DocTestFinder` finds them on the imported module:
the module's own, its classes' and functions' at the top level, and recursively those of a
class's methods, properties and nested classes; each named as the finder names it
(``paging.Pager.next``).  A property's setter or deleter is not a new test (the property keeps
its getter's docstring), and of two definitions of one name the last stands, as on import.
"""

from __future__ import annotations

import ast
import doctest
from pathlib import Path
from typing import Any

__all__ = ["FILE_NAME", "docstring_examples"]

# The file, staged beside the suite, the runs read the reference's examples from.
FILE_NAME = "suitebench-doctests.json"

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _is_accessor(node: _Definition) -> bool:
    """``@x.setter`` or ``@x.deleter``: the same property, not a new object."""
    return any(
        isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
        for d in node.decorator_list
    )


def _has_examples(text: str) -> bool:
    try:
        return bool(doctest.DocTestParser().get_examples(text))
    except ValueError:  # malformed: the finder raises too, and the run reports it as pytest does
        return True


def _docstrings(body: list[ast.stmt], prefix: str) -> dict[str, tuple[int, str]]:
    """Dotted name -> (0-based line, docstring) of the definitions in ``body``, recursively
    through classes."""
    found: dict[str, tuple[int, str]] = {}
    for node in body:
        if not isinstance(node, _Definition) or _is_accessor(node):
            continue
        name = f"{prefix}.{node.name}"
        for key in [k for k in found if k == name or k.startswith(f"{name}.")]:
            del found[key]  # redefined: the last definition stands
        text = ast.get_docstring(node, clean=False)
        if text is not None:  # the docstring's own line, as the finder reports it (0-based)
            found[name] = (node.body[0].lineno - 1, text)
        if isinstance(node, ast.ClassDef):
            found |= _docstrings(node.body, name)
    return found


def docstring_examples(package_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Module name -> its docstrings that hold examples (``name``, ``lineno``, ``docstring``),
    for every module of the package in ``package_dir``; a module that does not parse has
    none (the reference's own runs fail on it first)."""
    modules: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not all(p.isidentifier() for p in parts):
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        module = ".".join(parts)
        found = _docstrings(tree.body, module)
        text = ast.get_docstring(tree, clean=False)
        if text is not None:
            found[module] = (0, text)
        entries = [
            {"name": name, "lineno": line, "docstring": doc}
            for name, (line, doc) in sorted(found.items())
            if _has_examples(doc)
        ]
        if entries:
            modules[module] = entries
    return modules
