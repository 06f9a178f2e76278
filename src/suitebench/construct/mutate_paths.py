"""Which source files ``build mutants`` mutates: include/exclude globs, and the settings a
project already keeps for its own mutation tool.

A project that runs mutmut or cosmic-ray has already said what must not be mutated (tests
inside the package, generated or vendored code, a ``curried/`` façade that only re-exports):
mutmut's ``[tool.mutmut]`` in ``pyproject.toml`` or ``[mutmut]`` in ``setup.cfg``
(``paths_to_mutate`` or ``source_paths``, ``only_mutate``, ``do_not_mutate``) and
cosmic-ray's ``[cosmic-ray]`` table in a ``.toml`` config (``module-path``,
``excluded-modules``).  Reading them keeps the mutants comparable to that tool's and spares
restating them; every setting read is named in the command's output, so a file left out is
never a surprise.

Globs are matched against paths relative to the source root, with ``fnmatch`` (``*`` also
crosses ``/``, as in mutmut); a glob naming a directory (``curried`` or ``curried/``) covers
every file under it. A project's own settings are written relative to the project's root
(``src/durations/_compat.py``), so a file is also matched under the source root's place in
the project (``src/``: the instance's source root relative to the project's root, or the one
``build init`` recorded in ``init.json``). mutmut 3's ``source_paths`` and ``only_mutate``
name files to mutate as ``paths_to_mutate`` did.

Where the settings are: the project's root -- for an instance ``build init`` made, its
``project/`` copy of the project's configuration files; for an ``instance.toml`` written in a
project, the directory of its ``pytest_config`` or the instance's own directory; else the
source root.
"""

from __future__ import annotations

import configparser
import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

__all__ = [
    "PathFilter",
    "matches",
    "mutation_settings_files",
    "mutmut_settings",
    "path_filter",
    "project_root_of",
    "project_settings",
]


def matches(rel: str, glob: str) -> bool:
    """Whether the source-relative path ``rel`` is the glob's file or under its directory."""
    glob = glob.strip().removeprefix("./")
    directory = glob.rstrip("/")
    return fnmatchcase(rel, glob) or (bool(directory) and fnmatchcase(rel, directory + "/*"))


