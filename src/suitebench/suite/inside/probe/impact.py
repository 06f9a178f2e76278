"""Import-time impact: which globals a mutant's import-time code changed, and who reads them.

Coverage-guided selection widens a changed line to the function that holds it; a change to
module or class level code (a rule table, a constant, a decorator, a call run on import) has
no such function: it runs while the program is imported, before any test.  What it can change
is the program's state after import.  So, inside the pytest process, once the suite is
collected, a **fingerprint** of every global of every module of the program under test is
taken (:mod:`suitebench.suite.inside.probe.fingerprint`), in the reference's runs and in the
mutant's run, and the mutant's run compares the two: the globals whose fingerprints differ are the
*changed globals*.  A test can only see the change by reading one of them, and reading one means
executing code that names it (a global or attribute load, ``from m import name``): the mutant
runs the tests whose own code (the test function and what it names in its test module or
of its class, what of its class runs unasked, its fixtures, the module's import-time code,
what a name it uses was imported as, every conftest) or whose covered program
functions name a changed global (:func:`code_names`), plus the tests a change inside a
function body reaches as before.  Everything else keeps its reference outcome.

The fingerprint (:mod:`suitebench.suite.inside.probe.fingerprint`) is a Merkle hash over the object
graph reachable from each global.  When it cannot see into some object it is unknown, and then every
test runs.  So do
code that reads state by computed names (``getattr``, ``globals()``, ``vars``, ``__dict__``,
``eval``, ``import *``, introspection of frames or source: :data:`DYNAMIC_NAMES`), a changed
``__all__``, a global that appears or vanishes that no test is known to read, and a
collection that differs from the reference's.

Assumptions (stated in ``docs/suite.md``): a test's outcome depends on the state it reads
(program state an earlier test changed ties the two: :func:`carried_by_state`), not on line
numbers, nor on state outside the program's modules that its import-time code or an earlier
test changed (environment variables, files, other libraries' globals).  Standard library
only: this runs inside the sandbox.
"""

from __future__ import annotations

import ast
import dis
import functools
import os
import re
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

from suitebench.suite.inside import wire
from suitebench.suite.inside.probe.namedcalls import NAMED_BY_ARGUMENT, constant_sites

# Names whose use means code reads state by a computed name, or depends on source lines.
DYNAMIC_NAMES = frozenset(
    {
        "globals", "vars", "dir", "getattr", "hasattr", "setattr", "delattr",
        "__dict__", "eval", "exec", "compile", "__import__", "reload",
        "getmembers", "getmembers_static", "getattr_static", "attrgetter", "methodcaller",
        "__getattribute__", "get_type_hints", "getsource", "getsourcelines", "findsource",
        "getframeinfo", "currentframe", "_getframe", "stack", "extract_stack", "extract_tb",
        "format_exc", "format_tb", "format_exception", "print_exc", "print_stack",
        "co_firstlineno", "f_lineno", "tb_lineno", "linecache", "__all__", "__code__",
    }
)  # fmt: skip
# ``importlib.import_module(name)`` is not among them: whatever ``name`` it computes, it reads
# ``sys.modules``, not a module's globals; what the caller then reads of the module it names
# (``m.NAME``, ``getattr(m, name)``) is seen as any read is, and a module first imported while a
# test runs makes the selection run every test anyway (``selection._spawned_imports``).
# ``getattr``, ``hasattr``, ``setattr`` and ``delattr`` read by computed names only where their
# second argument is computed: ``getattr(m, "NAME")`` and ``getattr(m, "A" if c else "B")``
# read NAME, A or B as ``m.NAME`` does, and so does a loop variable over literal names
# (:mod:`.namedcalls`).
STAR = "*"  # the pseudo-name of ``from module import *``
# What test frameworks call on a test's class by these names, unasked (unittest, pytest's
# xunit-style set-up); a test class's other methods run when something names them.
_FRAMEWORK_METHODS = frozenset(
    {
        "setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp", "asyncTearDown",
        "setup_method", "teardown_method", "setup_class", "teardown_class", "setup", "teardown",
    }
)  # fmt: skip
_COMPREHENSIONS = frozenset({"<lambda>", "<listcomp>", "<genexpr>", "<setcomp>", "<dictcomp>"})
_LOAD_OPS = frozenset(
    {
        "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD", "IMPORT_NAME", "IMPORT_FROM",
        "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_SUPER_ATTR", "LOAD_CLASSDEREF",
    }
)  # fmt: skip
_IMPORT_OPS = frozenset({"IMPORT_NAME", "IMPORT_FROM"})
_STAR_IMPORT = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)


