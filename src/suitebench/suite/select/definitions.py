"""The definitions of a Python tree, each with a digest of its text and the names it uses.

Incremental scoring (:mod:`suitebench.suite.select.reuse`) asks of an edit which code it changed and
what could reach that code.  A *definition* is a function or method (with what nests in it),
or a class without its methods; the rest of a module is its *module-level code*.  A
definition's digest is over its syntax tree without positions (its docstring included: a
doctest or ``__doc__`` reads it), and so is the module-level code's: comments, blank lines and
where the code sits change no digest, every statement, expression and name does.

What may reach a definition is answered by names, conservatively: code that uses a name (a
variable, an attribute, an argument -- a pytest fixture is reached through its parameter's
name -- or a string that reads as one, for ``getattr``) may reach every definition so named,
and reaching a class reaches all its methods (its operators, ``__init__``, ``__eq__`` run
without being named).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suitebench.run.tree import walk

MODULE = "<module>"  # the qualified name of a module's module-level code


@dataclass(frozen=True)
class Definition:
    """A function, method or class (without its methods) of one file."""

    key: str  # "path::Qualified.name"; "path::<module>" for the module-level code
    name: str  # the name code refers to it by ("" for module-level code)
    digest: str
    uses: frozenset[str]
    first: int  # its first line (the first decorator's), its last
    last: int
    decorated: bool = False
    # A digest of its exact text (comments and all), to skip re-reading what is byte for byte
    # the same (:func:`file_definitions`' ``like``); not kept in a snapshot.
    source: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "digest": self.digest,
            "uses": sorted(self.uses),
            "lines": [self.first, self.last],
            "decorated": self.decorated,
        }

    @classmethod
    def from_dict(cls, key: str, d: Mapping[str, Any]) -> Definition:
        first, last = d["lines"]
        return cls(
            key=key,
            name=d["name"],
            digest=d["digest"],
            uses=frozenset(d["uses"]),
            first=first,
            last=last,
            decorated=d["decorated"],
        )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _names(nodes: Iterable[ast.AST]) -> frozenset[str]:
    """Every name the nodes use: variables, attributes, arguments, imported names and keyword
    arguments, and strings that read as names (``getattr(obj, "name")``)."""
    found: set[str] = set()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, ast.arg | ast.keyword):
                found.add(node.arg or "")
            elif isinstance(node, ast.alias):
                found.update((node.asname or node.name).split("."))
                found.update(node.name.split("."))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(w for w in node.value.replace(".", " ").split() if w.isidentifier())
    return frozenset(found)


_Def = ast.FunctionDef | ast.AsyncFunctionDef


def file_definitions(
    path: str, text: str, like: Mapping[str, Definition] | None = None
) -> dict[str, Definition] | None:
    """The definitions of one Python file (None: it does not parse).  ``like``: the same
    file's definitions in another version (a mutant's reference): a definition whose text is
    byte for byte the same there is taken from it, not read again."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    all_lines = text.splitlines(keepends=True)
    lines = text.count("\n") + 1
    out: dict[str, Definition] = {}
    known = like or {}

    def same(key: str, first: int, last: int, holes: list[tuple[int, int]] = []) -> str:  # noqa: B006
        kept = [
            line
            for n, line in enumerate(all_lines[first - 1 : last], first)
            if not any(a <= n <= b for a, b in holes)
        ]
        digest = _digest("".join(kept))
        if key in known and known[key].source == digest:
            out[key] = replace(known[key], first=first, last=last)
        return digest

    def span(node: ast.AST) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
        return first, node.end_lineno or node.lineno  # type: ignore[attr-defined]

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, _Def):
                first, last = span(node)
                key = f"{path}::{prefix}{node.name}"
                source = same(key, first, last)
                if key in out:
                    continue
                out[key] = Definition(
                    key,
                    node.name,
                    _digest(ast.dump(node, include_attributes=False)),
                    _names([node]),
                    first,
                    last,
                    bool(node.decorator_list),
                    source,
                )
            elif isinstance(node, ast.ClassDef):
                first, last = span(node)
                key = f"{path}::{prefix}{node.name}"
                source = same(key, first, last)
                if key in out:
                    visit(node.body, f"{prefix}{node.name}.")
                    continue
                rest = [n for n in node.body if not isinstance(n, _Def | ast.ClassDef)]
                parts = [*node.bases, *node.keywords, *node.decorator_list, *rest]
                own = "|".join(ast.dump(n, include_attributes=False) for n in parts)
                out[key] = Definition(
                    key,
                    node.name,
                    _digest(f"{node.name}|{own}"),
                    _names([*node.decorator_list, *node.bases, *node.keywords, *rest]),
                    first,
                    last,
                    bool(node.decorator_list),
                    source,
                )
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    key = f"{path}::{MODULE}"
    holes = [span(n) for n in tree.body if isinstance(n, _Def | ast.ClassDef)]
    source = same(key, 1, lines, holes)
    if key in out:
        return out
    top = [n for n in tree.body if not isinstance(n, _Def | ast.ClassDef)]
    module = ast.Module(body=top, type_ignores=[])
    # What its statements use, but for imports: an import binds a name and calls nothing
    # (what the imported module runs is that module's module-level code).
    runs = [n for n in top if not isinstance(n, ast.Import | ast.ImportFrom)]
    digest = _digest(ast.dump(module, include_attributes=False))
    out[key] = Definition(key, "", digest, _names(runs), 1, lines, source=source)
    return out


