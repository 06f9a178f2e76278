"""The host half of pytest's assertion rewriting paid once per suite
(:mod:`suitebench.suite.inside.batch.rewrite` holds the format and the sandbox half, and says
why): every ``*.py`` of the suite compiled as pytest's ``_rewrite_test`` does, under a
placeholder file name, memoised per (source digest, relative path, pytest version, Python
version) for the life of the worker, and written per launch into one file beside the run's work
dir.  Compiling runs none of the suite's code.

A module whose parsing, rewriting or compiling draws a warning of its own is left to pytest in
the sandbox: under ``filterwarnings = error`` it fails to collect there, which code served from
here would hide.  Which warnings are its own, while other threads compile and finalizers run, is
:func:`suitebench.run.pycompile.drawing`'s to say.
"""

from __future__ import annotations

import ast
import marshal
import os
import threading
import types
from pathlib import Path

from suitebench.run.pycompile import drawing
from suitebench.suite.inside.batch.rewrite import (
    CACHE_NAME,
    FORMAT,
    PLACEHOLDER,
    digest_of,
    environment,
)

__all__ = ["rewritten_code", "suite_modules", "write_rewrite_cache"]

_MAX_SOURCE_BYTES = 4_000_000  # a bigger file is left to pytest in the sandbox
_MEMO_BYTES = 64_000_000  # the worker's memo of marshalled code, oldest dropped first

_memo: dict[tuple[bytes, str, str, str], bytes | None] = {}
_memo_size = [0]
_memo_lock = threading.Lock()


def rewritten_code(source: bytes, filename: str) -> types.CodeType | None:
    """pytest's rewritten code for a test module's source, as ``_rewrite_test`` compiles it
    with ``enable_assertion_pass_hook`` false; None where pytest must do it in the sandbox (the
    file does not parse, or rewriting or compiling it warns)."""
    from _pytest.assertion.rewrite import rewrite_asserts

    def rewritten() -> types.CodeType:
        tree = ast.parse(source, filename=filename)
        rewrite_asserts(tree, source, filename, None)
        return compile(tree, filename, "exec", dont_inherit=True, optimize=0)

    try:
        code, warned = drawing(rewritten, filename)
    except Exception:  # a syntax error, null bytes, nesting too deep: pytest reports it
        return None
    return None if warned else code


def _memoised(data: bytes, digest: bytes, rel: str) -> bytes | None:
    """The marshalled code for these bytes, compiled once per worker.  Compiling holds the
    GIL anyway, so the lock is held through it: a second thread launching the same suite waits
    for the code instead of compiling it again."""
    pytest_version, python_version, _ = environment()
    key = (digest, rel, pytest_version, python_version)
    with _memo_lock:
        if key in _memo:
            return _memo[key]
        code = rewritten_code(data, PLACEHOLDER)
        blob = None if code is None else marshal.dumps(code)
        _memo[key] = blob
        _memo_size[0] += len(blob or b"")
        while _memo_size[0] > _MEMO_BYTES and len(_memo) > 1:
            _memo_size[0] -= len(_memo.pop(next(iter(_memo))) or b"")
    return blob


def suite_modules(suite_dir: Path) -> dict[str, bytes]:
    """The suite's ``*.py`` files by POSIX path relative to its root: regular files only (a
    symlink may point at a host file the sandbox must not see, even compiled)."""
    found: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(suite_dir):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not name.endswith(".py") or os.path.islink(path):
                continue
            try:
                if os.path.getsize(path) > _MAX_SOURCE_BYTES:
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            found[Path(os.path.relpath(path, suite_dir)).as_posix()] = data
    return found


def write_rewrite_cache(suite_dir: Path, base: Path, sandbox_root: Path, served_log: Path) -> Path:
    """Write, for one launch, the rewritten code of the suite's modules to ``base/CACHE_NAME``.

    ``sandbox_root``: where the run's copy of the suite lives (the paths pytest will import);
    ``served_log``: where the sandbox notes each module it took from the cache.
    """
    modules: dict[str, tuple[bytes, bytes]] = {}
    for rel, data in suite_modules(suite_dir).items():
        digest = digest_of(data)
        blob = _memoised(data, digest, rel)
        if blob is not None:
            modules[rel] = (digest, blob)
    pytest_version, python_version, magic = environment()
    record = {
        "format": FORMAT,
        "pytest": pytest_version,
        "python": python_version,
        "magic": magic,
        "root": str(sandbox_root),
        "served_log": str(served_log),
        "modules": modules,
    }
    path = base / CACHE_NAME
    path.write_bytes(marshal.dumps(record))
    path.chmod(0o444)
    return path