def _loads(code: types.CodeType, ops: frozenset[str] = _LOAD_OPS) -> set[str]:
    """The names a code object's own instructions load (globals, attributes, imports), not
    those it only stores to (a module's ``def f`` stores ``f``; that reads nothing).  A call of
    ``getattr`` (or ``hasattr``, ``setattr``, ``delattr``) by that name whose attribute name is
    a constant loads that name instead (:mod:`.namedcalls`)."""
    names: set[str] = set()
    sites: dict[tuple[int, int], frozenset[str]] | None = None
    for instruction in dis.get_instructions(code):
        if instruction.opname not in ops:
            continue
        name = instruction.argval
        if name in NAMED_BY_ARGUMENT and instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            if sites is None:
                sites = constant_sites(code.co_filename)
            where = getattr(instruction, "positions", None)  # Python 3.11 and later
            at = None if where is None else (where.lineno, where.col_offset)
            if at in sites:
                names |= sites[at]
                continue
        names.add(name)
    return names


def code_names(code: types.CodeType, *, functions: bool = True, imports: bool = True) -> set[str]:
    """Every name a code object can read through nested code: loaded global and attribute
    names, and string constants naming an attribute (``getattr(m, "NAME")``,
    ``patch("pkg.NAME")``; only dotted ones at module level, where test data lives).
    ``functions=False`` leaves out the bodies of nested ``def`` functions (module-level code:
    they run only when called), keeping class bodies, lambdas and comprehensions;
    ``imports=False`` leaves out names only imported (``from pkg import f`` binds ``f``
    without reading anything of it)."""
    ops = _LOAD_OPS if imports else _LOAD_OPS - _IMPORT_OPS
    names: set[str] = set()
    stack = [(code, functions)]
    while stack:
        current, inside = stack.pop()
        names |= _loads(current, ops)
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                is_def = (
                    const.co_flags & 0x1  # CO_OPTIMIZED: a function, not a class body
                    and const.co_name not in _COMPREHENSIONS
                )
                if functions or not is_def:
                    stack.append((const, inside or bool(is_def)))
            elif isinstance(const, str) and len(const) < 200:
                parts = const.split(".")
                if all(part.isidentifier() for part in parts) and (inside or len(parts) > 1):
                    names.update(parts)
    return names


def _function_codes(obj: Any) -> Iterable[types.CodeType]:
    """The code of a function, method, class (every function in it) or wrapper chain."""
    seen: set[int] = set()
    stack = [obj]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current = getattr(current, "__func__", current)
        code = getattr(current, "__code__", None)
        if isinstance(code, types.CodeType):
            yield code
        wrapped = getattr(current, "__wrapped__", None)
        if wrapped is not None:
            stack.append(wrapped)
        if isinstance(current, type):
            stack.extend(v for v in vars(current).values() if _has_code(v))
        if isinstance(current, property):
            stack.extend(f for f in (current.fget, current.fset, current.fdel) if f is not None)
        elif isinstance(current, (functools.cached_property, functools.partialmethod)):
            stack.append(current.func)


def _has_code(value: Any) -> bool:
    """A class member that holds code: a function, method, property or nested class."""
    return (
        callable(value)
        or hasattr(value, "__func__")
        or isinstance(value, (property, functools.cached_property, functools.partialmethod))
    )


