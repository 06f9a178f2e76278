"""Carry an import-time mutant's module into a batch's one collection (in the sandbox).

A mutant whose change runs on import (a rule table, a constant, a default argument, a helper
called while the module loads) changes what the program's import builds; most of the suite's
collection does not depend on it.  So a batch collects once
(:mod:`suitebench.suite.inside.batch.hotpatch` does the same for changes inside function bodies) and
the child for such a mutant runs the mutant's version of each changed module anew, in a fresh
namespace beside the live module, then carries over into the live module what differs: a data global
is rebound to the new value, a plain module-level function gets the new code, defaults and docstring
in place (so a test module's ``from pkg import f`` sees them).  Whatever the suite reads after that,
it reads from the mutant's state.

Whether that equals a fresh import is checked, not assumed.  The child declines -- its program
is then imported afresh by the batch's parent, as before -- unless:

* what program code the suite ran while it was collected, beyond importing the program, is
  known (the coverage run says so; only then does the host name the files), and none of it
  reads a global that changed (a parametrization built by calling ``pkg.parse``, which reads
  ``pkg.PATTERNS``: the names each function it entered reads, ``collection_reads``);
* the suite's import-time code (test modules, conftest files) names none of the globals that
  changed (``from pkg import TABLE``, a parametrization built from ``pkg.TABLE``; a function
  changed in place may be imported, not read), and reads nothing by a computed name;
* a rebound value is referenced from nowhere but its own module's globals;
* what changed is data (numbers, strings, tuples, lists, dicts, sets, compiled patterns) or a
  plain module-level function (no closure, no decorator, no other live copy of its code, no
  suspended generator running it);
* running the module anew changed nothing else: every other module of the program, and every
  object the new namespace shares with the live module, fingerprints as before
  (:func:`suitebench.suite.inside.probe.fingerprint.fingerprint`);
* afterwards the live module fingerprints exactly as the mutant's namespace did.

Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import gc
import linecache
import os
import re
import types
from collections.abc import Callable, Iterable
from typing import Any

from suitebench.suite.inside.batch.hotpatch import LivePrograms, NotPatchable, read_source
from suitebench.suite.inside.probe import fingerprint as fp
from suitebench.suite.inside.probe import impact

_CONTAINERS = (tuple, list, dict, set, frozenset)
# What a fresh module's namespace holds before its code runs.
_MODULE_KEYS = (
    "__name__", "__package__", "__loader__", "__spec__", "__file__", "__cached__",
    "__builtins__", "__path__",
)  # fmt: skip


class _MissingType:
    """A global the module does not have."""


_MISSING = _MissingType()


def plain_data(value: Any) -> bool:
    """Numbers, strings, bytes, compiled patterns and tuples, lists, dicts and sets of them."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind in fp.ATOMS or kind is re.Pattern:
            continue
        if kind not in _CONTAINERS:
            return False
        if id(current) in seen:
            continue
        seen.add(id(current))
        if kind is dict:
            stack.extend(x for pair in current.items() for x in pair)
        else:
            stack.extend(current)
    return True


