"""What a project's suite expects around it: its pytest configuration and the files beside it.

A project's suite is written to run under the project's own pytest configuration -- most often
``filterwarnings = error``, which turns a ``SyntaxWarning`` a mutant's ``x is ""`` draws at
compile time into a collection error every importing test shows -- and next to the project's
files (a test reading ``README.md`` from its file's parent's parent).  Scored without them, a
mutant the project's own suite kills survives, and a valid test looks invalid.  So the options
that apply wherever the suite runs are carried into a ``pytest.ini`` in the work dir's root
(the rootdir), the project's root ``conftest.py`` and the instance's ``beside`` files are copied
next to ``tests/``, and what could not apply in the sandbox is dropped and said so.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import json
import re
import shlex
import shutil
import tomllib
import uuid
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.model.instance import Instance, InstanceKind
from suitebench.run.pycompile import COMPILING as _COMPILING
from suitebench.run.tree import publish_by_hash
from suitebench.suite.execute.docstrings import FILE_NAME, docstring_examples
from suitebench.suite.execute.doctestfiles import NORECURSE, after_suite, files_below
from suitebench.suite.execute.doctestfiles import folders as testpath_folders

__all__ = [
    "Beside",
    "CarriedConfig",
    "carry_config",
    "config_upward",
    "doctest_entries",
    "find_pytest_config",
    "read_by_tests",
    "root_files_read",
    "stage_beside",
]

# Root entries never carried beside the tests: version control, environments, build output.
_SKIP_ROOT = {".git", ".tox", ".nox", ".venv", "venv", "build", "dist", "__pycache__", ".github"}

# pytest's own ini options that mean the same in the sandbox as in the project's checkout.
_KEPT = {
    "filterwarnings",
    "markers",
    "xfail_strict",
    "python_files",
    "python_classes",
    "python_functions",
    "usefixtures",
    "empty_parameter_set_mark",
    "doctest_optionflags",
    "doctest_encoding",
    "norecursedirs",
    "consider_namespace_packages",
    "tmp_path_retention_count",
    "tmp_path_retention_policy",
}
_WHY_DROPPED = {
    "addopts": "no option of it applies in the sandbox",
    "testpaths": "the suite is collected as tests/",
    "cache_dir": "the cache provider is off",
    "required_plugins": "plugins are not loaded (autoload is off)",
    "junit_family": "suitebench writes no JUnit XML (its event log is the record)",
    "minversion": "the suite runs under suitebench's pytest",
    "faulthandler_timeout": "suitebench's own watchdog uses faulthandler",
}
_NOT_CORE = "not a pytest option: its plugin is not loaded (autoload is off)"
# ``addopts`` flags kept (with their value): they change outcomes the same way everywhere.
_KEPT_FLAGS = {"-W", "--pythonwarnings", "--strict-markers", "--strict-config", "--strict"}
_KEPT_FLAGS |= {"--import-mode", "-r", "--tb", "-l", "--showlocals"}
# The doctests the project's pytest collects are part of its suite (the package's own are
# collected by the plugin: :mod:`suitebench.suite.inside.doctests`).
_DOCTEST_FLAGS = {"--doctest-modules", "--doctest-glob", "--doctest-report"}
_DOCTEST_FLAGS |= {"--doctest-continue-on-failure", "--doctest-ignore-import-errors"}
_KEPT_FLAGS |= _DOCTEST_FLAGS
_VALUED = {"-W", "--pythonwarnings", "--import-mode", "-r", "--tb", "-p", "-n", "-m", "-k", "-c"}
_VALUED |= {"-o", "--maxfail", "--rootdir", "--basetemp", "--junitxml", "--junit-xml"}
_VALUED |= {"--durations", "--dist", "--numprocesses", "--ignore", "--ignore-glob", "--deselect"}
_VALUED |= {"--confcutdir", "--cov-report", "--cov-config", "--timeout", "--log-level"}
_VALUED |= {"--capture", "--color", "--doctest-glob", "--doctest-report", "--reruns"}


@dataclass(frozen=True)
class CarriedConfig:
    """The project's pytest configuration as carried into the sandbox (``results.json``'s
    ``pytest_config``): the file it was read from, the options carried, those dropped and why."""

    source: str
    carried: dict[str, str | list[str]] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    # The package whose modules' doctests the project's pytest collects (``--doctest-modules``
    # with the package where it looks), or None; its root's text files of doctests it collects.
    doctests: str | None = None
    doctest_files: tuple[str, ...] = ()
    walks_root: bool = True  # pytest walks the project's root (no ``testpaths`` leave it out)
    # the other folders pytest walks: ``testpaths`` entries below the root (``docs``)
    walked: tuple[str, ...] = ()
    # of those, the ones ``testpaths`` lists after the suite's folder: pytest runs their
    # doctests after the suite's tests (a doctest may lean on what a test's fixture left in
    # the session's ``doctest_namespace``, as semver's docs do)
    after_suite: tuple[str, ...] = ()
    # R's runs: the file of the reference's docstring examples its modules' doctests are
    doctests_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"source": self.source, "carried": self.carried, "dropped": self.dropped}
        found |= {"doctests": self.doctests} if self.doctests else {}
        return found | ({"doctest_files": list(self.doctest_files)} if self.doctest_files else {})

    def _addopts(self) -> list[str]:
        args = self.carried.get("addopts", "")
        return shlex.split(args) if isinstance(args, str) else list(args)

    def collects_doctests(self) -> bool:
        """Whether the carried options have pytest collect doctests from modules."""
        return "--doctest-modules" in self._addopts()

    def _globs(self) -> list[str]:
        tokens = self._addopts()
        globs = [t.split("=", 1)[1] for t in tokens if t.startswith("--doctest-glob=")]
        globs += [b for a, b in itertools.pairwise(tokens) if a == "--doctest-glob"]
        return globs or ["test*.txt"]

    def doctest_text_files(self, names: Iterable[str]) -> list[str]:
        """Of the files ``names`` in the project's root, those pytest collects as text files of
        doctests there: matching a ``--doctest-glob`` (``test*.txt`` without one), where pytest
        walks the root."""
        if not self.walks_root:
            return []
        globs = self._globs()
        return sorted(n for n in names if any(fnmatch.fnmatch(n, g) for g in globs))

    def doctest_text_paths(self, entries: Mapping[str, Path]) -> list[str]:
        """Of the project root's ``entries`` (name -> file or folder), the text files of
        doctests pytest collects, as paths from the root (``README.rst``,
        ``docs/usage/compare.rst``): the root's own files where pytest walks the root, and
        the files below every folder it walks (the root's folders, or the ``testpaths`` ones)
        but those ``norecursedirs`` leaves out, a virtual environment's, ``__pycache__``."""
        found = set(self.doctest_text_files(n for n, p in entries.items() if p.is_file()))
        if self.walks_root:
            starts = [name for name, path in entries.items() if path.is_dir()]
        else:
            starts = [w for w in self.walked if Path(w).parts[0] in entries]
        skip = self.carried.get("norecursedirs", NORECURSE)
        skip = skip.split() if isinstance(skip, str) else skip
        return sorted(found | files_below(entries, starts, self._globs(), skip))

    def ini_text(self) -> str:
        lines = ["[pytest]"]
        carried = dict(self.carried)
        later = [f for f in self.doctest_files if f.startswith(tuple(self.after_suite))]
        first = [f for f in self.doctest_files if f not in later]
        own = " ".join(
            [f"--suitebench-doctests={self.doctests}"] * bool(self.doctests)
            + [f"--suitebench-doctests-from={self.doctests_from}"] * bool(self.doctests_from)
            + [shlex.quote(f"--suitebench-doctest-files={','.join(first)}")] * bool(first)
            + [shlex.quote(f"--suitebench-doctest-files-after={','.join(later)}")] * bool(later)
        )
        if own:
            addopts = carried.get("addopts", "")
            carried["addopts"] = f"{addopts} {own}".strip() if isinstance(addopts, str) else own
        for name, value in carried.items():
            if isinstance(value, list):
                lines.append(f"{name} =" + "".join(f"\n    {v}" for v in value))
            else:
                lines.append(f"{name} = {value}")
        return "\n".join(lines) + "\n"

    def warning_filters(self) -> tuple[list[str], list[str]]:
        """The ``filterwarnings`` lines and the ``-W`` values of ``addopts``, as pytest applies
        them (ini lines first, then the command line's)."""
        ini = self.carried.get("filterwarnings", [])
        ini = [ini] if isinstance(ini, str) else ini
        args = self.carried.get("addopts", "")
        tokens = shlex.split(args) if isinstance(args, str) else args
        cmdline: list[str] = []
        for i, token in enumerate(tokens):
            if token in ("-W", "--pythonwarnings") and i + 1 < len(tokens):
                cmdline.append(tokens[i + 1])
            elif token.startswith("--pythonwarnings="):
                cmdline.append(token.split("=", 1)[1])
            elif token.startswith("-W") and len(token) > 2:
                cmdline.append(token[2:])
        return [v for v in ini if v.strip()], cmdline


def _lines(value: Any) -> str | list[str]:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines if len(lines) > 1 else text.strip()


def read_pytest_config(path: Path) -> dict[str, str | list[str]] | None:
    """The ini options a file gives pytest, or None when it holds no pytest section (pytest
    then looks further).  ``.ini``/``.cfg`` files are read with pytest's own parser."""
    if path.name == "pyproject.toml":
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        table = data.get("tool", {}).get("pytest", {})
        if not isinstance(table, dict):
            return None
        # pytest 9 reads its options from ``[tool.pytest]`` itself (TOML values), before
        # the older ``[tool.pytest.ini_options]``.
        native = {k: v for k, v in table.items() if k != "ini_options"}
        options = native or table.get("ini_options")
        if not isinstance(options, dict):
            return None
        return {k: _lines(v) for k, v in options.items()}
    import iniconfig

    ini = iniconfig.IniConfig(str(path))
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if section not in ini:
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None
    # ``addopts`` is one shell-like string however many lines it spans (pytest splits it with
    # shlex: ``--doctest-glob='*.rst'`` is ``--doctest-glob=*.rst``); other options by lines.
    return {
        k: " ".join(v.split()) if k == "addopts" else _lines(v) for k, v in ini[section].items()
    }


def find_pytest_config(root: Path) -> Path | None:
    """The file pytest would take its configuration from in ``root``, by pytest's precedence:
    ``pytest.ini`` (even empty), ``.pytest.ini``, ``pyproject.toml`` with ``[tool.pytest]``
    or ``[tool.pytest.ini_options]``, ``tox.ini`` with ``[pytest]``, ``setup.cfg`` with
    ``[tool:pytest]``."""
    for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        path = root / name
        if path.is_file() and read_pytest_config(path) is not None:
            return path
    return None


def _carry_addopts(value: str | list[str]) -> tuple[list[str], dict[str, str]]:
    tokens = shlex.split(value) if isinstance(value, str) else [str(v) for v in value]
    kept: list[str] = []
    dropped: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        flag = tokens[i]
        name = flag.split("=", 1)[0]
        if name.startswith("-") and not name.startswith("--") and len(name) > 2:
            name = name[:2]  # -Werror, -rA, -pxdist
        words = [flag]
        takes = name in _VALUED and "=" not in flag and len(flag) == len(name)
        if takes and i + 1 < len(tokens):
            words.append(tokens[i + 1])
        i += len(words)
        if name in _KEPT_FLAGS:
            kept += words
        else:
            dropped[f"addopts {' '.join(words)}"] = (
                "names a plugin that is not loaded"
                if name in ("-p", "-n") or "cov" in name
                else "changes which tests run or how pytest runs them; suitebench decides that"
            )
    return kept, dropped


def _reaches(testpaths: str | list[str] | None, package: str | None) -> bool:
    """Whether pytest, run in the project's root, walks the package (None: the root itself):
    there are no ``testpaths`` (it walks the root), or one of them is the root, or ``src``, or
    the package (at the root or under ``src/``) or a part of it."""
    if testpaths is None:
        return True
    entries = testpaths.split() if isinstance(testpaths, str) else testpaths
    for entry in entries:
        parts = [p for p in entry.strip().split("/") if p not in ("", ".")]
        if parts[:1] == ["src"] and package is not None:
            parts = parts[1:]
        if not parts or (package is not None and fnmatch.fnmatch(package, parts[0])):
            return True
    return False


def _carry_pythonpath(
    value: str | list[str], config_dir: Path, tests: Path | None
) -> tuple[list[str], dict[str, str]]:
    """Of ``pythonpath``'s folders, the suite's own (its folder or one inside it), as the
    sandbox's suite folder ``tests/`` holds them; the others dropped, each with the reason."""
    entries = value.split() if isinstance(value, str) else [str(v) for v in value]
    kept: list[str] = []
    dropped: dict[str, str] = {}
    suite = tests.resolve() if tests is not None else None
    for entry in entries:
        folder = (config_dir / entry).resolve()
        if suite is not None and folder.is_relative_to(suite):
            kept.append(Path("tests", folder.relative_to(suite)).as_posix())
        else:
            dropped[f"pythonpath {entry}"] = (
                "the program under test is put on sys.path by suitebench; a folder outside "
                "the suite is not in the sandbox"
            )
    return kept, dropped


def carry_config(
    path: Path, package: str | None = None, tests: Path | None = None, root: Path | None = None
) -> CarriedConfig:
    """What of ``path``'s pytest configuration applies in the sandbox: pytest's own options
    that mean the same wherever the suite runs are carried; paths, plugins and what decides
    which tests run are dropped, each with the reason.  ``package``: the package under test,
    whose modules' doctests are part of the suite where the configuration collects them.
    ``tests``: the suite's folder, whose ``pythonpath`` entries (helpers the tests import by
    name) are carried.  ``root``: the folder the configuration's relative paths are read
    from (the project's root; the file's own folder by default)."""
    options = read_pytest_config(path) or {}
    carried: dict[str, str | list[str]] = {}
    dropped: dict[str, str] = {}
    for name, value in options.items():
        if name == "pythonpath":
            folders, gone = _carry_pythonpath(value, root or path.parent, tests)
            dropped.update(gone)
            if folders:
                carried[name] = " ".join(folders)
        elif name == "addopts":
            kept, gone = _carry_addopts(value)
            dropped.update(gone)
            if kept:
                carried[name] = shlex.join(kept)
        elif name in _KEPT or name.startswith("log_"):
            carried[name] = value
        else:
            dropped[name] = _WHY_DROPPED.get(name, _NOT_CORE)
    testpaths = options.get("testpaths")
    config = CarriedConfig(
        str(path),
        carried,
        dropped,
        walks_root=_reaches(testpaths, None),
        walked=testpath_folders(testpaths),
        after_suite=after_suite(testpaths, root or path.parent, tests),
    )
    if package and config.collects_doctests() and _reaches(testpaths, package):
        config = dataclasses.replace(config, doctests=package)
    return config


def read_by_tests(repo: Path, tests: Path, held: set[str]) -> list[str]:
    """Root entries the tests read or import: names that occur in their text as a quoted
    string or a path part (``"README.md"``, ``/ "docs" /``), and root modules and packages
    they import (``from tools import ...``, which plain pytest finds on the rootdir); names in
    ``held`` and hidden or build entries are not."""
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in tests.rglob("*.py"))
    names = []
    for entry in sorted(repo.iterdir()):
        name = entry.name
        if name in _SKIP_ROOT or name in held or name.startswith("."):
            continue
        module = name.removesuffix(".py")
        quoted = re.search(r"[\"'/]" + re.escape(name) + r"[\"'/]", text)
        imported = module.isidentifier() and re.search(
            rf"^\s*(from|import)\s+{re.escape(module)}\b", text, re.M
        )
        if quoted or imported:
            names.append(name)
    return names