class TestNames:
    """The names each collected test can read through its own code (see the module doc)."""

    __test__ = False  # not a pytest test class

    def __init__(self, suite_root: str) -> None:
        self.suite_roots = tuple(
            {os.path.realpath(suite_root).rstrip("/") + "/", os.path.abspath(suite_root) + "/"}
        )
        self._module_level: dict[tuple[str, bool], set[str]] = {}
        self._imports: dict[str, list[tuple[str, frozenset[str]]]] = {}
        self._conftest: tuple[set[str], dict[str, Any]] | None = None

    def _source_code(self, path: str, whole: bool, imports: bool = True) -> set[str]:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            code = compile(text, path, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            return {STAR}
        names = code_names(code, functions=whole, imports=imports)
        if _STAR_IMPORT.search(text):
            names.add(STAR)
        return names

    def module_level(self, module: types.ModuleType, imports: bool = True) -> set[str]:
        path = getattr(module, "__file__", None) or ""
        key = (path, imports)
        if key not in self._module_level:
            found = self._source_code(path, False, imports) if path else {STAR}
            self._module_level[key] = found
        return self._module_level[key]

    def imports(self, module: types.ModuleType) -> list[tuple[str, frozenset[str]]]:
        """The module's imports outside functions: (the name each binds, the names it
        reads).  A test reads what ``from pkg import TABLE as T`` imported when it names
        ``T``; else such an import reads nothing a test sees."""
        path = getattr(module, "__file__", None) or ""
        if path not in self._imports:
            found: list[tuple[str, frozenset[str]]] = []
            try:
                with open(path, "rb") as fh:
                    tree: ast.AST = ast.parse(fh.read(), path)
            except (OSError, SyntaxError, ValueError, RecursionError):
                tree = ast.Module(body=[], type_ignores=[])
            pending = [tree]
            while pending:
                node = pending.pop()
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    source = getattr(node, "module", None) or ""
                    for alias in node.names:
                        bound = alias.asname or alias.name.split(".")[0]
                        parts = {*source.split("."), *alias.name.split(".")} - {""}
                        found.append((bound, frozenset(parts)))
                elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    pending.extend(ast.iter_child_nodes(node))
            self._imports[path] = found
        return self._imports[path]

    def conftest(self) -> tuple[set[str], dict[str, Any]]:
        """What every test of the suite can run of its conftest files: their import-time code
        and their hooks (``pytest_*``), and their namespace (helpers a fixture may call)."""
        if self._conftest is None:
            names: set[str] = set()
            namespace: dict[str, Any] = {}
            for module in list(sys.modules.values()):
                path = getattr(module, "__file__", None) or ""
                if not path.endswith("conftest.py") or not self._in_suite(path):
                    continue
                names |= self.module_level(module)
                for key, value in vars(module).items():
                    namespace.setdefault(key, value)
                    if key.startswith("pytest_"):
                        for code in _function_codes(value):
                            names |= code_names(code)
            self._conftest = (names, namespace)
        return self._conftest

    def import_time(self, imports: bool = True) -> set[str]:
        """Every name the suite's import-time code reads: its test modules' and conftest
        files' module-level code (``imports=False``: less the names only imported), and the
        conftest files' hooks."""
        names = set(self.conftest()[0])
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None) or ""
            if path.endswith(".py") and self._in_suite(path):
                names |= self.module_level(module, imports)
        return names

    def _in_suite(self, path: str) -> bool:
        return any(p.startswith(self.suite_roots) for p in (path, os.path.realpath(path)))

    def _suite_function(self, value: Any) -> bool:
        """A function or class written in the suite (a helper the test may call)."""
        return any(self._in_suite(code.co_filename) for code in _function_codes(value))

    def of(self, item: Any) -> set[str]:
        shared, conftest_namespace = self.conftest()
        names: set[str] = set(shared)
        module = getattr(item, "module", None)
        namespace: dict[str, Any] = dict(conftest_namespace)
        if module is not None:
            namespace.update(vars(module))
        if module is not None:
            names |= self.module_level(module, imports=False)
        pending: list[Any] = [getattr(item, "obj", None)]
        cls = getattr(item, "cls", None)
        if cls is not None:
            pending.extend(self._called_implicitly(cls))
        info = getattr(item, "_fixtureinfo", None)
        for defs in getattr(info, "name2fixturedefs", {}).values():
            pending.extend(getattr(d, "func", None) for d in defs)
        done: set[str] = set()
        while pending:
            obj = pending.pop()
            if obj is None:
                continue
            for code in _function_codes(obj):
                names |= code_names(code)
            for name in names - done:
                done.add(name)
                value = namespace.get(name)
                if value is not None and self._suite_function(value):
                    pending.append(value)
                if cls is not None:
                    pending.extend(self._members(cls, name))
        if module is not None:
            for bound, read in self.imports(module):
                if bound in names:
                    names |= read
        return names

    def _suite_class(self, klass: type) -> bool:
        module = sys.modules.get(getattr(klass, "__module__", "") or "")
        return self._in_suite(getattr(module, "__file__", None) or "")

    def _called_implicitly(self, cls: type) -> list[Any]:
        """What of a test's class (and its bases in the suite) runs without the test naming
        it: set-up and tear-down, special methods, and whatever overrides a name the test
        framework's bases define (``run``, ``subTest``, an ``assertEqual``)."""
        mro = [k for k in getattr(cls, "__mro__", (cls,)) if isinstance(k, type)]
        framework: set[str] = set()
        for klass in mro:
            if not self._suite_class(klass):
                framework |= set(vars(klass))
        found: list[Any] = []
        for klass in mro:
            if not self._suite_class(klass):
                continue
            for name, value in vars(klass).items():
                special = name.startswith("__") and name.endswith("__")
                if special or name in framework or name in _FRAMEWORK_METHODS:
                    found.append(value)
        return found

    def _members(self, cls: type, name: str) -> list[Any]:
        """``name`` as the suite's classes in the test class's MRO define it (``self.name``,
        ``super().name``)."""
        mro = [k for k in getattr(cls, "__mro__", (cls,)) if isinstance(k, type)]
        return [vars(k)[name] for k in mro if name in vars(k) and self._suite_class(k)]


