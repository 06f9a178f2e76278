"""The Python a suite runs on: suitebench's own, or the project's (``python`` in instance.toml).

A project's tests import its test dependencies (``text-unidecode``, ``hypothesis``, a pytest
plugin), which suitebench's own interpreter need not have.  An instance may name the
interpreter of a venv made for the project; its tests then run on it, in the sandbox, with that
venv read-only.  suitebench's plugin and batch driver (the ``suitebench.suite.inside`` package,
which needs only the standard library and pytest) reach it through a copy of that package
alone, put last on ``PYTHONPATH``, so nothing else of suitebench's venv (its own pytest, say)
shadows the project's packages.

What the interpreter is -- its Python and pytest versions and a digest of the distributions
installed in it -- is probed once, in the sandbox, and is part of every suite run's key and of
``results.json``: a package installed into the venv later makes new runs, not stale hits.

Its pytest may be any from 8 on; the direct protocol (``--protocol direct``) runs only on the
pytest it was written for, with the private names it uses where it expects them
(:mod:`suitebench.suite.inside.batch.internals`).  The probe asks; on any other pytest a score
runs every test through pytest's hooks (:func:`protocol_for`) and says so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import suitebench
from suitebench.model.instance import Instance, InstanceError
from suitebench.run import sandbox
from suitebench.run.outcome import Backend, Limits
from suitebench.suite.execute.runspec import SuiteLimits, TestProtocol
from suitebench.suite.inside.batch import internals

# What the probe prints: sys and pytest facts, and the installed distributions.
_PROBE = """
import importlib.util, json, os, sys
from importlib import metadata
try:
    import pytest
    version = pytest.__version__
except Exception as exc:
    version = None
gone = []
for module_name, path in __NAMES__:  # internals.missing(), for this interpreter's pytest
    try:
        obj = importlib.import_module(module_name)
        for part in path.split("."):
            obj = getattr(obj, part)
    except Exception:
        gone.append(f"{module_name}.{path}")
dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions())
plugins = sorted([ep.name, ep.value] for ep in metadata.entry_points(group="pytest11"))
print(json.dumps({
    "version": ".".join(map(str, sys.version_info[:3])),
    "at_least_311": sys.version_info >= (3, 11),
    "compiler": f"{sys.implementation.cache_tag} {importlib.util.MAGIC_NUMBER.hex()} {sys.version}",
    "prefix": sys.prefix,
    "base_prefix": sys.base_prefix,
    "executable": os.path.realpath(sys.executable),
    "pytest": version,
    "missing": gone,
    "packages": dists,
    "plugins": plugins,
}))
"""
_PROBE = _PROBE.replace("__NAMES__", json.dumps([list(n) for n in internals.NAMES]))
_MIN_PYTEST = 8


class InterpreterError(ValueError):
    """The named interpreter cannot run suites (missing, too old, or without pytest)."""


@dataclass(frozen=True)
class Interpreter:
    """The interpreter suite runs start (``executable``, by the path given), what the sandbox
    must show of it (``binds``), where suitebench's plugin package is for it (``plugin_root``:
    None when it is suitebench's own, which imports it already), and what it is."""

    executable: str
    binds: tuple[str, ...]
    version: str
    pytest: str
    packages: str  # a digest of the installed distributions (name==version, sorted)
    plugin_root: str | None = None
    # The pytest plugins installed in it that every run loads (``-p module``: autoloading
    # stays off), and those left out, with the reason.
    plugins: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()
    # Which compiler it is (cache tag, bytecode magic, full version): one equal to
    # suitebench's own compiles a module to the same code and the same warnings, so a build
    # may compile for it here instead of in a sandboxed process.
    compiler: str = ""
    # Why its pytest cannot run the direct protocol (None: it can): a version outside
    # internals.SUPPORTED, or a private name it lacks.
    direct_off: str | None = None

    @property
    def own(self) -> bool:
        return self.plugin_root is None

    @property
    def bin_dir(self) -> str:
        return str(Path(self.executable).parent)

    def identity(self) -> dict[str, Any]:
        """What a run's key records of it (not its host paths' layout)."""
        return {"python": self.version, "pytest": self.pytest, "packages": self.packages}

    def to_dict(self) -> dict[str, Any]:
        return {
            "executable": self.executable,
            "binds": list(self.binds),
            "version": self.version,
            "pytest": self.pytest,
            "packages": self.packages,
            "plugin_root": self.plugin_root,
            "plugins": list(self.plugins),
            "left_out": [list(p) for p in self.left_out],
            "compiler": self.compiler,
            "direct_off": self.direct_off,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Interpreter:
        return cls(
            executable=d["executable"],
            binds=tuple(d.get("binds", ())),
            version=d["version"],
            pytest=d["pytest"],
            packages=d["packages"],
            plugin_root=d.get("plugin_root"),
            plugins=tuple(d.get("plugins", ())),
            left_out=tuple((str(a), str(b)) for a, b in d.get("left_out", ())),
            compiler=str(d.get("compiler", "")),
            direct_off=d.get("direct_off"),
        )

    @property
    def compiles_here(self) -> bool:
        """Whether suitebench's own compiler is this interpreter's (see ``compiler``)."""
        return self.own or self.compiler == host_compiler()


def _package_dir() -> Path:
    return Path(suitebench.__file__).resolve().parent


def own_binds() -> tuple[str, ...]:
    """What suitebench's own interpreter needs to see inside the sandbox (read-only): the venv,
    the base installation it points into (which may sit in a home directory the sandbox hides),
    and of suitebench only the in-sandbox package, ``suite/inside`` (the pytest plugin and the
    batch driver) -- not the rest of its tree, which may hold instances with their mutants."""
    package = _package_dir()
    paths = {
        sys.prefix,
        sys.base_prefix,
        str(Path(os.path.realpath(sys.executable)).parent.parent),
        str(package / "__init__.py"),
        str(package / "suite" / "__init__.py"),
        str(package / "suite" / "inside"),
    }
    return tuple(sorted(p for p in paths if Path(p).exists()))


def host_compiler() -> str:
    """suitebench's own interpreter as :attr:`Interpreter.compiler` records one."""
    return f"{sys.implementation.cache_tag} {importlib.util.MAGIC_NUMBER.hex()} {sys.version}"


def _own_pytest() -> str:
    import pytest

    return str(pytest.__version__)


def current() -> Interpreter:
    """suitebench's own interpreter (the default of every instance)."""
    return Interpreter(
        executable=sys.executable,
        binds=own_binds(),
        version=".".join(map(str, sys.version_info[:3])),
        pytest=_own_pytest(),
        packages="own",
        plugin_root=None,
        compiler=host_compiler(),
        direct_off=internals.own_why_off(),
    )


def plugin_root(cache: Path | None = None) -> Path:
    """A directory holding a copy of ``suitebench/__init__.py``, ``suitebench/suite/__init__.py``
    and ``suitebench/suite/inside`` alone (keyed by their content, made once): what a project's
    interpreter imports the plugin from."""
    package = _package_dir()
    inside = package / "suite" / "inside"
    files = sorted(p for p in inside.rglob("*.py"))
    digest = hashlib.sha256()
    for path in [package / "__init__.py", package / "suite" / "__init__.py", *files]:
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    base = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = base / "suitebench" / "plugin" / digest.hexdigest()[:16]
    if (root / "suitebench" / "suite" / "inside" / "plugin.py").is_file():
        return root
    staging = root.with_name(f"{root.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "suitebench" / "suite").mkdir(parents=True)
    for name in ("__init__.py", "suite/__init__.py"):
        shutil.copy2(package / name, staging / "suitebench" / name)
    for path in files:
        dest = staging / "suitebench" / path.relative_to(package)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    try:
        staging.rename(root)
    except OSError:  # another process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return root


# Plugins that decide which tests run, in which order or process, how often, or under which
# time limit: suitebench decides those (one run per program, every test once, its own limits).
_LEFT_OUT = {
    "xdist": "runs tests in other processes",
    "looponfail": "runs tests in other processes",
    "randomly": "reorders tests",
    "random_order": "reorders tests",
    "cov": "measures coverage (slow, and not the kill matrix)",
    "timeout": "suitebench's own per-test limit applies",
    "rerunfailures": "reruns failures (a flaky test is not valid)",
    "flaky": "reruns failures (a flaky test is not valid)",
    "forked": "runs tests in other processes",
    "testmon": "chooses the tests to run",
    "picked": "chooses the tests to run",
    "split": "chooses the tests to run",
    "sugar": "replaces pytest's terminal report",
    "instafail": "replaces pytest's terminal report",
}


def choose_plugins(
    entry_points: list[tuple[str, str]],
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The ``pytest11`` entry points of a project's venv to load (their modules), and those
    left out with the reason."""
    loaded: list[str] = []
    left: list[tuple[str, str]] = []
    for name, value in entry_points:
        module = value.split(":", 1)[0].strip()
        label = name.replace("-", "_").lower().removeprefix("pytest_")
        why = next((w for key, w in _LEFT_OUT.items() if key in label or key in module), None)
        if why is None and ":" in value:
            why = "an object in a module, not a module -p can load"
        if why is None:
            loaded.append(module)
        else:
            left.append((name, why))
    return tuple(sorted(set(loaded))), tuple(left)


def probe(path: str, backend: Backend | None = None) -> Interpreter:
    """The interpreter at ``path`` as suite runs use it (asked in the sandbox, by ``backend``);
    :class:`InterpreterError` when it cannot run suites."""
    exe = Path(path)
    if not exe.is_file() or not os.access(exe, os.X_OK):
        raise InterpreterError(f"{path}: no executable file there")
    # In the sandbox: a venv's .pth files and sitecustomize run at start-up, and a project's
    # packages are not ours to run unsandboxed.  Shown: the venv and the installation its
    # interpreter links into.
    venv = exe.absolute().parent.parent
    base = Path(os.path.realpath(exe)).parent.parent
    with tempfile.TemporaryDirectory(prefix="suitebench-probe-") as scratch:
        outcome = sandbox.run(
            [str(exe.absolute()), "-I", "-c", _PROBE],
            cwd=scratch,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": scratch},
            limits=Limits(wall_time=60.0, memory_mb=1024, processes=16),
            backend=backend,
            ro_binds=sorted({str(venv), str(base)}),
        )
    try:
        facts = json.loads(outcome.stdout)
    except ValueError:
        why = outcome.message or outcome.stderr_text()[-500:] or str(outcome.status)
        raise InterpreterError(f"{path}: not a Python interpreter ({why.strip()})") from None
    if not facts["at_least_311"]:
        raise InterpreterError(f"{path}: Python {facts['version']}; 3.11 or newer")
    pytest_version = facts["pytest"]
    if pytest_version is None or int(pytest_version.split(".")[0]) < _MIN_PYTEST:
        have = "no pytest" if pytest_version is None else f"pytest {pytest_version}"
        raise InterpreterError(f"{path}: {have}; install pytest >= {_MIN_PYTEST} into it")
    root = plugin_root()
    binds = {facts["prefix"], facts["base_prefix"], str(Path(facts["executable"]).parent.parent)}
    binds.add(str(exe.parent.resolve()))
    packages = hashlib.sha256("\n".join(facts["packages"]).encode()).hexdigest()[:16]
    plugins, left_out = choose_plugins([(str(n), str(v)) for n, v in facts.get("plugins", ())])
    return Interpreter(
        executable=str(exe.absolute()),
        binds=tuple(sorted({*(b for b in binds if Path(b).exists()), str(root)})),
        version=str(facts["version"]),
        pytest=str(pytest_version),
        packages=packages,
        plugin_root=str(root),
        plugins=plugins,
        left_out=left_out,
        compiler=str(facts.get("compiler", "")),
        direct_off=internals.why_off(str(pytest_version), list(facts.get("missing", []))),
    )


def protocol_for(limits: SuiteLimits, python: Interpreter | None) -> tuple[SuiteLimits, str | None]:
    """The limits a score runs with on ``python`` (None: suitebench's own), and why they are
    not those asked for (None: they are): ``--protocol direct`` becomes ``pytest`` where the
    interpreter's pytest cannot run the direct protocol (:attr:`Interpreter.direct_off`)."""
    if limits.protocol is not TestProtocol.DIRECT:
        return limits, None
    off = (python or current()).direct_off
    if off is None:
        return limits, None
    note = f"the direct protocol is off: {off}"
    return dataclasses.replace(limits, protocol=TestProtocol.PYTEST), note


def versions(python: Interpreter | None = None) -> dict[str, str]:
    """What ran the suite: suitebench, and the Python and pytest of the suite's interpreter
    (with a digest of what else is installed in it, when it is the project's own)."""
    out = {
        "suitebench": suitebench.__version__,
        "pytest": _own_pytest() if python is None else python.pytest,
        "python": platform.python_version() if python is None else python.version,
        "platform": platform.platform(),
    }
    if python is not None and not python.own:
        out["interpreter"] = python.executable
        out["packages"] = python.packages
        out["pytest_plugins"] = ", ".join(python.plugins)
        out["pytest_plugins_left_out"] = "; ".join(f"{n}: {w}" for n, w in python.left_out)
    return out


def suite_interpreter(instance: Instance, backend: Backend | None = None) -> Interpreter | None:
    """The project's interpreter an instance names (``python``), probed; None: our own."""
    if instance.python is None:
        return None
    try:
        return probe(str(instance.python), backend)
    except InterpreterError as exc:
        raise InstanceError(instance.root / "instance.toml", "python", str(exc)) from None
