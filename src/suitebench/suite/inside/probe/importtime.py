"""Import-time impact inside a run (:mod:`suitebench.suite.inside.probe.impact`): the fingerprint of
the program's globals once the suite is collected, the names each test's own code reads (the
coverage run), and a mutant run's choice of the tests that read a global its import changed.

Standard library and pytest only: it runs in the sandbox, called by the plugin's collection hook.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest


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


def write_fingerprint(path: str, items: list[pytest.Item], *, instrumented: bool) -> None:
    """A reference run's record: the fingerprint (none of an instrumented program: its
    functions are other code), why not, and the tests collected."""
    found, why = fingerprint_now()
    if instrumented:
        found, why = None, "a coverage run's program is instrumented"
    record = {"fingerprint": found, "reason": why, "collected": [i.nodeid for i in items]}
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
    return choose(spec, found, why, [item.nodeid for item in items])