def module_statements(text: str) -> list[str] | None:
    """A module's top-level statements other than function and class definitions, each as
    its syntax tree without positions (None: it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return [
        ast.dump(n, include_attributes=False)
        for n in tree.body
        if not isinstance(n, _Def | ast.ClassDef)
    ]


def is_import(statement: str) -> bool:
    """Whether a statement :func:`module_statements` gives is an import or a docstring."""
    return statement.startswith(("Import(", "ImportFrom(", "Expr(value=Constant(value='"))


@dataclass
class TreeDefinitions:
    """What :func:`tree_definitions` read of a tree: the definitions of its Python files, the
    digest of every other file, and the Python files that do not parse."""

    definitions: dict[str, Definition]
    others: dict[str, str]  # path -> sha256 of a file that is not Python source
    unparsed: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "definitions": {k: d.to_dict() for k, d in sorted(self.definitions.items())},
            "others": dict(sorted(self.others.items())),
            "unparsed": sorted(self.unparsed),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TreeDefinitions:
        return cls(
            definitions={k: Definition.from_dict(k, v) for k, v in d["definitions"].items()},
            others=dict(d["others"]),
            unparsed=list(d["unparsed"]),
        )

    def files(self) -> set[str]:
        return {k.split("::", 1)[0] for k in self.definitions} | set(self.others)


def tree_definitions(root: Path, *, python: str = ".py") -> TreeDefinitions:
    """Every file under ``root`` (version control and caches aside): a Python file's
    definitions, any other file's digest."""
    definitions: dict[str, Definition] = {}
    others: dict[str, str] = {}
    unparsed: list[str] = []
    for path in walk(root):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        if rel.endswith(python):
            found = file_definitions(rel, data.decode("utf-8", "surrogateescape"))
            if found is not None:
                definitions.update(found)
                continue
            unparsed.append(rel)
        others[rel] = hashlib.sha256(data).hexdigest()
    return TreeDefinitions(definitions, others, unparsed)


def changed(old: Mapping[str, Definition], new: Mapping[str, Definition]) -> set[str]:
    """The keys of definitions added, removed or whose text changed."""
    keys = set(old) | set(new)
    return {k for k in keys if k not in old or k not in new or old[k].digest != new[k].digest}


def reachable(roots: Iterable[str], graphs: Iterable[Mapping[str, Definition]]) -> set[str]:
    """The definitions reachable from ``roots`` by names (see the module doc), over the union
    of ``graphs`` (an edit's two sides: what either could call)."""
    by_name: dict[str, set[str]] = {}
    uses: dict[str, set[str]] = {}
    for graph in graphs:
        for key, d in graph.items():
            if d.name:
                by_name.setdefault(d.name, set()).add(key)
            uses.setdefault(key, set()).update(d.uses)
    # A class and its members reach each other: a method reads the class's attributes
    # through ``self``, and reaching a class reaches the methods Python calls unnamed (a
    # method added or removed is a changed definition of its own).  A test method is reached
    # by name only: nothing calls it unnamed but pytest, and a test class's tests do not
    # reach each other (its ``setUp`` and fixtures they do).
    members: dict[str, set[str]] = {}
    for key in uses:
        path, qual = key.split("::", 1)
        if "." in qual:
            parent = f"{path}::{qual.rsplit('.', 1)[0]}"
            if not qual.rsplit(".", 1)[1].startswith("test"):
                members.setdefault(parent, set()).add(key)
            members.setdefault(key, set()).add(parent)
    seen: set[str] = set()
    todo = [k for k in roots if k in uses]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        todo.extend(members.get(key, ()))
        for name in uses.get(key, ()):
            todo.extend(by_name.get(name, ()))
    return seen
