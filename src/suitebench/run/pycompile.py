"""Compiling a Python package as its build: every module must compile, and each clean one gets
its bytecode written beside it.

A Python package has no build of its own, but a mutant with a syntax error must not count as a
program: compiling every module is its build check. Compiling parses and runs nothing of the
program, so it is done in this process when the package is small (a process per mutant cost
~50 ms, more than scoring a small mutant); a large package, or one for another interpreter, is
compiled in the sandbox by :data:`COMPILE_CHECK`.  Another interpreter whose compiler is this
process's (a project's venv made from the same Python: the same cache tag, bytecode magic and
version) compiles to the same code and warnings, so it is compiled here too.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import Any, TypeVar

from suitebench.run.pyblocks import changed_block

_T = TypeVar("_T")

__all__ = [
    "COMPILE_CHECK",
    "COMPILING",
    "compile_check",
    "compile_quietly",
    "drawing",
    "same_bytecode",
    "same_code",
    "warnings_ignored",
    "write_bytecode",
]

#: The check run in the sandbox, for an interpreter whose compiler is not this process's:
#: ``python -I -c COMPILE_CHECK <package>``; exit 1 and one line per module that does not
#: compile on stderr; as :func:`compile_check`, each clean module (no warning) gets its bytecode
#: written beside it, so the processes the tests start load it instead of compiling again.
COMPILE_CHECK = """
import importlib.util, pathlib, sys, warnings
from importlib import _bootstrap_external as ext
bad = 0
for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):
    try:
        with warnings.catch_warnings(record=True) as drawn:
            warnings.simplefilter('always')
            code = compile(p.read_bytes(), str(p), 'exec', dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        print(f'{p}: {exc}', file=sys.stderr); bad = 1
        continue
    if drawn or not hasattr(ext, '_code_to_timestamp_pyc'):
        continue
    try:
        st = p.stat()
        target = pathlib.Path(importlib.util.cache_from_source(str(p)))
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(bytes(ext._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)))
    except OSError:
        pass
