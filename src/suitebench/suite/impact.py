"""Import-time impact: which globals a mutant's import-time code changed, and who reads them.

Coverage-guided selection widens a changed line to the function that holds it; a change to
module or class level code (a rule table, a constant, a decorator, a call run on import) has
no such function: it runs while the program is imported, before any test.  What it can change
is the program's state after import.  So, inside the pytest process, once the suite is
collected, this module takes a **fingerprint** of every global of every module of the program
under test (:func:`fingerprint`), in the reference's runs and in the mutant's run, and the
mutant's run compares the two: the globals whose fingerprints differ are the *changed
globals*.  A test can only see the change by reading one of them, and reading one means
executing code that names it (a global or attribute load, ``from m import name``): the mutant
runs the tests whose own code (the test function and what it names in its test module,
its fixtures, the module's import-time code, every conftest) or whose covered program
functions name a changed global (:func:`code_names`), plus the tests a change inside a
function body reaches as before.  Everything else keeps its reference outcome.

The fingerprint is a Merkle hash over the object graph reachable from each global: values
(numbers, strings, containers, compiled patterns), functions by their code (instructions,
constants, names; not line numbers), defaults, closures and attributes, classes by their
dictionaries, instances of Python classes by type and ``__dict__``/slots, objects shared
between places by where they were first reached (so aliasing shows).  Anything it cannot see
into -- an instance of a C type holding hidden state (a random generator, a deque, a lock)
that no other module owns -- makes the fingerprint unknown, and then every test runs.  So do
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

import dis
import hashlib
import os
import re
import sys
import types
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

# Names whose use means code reads state by a computed name, or depends on source lines.
DYNAMIC_NAMES = frozenset(
    {
        "globals", "vars", "dir", "getattr", "hasattr", "setattr", "delattr",
        "__dict__", "eval", "exec", "compile", "__import__", "import_module", "reload",
        "getmembers", "getmembers_static", "getattr_static", "attrgetter", "methodcaller",
        "__getattribute__", "get_type_hints", "getsource", "getsourcelines", "findsource",
        "getframeinfo", "currentframe", "_getframe", "stack", "extract_stack", "extract_tb",
        "format_exc", "format_tb", "format_exception", "print_exc", "print_stack",
        "co_firstlineno", "f_lineno", "tb_lineno", "linecache", "__all__", "__code__",
    }
)  # fmt: skip
STAR = "*"  # the pseudo-name of ``from module import *``
_SKIP_GLOBALS = frozenset(
    {"__builtins__", "__loader__", "__spec__", "__file__", "__cached__", "__path__"}
)
SKIP_CLASS = frozenset({"__dict__", "__weakref__", "_abc_impl"})  # not a class's state
_HEAPTYPE = 1 << 9
_COMPREHENSIONS = frozenset({"<lambda>", "<listcomp>", "<genexpr>", "<setcomp>", "<dictcomp>"})
_LOAD_OPS = frozenset(
    {
        "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD", "IMPORT_NAME", "IMPORT_FROM",
        "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_SUPER_ATTR", "LOAD_CLASSDEREF",
    }
)  # fmt: skip
_IMPORT_OPS = frozenset({"IMPORT_NAME", "IMPORT_FROM"})
_STAR_IMPORT = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)
_ATOMS = (type(None), bool, int, float, complex, str, bytes)
_BUILTIN_BASES = (*_ATOMS, tuple, list, dict, set, frozenset)
_DESCRIPTORS = (
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.ClassMethodDescriptorType,
)


class Unknown(Exception):
    """The fingerprint cannot see into some object: every test must run."""


_REAL_DIRS: dict[str, str] = {}  # a directory -> its real path (a forked child inherits it)
_REAL_FILES: dict[str, str] = {}  # a module's file -> its real path


def _real(path: str) -> str:
    """``os.path.realpath(path)``, resolving each directory once and each file once (a file
    is resolved through its directory's memo unless it is a link itself): ~3,000 ``lstat``
    calls for the ~400 modules of a pytest process become one a module, once."""
    known = _REAL_FILES.get(path)
    if known is not None:
        return known
    if os.path.islink(path):
        real = os.path.realpath(path)
    else:
        directory, name = os.path.split(os.path.abspath(path))
        resolved = _REAL_DIRS.get(directory)
        if resolved is None:
            resolved = _REAL_DIRS[directory] = os.path.realpath(directory)
        real = os.path.join(resolved, name)
    _REAL_FILES[path] = real
    return real


def forget_paths(under: str | None = None) -> None:
    """Forget the resolved paths (``under``: those below it, a link that now points
    elsewhere)."""
    for memo in (_REAL_DIRS, _REAL_FILES):
        if under is None:
            memo.clear()
            continue
        for path in [p for p in memo if p == under or p.startswith(under.rstrip("/") + "/")]:
            del memo[path]


def program_modules(root: str) -> list[tuple[str, types.ModuleType]]:
    """The imported modules whose file lies under ``root`` (the program under test), by name."""
    prefix = os.path.realpath(root).rstrip("/") + "/"
    found = []
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and _real(origin).startswith(prefix):
            found.append((name, module))
    return sorted(found, key=lambda pair: pair[0])


class _Graph:
    """Children of an object for the fingerprint: (tag, atoms, children, tracked)."""

    def __init__(self, program: set[str]) -> None:
        self.program = program
        self.owners: dict[int, str] | None = None

    def owner(self, obj: Any) -> str | None:
        """``module.name`` when ``obj`` is the value of a global of a module outside the
        program (``typing.Any``, ``sys.stdout``): state that module owns, not the program."""
        if self.owners is None:
            self.owners = {}
            for name, module in list(sys.modules.items()):
                if name in self.program or module is None:
                    continue
                try:
                    items = list(vars(module).items())
                except TypeError:
                    continue
                for key, value in items:
                    if not isinstance(value, _ATOMS):
                        self.owners.setdefault(id(value), f"{name}.{key}")
        return self.owners.get(id(obj))

    def pure_python(self, cls: type, builtin: type | None = None) -> bool:
        """Every class of the MRO written in Python (or ``object``, or ``builtin``): an
        instance's whole state is then its ``__dict__`` and slots.  A class written in C, a
        heap type or not, keeps state where Python cannot see it (a random generator's)."""
        return all(k is object or k is builtin or _written_in_python(k) for k in cls.__mro__)

    def describe(self, obj: Any) -> tuple[str, tuple[str, ...], list[Any], bool]:
        kind = type(obj)
        if isinstance(obj, _ATOMS) and kind in _ATOMS:
            return kind.__name__, (repr(obj),), [], False
        if kind is tuple:
            return "tuple", (), list(obj), False
        if kind is list:
            return "list", (), list(obj), True
        if kind is dict or kind is OrderedDict:
            return kind.__name__, (), [x for pair in obj.items() for x in pair], True
        if kind is defaultdict:
            pairs = [x for pair in obj.items() for x in pair]
            return "defaultdict", (), [obj.default_factory, *pairs], True
        if kind is set or kind is frozenset:
            return kind.__name__, (), list(obj), kind is set  # children hashed as a multiset
        if kind is bytearray:
            return "bytearray", (bytes(obj).hex(),), [], True
        if kind is re.Pattern:
            return "pattern", (repr(obj.pattern), str(obj.flags)), [], False
        if kind is types.ModuleType:
            return "module", (obj.__name__,), [], False
        if kind is types.CodeType:
            code_atoms: tuple[str, ...] = (
                obj.co_code.hex(),
                ",".join(obj.co_names),
                ",".join(obj.co_varnames),
                ",".join(obj.co_freevars),
                ",".join(obj.co_cellvars),
                f"{obj.co_argcount},{obj.co_posonlyargcount},{obj.co_kwonlyargcount}",
                str(obj.co_flags),
                obj.co_qualname,
            )
            return "code", code_atoms, list(obj.co_consts), False
        if kind is types.FunctionType:
            cells = []
            for cell in obj.__closure__ or ():
                try:
                    cells.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    cells.append(None)
            module = obj.__globals__.get("__name__", "")
            atoms = (obj.__qualname__, obj.__name__, str(module))
            kids = [obj.__code__, obj.__defaults__, obj.__kwdefaults__, obj.__dict__, *cells]
            return "function", atoms, kids, True
        if kind is types.MethodType:
            return "method", (), [obj.__func__, obj.__self__], False
        if kind is staticmethod or kind is classmethod:
            return kind.__name__, (), [obj.__func__], False
        if kind is property:
            return "property", (), [obj.fget, obj.fset, obj.fdel, obj.__doc__], False
        if kind is partial:
            return "partial", (), [obj.func, obj.args, obj.keywords], False
        if isinstance(obj, type):
            if obj.__module__ not in self.program:
                return "type", (obj.__module__, obj.__qualname__), [], False
            items = [(k, v) for k, v in vars(obj).items() if k not in SKIP_CLASS]
            kids = [*obj.__bases__, type(obj), *(x for pair in items for x in pair)]
            return "class", (obj.__qualname__,), kids, True
        if isinstance(obj, _DESCRIPTORS):
            owner = getattr(obj, "__self__", None) or getattr(obj, "__objclass__", None)
            where = owner if isinstance(owner, types.ModuleType | type) else None
            name = getattr(obj, "__qualname__", getattr(obj, "__name__", ""))
            kids = [where] if where is not None else ([owner] if owner is not None else [])
            return "descriptor", (kind.__name__, str(name)), kids, False
        if self.pure_python(kind):
            return self._instance(obj, kind)
        base = next((b for b in kind.__mro__ if b in _BUILTIN_BASES), None)
        if base is not None and self.pure_python(kind, base):
            return self._instance(obj, kind)
        owned = self.owner(obj)
        if owned is not None:
            return "extern", (owned,), [], False
        raise Unknown(f"{kind.__module__}.{kind.__qualname__}")

    def _instance(self, obj: Any, kind: type) -> tuple[str, tuple[str, ...], list[Any], bool]:
        kids: list[Any] = [kind]
        value: Any = obj
        if isinstance(value, dict):
            kids += [x for pair in dict.items(value) for x in pair]
        elif isinstance(value, tuple | list | set | frozenset):
            items = [*value]
            kids += sorted(items, key=repr) if isinstance(value, set | frozenset) else items
        elif isinstance(value, _ATOMS):
            kids.append(repr(value))
        state = getattr(obj, "__dict__", None)
        if state is not None:
            kids.append(dict(state))
        for cls in kind.__mro__:
            for slot in getattr(cls, "__slots__", ()) if "__slots__" in vars(cls) else ():
                if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                    kids.append(slot)
                    kids.append(getattr(obj, slot, _Missing))
        return "object", (), kids, True


_C_LEVEL = (
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
    types.BuiltinFunctionType,
)


def _written_in_python(cls: type) -> bool:
    """A class defined by a ``class`` statement: a heap type none of whose own attributes is
    implemented in C (slots aside)."""
    if not cls.__flags__ & _HEAPTYPE:
        return False
    own = vars(cls)
    slots = own.get("__slots__", ())
    slots = (slots,) if isinstance(slots, str) else tuple(slots)
    for key, value in own.items():
        if isinstance(value, _C_LEVEL):
            return False
        descriptor = isinstance(value, types.MemberDescriptorType | types.GetSetDescriptorType)
        if descriptor and key not in ("__dict__", "__weakref__") and key not in slots:
            return False
    return True


class _MissingType:
    """An unset slot."""


_Missing = _MissingType()


def fingerprint(
    root: str,
    budget: int = 200_000,
    namespaces: dict[str, dict[str, Any]] | None = None,
    modules: Callable[[str], bool] | None = None,
) -> dict[str, str]:
    """``{"module:global": digest}`` for every global of every program module under ``root``
    (``modules``: of those whose name it accepts); ``namespaces`` stands in for some modules'
    globals (a module's code run anew beside it).

    Raises :class:`Unknown` when some object cannot be seen into, or the graph is larger than
    ``budget`` objects."""
    program = program_modules(root)
    roots: list[tuple[str, Any]] = []
    for name, module in program:
        if modules is not None and not modules(name):
            continue
        found = (namespaces or {}).get(name)
        for key, value in list((vars(module) if found is None else found).items()):
            if key not in _SKIP_GLOBALS:
                roots.append((f"{name}:{key}", value))
    return digest_roots(roots, {name for name, _ in program}, budget)


def state_of(
    root: str, program: list[tuple[str, types.ModuleType]] | None = None
) -> dict[str, object]:
    """What a test can change of the program's globals, taken after every test of the
    coverage run: a global only a new binding can change (a module, a number or string, a
    plain function with atoms for defaults and nothing in its ``__dict__``) by what it is bound
    to; every other global (a table, a cache, a class, an instance) by its fingerprint.  Two
    takes differ where a test changed a global and left it changed.  ``program``: the
    program's modules, when the caller knows them.  Raises :class:`Unknown` as
    :func:`fingerprint` does."""
    if program is None:
        program = program_modules(root)
    fixed: dict[str, object] = {}
    roots: list[tuple[str, Any]] = []
    for name, module in program:
        for key, value in list(vars(module).items()):
            if key in _SKIP_GLOBALS:
                continue
            label = f"{name}:{key}"
            if isinstance(value, _ATOMS) or type(value) is types.ModuleType:
                fixed[label] = id(value)
            elif _plain_function(value):
                fixed[label] = (id(value), id(value.__code__), id(value.__defaults__),
                                id(value.__kwdefaults__))  # fmt: skip
            else:
                roots.append((label, value))
    return {**digest_roots(roots, {name for name, _ in program}), **fixed}


def _plain_function(value: Any) -> bool:
    """A function whose state is all in what it is bound to: no closure, nothing in its
    ``__dict__``, defaults of numbers, strings or None (a list default can be appended to)."""
    if type(value) is not types.FunctionType or value.__closure__ or value.__dict__:
        return False
    defaults = [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]
    return all(type(d) in _ATOMS for d in defaults)


# id -> (object, digest) of objects with nothing mutable below them, kept alive with them: a
# fingerprint taken after every test (the coverage run) rehashes only what can change.
_PURE: dict[int, tuple[Any, bytes]] = {}


def digest_roots(
    roots: list[tuple[str, Any]], program: set[str], budget: int = 200_000
) -> dict[str, str]:
    """``{label: digest}`` of each object of ``roots`` (as :func:`fingerprint` digests a
    global; ``program``: the names of the program's modules, whose classes are looked into)."""
    graph = _Graph(program)
    # Pass 1: how often each tracked object is reached, and where first (its label).
    seen: dict[int, list[Any]] = {}  # id -> [obj, count, label, description]
    count = 0
    for label, value in roots:
        serial = 0
        stack = [value]
        while stack:
            obj = stack.pop()
            entry = seen.get(id(obj))
            if entry is not None:
                entry[1] += 1
                continue
            count += 1
            if count > budget:
                raise Unknown(f"more than {budget} objects")
            pure = _PURE.get(id(obj))
            if pure is not None and pure[0] is obj:  # digested before: a leaf now
                seen[id(obj)] = [obj, 1, "", ("", (), [], False)]
                continue
            description = graph.describe(obj)
            seen[id(obj)] = [obj, 1, f"{label}#{serial}", description]
            if description[3]:  # numbered among the tracked only: labels do not depend on
                serial += 1  # which untracked objects were digested before
            stack.extend(reversed(description[2]))
    # Pass 2: Merkle digests; a tracked object reached more than once carries its label.
    digests: dict[int, bytes] = {}
    busy: set[int] = set()

    def digest(obj: Any) -> bytes:
        key = id(obj)
        done = digests.get(key)
        if done is not None:
            return done
        pure = _PURE.get(key)
        if pure is not None and pure[0] is obj:
            return pure[1]
        _, refs, label, (tag, atoms, kids, tracked) = seen[key]
        if key in busy:  # a cycle: the object is being hashed further up
            return hashlib.blake2b(f"cycle {label}".encode(), digest_size=16).digest()
        busy.add(key)
        parts = [digest(k) for k in kids]
        busy.discard(key)
        if tag in ("set", "frozenset"):
            parts.sort()
        h = hashlib.blake2b(digest_size=16)
        h.update(tag.encode())
        for atom in atoms:
            h.update(b"\0" + atom.encode("utf-8", "surrogatepass"))
        h.update(b"\1")
        for part in parts:
            h.update(part)
        if tracked and refs > 1:
            h.update(b"\2" + label.encode())
        digests[key] = value = h.digest()
        if not tracked and all(id(k) in _PURE for k in kids):
            # Nothing mutable below (a string, a code object, a tuple of those): its digest
            # depends on nothing else, and is kept, with the object, for the next fingerprint.
            _PURE[key] = (obj, value)
        return value

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return {label: digest(value).hex() for label, value in roots}
    except RecursionError as exc:
        raise Unknown("an object graph too deep to fingerprint") from exc
    finally:
        sys.setrecursionlimit(limit)
        seen.clear()  # ``digest`` refers to itself: free what it saw without waiting for gc


def _loads(code: types.CodeType, ops: frozenset[str] = _LOAD_OPS) -> set[str]:
    """The names a code object's own instructions load (globals, attributes, imports), not
    those it only stores to (a module's ``def f`` stores ``f``; that reads nothing)."""
    return {i.argval for i in dis.get_instructions(code) if i.opname in ops}


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
            stack.extend(v for v in vars(current).values() if callable(v) or hasattr(v, "__func__"))


class TestNames:
    """The names each collected test can read through its own code (see the module doc)."""

    __test__ = False  # not a pytest test class

    def __init__(self, suite_root: str) -> None:
        self.suite_roots = tuple(
            {os.path.realpath(suite_root).rstrip("/") + "/", os.path.abspath(suite_root) + "/"}
        )
        self._module_level: dict[tuple[str, bool], set[str]] = {}
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
            names |= self.module_level(module)
        pending: list[Any] = [getattr(item, "obj", None)]
        cls = getattr(item, "cls", None)
        if cls is not None:
            pending.append(cls)
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
        return names


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
    spec: dict[str, Any], found: dict[str, str] | None, why: str, collected: list[str]
) -> tuple[list[str] | None, str]:
    """The tests a mutant with an import-time change runs (None: all), and why.

    ``spec``: ``reference`` (the reference's fingerprint), ``collected`` (its collected test
    ids), ``tests`` (the test ids indices refer to), ``base`` (indices of the tests that run
    anyway: those reaching a changed function, of unknown coverage, reading by computed names)
    and ``readers`` (a global's name -> indices of the tests whose code names it)."""
    if found is None:
        return None, why
    reference = spec.get("reference")
    if not isinstance(reference, dict):
        return None, "no fingerprint of the reference"
    if sorted(collected) != sorted(spec.get("collected", ())):
        return None, "the mutant's suite collects other tests than the reference's"
    changed = changed_globals(reference, found)
    names = sorted({key.split(":", 1)[1] for key in changed})
    readers: dict[str, list[int]] = spec.get("readers", {})
    tests: list[str] = spec["tests"]
    chosen = set(spec.get("base", ()))
    for name in names:
        if name in DYNAMIC_NAMES or name not in readers:
            return None, f"import-time change to {name}, which no test is known not to read"
        chosen.update(readers[name])
    writers = {int(k): frozenset(v) for k, v in (spec.get("writers") or {}).items()}
    if writers:
        sets = {name: set(found) for name, found in readers.items()}
        always = set(spec.get("always", ()))
        chosen = carried_by_state(chosen, writers, sets, always, spec.get("rank"))
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    reason = (
        f"import-time change; globals changed: {shown}"
        if names
        else "import-time change; no global changed"
    )
    return [tests[i] for i in sorted(chosen)], reason
