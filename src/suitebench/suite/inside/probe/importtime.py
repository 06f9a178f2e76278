"""Import-time impact inside a run (:mod:`suitebench.suite.inside.probe.impact`): the fingerprint of
the program's globals once the suite is collected, the names each test's own code reads (the
coverage run), and a mutant run's choice of the tests that read a global its import changed.

Standard library and pytest only: it runs in the sandbox, called by the plugin's collection hook.
"""

from __future__ import annotations

import json
import os
import types
from typing import Any

import pytest

from suitebench.suite.inside.positions import positions


def program_root() -> str:
    """The source root of the program under test (``kind = "python"``): first on PYTHONPATH."""
    return os.environ.get("PYTHONPATH", "").split(os.pathsep)[0]


def fingerprint_now() -> tuple[dict[str, str] | None, str]:
    """The program's globals' fingerprint, or None and why it cannot be taken."""
    from suitebench.suite.inside.probe.fingerprint import Unknown, fingerprint

    root = program_root()
    if not root:
        return None, "no program source root"
    try:
        return fingerprint(root), ""
    except Exception as exc:  # Unknown, or anything the program's objects raise when read
        why = str(exc) if isinstance(exc, Unknown) else f"{type(exc).__name__}: {exc}"
        return None, f"cannot fingerprint the program's state: {why}"


# A test module's globals that are bindings, not data its import computed.
_BINDINGS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)


def suite_state(items: list[pytest.Item], files: set[str] | None = None) -> dict[str, str | None]:
    """Per test file (of ``files``, default all), a digest of what its collection computed
    (None: it cannot be fingerprinted): its module's data globals and its tests' parameters.
    A mutant whose import changes what the suite's collection builds by calling the program (a
    parametrization of expected values, a table at a test module's top) changes its file's
    digest, whichever names that code read."""
    import hashlib

    from suitebench.suite.inside.probe.fingerprint import digest_roots, program_modules

    root = program_root()
    modules = program_modules(root) if root else []
    program = {name for name, _ in modules}
    # ``from pkg import TABLE``: a binding of the program's own global under its own name,
    # which the tests naming it read (import-time impact's readers), not data computed here
    imported = {(key, id(value)) for _, module in modules for key, value in vars(module).items()}
    roots: dict[str, list[tuple[str, Any]]] = {}
    for item in items:
        file = item.nodeid.split("::", 1)[0]
        if files is not None and file not in files:
            continue
        mine = roots.get(file)
        if mine is None:
            mine = roots[file] = []
            module = getattr(item, "module", None)
            for key, value in sorted(vars(module).items()) if module is not None else ():
                if key.startswith("__") or isinstance(value, _BINDINGS):
                    continue
                if (key, id(value)) not in imported:
                    mine.append((f"{file}:{key}", value))
        callspec = getattr(item, "callspec", None)
        for name, value in sorted(callspec.params.items()) if callspec is not None else ():
            mine.append((f"{item.nodeid}:{name}", value))
    state: dict[str, str | None] = {}
    for file, found in roots.items():
        try:
            digests = digest_roots(found, program)
        except Exception:  # Unknown, or anything the suite's objects raise when read
            state[file] = None
            continue
        text = "".join(f"{label}={digest};" for label, digest in sorted(digests.items()))
        state[file] = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    return state


def write_fingerprint(path: str, items: list[pytest.Item], *, instrumented: bool) -> None:
    """A reference run's record: the fingerprint (none of an instrumented program: its
    functions are other code), why not, the tests collected, what their collection computed
    (:func:`suite_state`) and the parametrized tests' positions."""
    found, why = fingerprint_now()
    suite = None if instrumented else suite_state(items)
    if instrumented:
        found, why = None, "a coverage run's program is instrumented"
    record = {
        "fingerprint": found,
        "reason": why,
        "collected": [i.nodeid for i in items],
        "suite": suite,
        "positions": positions(items),  # for the mutants' runs (:mod:`..positions`)
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)


def record_test_names(tracer: Any, rootpath: str, items: list[pytest.Item]) -> None:
    """The coverage run: the names each test's own code reads, into the tracer's record (a
    test whose names cannot be read is left out: it runs on every import-time change)."""
    from suitebench.suite.inside.probe.impact import TestNames

    names = TestNames(rootpath)
    for item in items:
        try:
            tracer.test_names[item.nodeid] = sorted(names.of(item))
        except Exception:
            tracer.test_names.pop(item.nodeid, None)


def choose_tests(path: str, items: list[pytest.Item]) -> tuple[list[str] | None, str]:
    """A mutant whose change runs at import: the tests that read a changed global (None: all)
    and why, from its impact spec at ``path``."""
    from suitebench.suite.inside.probe.impact import choose

    with open(path, encoding="utf-8") as fh:
        spec = json.load(fh)
    found, why = fingerprint_now()
    collected = [item.nodeid for item in items]
    return choose(spec, found, why, collected, lambda files: suite_state(items, files))