sys.exit(bad)
"""

_COMPILE_HERE_BYTES = 4 * 1024 * 1024

#: The warning filters are the process's: whatever changes them while compiling takes turns
#: (:func:`drawing`, :func:`warnings_ignored`), so one thread's filters never hide or record
#: another's warnings.
COMPILING = threading.Lock()


def drawing(work: Callable[[], _T], filename: str) -> tuple[_T, bool]:
    """``work()``, which parses, rewrites or compiles the source of ``filename``, and whether
    that drew a warning of the file's own (a ``SyntaxWarning``, an invalid escape, pytest's
    "assertion is always true").  A warning of another file is not the source's: a finalizer
    the collector runs meanwhile (an unclosed file's ``ResourceWarning``), another thread's.
    Raises what ``work`` raises."""
    with COMPILING, warnings.catch_warnings(record=True) as drawn:
        warnings.simplefilter("always")
        result = work()
    return result, any(os.fspath(w.filename) == filename for w in drawn)


@contextlib.contextmanager
def warnings_ignored() -> Iterator[None]:
    """No warning shown while the block parses or compiles a mutant (its ``SyntaxWarning`` is
    its run's to show), taking turns with :func:`drawing`."""
    with COMPILING, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def compile_quietly(source: bytes, filename: str) -> tuple[CodeType, bool]:
    """``compile`` without the ``SyntaxWarning`` a mutant's code may draw (``"is" with a
    literal``): the program's, not ours, and it would land amid the progress bar; with whether
    it drew one (:func:`drawing`).  Raises what ``compile`` raises."""
    return drawing(lambda: compile(source, filename, "exec", dont_inherit=True), filename)


# What a code object holds that the program runs or reads at run time; left out: the lines
# (co_firstlineno, co_linetable, co_lnotab: positions only) and co_filename (the same file).
_CODE_FIELDS = (
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_nlocals",
    "co_stacksize",
    "co_flags",
    "co_code",
    "co_names",
    "co_varnames",
    "co_freevars",
    "co_cellvars",
    "co_name",
    "co_qualname",
    "co_exceptiontable",
)


def _const_key(value: object) -> object:
    """A constant as the program sees it: ``1``, ``1.0`` and ``True`` are equal in Python but
    not the same constant (nor are ``0.0`` and ``-0.0``, or two NaNs), so each is keyed by its
    type and its repr; tuples and frozensets by their members, code objects by
    :func:`_code_key`."""
    if isinstance(value, CodeType):
        return ("code", _code_key(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_const_key(v) for v in value))
    if isinstance(value, frozenset):
        return ("frozenset", frozenset(_const_key(v) for v in value))
    return (type(value).__qualname__, repr(value))


def _code_key(code: CodeType) -> tuple[object, ...]:
    fields = tuple(getattr(code, name, None) for name in _CODE_FIELDS)
    return (*fields, tuple(_const_key(c) for c in code.co_consts))


def same_code(a: CodeType, b: CodeType) -> bool:
    """Whether two code objects are the same program, line numbers aside: the same
    instructions, names and constants (docstrings and string annotations are constants, so a
    changed one differs), recursively through nested functions and classes."""
    return _code_key(a) == _code_key(b)


def same_bytecode(original: bytes, mutated: bytes, filename: str) -> bool:
    """Trivial compiler equivalence for a Python module: ``mutated`` compiles to the code
    ``original`` does (:func:`same_code`) and draws a compile-time warning exactly when it
    does (under ``filterwarnings = error`` a new ``SyntaxWarning`` fails the import). False
    when either does not compile."""
    block = changed_block(original, mutated)
    if block is not None:  # the changed statements alone (:mod:`.pyblocks`)
        try:
            ours, warned = _compiled_key(block.before, filename)
            theirs, warns = compile_quietly(block.after, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # read whole, as before
        else:
            if ours != _code_key(theirs):
                return False
            if warned == warns:  # (else another statement's warning may stand for both)
                return True
    try:
        ours, warned = _compiled_key(original, filename)
        theirs, warns = compile_quietly(mutated, filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return warned == warns and ours == _code_key(theirs)


@functools.lru_cache(maxsize=256)
def _compiled_key(source: bytes, filename: str) -> tuple[tuple[object, ...], bool]:
    """The reference module's (or block's) :func:`_code_key` and warning: a score compares every
    mutant of a module with it, one after another (compiled once, not once a mutant)."""
    code, warned = compile_quietly(source, filename)
    return _code_key(code), warned


def write_bytecode(path: Path, code: CodeType) -> None:
    """The module's ``__pycache__`` entry, as the interpreter would write it (timestamp-checked
    against the source, so a stale one is never used): every Python process the suite starts
    on this program (``python -m package``) then loads it instead of compiling the source
    again (runs set ``PYTHONDONTWRITEBYTECODE``).  Only for a module that compiles without a
    warning: one that draws a ``SyntaxWarning`` must draw it again when imported (under
    ``filterwarnings = error`` it fails the import), which loading bytecode would not."""
    pyc = _pyc_bytes(code, path.stat())
    if pyc:
        _write_pyc(path, pyc)


def compile_check(package: Path) -> str | None:
    """Whether every module of a package compiles: the errors, one line each ('' if none), as
    :data:`COMPILE_CHECK` prints them in the sandbox -- or None when the package is too large
    to check here. Each module that compiles gets its bytecode written beside it. Compiling
    parses and runs nothing of the program (the interpreter's own recursion and nesting limits
    end a pathological source with an error), so no sandbox is needed."""
    files = sorted(package.rglob("*.py"))
    if sum(p.stat().st_size for p in files) > _COMPILE_HERE_BYTES:
        return None
    errors: list[str] = []
    for p in files:
        source = p.read_bytes()
        stat = p.stat()
        key = (hashlib.blake2b(source, digest_size=16).digest(), int(stat.st_mtime), stat.st_size)
        pyc = _recall(key)
        if pyc is None:
            try:
                code, warned = compile_quietly(source, str(p))
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                errors.append(f"{p}: {exc}")
                continue
            pyc = b"" if warned else _pyc_bytes(code, stat)
            _remember(key, pyc)
        try:
            if pyc:
                _write_pyc(p, pyc)
        except OSError:
            pass  # a read-only tree: its processes compile the source, as before
    return "".join(line + "\n" for line in errors)


# (source digest, mtime, size) -> [the module's bytecode file (b"": it compiles with a
# warning), times reused]: a mutant's tree is the reference's with a file or two changed, every
# module sealed to one time (``run/tree.py``, ``seal``), so each unchanged one compiles once,
# not once a mutant (toolz: ~30 modules a tree).  The code's file name inside is the first
# tree's; importing fixes it to the module's own path.  Past a budget, the entries never reused
# (a mutant's own changed module) are dropped.
_COMPILED: dict[tuple[bytes, int, int], list[Any]] = {}
_COMPILED_BUDGET = 32 * 1024 * 1024


def _recall(key: tuple[bytes, int, int]) -> bytes | None:
    with COMPILING:
        entry = _COMPILED.get(key)
        if entry is None:
            return None
        entry[1] += 1
        return bytes(entry[0])


def _remember(key: tuple[bytes, int, int], pyc: bytes) -> None:
    with COMPILING:
        if sum(len(e[0]) for e in _COMPILED.values()) + len(pyc) > _COMPILED_BUDGET:
            for stale in [k for k, e in _COMPILED.items() if not e[1]]:
                del _COMPILED[stale]
        _COMPILED[key] = [pyc, 0]


def _pyc_bytes(code: CodeType, stat: os.stat_result) -> bytes:
    to_pyc = getattr(importlib._bootstrap_external, "_code_to_timestamp_pyc", None)
    return b"" if to_pyc is None else bytes(to_pyc(code, int(stat.st_mtime), stat.st_size))


def _write_pyc(path: Path, pyc: bytes) -> None:
    """The module's bytecode file, made anew (a file there before is unlinked, never written
    through)."""
    target = Path(importlib.util.cache_from_source(str(path)))
    target.parent.mkdir(exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    target.write_bytes(pyc)


def compiled_quietly(path: Path) -> bool:
    """Whether the build compiled the module at ``path`` without a warning: its bytecode
    (written only for such modules, by this interpreter's cache tag) stands beside it and was
    made from this very source (its size and time)."""
    try:
        stat = path.stat()
        with open(importlib.util.cache_from_source(str(path)), "rb") as fh:
            head = fh.read(16)
    except (OSError, ValueError, NotImplementedError):
        return False
    stamp = int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF
    return (
        len(head) == 16
        and head[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(head[4:8], "little") == 0  # checked by time, not by hash
        and (int.from_bytes(head[8:12], "little"), int.from_bytes(head[12:16], "little")) == stamp
    )