class Reimport:
    """What the collector knows of its live program, taken once before its first fork:
    its fingerprint, its modules by file, the values referenced outside their own module's
    globals, and the names the suite's import-time code reads.  ``why_not`` says why no
    import-time mutant can be carried over (then every one is imported afresh)."""

    def __init__(
        self,
        root: str,
        live: LivePrograms,
        suite_root: str,
        collection_reads: Iterable[str] = (),
        collection_calls: Iterable[str] = (),
    ) -> None:
        self.root = root.rstrip("/")
        self.live = live
        self.why_not = ""
        self.modules: dict[str, tuple[str, types.ModuleType]] = {}
        self.program: set[str] = set()  # the program's module names
        self.shared: set[int] = set()
        self.names: set[str] = set()  # read by the suite's import-time code
        self.loaded: set[str] = set()  # the same, less those only imported
        # read by the program code the suite's collection ran (a parametrization it built),
        # and that code's functions ("file:first line")
        self.called = set(collection_reads)
        self.calls = set(collection_calls)
        self.reference: dict[str, str] = {}
        self.last: dict[str, str] = {}  # the last module carried over, fingerprinted
        # Each changed module's own fingerprint and the rest's, as collected (a child's first
        # module starts from there).
        self.before: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
        try:
            self.reference = fp.fingerprint(self.root)
        except Exception as exc:  # Unknown, or an object whose attributes raise
            self.why_not = f"the collected program cannot be fingerprinted: {exc}"
            return
        for name, module in fp.program_modules(self.root):
            self.program.add(name)
            origin = getattr(module, "__file__", None)
            if isinstance(origin, str):
                self.modules[origin] = (name, module)
        suite = impact.TestNames(suite_root)
        self.names = suite.import_time()
        self.loaded = suite.import_time(imports=False)
        if impact.STAR in self.names or self.names & impact.DYNAMIC_NAMES:
            self.why_not = "the suite's import-time code reads names it computes"
            return
        if impact.STAR in self.called or self.called & impact.DYNAMIC_NAMES:
            self.why_not = "the program code the suite ran while collected reads names it computes"
            return
        self.shared = self._shared()
        for rel in live.sources:
            entry = self.modules.get(f"{self.root}/{rel}")
            if entry is not None and not self.why_not:
                try:
                    self.before[entry[0]] = _split(self.root, entry[0])
                except NotPatchable as exc:
                    self.why_not = str(exc)

    def _shared(self) -> set[int]:
        """Ids of the program's global values that something besides their own module's
        globals refers to (another module, a test module, a default argument, a container).
        A number, string or compiled pattern (``re`` caches those) counts when another program
        module binds the same object."""
        owner: dict[int, int] = {}  # id(value) -> id of the globals dict holding it
        values: list[Any] = []
        atoms: dict[int, int] = {}
        dicts = {id(vars(module)) for _, module in self.modules.values()}
        for _, module in self.modules.values():
            namespace = vars(module)
            for key, value in namespace.items():
                if key in fp.SKIP_GLOBALS:
                    continue
                if isinstance(value, fp.ATOMS) or type(value) is re.Pattern:  # immutable
                    atoms[id(value)] = atoms.get(id(value), 0) + 1
                elif id(value) not in owner:
                    owner[id(value)] = id(namespace)
                    values.append(value)
        shared = {key for key, count in atoms.items() if count > 1}
        # Objects of the batch's parent sit in the permanent generation, which
        # ``get_referrers`` does not search: thaw them for the search (both are list splices).
        frozen = gc.get_freeze_count() > 0
        if frozen:
            gc.unfreeze()
        try:
            referrers = gc.get_referrers(*values)
        finally:
            if frozen:
                gc.freeze()
        for referrer in referrers:
            if referrer is values or isinstance(referrer, types.FrameType):
                continue
            if id(referrer) in dicts:
                for value in referrer.values():
                    if owner.get(id(value), id(referrer)) != id(referrer):
                        shared.add(id(value))
                continue
            shared.update(id(x) for x in gc.get_referents(referrer) if id(x) in owner)
        return shared

    def merge(self, program_root: str, files: list[str]) -> tuple[dict[str, str], list[str]]:
        """In a child: make the live program the one under ``program_root`` (the link now
        points there) by running each changed module of ``files`` anew and carrying over what
        differs.  Returns the program's fingerprint afterwards and the globals carried over;
        raises :class:`NotPatchable` (nothing of the child's run has happened yet)."""
        if self.why_not:
            raise NotPatchable(self.why_not)
        fp.forget_paths(self.root)  # the link points at another tree now
        carried: list[str] = []
        for rel in sorted(files):
            path = f"{self.root}/{rel}"
            source = read_source(os.path.join(program_root, rel))
            if source == self.live.sources.get(rel):
                continue
            entry = self.modules.get(path)
            if entry is None:
                continue  # not imported: a test that imports it reads its own file
            if source is None or not rel.endswith(".py"):
                raise NotPatchable(f"{rel} is removed or not Python source")
            self._module(entry, rel, path, source, carried)
        linecache.clearcache()  # tracebacks read the child's own files
        if not carried:
            return self.reference, carried
        if len(self.modules) == 1:  # the module's own fingerprint is the program's
            return self.last, carried
        return _fingerprint(self.root), carried

    def _module(
        self,
        entry: tuple[str, types.ModuleType],
        rel: str,
        path: str,
        source: bytes,
        carried: list[str],
    ) -> None:
        """Run one module anew and carry over what differs.  Each module's globals are
        compared on their own (a re-exported name is one object reached from two modules:
        compared together, a value run anew would differ from the live one by that alone);
        the other modules must fingerprint as before, and what they share with this one is
        kept apart by :meth:`_shared`."""
        name, module = entry
        live = vars(module)

        def this(module_name: str) -> bool:
            return module_name == name

        def others(module_name: str) -> bool:
            return module_name != name

        try:
            code = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            raise NotPatchable(f"{rel} does not compile: {exc}") from exc
        if not carried and name in self.before:
            current, around = self.before[name]
        else:
            current, around = _split(self.root, name)
        fresh: dict[str, Any] = {k: live[k] for k in _MODULE_KEYS if k in live}
        fresh["__doc__"] = None
        try:
            exec(code, fresh)
        except BaseException as exc:  # the fresh import reports it as pytest would
            raise NotPatchable(f"running {rel} anew raised {type(exc).__name__}") from None
        if _fingerprint(self.root, modules=others) != around:
            raise NotPatchable(f"running {rel} anew changed another module of the program")
        expected = _fingerprint(self.root, namespaces={name: fresh}, modules=this)
        prefix = f"{name}:"
        steps: list[Step] = []
        for key in sorted((live.keys() | fresh.keys()) - fp.SKIP_GLOBALS):
            if current.get(prefix + key) == expected.get(prefix + key):
                continue
            steps += self._step(key, live.get(key, _MISSING), fresh.get(key, _MISSING),
                                live, fresh)  # fmt: skip
        for step in steps:
            _carry(live, step)
            owner = step[0]
            where = "" if isinstance(owner, dict) else f"{owner.__qualname__}."
            carried.append(f"{prefix}{where}{step[1]}")
        found = _fingerprint(self.root, modules=this)
        if found != expected:
            labels = found.keys() | expected.keys()
            differ = sorted(k for k in labels if found.get(k) != expected.get(k))
            raise NotPatchable(f"the carried-over module differs from the mutant's: {differ[:3]}")
        self.last = found

    def _step(
        self, key: str, before: Any, after: Any, live: dict[str, Any], fresh: dict[str, Any]
    ) -> list[Step]:
        """How one changed global is carried over; raises :class:`NotPatchable`."""
        if before is after:
            raise NotPatchable(f"running the module anew changed {key} in place")
        # A function or class changed in place is what a module that imported it holds; a
        # value rebound is not, and what the suite read at collection was the old one.
        classes = isinstance(before, type) and isinstance(after, type)
        in_place = classes or (_function_of(before, live, key) and _function_of(after, fresh, key))
        if key in (self.loaded if in_place else self.names):
            raise NotPatchable(f"the suite's import-time code names {key}, which changed")
        if key in self.called:
            raise NotPatchable(
                f"the program code the suite ran while collected reads {key}, which changed"
            )
        if classes:
            return self._class_steps(key, before, after, live, fresh)
        return [self._value_step(live, key, key, before, after, live, fresh)]

    def _value_step(
        self,
        owner: Any,
        key: str,
        qualname: str,
        before: Any,
        after: Any,
        live: dict[str, Any],
        fresh: dict[str, Any],
        atoms_only: bool = False,
    ) -> Step:
        """A function changed (its code, defaults and docstring set in place) or added, or a
        data value rebound; raises :class:`NotPatchable` for anything else."""
        step = (owner, key, before, after)
        if after is not _MISSING and _function_of(after, fresh, qualname):
            if before is _MISSING:
                return step
            if _function_of(before, live, qualname):
                code = before.__code__
                rel = code.co_filename[len(self.root) + 1 :]
                if f"{rel}:{code.co_firstlineno}" in self.calls:
                    raise NotPatchable(f"the suite's collection ran {qualname}, which changed")
                where = (code.co_filename, code.co_qualname, code.co_firstlineno)
                if where in self.live.suspended:
                    raise NotPatchable(f"a suspended generator runs {qualname}")
                if len(self.live.functions.get(where, [before])) > 1:
                    raise NotPatchable(f"{qualname} has other live copies of its code")
                return step
        elif all(v is _MISSING or _data(v, atoms_only) for v in (before, after)):
            if before is not _MISSING and id(before) in self.shared:
                raise NotPatchable(f"{qualname} is referenced outside its module's globals")
            return step
        kind = type(before if after is _MISSING else after).__name__
        raise NotPatchable(f"{qualname} ({kind}) changed on import: not carried over")

    def _class_steps(
        self, key: str, before: type, after: type, live: dict[str, Any], fresh: dict[str, Any]
    ) -> list[Step]:
        """A class of the module whose methods or constants changed: each changed attribute
        carried over as a global is (constants only numbers, strings and patterns: what else
        holds them is not known)."""
        same = (before.__module__, before.__qualname__, type(before)) == (
            after.__module__,
            after.__qualname__,
            type(after),
        )
        if not same or before.__qualname__ != key:
            raise NotPatchable(f"{key} is not one class in both")
        own: list[dict[str, str]] = []
        for cls in (before, after):
            roots = [("(bases)", cls.__bases__)]
            roots += [(a, v) for a, v in vars(cls).items() if a not in fp.SKIP_CLASS]
            own.append(fp.digest_roots(roots, self.program))
        if own[0]["(bases)"] != own[1]["(bases)"]:
            raise NotPatchable(f"the bases of {key} changed")
        steps: list[Step] = []
        for attr in sorted((own[0].keys() | own[1].keys()) - {"(bases)"}):
            if own[0].get(attr) != own[1].get(attr):
                if attr in self.called:  # (a function's reads name the attributes too)
                    raise NotPatchable(
                        f"the program code the suite ran while collected reads {key}.{attr}, "
                        "which changed"
                    )
                old, new = (vars(c).get(attr, _MISSING) for c in (before, after))
                qualname = f"{key}.{attr}"
                steps.append(self._value_step(before, attr, qualname, old, new, live, fresh, True))
        return steps


