"""Which pytest suite mode supports, proved: every private ``_pytest`` name the in-sandbox
package uses exists in the installed pytest, the direct protocol's runtime check lists every one
of direct.py's, and a pytest lacking one runs every test through pytest's hooks and says so.

When pytest moves a private name, the first test here fails and names the fallback: for
direct.py ``score --protocol pytest`` (which the host then picks by itself, and says so), for
the batch driver ``score --engine plain``; the plugin has none (every engine loads it).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import suitebench
from suitebench.suite.execute import interpreter
from suitebench.suite.execute.eventlog import read_log
from suitebench.suite.execute.interpreter import Interpreter, protocol_for
from suitebench.suite.execute.runspec import SuiteLimits, TestProtocol
from suitebench.suite.inside.batch import internals
from suitebench.suite.records import TestStatus

INSIDE = Path(suitebench.__file__).resolve().parent / "suite" / "inside"
DIRECT = INSIDE / "batch" / "direct.py"


def _fallback(path: Path) -> str:
    """What a user falls back to when a name this module uses has moved."""
    rel = path.relative_to(INSIDE).as_posix()
    if rel == "batch/direct.py":
        return "score --protocol pytest (suitebench picks it by itself when the check fails)"
    if rel.startswith("batch/"):
        return "score --engine plain"
    return f"no fallback: every engine loads it; install {internals.SUPPORTED_RANGE}"


def private_names(path: Path) -> list[tuple[int, str, str]]:
    """Every private pytest name ``path`` uses, as (line, module, attribute path): what it
    imports from ``_pytest``, and the attributes it reads on a ``_pytest`` module it imported
    (``timing.Instant``, ``rewrite._rewrite_test``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str, str]] = []
    modules: dict[str, str] = {}  # local name -> the _pytest module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "_pytest":
            for alias in node.names:
                assert node.module is not None
                submodule = f"{node.module}.{alias.name}"
                if importlib.util.find_spec(node.module) and _is_module(submodule):
                    modules[alias.asname or alias.name] = submodule
                found.append((node.lineno, node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "_pytest":
                    found.append((node.lineno, alias.name, ""))
                    if alias.asname:
                        modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append((node.lineno, modules[node.value.id], node.attr))
    return sorted(set(found))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _exists(module: str, path: str) -> bool:
    try:
        obj = importlib.import_module(module)
    except ImportError:
        return False
    return not path or internals.has(obj, path) or _is_module(f"{module}.{path}")


def test_every_private_pytest_name_the_inside_package_uses_exists() -> None:
    """A pytest upgrade that moves one fails here, naming the file, the name and the fallback
    (before it fails, or silently changes, a score)."""
    checked = 0
    gone: list[str] = []
    for path in sorted(INSIDE.rglob("*.py")):
        for line, module, attr in private_names(path):
            checked += 1
            if not _exists(module, attr):
                name = f"{module}.{attr}" if attr else module
                gone.append(
                    f"{path.relative_to(INSIDE)}:{line} uses {name}, which pytest "
                    f"{pytest.__version__} lacks; fall back to {_fallback(path)}"
                )
    assert not gone, "\n".join(gone)
    # direct.py alone imports 16 names from _pytest (counted by hand from its import block).
    assert checked >= 16


def test_the_check_sees_a_moved_name(tmp_path: Path) -> None:
    """The scan can fail: a name pytest does not have is found and reported."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from _pytest.runner import CallInfo, call_runtest_hook_renamed\n"
        "from _pytest import timing\n"
        "timing.Instant\n"
        "timing.no_such_clock\n",
        encoding="utf-8",
    )
    names = private_names(probe)
    assert [n for n in names if not _exists(n[1], n[2])] == [
        (1, "_pytest.runner", "call_runtest_hook_renamed"),
        (4, "_pytest.timing", "no_such_clock"),
    ]


def _direct_imports() -> set[tuple[str, str]]:
    tree = ast.parse(DIRECT.read_text(encoding="utf-8"))
    return {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("_pytest")
        for alias in node.names
    }


def test_the_runtime_check_lists_every_private_name_direct_uses() -> None:
    """``internals.NAMES`` (what the host and the batch check before the direct protocol
    runs) holds every ``_pytest`` import of direct.py, and every private attribute direct.py
    reads on pytest's objects is in ``NAMES`` or ``LIVE``: a name added to direct.py without
    its check fails here."""
    listed = {(module, path.split(".")[0]) for module, path in internals.NAMES}
    for module, name in _direct_imports():
        if _is_module(f"{module}.{name}"):  # ``from _pytest import timing``: its attributes
            used = {p for line, m, p in private_names(DIRECT) if m == f"{module}.{name}"}
            assert used, name
            for attr in used:
                assert (f"{module}.{name}", attr) in listed, f"{module}.{name}.{attr}"
        else:
            assert (module, name) in listed, f"{module}.{name} is not in internals.NAMES"
    tree = ast.parse(DIRECT.read_text(encoding="utf-8"))
    private_attrs = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "plugin", "sys"))
    }
    checked = {part for _, path in (*internals.NAMES, *internals.LIVE) for part in path.split(".")}
    # Worked out by reading direct.py: item._request, item._initrequest, item._fixtureinfo,
    # session._setupstate.
    assert private_attrs == {"_request", "_initrequest", "_fixtureinfo", "_setupstate"}
    assert private_attrs <= checked
    assert not internals.missing(), internals.missing()


def test_the_supported_range_is_the_one_pyproject_pins() -> None:
    text = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"{internals.SUPPORTED_RANGE}"' in text  # "pytest>=9,<10"
    assert internals.in_range(pytest.__version__)
    assert internals.in_range("9.0.0rc1") and internals.in_range("9.12.3")
    assert not internals.in_range("8.4.2") and not internals.in_range("10.0.0")


def test_a_pytest_lacking_a_name_turns_the_direct_protocol_off_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(``_pytest._code.ExceptionInfo`` is taken away: pytest's own modules bound it when they
    were imported, so this session goes on.)"""
    import _pytest._code

    assert internals.own_why_off() is None
    monkeypatch.delattr(_pytest._code, "ExceptionInfo")
    assert internals.missing() == ["_pytest._code.ExceptionInfo.from_current"]
    why = internals.own_why_off()
    assert why == (
        f"pytest {pytest.__version__} lacks _pytest._code.ExceptionInfo.from_current; every "
        "test runs through pytest's hooks, as with --protocol pytest"
    )


def test_a_pytest_outside_the_range_runs_by_pytest_s_protocol_and_the_score_says_so() -> None:
    """A project's interpreter with pytest 8 (its probe found the names, but the version is
    not one the direct protocol knows): the score runs every test through pytest's hooks,
    and results.json's limits say so."""
    off = internals.why_off("8.3.4", [])
    assert off == (
        "pytest 8.3.4: the direct protocol knows pytest>=9,<10; every test runs through "
        "pytest's hooks, as with --protocol pytest"
    )
    own = interpreter.current()
    assert own.direct_off is None
    project = dataclasses.replace(own, pytest="8.3.4", plugin_root="/x", direct_off=off)
    assert Interpreter.from_dict(project.to_dict()) == project
    limits, note = protocol_for(SuiteLimits(), project)
    assert limits.protocol is TestProtocol.PYTEST
    assert note == f"the direct protocol is off: {off}"
    assert limits == dataclasses.replace(SuiteLimits(), protocol=TestProtocol.PYTEST)
    # On a pytest it knows, or when pytest's protocol was asked for: as asked, nothing said.
    assert protocol_for(SuiteLimits(), own) == (SuiteLimits(), None)
    asked = SuiteLimits(protocol=TestProtocol.PYTEST)
    assert protocol_for(asked, project) == (asked, None)


# pytest imported with every built-in plugin (as the batch driver does before its first fork),
# then ``_pytest._code.ExceptionInfo`` taken away: pytest's modules bound it already and go on;
# what looks it up afterwards (direct.py, the runtime check) finds it gone.
DROP = """\
import pytest
from _pytest.config import default_plugins
for name in default_plugins:
    __import__(f"_pytest.{name}")
import _pytest._code
del _pytest._code.ExceptionInfo
"""


@pytest.mark.parametrize("drop", [False, True], ids=["as-installed", "a-name-moved"])
def test_the_interpreter_probe_reports_the_names_a_pytest_lacks(drop: bool) -> None:
    """The probe a project's interpreter answers (run here on this one, unsandboxed: it only
    imports), with ``_pytest._code.ExceptionInfo`` taken away first or not."""
    script = (DROP if drop else "") + interpreter._PROBE
    out = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=120
    )
    facts = json.loads(out.stdout)
    assert facts["missing"] == (["_pytest._code.ExceptionInfo.from_current"] if drop else [])


SUITE = """\
import pytest

def test_adds(): assert 1 + 1 == 2

@pytest.mark.parametrize("n", [1, 2])
def test_small(n): assert n < 2
"""

RUN = """\
import sys
from pathlib import Path
from typing import Any
import pytest
{drop}
from suitebench.suite.inside.batch.direct import PerProgram

out = Path(sys.argv[1])
args = ["-p", "no:cacheprovider", "-p", "suitebench.suite.inside.plugin", "-q",
        "--suitebench-timeout=30", f"--suitebench-events={{out / 'events'}}", "tests"]
sys.exit(pytest.main(args, plugins=[PerProgram({{"protocol": "direct"}}, out)]))
"""


@pytest.mark.parametrize("drop", [False, True], ids=["as-installed", "a-name-moved"])
def test_a_batch_child_on_a_pytest_lacking_a_name_runs_by_pytest_s_protocol_and_says_so(
    tmp_path: Path, drop: bool
) -> None:
    """A child that collects for itself (what a ``kind = "python"`` batch runs) plans the direct
    protocol: with every name there its 3 tests run directly; with
    ``_pytest._code.ExceptionInfo`` gone (taken away after pytest imported it, before
    direct.py did) they run through pytest's hooks, the same outcomes (2 passed, 1 failed:
    ``n = 2`` is not below 2), and the run's log and ``protocol.txt`` say why."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_s.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "run.py").write_text(RUN.format(drop=DROP if drop else ""), encoding="utf-8")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        [sys.executable, "run.py", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one test failed
    assert read_log(tmp_path / "events").finished_rows() == (
        {
            "tests/test_s.py::test_adds": TestStatus.PASSED,
            "tests/test_s.py::test_small[1]": TestStatus.PASSED,
            "tests/test_s.py::test_small[2]": TestStatus.FAILED,
        },
        [],
    )
    note = (tmp_path / "protocol.txt").read_text(encoding="utf-8")
    if not drop:
        assert note == "direct: 3 of 3 tests\n"
        assert "direct protocol is off" not in proc.stderr
        return
    why = (
        f"pytest {pytest.__version__} lacks _pytest._code.ExceptionInfo.from_current; every "
        "test runs through pytest's hooks, as with --protocol pytest"
    )
    assert "1 failed, 2 passed" in proc.stdout  # pytest's runner reported every phase
    assert note == f"pytest: {why}\n"
    assert f"suitebench: the direct protocol is off: {why}" in proc.stderr


def test_an_attribute_pytest_sets_on_its_objects_missing_turns_the_direct_protocol_off() -> None:
    """The live check (what pytest sets while configuring and collecting): a session without
    ``_setupstate`` (pytest having renamed it) runs by pytest's protocol, named."""
    from types import SimpleNamespace

    from suitebench.suite.inside.batch.direct import why_not_live

    handlers = SimpleNamespace(caplog_handler=1, report_handler=2, log_level=None)
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: handlers))
    session: Any = SimpleNamespace(config=config, items=[])
    assert why_not_live(session) == (
        f"pytest {pytest.__version__} lacks session._setupstate.stack; every test runs "
        "through pytest's hooks, as with --protocol pytest"
    )
    session._setupstate = SimpleNamespace(stack={})
    assert why_not_live(session) is None
