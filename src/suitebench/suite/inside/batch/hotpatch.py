"""Patch a mutant's changed function bodies into an already imported program (in the sandbox).

A ``kind = "python"`` mutant whose change lies only inside function bodies that run in tests
alone (never while the suite is imported or collected: :func:`suitebench.suite.select.selection.
select_tests` says so) leaves everything its import builds as the reference's import builds
it -- the same globals, classes, tables and collected tests -- except the code of the changed
functions.  So a batch of such mutants need not import the program and collect the suite once
per mutant: the batch collects once, and each forked child swaps the changed functions' code
into the live function objects (``function.__code__``), wherever they are referenced from (a
test module's ``from pkg import f`` holds the same object).

Whether that is the same as a fresh import is checked, not assumed, on the code objects
themselves: the mutant's module compiles to the same module and class-level code (byte code,
names, constants; only line numbers may move), every function whose code differs has live
objects whose code is exactly the reference's, no suspended generator runs old code, and the
patched code fits each object (its closure).  Anything else -- a changed default argument or
decorator, a function defined twice on one line, a module compiled by someone else (pytest's
assertion rewriting) -- and the child runs the fresh import instead, as before.

Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import gc
import inspect
import os
import types
from typing import Any

# module and class bodies lack CO_OPTIMIZED; functions (and comprehensions) have it
_FUNCTION = inspect.CO_OPTIMIZED
Key = tuple[str, str, int]  # (file, qualified name, first line) of a code object


class NotPatchable(Exception):
    """The mutant cannot be patched in: its child imports the program afresh."""


def _const_key(value: Any) -> Any:
    """A constant compared strictly: ``1``, ``1.0`` and ``True`` are different constants."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_const_key(v) for v in value))
    if isinstance(value, frozenset):
        return ("frozenset", frozenset(_const_key(v) for v in value))
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, complex):
        return ("complex", value.real.hex(), value.imag.hex())
    return (type(value).__name__, value)


