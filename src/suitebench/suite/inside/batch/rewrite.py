"""pytest's assertion rewriting, paid once per suite on the host instead of once per sandbox.

pytest rewrites the asserts of every test module (and conftest file) it imports, so that a
failing ``assert add(2, 2) == 5`` explains itself (``assert 4 == 5``).  It caches the result
as a pyc beside the module, but no bytecode is written where suites run, so every sandboxed
pytest start (each reference run, the coverage run, every batch) rewrote every module again:
~0.11 s of a ~0.45 s reference run on a 240-test suite of 6 modules.

Two halves, one format:

* **host** (:func:`suitebench.suite.execute.rewritecache.write_rewrite_cache`, in the worker
  that launches the sandbox; its own module, for this one is loaded inside too): compiles
  every ``*.py`` of the suite exactly as pytest's ``_rewrite_test`` does -- ``ast.parse``,
  ``rewrite_asserts``, ``compile(..., "exec", dont_inherit=True)`` -- under a placeholder file
  name, memoised per (source digest, relative path, pytest version, Python version) for the
  life of the worker, and writes per launch one file beside the run's work dir: per relative
  path, the source's digest and the marshalled code.  Compiling runs none of the suite's code.
* **sandbox** (:func:`use_host_cache`, from the suitebench pytest plugin before the conftest
  files are imported): answers pytest's pyc lookup (``_read_pyc``) for a file whose bytes hash
  to the digest, with the code's file name set to the real path (``_imp._fix_co_filename``,
  what importlib does for every pyc it loads: 0.17 ms for the 6 modules above, against 0.65 ms
  for ``code.replace`` through every nested code object and 24 ms to compile them again from
  the rewritten tree); anything else pytest rewrites itself, as before.

Code compiled on the host is the code pytest would compile only under the configuration it
reads: ``enable_assertion_pass_hook`` false (a suite that sets it true gets no host code), no
``-O``.  A file that does not parse, or whose rewriting or compiling warns (a warning a suite's
``filterwarnings = error`` turns into a collection error) is left to pytest in the sandbox.

This module is the sandbox half and the format: it must stay importable with nothing but the
standard library (pytest's own modules are imported when used), for it runs inside the
sandbox.  It holds no assert statements.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import sys
import types
from pathlib import Path
from typing import Any

CACHE_NAME = "rewrite-cache.marshal"  # in the run's base dir, beside work/ and out/
SERVED_NAME = "rewrite-served.txt"  # in out/: one line per module pytest took from the cache
PLACEHOLDER = "<suitebench: rewritten on the host>"
FORMAT = 1


def digest_of(data: bytes) -> bytes:
    """The source digest a cached module is valid for (the bytes pytest would read)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def environment() -> tuple[str, str, bytes]:
    """What rewritten code depends on besides the source: pytest's rewriter, the interpreter
    (bytecode and marshal format)."""
    import _pytest

    return str(_pytest.__version__), sys.version, importlib.util.MAGIC_NUMBER


# -- sandbox -------------------------------------------------------------------------------

# Real path -> (source digest, code or marshalled code, relative path or None when the module
# was rewritten in the sandbox itself:
# :func:`suitebench.suite.inside.batch.warm.prime_rewrite_cache`).
_Entry = tuple[bytes, types.CodeType | bytes, str | None]
_modules: dict[str, _Entry] = {}
_lookup: dict[str, Any] = {"original": None, "served_log": None}


def use_host_cache(path: str, *, assertion_pass_hook: bool) -> int:
    """Have pytest's pyc lookup answer from the host's file; the number of modules it offers
    (0 when it does not apply: the suite enables the assertion pass hook, the interpreter
    optimises, or the file was written by another pytest or Python)."""
    if assertion_pass_hook or sys.flags.optimize:
        return 0
    try:
        with open(path, "rb") as fh:
            record = marshal.load(fh)
        if (
            not isinstance(record, dict)
            or record.get("format") != FORMAT
            or (record.get("pytest"), record.get("python"), record.get("magic")) != environment()
        ):
            return 0
        root = Path(record["root"])
        offered = {str(root / rel): (d, blob, rel) for rel, (d, blob) in record["modules"].items()}
    except (OSError, ValueError, EOFError, TypeError, KeyError, ImportError):
        return 0
    if not install_lookup():
        return 0
    _lookup["served_log"] = record.get("served_log")
    _modules.update(offered)
    return len(offered)


def add_module(path: str, digest: bytes, code: types.CodeType) -> None:
    """A module rewritten in the sandbox, to serve to later imports of the same bytes."""
    _modules[path] = (digest, code, None)


def covers(path: str, digest: bytes) -> bool:
    """Whether the lookup already answers for these bytes at this path."""
    entry = _modules.get(path)
    return entry is not None and entry[0] == digest


def install_lookup() -> bool:
    """Put :func:`_cached_read_pyc` in front of pytest's pyc lookup (once); False when
    pytest's private rewrite functions are not there as expected."""
    try:
        from _pytest.assertion import rewrite

        current = rewrite._read_pyc
    except (ImportError, AttributeError):
        return False
    if current is not _cached_read_pyc:
        _lookup["original"] = current
        rewrite._read_pyc = _cached_read_pyc
    return True


def with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` with every ``co_filename`` in it set to ``filename``, as importlib does for a
    pyc it loads (in place when the interpreter offers it)."""
    import _imp

    fix = getattr(_imp, "_fix_co_filename", None)
    if fix is None:
        return _replace_filename(code, filename)
    fix(code, filename)
    return code


def _replace_filename(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(
        _replace_filename(c, filename) if isinstance(c, types.CodeType) else c
        for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


def _cached_read_pyc(source: Any, pyc: Any, *args: Any, **kwargs: Any) -> Any:
    """pytest's ``_read_pyc``, answered from the cache when the file's bytes are the ones
    compiled -- what pytest's own pyc cache does in a run that writes bytecode."""
    key = str(source)
    entry = _modules.get(key)
    if entry is not None:
        try:
            with open(key, "rb") as fh:
                data = fh.read()
        except OSError:
            data = None
        if data is not None and digest_of(data) == entry[0]:
            digest, code, rel = entry
            if isinstance(code, bytes):
                code = with_filename(marshal.loads(code), key)
                _modules[key] = (digest, code, rel)
            if rel is not None:
                _note_served(rel)
            return code
    original = _lookup["original"]
    return None if original is None else original(source, pyc, *args, **kwargs)


def _note_served(rel: str) -> None:
    log = _lookup.get("served_log")
    if not log:
        return
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError:
        return
    try:
        os.write(fd, (rel + "\n").encode())
    finally:
        os.close(fd)
