"""Which source files ``build mutants`` mutates: include/exclude globs, and the settings a
project already keeps for its own mutation tool.

A project that runs mutmut or cosmic-ray has already said what must not be mutated (tests
inside the package, generated or vendored code, a ``curried/`` façade that only re-exports):
mutmut's ``[tool.mutmut]`` in ``pyproject.toml`` or ``[mutmut]`` in ``setup.cfg``
(``paths_to_mutate``, ``do_not_mutate``) and cosmic-ray's ``[cosmic-ray]`` table in a ``.toml``
config (``module-path``, ``excluded-modules``).  Reading them keeps the mutants comparable to
that tool's and spares restating them; every setting read is named in the command's output, so
a file left out is never a surprise.

Globs are matched against paths relative to the source root, with ``fnmatch`` (``*`` also
crosses ``/``, as in mutmut); a glob naming a directory (``curried`` or ``curried/``) covers
every file under it.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

__all__ = ["PathFilter", "matches", "path_filter", "project_settings"]


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

    def keeps(self, rel: str) -> bool:
        if self.include and not any(matches(rel, g) for g in self.include):
            return False
        return not any(matches(rel, g) for g in self.exclude)


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


def _cosmic_ray(root: Path) -> tuple[dict[str, Any], str]:
    """The first ``.toml`` in the source root (sorted) with a ``[cosmic-ray]`` table."""
    for path in sorted(root.glob("*.toml")):
        table = _toml(path).get("cosmic-ray")
        if isinstance(table, dict):
            return table, f"{path.name} [cosmic-ray]"
    return {}, ""


def project_settings(root: Path) -> PathFilter:
    """The include/exclude globs mutmut's and cosmic-ray's settings in ``root`` state."""
    include: list[str] = []
    exclude: list[str] = []
    read: list[str] = []
    settings, where = _mutmut(root)
    for key, target in (("paths_to_mutate", include), ("do_not_mutate", exclude)):
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
    return PathFilter(tuple(include), tuple(exclude), tuple(read))


def path_filter(
    root: Path, include: Iterable[str] = (), exclude: Iterable[str] = (), *, project: bool = True
) -> PathFilter:
    """The command line's globs with the project's settings: ``--include`` replaces the
    project's include paths (the command line is the more specific request); excludes add up."""
    include, exclude = tuple(include), tuple(exclude)
    found = project_settings(root) if project else PathFilter()
    read = [f"--include {g}" for g in include] + [f"--exclude {g}" for g in exclude]
    read += [s for s in found.settings_read if not (include and _is_include(s))]
    return PathFilter(include or found.include, exclude + found.exclude, tuple(read))


def _is_include(setting: str) -> bool:
    return " paths_to_mutate = " in setting or " module-path = " in setting