def _nested(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _docstring(code: types.CodeType) -> Any:
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


_BODY_FIELDS = (
    "co_code",
    "co_names",
    "co_varnames",
    "co_freevars",
    "co_cellvars",
    "co_flags",
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_exceptiontable",
)


def _pair(old: types.CodeType, new: types.CodeType, pairs: list[tuple[Any, Any]]) -> None:
    """Walk two compilations of one module side by side: raise :class:`NotPatchable` where
    module or class-level code differs (beyond line numbers), and collect the pairs of
    function code objects that differ at all (body, or only where their lines are)."""
    if (old.co_name, old.co_qualname) != (new.co_name, new.co_qualname):
        raise NotPatchable(f"{old.co_qualname} and {new.co_qualname} are not one definition")
    if old.co_flags & _FUNCTION:
        if old == new:
            return  # the same code at the same lines, its nested code too
        pairs.append((old, new))
        inner_old, inner_new = _nested(old), _nested(new)
        if [c.co_qualname for c in inner_old] == [c.co_qualname for c in inner_new]:
            for o, n in zip(inner_old, inner_new, strict=True):
                _pair(o, n, pairs)
        else:  # closures made from the old code must not be alive (checked by the caller)
            pairs.extend((o, None) for o in inner_old)
        return
    for name in _BODY_FIELDS:
        if getattr(old, name) != getattr(new, name):
            raise NotPatchable(f"code of {old.co_qualname} that runs on import differs")
    if len(old.co_consts) != len(new.co_consts):
        raise NotPatchable(f"constants of {old.co_qualname} differ")
    for o, n in zip(old.co_consts, new.co_consts, strict=True):
        if isinstance(o, types.CodeType) and isinstance(n, types.CodeType):
            _pair(o, n, pairs)
        elif isinstance(o, types.CodeType) or isinstance(n, types.CodeType):
            raise NotPatchable(f"constants of {old.co_qualname} differ")
        elif _const_key(o) != _const_key(n):
            raise NotPatchable(f"a constant of {old.co_qualname} (run on import) differs")


def _keys(code: types.CodeType, filename: str, into: dict[Key, int]) -> None:
    key = (filename, code.co_qualname, code.co_firstlineno)
    into[key] = into.get(key, 0) + 1
    for inner in _nested(code):
        _keys(inner, filename, into)


class LivePrograms:
    """What the batch's collector imported of the program: every live function object and
    suspended generator defined in its files, indexed by their code's (file, qualified name,
    first line), and the source each file was imported from.  Built once after collection,
    before the first fork; ``root`` is the program's source root as its modules know it."""

    def __init__(self, root: str, files: set[str]) -> None:
        self.root = root.rstrip("/")
        prefix = self.root + "/"
        self.functions: dict[Key, list[types.FunctionType]] = {}
        self.suspended: set[Key] = set()
        self.imported: set[str] = set()
        for module in list(__import__("sys").modules.values()):
            origin = getattr(module, "__file__", None)
            if isinstance(origin, str) and origin.startswith(prefix):
                self.imported.add(origin)
        suspended_types = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
        # Frozen objects are not listed: all of the program's are younger than the batch's
        # freeze (its configuration imported none of the program, or it would not be here).
        for obj in gc.get_objects():
            if isinstance(obj, types.FunctionType):
                code = obj.__code__
                if code.co_filename.startswith(prefix):
                    key = (code.co_filename, code.co_qualname, code.co_firstlineno)
                    self.functions.setdefault(key, []).append(obj)
                    self.imported.add(code.co_filename)
            elif isinstance(obj, suspended_types):
                running = getattr(obj, "gi_code", None) or getattr(obj, "cr_code", None)
                running = running or getattr(obj, "ag_code", None)
                if isinstance(running, types.CodeType) and running.co_filename.startswith(prefix):
                    self.suspended.add(
                        (running.co_filename, running.co_qualname, running.co_firstlineno)
                    )
        self.sources: dict[str, bytes | None] = {rel: read_source(prefix + rel) for rel in files}
        self._compiled: dict[str, types.CodeType] = {}

    def _old_code(self, rel: str, source: bytes) -> types.CodeType:
        code = self._compiled.get(rel)
        if code is None:
            code = compile(source, f"{self.root}/{rel}", "exec", dont_inherit=True)
            self._compiled[rel] = code
        return code

    def plan(self, program_root: str, files: list[str]) -> list[tuple[Any, Any]]:
        """What to set in a child so that the imported program is the one under
        ``program_root``: ``(function, code)`` pairs (``code`` the new ``__code__``, or a
        ``("__doc__", text)`` pair for a changed docstring).  Raises :class:`NotPatchable`."""
        steps: list[tuple[Any, Any]] = []
        for rel in sorted(files):
            path = f"{self.root}/{rel}"
            if rel not in self.sources:
                raise NotPatchable(f"{rel} was not read by the batch")
            old = self.sources[rel]
            new = read_source(os.path.join(program_root, rel))
            if old == new:
                continue
            if path not in self.imported:
                continue  # not imported: a child that imports it reads its own file
            if old is None or new is None or not rel.endswith(".py"):
                raise NotPatchable(f"{rel} is added, removed or not Python source")
            old_code = self._old_code(rel, old)
            new_code = built_code(os.path.join(program_root, rel), new, path)
            if new_code is None:
                try:
                    new_code = compile(new, path, "exec", dont_inherit=True)
                except (SyntaxError, ValueError) as exc:
                    raise NotPatchable(f"{rel} does not compile: {exc}") from exc
            pairs: list[tuple[Any, Any]] = []
            _pair(old_code, new_code, pairs)
            counts: dict[Key, int] = {}
            _keys(old_code, path, counts)
            for o, n in pairs:
                key = (path, o.co_qualname, o.co_firstlineno)
                if counts.get(key, 0) > 1:
                    raise NotPatchable(f"two definitions of {o.co_qualname} on line {key[2]}")
                if key in self.suspended:
                    raise NotPatchable(f"a suspended generator runs {o.co_qualname}")
                for function in self.functions.get(key, ()):
                    if function.__code__ != o:
                        raise NotPatchable(f"{o.co_qualname} is not the code its file compiles to")
                    if n is None:
                        raise NotPatchable(f"a closure of {o.co_qualname} changed shape")
                    if len(n.co_freevars) != len(function.__closure__ or ()):
                        raise NotPatchable(f"the closure of {o.co_qualname} changed")
                    steps.append((function, n))
                    if _docstring(o) != _docstring(n) and function.__doc__ == _docstring(o):
                        steps.append((function, ("__doc__", _docstring(n))))
        return steps

    def forget(self) -> None:
        """Drop what was read of the first program's files (in a child, once patched: another
        mutant's source is none of its tests' business)."""
        self.sources.clear()
        self._compiled.clear()
        self.functions.clear()


def built_code(source_path: str, source: bytes, filename: str) -> types.CodeType | None:
    """The code the build compiled from ``source`` (the file at ``source_path``), as
    ``compile(source, filename, "exec", dont_inherit=True)`` gives it, read from the bytecode
    file the build wrote beside it (:func:`suitebench.run.pycompile.compile_check`: only for a
    module that compiles without a warning) -- or None, when there is none this interpreter
    takes as its own for that very file (its magic, its cache tag, the source's time and
    size), and the caller compiles.  Loading it costs a tenth of compiling the module again
    in the batch's parent, once per mutant."""
    import _imp
    import importlib.util
    import marshal

    try:
        with open(importlib.util.cache_from_source(source_path), "rb") as fh:
            data = fh.read()
        stat = os.stat(source_path)
    except (OSError, ValueError, NotImplementedError):
        return None
    stamp = (int(stat.st_mtime) & 0xFFFFFFFF, len(source) & 0xFFFFFFFF)
    if (
        len(data) < 16
        or data[:4] != importlib.util.MAGIC_NUMBER
        or int.from_bytes(data[4:8], "little") != 0  # checked by time, not by hash
        or (int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")) != stamp
        or stat.st_size != len(source)
    ):
        return None
    try:
        code = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return None
    fix = getattr(_imp, "_fix_co_filename", None)  # what an import calls: every nested code too
    if not isinstance(code, types.CodeType) or fix is None:
        return None
    fix(code, filename)
    return code


def read_source(path: str) -> bytes | None:
    """A source file's bytes, or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def apply(steps: list[tuple[Any, Any]]) -> None:
    """Set what :meth:`LivePrograms.plan` planned (in the child, after the fork)."""
    import linecache

    for function, change in steps:
        if isinstance(change, tuple):
            setattr(function, change[0], change[1])
        else:
            function.__code__ = change
    linecache.clearcache()  # tracebacks read the child's own files