@dataclass(frozen=True)
class Beside:
    """What every run's work dir holds next to ``tests/``, staged once: ``path`` (its entries
    are copied into the work dir's root), ``digest`` (part of every run's job key: they change
    results) and the carried configuration, if any."""

    path: Path
    digest: str
    config: CarriedConfig | None
    names: tuple[str, ...]


def config_upward(tests: Path, root: Path) -> Path | None:
    """The configuration pytest itself would find for a suite in ``tests``: from the suite's
    directory upward, the first file holding pytest's configuration -- but not above the
    instance's ``root`` (what lies outside an instance is not part of it)."""
    try:
        tests.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    directory = tests.resolve()
    top = root.resolve()
    while True:
        try:
            found = find_pytest_config(directory)
        except (ValueError, OSError):
            found = None
        if found is not None:
            return found
        if directory == top or directory == directory.parent:
            return None
        directory = directory.parent


def root_files_read(instance: Instance, config_file: Path | None) -> dict[str, Path]:
    """For an ``instance.toml`` written in a project without ``beside``: the project root's
    files and directories its tests read or import (``README.md``, ``docs/``), as ``build
    init`` finds them. The project's root is where its pytest configuration is, within the
    instance; the instance's own parts (source, tests, mutants) are never carried."""
    if config_file is None:
        return {}
    project = config_file.parent.resolve()
    try:
        project.relative_to(instance.root.resolve())
    except ValueError:
        return {}
    if not instance.tests.is_dir():
        return {}
    held = _held(instance, project)
    return {name: project / name for name in read_by_tests(project, instance.tests, held)}