Step = tuple[Any, str, Any, Any]  # (the module's globals or a class, name, before, after)


def _function_of(value: Any, namespace: dict[str, Any], qualname: str) -> bool:
    """A function defined by a plain ``def`` at ``qualname`` in ``namespace``'s module (not
    a closure, not a wrapper a decorator made)."""
    return (
        type(value) is types.FunctionType
        and value.__closure__ is None
        and value.__globals__ is namespace
        and value.__qualname__ == qualname
    )


def _data(value: Any, atoms_only: bool) -> bool:
    if atoms_only:
        return isinstance(value, fp.ATOMS) or type(value) is re.Pattern
    return plain_data(value)


def _carry(live: dict[str, Any], step: Step) -> None:
    owner, key, before, after = step
    if after is _MISSING:
        if isinstance(owner, dict):
            del owner[key]
        else:
            delattr(owner, key)
        return
    if type(after) is types.FunctionType and type(before) is types.FunctionType:
        for attr in ("__code__", "__defaults__", "__kwdefaults__", "__doc__", "__annotations__"):
            setattr(before, attr, getattr(after, attr))
        return
    if type(after) is types.FunctionType:  # a new function, reading the live globals
        function = types.FunctionType(after.__code__, live, after.__name__, after.__defaults__)
        for attr in ("__kwdefaults__", "__doc__", "__annotations__", "__qualname__", "__module__"):
            setattr(function, attr, getattr(after, attr))
        function.__dict__.update(after.__dict__)
        after = function
    if isinstance(owner, dict):
        owner[key] = after
    else:
        setattr(owner, key, after)


def _split(root: str, name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The fingerprint of module ``name``'s globals, and of the other modules'."""
    return (
        _fingerprint(root, modules=lambda module: module == name),
        _fingerprint(root, modules=lambda module: module != name),
    )


def _fingerprint(
    root: str,
    namespaces: dict[str, dict[str, Any]] | None = None,
    modules: Callable[[str], bool] | None = None,
) -> dict[str, str]:
    try:
        return fp.fingerprint(root, namespaces=namespaces, modules=modules)
    except Exception as exc:  # Unknown, or an object whose attributes raise
        raise NotPatchable(f"the program cannot be fingerprinted: {exc}") from None