def carried_by_state(
    chosen: set[int],
    writers: dict[int, frozenset[str]],
    readers: dict[str, set[int]],
    always: set[int],
    rank: list[int] | None = None,
) -> set[int]:
    """``chosen`` (indices of tests) and the tests state left between tests ties to them.
    ``writers``: the tests that changed program globals and left them changed in the
    reference's run (a cache filled, a registry appended to), by the names of those globals;
    ``readers``: per name, the tests whose code or covered functions name it; ``always``: the
    tests whose reads are unknown; ``rank``: each test's place in the run (default: the
    indices are the order).  A chosen test that changed globals brings every later test
    reading one (under the mutant it may leave other values there, which a later test reads
    without entering the changed code); a chosen test reading a global an earlier test
    changed brings that test (it sees the state a full run builds).  To a fixpoint."""
    if not writers:
        return set(chosen)

    def place(test: int) -> int:
        return test if rank is None else rank[test]

    selected = set(chosen)
    ordered = sorted(writers, key=place)
    pending = sorted(selected)
    while pending:
        test = pending.pop()
        names = writers.get(test)
        if names:
            later = set(always).union(*(readers.get(n, ()) for n in names))
            for other in later:
                if place(other) > place(test) and other not in selected:
                    selected.add(other)
                    pending.append(other)
        for writer in ordered:
            if place(writer) >= place(test):
                break
            if writer in selected:
                continue
            if test in always or any(test in readers.get(n, ()) for n in writers[writer]):
                selected.add(writer)
                pending.append(writer)
    return selected


def changed_globals(reference: dict[str, str], mutant: dict[str, str]) -> set[str]:
    """``module:global`` keys whose fingerprints differ (or exist on one side only)."""
    return {k for k in reference.keys() | mutant.keys() if reference.get(k) != mutant.get(k)}


def choose(
    spec: wire.ImpactSpec,
    found: dict[str, str] | None,
    why: str,
    collected: list[str],
    suite: Callable[[set[str]], dict[str, str | None]] | None = None,
) -> tuple[list[str] | None, str]:
    """The tests a mutant with an import-time change runs (None: all), and why.

    ``spec``: ``reference`` (the reference's fingerprint), ``collected`` (its collected test
    ids), ``tests`` (the test ids indices refer to), ``base`` (indices of the tests that run
    anyway: those reaching a changed function, of unknown coverage, reading by computed names)
    and ``readers`` (a global's name -> indices of the tests whose code names it); with
    ``final`` (the reason), ``base`` is the choice, once the suite collects as the reference's.
    ``suite(files)``: what the mutant's own collection computed in those test files
    (:func:`suitebench.suite.inside.probe.importtime.suite_state`; None where the collection is
    the reference's, carried over): every test of a file whose collection computed otherwise
    than the reference's (``suite`` of the spec) runs too.  It is asked last, of the files with
    a test not chosen already (what it costs -- a digest of every parameter -- buys nothing
    where the choice is every test, or a file's tests are all in it)."""
    if found is None:
        return None, why
    reference = spec.get("reference")
    if not isinstance(reference, dict):
        return None, "no fingerprint of the reference"
    if sorted(collected) != sorted(spec.get("collected", ())):
        return None, "the mutant's suite collects other tests than the reference's"
    before = spec.get("suite")
    if suite is not None and not isinstance(before, dict):
        return None, "what the reference's collection computed is not known"
    tests: list[str] = spec["tests"]
    readers: dict[str, list[int]] = spec.get("readers", {})
    chosen = set(spec.get("base", ()))
    names: list[str] = []
    if not spec.get("final"):
        changed = changed_globals(reference, found)
        names = sorted({key.split(":", 1)[1] for key in changed})
        for name in names:
            if name in DYNAMIC_NAMES or name not in readers:
                return None, f"import-time change to {name}, which no test is known not to read"
            chosen.update(readers[name])
    moved: list[str] = []
    if suite is not None and isinstance(before, dict):
        wanted = {t.split("::", 1)[0] for i, t in enumerate(tests) if i not in chosen}
        state = suite(wanted) if wanted else {}
        moved = sorted(f for f in state if state[f] is None or state[f] != before.get(f))
    chosen |= {i for i, t in enumerate(tests) if t.split("::", 1)[0] in moved}
    also = f"; the collection of {', '.join(moved[:3])} computed otherwise" if moved else ""
    if spec.get("final"):  # its tests are known already (a changed default argument's)
        return [tests[i] for i in sorted(chosen)], str(spec["final"]) + also
    writers = {int(k): frozenset(v) for k, v in (spec.get("writers") or {}).items()}
    if writers:
        sets = {name: set(ids) for name, ids in readers.items()}
        always = set(spec.get("always", ()))
        chosen = carried_by_state(chosen, writers, sets, always, spec.get("rank"))
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    reason = (
        f"import-time change; globals changed: {shown}"
        if names
        else "import-time change; no global changed"
    )
    return [tests[i] for i in sorted(chosen)], reason + also