def _held(instance: Instance, project: Path) -> set[str]:
    """The root entries of ``project`` that are the instance's own (source, tests, mutants,
    its files) and so never carried beside the suite."""
    held = {"instance.toml", "pytest.ini", "conftest.py", "mutants", "project", "spec.md"}
    for part in (instance.source, instance.tests, *(m.patch for m in instance.mutants)):
        try:
            held.add(part.resolve().relative_to(project).parts[0])
        except (ValueError, IndexError):
            continue
    if instance.package:
        held.add(instance.package)
    return held


def doctest_entries(root: Path, held: Iterable[str]) -> dict[str, Path]:
    """The entries of a project's ``root`` its text files of doctests may lie in: all but
    ``held`` (the package, the suite, the instance's own), hidden, version control and build
    output."""
    skip = {*held, *_SKIP_ROOT}
    return {p.name: p for p in root.iterdir() if p.name not in skip and not p.name.startswith(".")}


def stage_beside(
    instance: Instance,
    cache_dir: Path,
    *,
    doctest_modules: bool = True,
    doctest_files: bool = True,
    reference_examples: bool = False,
) -> Beside | None:
    """Stage the instance's carried configuration, root ``conftest.py`` and ``beside`` files
    under ``cache_dir/beside/<digest>`` (content-addressed: concurrent scores agree); None when
    there is nothing to carry.  The configuration is ``pytest_config``, or for a package the
    one pytest would find in its source root; the root ``conftest.py`` is the one next to it.

    The project's doctests are its suite's tests: a suite from elsewhere is scored without
    them (``doctest_modules`` and ``doctest_files`` False); a generated implementation is held
    to the reference's docstring examples, not its own (``reference_examples``: they are
    staged beside the suite and run in each module's namespace)."""
    config_file = instance.pytest_config
    if config_file is None:
        config_file = config_upward(instance.tests, instance.root)
    if config_file is None and instance.kind is InstanceKind.PYTHON:
        config_file = find_pytest_config(instance.source)
    package = instance.package if instance.kind is InstanceKind.PYTHON else None
    config = None
    if config_file is not None:
        # ``build init`` copies the project's configuration into ``project/``, and its suite
        # and root files into the instance's root: the project's root is the instance's
        # (a project kept whole in ``project/``, its suite there too, reads them from there)
        folder = config_file.parent.resolve()
        copied = folder.name == "project" and folder.parent == instance.root.resolve()
        copied = copied and not instance.tests.resolve().is_relative_to(folder)
        root = instance.root if copied else None
        config = carry_config(config_file, package, instance.tests, root)
    entries = {p.name: p for p in instance.beside}
    if instance.pytest_config is None and not entries:
        entries = {name: path for name, path in root_files_read(instance, config_file).items()}
    if config is not None and config_file is not None:
        if instance.pytest_config is None and not instance.beside:
            # an instance.toml in the project: its text files of doctests come along (the
            # root's, and the folders' pytest walks: ``testpaths = tests docs``)
            root = config_file.parent.resolve()
            if root.is_relative_to(instance.root.resolve()):
                found = doctest_entries(root, _held(instance, root))
                for path in config.doctest_text_paths(found):
                    name = path.split("/", 1)[0]
                    entries.setdefault(name, root / name)
        texts = config.doctest_text_paths(entries)
        config = dataclasses.replace(
            config,
            doctests=config.doctests if doctest_modules else None,
            doctest_files=tuple(texts) if doctest_files else (),
        )
    project_root = config_file.parent if config_file is not None else None
    if project_root is None and instance.kind is InstanceKind.PYTHON:
        project_root = instance.source
    if project_root is not None and (project_root / "conftest.py").is_file():
        entries.setdefault("conftest.py", project_root / "conftest.py")
    if config is None and not entries:
        return None
    home = cache_dir / "beside"
    staging = home / ".staging" / uuid.uuid4().hex
    staging.mkdir(parents=True)
    package_dir = instance.package_dir()
    if reference_examples and config is not None and config.doctests and package_dir:
        examples = docstring_examples(package_dir)
        (staging / FILE_NAME).write_text(json.dumps(examples, sort_keys=True), encoding="utf-8")
        config = dataclasses.replace(config, doctests_from=FILE_NAME)
    if config is not None:
        (staging / "pytest.ini").write_text(config.ini_text(), encoding="utf-8")
    for name, source in sorted(entries.items()):
        if source.is_dir():
            shutil.copytree(source, staging / name, symlinks=False)
        else:
            shutil.copy2(source, staging / name)
    final, digest = publish_by_hash(staging, home)
    names = tuple(sorted([*entries, *(["pytest.ini"] if config is not None else [])]))
    names = tuple(sorted([*names, *([FILE_NAME] if config and config.doctests_from else [])]))
    return Beside(path=final, digest=digest, config=config, names=names)


