"""The pytest the direct protocol stands on: the versions it knows and the private names it uses.

:mod:`suitebench.suite.inside.batch.direct` does what pytest's runner and plugins do for a
passing test, with pytest's private ``_pytest`` functions and attributes.  Those move between
pytest's releases without notice, so the direct protocol runs only on a pytest whose major
version it was written for (:data:`SUPPORTED`) and in which every name of :data:`NAMES` is
where it expects it.  Anywhere else every test runs through pytest's own hooks, as with
``score --protocol pytest``, and the reason is said: on the console and in ``results.json``
(the host asks this module of its own pytest, and of a project's interpreter through
:mod:`suitebench.suite.execute.interpreter`'s probe), and in a batch's ``out/protocol.txt``.

Standard library only: the host reads it, and the interpreter probe runs :func:`missing` in a
project's venv.
"""

from __future__ import annotations

import importlib

# The pytest releases the direct protocol knows: at least the first, below the second (the
# range ``pyproject.toml`` pins for suitebench's own venv).
SUPPORTED = (9, 10)
SUPPORTED_RANGE = f"pytest>={SUPPORTED[0]},<{SUPPORTED[1]}"
FALLBACK = "--protocol pytest"

# Every private name of pytest's the direct protocol uses that exists before a session does:
# (module, attribute path).  A test checks that this lists every ``_pytest`` import of
# direct.py and every private attribute it reads; the attributes pytest sets on its objects
# while configuring (a session's setup state, the logging plugin's handlers) are checked on
# the live objects (:data:`LIVE`).
NAMES: tuple[tuple[str, str], ...] = (
    ("_pytest.timing", "Instant"),
    ("_pytest._code", "ExceptionInfo.from_current"),
    ("_pytest.logging", "catching_logs"),
    ("_pytest.logging", "LoggingPlugin"),
    ("_pytest.python", "DirectParamFixtureDef"),
    ("_pytest.python", "Function._initrequest"),
    ("_pytest.runner", "TEST_OUTCOME"),
    ("_pytest.runner", "CallInfo"),
    ("_pytest.runner", "_update_current_test_var"),
    ("_pytest.runner", "check_interactive_exception"),
    ("_pytest.runner", "get_reraise_exceptions"),
    ("_pytest.runner", "SetupState.setup"),
    ("_pytest.runner", "SetupState.teardown_exact"),
    ("_pytest.skipping", "evaluate_xfail_marks"),
    ("_pytest.skipping", "xfailed_key"),
    ("_pytest.threadexception", "collect_thread_exception"),
    ("_pytest.threadexception", "thread_exceptions"),
    ("_pytest.tmpdir", "tmppath_result_key"),
    ("_pytest.unraisableexception", "collect_unraisable"),
    ("_pytest.unraisableexception", "unraisable_exceptions"),
    ("_pytest.capture", "CaptureManager.resume_global_capture"),
    ("_pytest.capture", "CaptureManager.suspend_global_capture"),
    ("_pytest.capture", "CaptureManager.read_global_capture"),
)

# What pytest sets on its objects (which object, attribute path), checked once a session has
# collected: :func:`suitebench.suite.inside.batch.direct.why_not_live`.
LIVE: tuple[tuple[str, str], ...] = (
    ("session", "_setupstate.stack"),
    ("logging-plugin", "caplog_handler"),
    ("logging-plugin", "report_handler"),
    ("logging-plugin", "log_level"),
    ("item", "_request"),
    ("item", "_fixtureinfo.name2fixturedefs"),
)


def has(obj: object, path: str) -> bool:
    """Whether ``obj`` has the dotted attribute ``path``."""
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:
            return False
    return True


def missing(names: tuple[tuple[str, str], ...] = NAMES) -> list[str]:
    """The names of ``names`` this interpreter's pytest does not have (``module.attribute``)."""
    gone: list[str] = []
    for module_name, path in names:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            gone.append(f"{module_name}.{path}")
            continue
        if not has(module, path):
            gone.append(f"{module_name}.{path}")
    return gone


def in_range(version: str) -> bool:
    """Whether a pytest version (``9.2.0``, ``9.0.0rc1``) is in :data:`SUPPORTED`."""
    head = version.split(".", 1)[0]
    return head.isdigit() and SUPPORTED[0] <= int(head) < SUPPORTED[1]


def why_off(version: str, gone: list[str]) -> str | None:
    """Why the direct protocol cannot run on a pytest of ``version`` lacking ``gone`` (None:
    it can), in words that name the fallback."""
    if not in_range(version):
        why = f"pytest {version}: the direct protocol knows {SUPPORTED_RANGE}"
    elif gone:
        shown = ", ".join(gone[:4]) + (f" and {len(gone) - 4} more" if len(gone) > 4 else "")
        why = f"pytest {version} lacks {shown}"
    else:
        return None
    return f"{why}; every test runs through pytest's hooks, as with {FALLBACK}"


def own_why_off() -> str | None:
    """:func:`why_off` for the pytest this process imports."""
    import pytest

    return why_off(str(pytest.__version__), missing())
