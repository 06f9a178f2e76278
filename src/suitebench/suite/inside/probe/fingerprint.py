"""The fingerprint of a program's state: a digest of every global of every module of the
program under test, compared between runs (import-time impact,
:mod:`suitebench.suite.inside.probe.impact`), within a run (what a test leaves changed,
:func:`state_of`) and between a live module and a module run anew
(:mod:`suitebench.suite.inside.batch.reimport`).

The fingerprint is a Merkle hash over the object graph reachable from each global: values
(numbers, strings, containers, compiled patterns), functions by their code (instructions,
constants, names; not line numbers), defaults, closures and attributes, classes by their
dictionaries, instances of Python classes by type and ``__dict__``/slots, objects shared
between places by where they were first reached (so aliasing shows).  Anything it cannot see
into -- an instance of a C type holding hidden state (a random generator, a deque, a lock)
that no other module owns -- makes the fingerprint :class:`Unknown`.  Standard library only:
this runs inside the sandbox.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import types
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from functools import partial
from typing import Any

SKIP_GLOBALS = frozenset(  # a module's bookkeeping, not its state
    {"__builtins__", "__loader__", "__spec__", "__file__", "__cached__", "__path__"}
)
SKIP_CLASS = frozenset({"__dict__", "__weakref__", "_abc_impl"})  # not a class's state
_HEAPTYPE = 1 << 9
ATOMS = (type(None), bool, int, float, complex, str, bytes)  # immutable values
_BUILTIN_BASES = (*ATOMS, tuple, list, dict, set, frozenset)
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
                    if not isinstance(value, ATOMS):
                        self.owners.setdefault(id(value), f"{name}.{key}")
        return self.owners.get(id(obj))

    def pure_python(self, cls: type, builtin: type | None = None) -> bool:
        """Every class of the MRO written in Python (or ``object``, or ``builtin``): an
        instance's whole state is then its ``__dict__`` and slots.  A class written in C, a
        heap type or not, keeps state where Python cannot see it (a random generator's) -- but
        for the abstract bases that keep none (:data:`_STATELESS`: a time zone's ``tzinfo``)."""
        return all(
            k is object or k is builtin or _written_in_python(k) or _stateless(k)
            for k in cls.__mro__
        )

    def describe(self, obj: Any) -> tuple[str, tuple[str, ...], list[Any], bool]:
        kind = type(obj)
        if isinstance(obj, ATOMS) and kind in ATOMS:
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
        if kind is _LRU_CACHE:
            return self._lru_cache(obj)
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
        value = _value(obj, kind)
        if value is not None:
            return value
        owned = self.owner(obj)
        if owned is not None:
            return "extern", (owned,), [], False
        raise Unknown(f"{kind.__module__}.{kind.__qualname__}")

    def _lru_cache(self, obj: Any) -> tuple[str, tuple[str, ...], list[Any], bool]:
        """``functools.lru_cache``/``cache``: an empty cache is the wrapped function and the
        cache's parameters; a filled one holds results the fingerprint cannot see into.  A
        cache of a function of another module (``typing``'s cache of ``Literal[...]`` and
        ``Union[...]``, filled by a program's annotations on import) is that module's memo,
        state it owns as :meth:`owner` says of its globals: told apart by whose it is."""
        wrapped = getattr(obj, "__wrapped__", None)
        module = getattr(wrapped, "__module__", None)
        if isinstance(module, str) and module not in self.program:
            name = getattr(wrapped, "__qualname__", "?")
            return "extern", (f"{module}.{name}", "lru_cache"), [], False
        if obj.cache_info().currsize:
            raise Unknown("functools._lru_cache_wrapper holding results")
        params = obj.cache_parameters()
        atoms = (str(params["maxsize"]), str(params["typed"]))
        return "lru_cache", atoms, [obj.__wrapped__, dict(getattr(obj, "__dict__", {}))], True

    def _instance(self, obj: Any, kind: type) -> tuple[str, tuple[str, ...], list[Any], bool]:
        kids: list[Any] = [kind]
        value: Any = obj
        if isinstance(value, dict):
            kids += [x for pair in dict.items(value) for x in pair]
        elif isinstance(value, tuple | list | set | frozenset):
            items = [*value]
            kids += sorted(items, key=repr) if isinstance(value, set | frozenset) else items
        elif isinstance(value, ATOMS):
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


# Classes written in C whose instances hold nothing but what Python sees (``__dict__``).
_STATELESS = frozenset({"datetime.tzinfo"})


def _stateless(cls: type) -> bool:
    return f"{cls.__module__}.{cls.__qualname__}" in _STATELESS


_LRU_CACHE = type(functools.lru_cache(maxsize=None)(lambda: None))


def _value(obj: Any, kind: type) -> tuple[str, tuple[str, ...], list[Any], bool] | None:
    """An immutable value of a standard library type written in C (a ``timedelta`` or a
    ``Decimal`` at module level: isodate's ``ZERO``; a ``namedtuple`` class's field), whole in
    what Python reads of it, or None.  A date and time's ``tzinfo`` is a child: it may be the
    program's own object."""
    name = f"{kind.__module__}.{kind.__qualname__}"
    if name == "datetime.timedelta":
        return name, (str(obj.days), str(obj.seconds), str(obj.microseconds)), [], False
    if name == "datetime.date":
        return name, (obj.isoformat(),), [], False
    if name in ("datetime.datetime", "datetime.time"):
        naive = obj.replace(tzinfo=None).isoformat()
        return name, (naive, str(obj.fold)), [obj.tzinfo], False
    if name == "datetime.timezone":
        return name, (repr(obj.utcoffset(None)), repr(obj.tzname(None))), [], False
    if name == "decimal.Decimal":
        return name, (repr(obj),), [], False
    if name in ("builtins.range", "builtins.slice"):
        return name, (), [obj.start, obj.stop, obj.step], False
    if name == "_collections._tuplegetter":  # a namedtuple class's field: (index, doc)
        return name, (), list(obj.__reduce__()[1]), False
    return None


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
            if key not in SKIP_GLOBALS:
                roots.append((f"{name}:{key}", value))
    return digest_roots(roots, {name for name, _ in program}, budget)


def state_of(
    root: str,
    program: list[tuple[str, types.ModuleType]] | None = None,
    unknown: set[str] | None = None,
) -> dict[str, object]:
    """What a test can change of the program's globals, taken after every test of the
    coverage run: a global only a new binding can change (a module, a number or string, a
    plain function with atoms for defaults and nothing in its ``__dict__``) by what it is bound
    to; a function's ``functools.lru_cache`` by the results it computed and holds (their
    values are out of sight); every other global (a table, a class, an instance) by its
    fingerprint.  Two
    takes differ where a test changed a global and left it changed.  ``program``: the
    program's modules, when the caller knows them; ``unknown``: where the globals that cannot
    be seen into are named (they are left out), else :class:`Unknown` as :func:`fingerprint`."""
    if program is None:
        program = program_modules(root)
    fixed: dict[str, object] = {}
    roots: list[tuple[str, Any]] = []
    for name, module in program:
        for key, value in list(vars(module).items()):
            if key in SKIP_GLOBALS:
                continue
            label = f"{name}:{key}"
            if isinstance(value, ATOMS) or type(value) is types.ModuleType:
                fixed[label] = id(value)
            elif _plain_function(value):
                fixed[label] = (id(value), id(value.__code__), id(value.__defaults__),
                                id(value.__kwdefaults__))  # fmt: skip
            elif type(value) is _LRU_CACHE and _plain_function(value.__wrapped__):
                # a cache's results cannot be seen into, but each one stored is a miss: a
                # test that stored one changed it; one that only read it did not, unless the
                # cache is bounded (a hit moves a result away from eviction)
                info = value.cache_info()
                hits = 0 if info.maxsize is None else info.hits
                fixed[label] = (id(value), id(value.__wrapped__), info.misses, info.currsize, hits)
            else:
                roots.append((label, value))
    return {**digest_roots(roots, {name for name, _ in program}, unknown=unknown), **fixed}


def _plain_function(value: Any) -> bool:
    """A function whose state is all in what it is bound to: no closure, nothing in its
    ``__dict__``, defaults of numbers, strings or None (a list default can be appended to)."""
    if type(value) is not types.FunctionType or value.__closure__ or value.__dict__:
        return False
    defaults = [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]
    return all(type(d) in ATOMS for d in defaults)


# id -> (object, digest) of objects with nothing mutable below them, kept alive with them: a
# fingerprint taken after every test (the coverage run) rehashes only what can change.
_PURE: dict[int, tuple[Any, bytes]] = {}


def forget_digests() -> None:
    """Drop the kept digests and the objects they keep alive (in a batch's child, once its
    program is carried in: the code and constants of the program the collector imported are
    none of its tests' business)."""
    _PURE.clear()


def digest_roots(
    roots: list[tuple[str, Any]],
    program: set[str],
    budget: int = 200_000,
    unknown: set[str] | None = None,
) -> dict[str, str]:
    """``{label: digest}`` of each object of ``roots`` (as :func:`fingerprint` digests a
    global; ``program``: the names of the program's modules, whose classes are looked into).
    ``unknown``: a root that cannot be seen into has its label added there and no digest
    (the others are digested as if it were not there); without it, :class:`Unknown`."""
    graph = _Graph(program)
    # Pass 1: how often each tracked object is reached, and where first (its label).
    seen: dict[int, list[Any]] = {}  # id -> [obj, count, label, description]
    count = 0
    known: list[tuple[str, Any]] = []
    for label, value in roots:
        serial = 0
        stack = [value]
        added: list[int] = []  # what this root added and counted again, to undo
        again: list[int] = []
        try:
            while stack:
                obj = stack.pop()
                entry = seen.get(id(obj))
                if entry is not None:
                    entry[1] += 1
                    again.append(id(obj))
                    continue
                count += 1
                if count > budget:
                    raise Unknown(f"more than {budget} objects")
                pure = _PURE.get(id(obj))
                if pure is not None and pure[0] is obj:  # digested before: a leaf now
                    seen[id(obj)] = [obj, 1, "", ("", (), [], False)]
                    added.append(id(obj))
                    continue
                description = graph.describe(obj)
                seen[id(obj)] = [obj, 1, f"{label}#{serial}", description]
                added.append(id(obj))
                if description[3]:  # numbered among the tracked only: labels do not depend
                    serial += 1  # on which untracked objects were digested before
                stack.extend(reversed(description[2]))
        except Exception:  # Unknown, or an object whose attributes raise
            if unknown is None:
                raise
            unknown.add(label)
            for key in again:
                seen[key][1] -= 1
            for key in added:
                del seen[key]
            count -= len(added)
            continue
        known.append((label, value))
    roots = known
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
