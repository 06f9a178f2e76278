"""What a batch pays once in its parent so that no child pays it: pure caches, warmed.

Both are savings only: warm or cold, every answer is the same, and a warmer that fails leaves
its cache to the children.  Runs inside the sandbox, with pytest imported.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from suitebench.suite.inside.batch import rewrite as rewrite_cache


def warm_caches() -> None:
    """Fill, once in the parent, the caches every child would otherwise fill on its own.

    Each is a pure memo (same answers, cold or warm), so warming changes no outcome, only what
    a child pays: the regular expressions of the tokenizer (reporting a failure re-reads the
    test's source) and of ``argparse`` (``pytest.main``), and
    :func:`inspect.getmodule`'s file -> module map, which it builds on a miss by resolving
    every loaded module's path (``realpath``: a ``lstat`` per component).  Measured on a
    24-test CLI suite: about 6 ms of CPU per program that has a failing test.
    """
    import argparse
    import inspect
    import io
    import tokenize

    def module_map() -> None:
        # A miss maps every module loaded so far (the suite's too, once collected).
        inspect.getmodule(warm_caches.__code__, "<suitebench: warm the module map>")

    warmers: list[Callable[[], object]] = [
        lambda: list(tokenize.generate_tokens(io.StringIO("x = 1\n").readline)),
        lambda: argparse.ArgumentParser(prog="warm", add_help=False),
        module_map,
    ]
    for warm in warmers:
        try:  # only a saving: a warmer that fails leaves its cache to the children, as before
            warm()
        except Exception:
            pass


def warm_patterns(patterns: Iterable[Sequence[Any]]) -> int:
    """Compile, once in a batch's parent, the regular expressions the reference's run compiled:
    every mutant's child would compile them again on its first use (``re`` caches compiled
    patterns by pattern and flags, and a child starts with its parent's cache).  A pure memo:
    the same pattern object either way.  Returns how many compiled."""
    import re

    done = 0
    for entry in patterns:
        try:
            re.compile(str(entry[0]), int(entry[1]))
        except Exception:  # an entry that no longer compiles is the child's to report
            continue
        done += 1
    return done


def warm_items(items: list[Any]) -> None:
    """Each collected test's ``location`` (file, line, name): a cached property pytest computes
    on the test's first report by looking up its function's source line (~0.1 ms a test), the
    same in every child of a batch collected once."""
    for item in items:
        try:
            item.location  # noqa: B018 - the property caches itself
        except Exception:  # left to the child, which reports it as pytest does
            pass


def prime_rewrite_cache(config: Any, root: Path) -> int:
    """Rewrite the asserts of the suite's modules once, in the parent, for every child.

    pytest rewrites each test module's asserts when it imports it, and caches the result as a
    pyc next to the module -- but not here, where bytecode is not written (a plain run would not
    leave a ``__pycache__`` in the suite).  Each child of a configure-once batch would rewrite
    every test module again (~3 ms a module).  The host's rewritten code
    (:mod:`suitebench.suite.inside.batch.rewrite`, loaded by the plugin when the run has it) already
    answers for the modules it holds; this compiles the others once, with the session's own
    configuration, and has pytest's pyc lookup answer from memory when the file's bytes are the
    ones compiled -- the code pytest would have produced, as its own pyc cache does in a normal
    run.  Uses pytest's private rewrite functions: if they are not there as expected, nothing
    is cached and children rewrite as before.  Returns the number of modules rewritten here.
    """
    try:
        from _pytest.assertion import rewrite

        rewrite_test = rewrite._rewrite_test
    except (ImportError, AttributeError):
        return 0
    if config.getoption("assertmode", "rewrite") != "rewrite" or not rewrite_cache.install_lookup():
        return 0
    primed = 0
    for path in sorted(root.rglob("*.py")):
        try:
            digest = rewrite_cache.digest_of(path.read_bytes())
            if rewrite_cache.covers(str(path), digest):
                continue  # the host's code, or primed already
            code = rewrite_test(path, config)[1]
        except Exception:  # a syntax error: the child's import reports it, as pytest's does
            continue
        if isinstance(code, types.CodeType):
            rewrite_cache.add_module(str(path), digest, code)
            primed += 1
    return primed