@dataclass(frozen=True)
class PathFilter:
    """Include and exclude globs and where each came from (``--include``, ``pyproject.toml
    [tool.mutmut] do_not_mutate``, ...).  No include glob means every file is included."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    settings_read: tuple[str, ...] = field(default=())
    # the source root's places in the project (``src``): a file also matches there
    prefixes: tuple[str, ...] = ()

    def _hit(self, rel: str, globs: tuple[str, ...]) -> bool:
        names = [rel, *(f"{p.strip('/')}/{rel}" for p in self.prefixes if p.strip("/"))]
        return any(matches(name, g) for name in names for g in globs)

    def keeps(self, rel: str) -> bool:
        if self.include and not self._hit(rel, self.include):
            return False
        return not self._hit(rel, self.exclude)


def _globs(value: Any) -> list[str]:
    """A setting as a list of globs: a TOML list, or a string split on commas and newlines
    (how mutmut 2 and ``setup.cfg`` write them)."""
    if isinstance(value, str):
        return [g.strip() for g in value.replace("\n", ",").split(",") if g.strip()]
    if isinstance(value, list):
        return [str(g).strip() for g in value if str(g).strip()]
    return []


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # not a config this step can read; the project's own tool will complain


def _mutmut(root: Path) -> tuple[dict[str, Any], str]:
    """mutmut's settings and the file and table they came from ({} if none)."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        table = _toml(pyproject).get("tool", {}).get("mutmut")
        if isinstance(table, dict):
            return table, "pyproject.toml [tool.mutmut]"
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(setup_cfg, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            return {}, ""
        if parser.has_section("mutmut"):
            return dict(parser.items("mutmut")), "setup.cfg [mutmut]"
    return {}, ""


def mutmut_settings(root: Path) -> tuple[dict[str, Any], str]:
    """mutmut's settings in the project ``root`` and where they are ({}, "" if none)."""
    return _mutmut(root)


def mutation_settings_files(root: Path) -> list[Path]:
    """The project's files holding mutation settings: ``pyproject.toml`` with
    ``[tool.mutmut]`` or ``[tool.suitebench]``, ``setup.cfg`` with ``[mutmut]``, and a
    ``.toml`` with a ``[cosmic-ray]`` table (what ``build init`` carries into ``project/``)."""
    files: list[Path] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        tools = _toml(pyproject).get("tool", {})
        if isinstance(tools, dict) and ("mutmut" in tools or "suitebench" in tools):
            files.append(pyproject)
    if _mutmut(root)[1].startswith("setup.cfg"):
        files.append(root / "setup.cfg")
    files += [p for p in sorted(root.glob("*.toml")) if "cosmic-ray" in _toml(p)]
    return list(dict.fromkeys(files))


def _cosmic_ray(root: Path) -> tuple[dict[str, Any], str]:
    """The first ``.toml`` in the source root (sorted) with a ``[cosmic-ray]`` table."""
    for path in sorted(root.glob("*.toml")):
        table = _toml(path).get("cosmic-ray")
        if isinstance(table, dict):
            return table, f"{path.name} [cosmic-ray]"
    return {}, ""


def project_settings(root: Path, prefix: str = "") -> PathFilter:
    """The include/exclude globs mutmut's and cosmic-ray's settings in ``root`` state, with
    the source root's place in that project (``prefix``)."""
    include: list[str] = []
    exclude: list[str] = []
    read: list[str] = []
    prefixes = [prefix] if prefix else []
    settings, where = _mutmut(root)
    # mutmut 3.x renamed paths_to_mutate to source_paths and added only_mutate (file globs):
    # each is read as the files to mutate (one include list: a file any of them names)
    for key, target in (
        ("paths_to_mutate", include),
        ("source_paths", include),
        ("only_mutate", include),
        ("do_not_mutate", exclude),
    ):
        globs = _globs(settings.get(key))
        if globs:
            target += globs
            read.append(f"{where} {key} = {', '.join(globs)}")
    settings, where = _cosmic_ray(root)
    for key, target in (("module-path", include), ("excluded-modules", exclude)):
        globs = _globs(settings.get(key))
        if globs:
            target += globs
            read.append(f"{where} {key} = {', '.join(globs)}")
    return PathFilter(tuple(include), tuple(exclude), tuple(read), tuple(dict.fromkeys(prefixes)))


def _init_prefix(instance_root: Path) -> str:
    """The source root's place in the project ``build init`` copied it from (``init.json``)."""
    try:
        found = json.loads((instance_root / "init.json").read_text(encoding="utf-8"))
        return str(found.get("python_project", {}).get("source_prefix", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def project_root_of(
    instance_root: Path, source: Path, pytest_config: Path | None = None
) -> tuple[Path, str]:
    """Where an instance's project keeps its mutation settings, and the source root's place
    in it: ``project/`` (``build init``'s copy), the ``pytest_config``'s directory, the
    instance's directory, else the source root itself (place ``""``)."""
    candidates = [instance_root / "project"]
    if pytest_config is not None:
        candidates.append(pytest_config.parent)
    candidates += [instance_root, source]
    for directory in candidates:
        if not directory.is_dir():
            continue
        if _mutmut(directory)[1] or _cosmic_ray(directory)[1]:
            try:
                prefix = source.resolve().relative_to(directory.resolve()).as_posix()
            except ValueError:
                prefix = _init_prefix(instance_root)
            return directory, "" if prefix == "." else prefix
    return source, ""


def path_filter(
    root: Path,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    *,
    project: bool = True,
    prefix: str = "",
) -> PathFilter:
    """The command line's globs with the project's settings in ``root`` (the source root's
    place there: ``prefix``): ``--include`` replaces the project's include paths (the command
    line is the more specific request); excludes add up."""
    include, exclude = tuple(include), tuple(exclude)
    found = project_settings(root, prefix) if project else PathFilter()
    read = [f"--include {g}" for g in include] + [f"--exclude {g}" for g in exclude]
    read += [s for s in found.settings_read if not (include and _is_include(s))]
    return PathFilter(
        include or found.include, exclude + found.exclude, tuple(read), found.prefixes
    )


def _is_include(setting: str) -> bool:
    keys = ("paths_to_mutate", "source_paths", "only_mutate", "module-path")
    return any(f" {key} = " in setting for key in keys)
