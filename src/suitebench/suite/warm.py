"""What a batch pays once in its parent so that no child pays it: pure caches, warmed.

Both are savings only: warm or cold, every answer is the same, and a warmer that fails leaves
its cache to the children.  Runs inside the sandbox, with pytest imported.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any


def warm_caches() -> None:
    """Fill, once in the parent, the caches every child would otherwise fill on its own.

    Each is a pure memo (same answers, cold or warm), so warming changes no outcome, only what
    a child pays: the regular expressions of pytest's JUnit XML escaping, of the tokenizer
    (reporting a failure re-reads the test's source) and of ``argparse`` (``pytest.main``), and
    :func:`inspect.getmodule`'s file -> module map, which it builds on a miss by resolving
    every loaded module's path (``realpath``: a ``lstat`` per component).  Measured on a
    24-test CLI suite: about 6 ms of CPU per program that has a failing test.
    """
    import argparse
    import inspect
    import io
    import tokenize

    def xml_escape() -> None:
        from _pytest.junitxml import bin_xml_escape

        bin_xml_escape("warm")

    def module_map() -> None:
        # A miss maps every module loaded so far (the suite's too, once collected).
        inspect.getmodule(warm_caches.__code__, "<suitebench: warm the module map>")

    warmers: list[Callable[[], object]] = [
        xml_escape,
        lambda: list(tokenize.generate_tokens(io.StringIO("x = 1\n").readline)),
        lambda: argparse.ArgumentParser(prog="warm", add_help=False),
        module_map,
    ]
    for warm in warmers:
        try:  # only a saving: a warmer that fails leaves its cache to the children, as before
            warm()
        except Exception:
            pass


def prime_rewrite_cache(config: Any, root: Path) -> int:
    """Rewrite the asserts of the suite's modules once, in the parent, for every child.

    pytest rewrites each test module's asserts when it imports it, and caches the result as a
    pyc next to the module -- but not here, where bytecode is not written (a plain run would not
    leave a ``__pycache__`` in the suite).  Each child of a configure-once batch would rewrite
    every test module again (~3 ms a module).  This compiles them once, with the session's own
    configuration, and has pytest's pyc lookup answer from memory when the file's bytes are the
    ones compiled -- the code pytest would have produced, as its own pyc cache does in a normal
    run.  Uses pytest's private rewrite functions: if they are not there as expected, nothing
    is cached and children rewrite as before.  Returns the number of modules cached.
    """
    try:
        from _pytest.assertion import rewrite

        read_pyc = rewrite._read_pyc
        rewrite_test = rewrite._rewrite_test
    except (ImportError, AttributeError):
        return 0
    if config.getoption("assertmode", "rewrite") != "rewrite":
        return 0
    cache: dict[str, tuple[bytes, Any]] = {}
    for path in sorted(root.rglob("*.py")):
        try:
            code = rewrite_test(path, config)[1]
            digest = hashlib.blake2b(path.read_bytes(), digest_size=16).digest()
        except Exception:  # a syntax error: the child's import reports it, as pytest's does
            continue
        if isinstance(code, types.CodeType):
            cache[str(path)] = (digest, code)

    def cached_read_pyc(source: Any, pyc: Any, *args: Any, **kwargs: Any) -> Any:
        hit = cache.get(str(source))
        if hit is not None:
            try:
                data = Path(source).read_bytes()
            except OSError:
                data = None
            if data is not None and hashlib.blake2b(data, digest_size=16).digest() == hit[0]:
                return hit[1]
        return read_pyc(source, pyc, *args, **kwargs)

    rewrite._read_pyc = cached_read_pyc
    return len(cache)