def warns_as_error(config: CarriedConfig | None, files: Iterable[Path]) -> bool:
    """Whether the carried warning filters turn a warning one of ``files`` draws when compiled
    (a ``SyntaxWarning`` for ``x is ""``, an invalid escape) into an error: then every test
    importing it fails to collect, a change no per-test coverage shows."""
    if config is None:
        return False
    ini, cmdline = config.warning_filters()
    if not any(f.split(":", 1)[0].strip() == "error" for f in (*ini, *cmdline)):
        return False
    with _COMPILING, warnings.catch_warnings():
        warnings.simplefilter("always")
        try:
            from _pytest.config import parse_warning_filter

            for arg in ini:
                warnings.filterwarnings(*parse_warning_filter(arg, escape=False))
            for arg in cmdline:
                warnings.filterwarnings(*parse_warning_filter(arg, escape=True))
        except Exception:  # a filter pytest would reject too, or another pytest: assume it warns
            return True
        for path in files:
            try:
                compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
            except (SyntaxError, Warning):
                return True
            except (OSError, ValueError):
                continue
    return False


WARNS_REASON = "warnings are errors and the mutant's module warns on compile"


def warns_on_compile(beside: Beside | None, pythonpath: str | None, patch: str) -> bool:
    """Whether a package mutant's changed modules draw, on import, a warning the carried
    configuration makes an error (:func:`warns_as_error`): every test importing them errors,
    wherever coverage says they reach, so the mutant runs every test."""
    if beside is None or pythonpath is None:
        return False
    from suitebench.model.diffs import changed_paths
    from suitebench.run.pycompile import compiled_quietly

    files = [Path(pythonpath) / p for p in changed_paths(patch) if p.endswith(".py")]
    # a module the build compiled without a warning draws none that a filter could make an error
    return warns_as_error(beside.config, [f for f in files if not compiled_quietly(f)])
