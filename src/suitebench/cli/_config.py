"""``[tool.suitebench]`` in a project's ``pyproject.toml``: the defaults of ``score``, ``build
init`` and ``build mutants`` kept with the project (as Stryker's ``stryker.config.json``, PIT's
plugin block and mutmut's ``[tool.mutmut]``), so that CI and a developer run the same thing.

```toml
[tool.suitebench.score]
fail-under = 80
per-test-timeout = 5

[tool.suitebench.build.mutants]
max-per-function = 20
exclude = ["durations/_compat.py"]

[tool.suitebench.build.init]
python = ".venv/bin/python"
```

Keys are the command's long options without the dashes (``fail-under`` or ``fail_under``); an
option given on the command line wins. The file is looked for where the project is: for
``score`` and ``build mutants``, the instance's ``project/`` copy (what ``build init`` keeps of
the project) and then from the instance's directory upward to the first ``pyproject.toml``; for
``build init``, from the repository upward. A key no option has is an error naming the file and
the key, not a setting silently ignored.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "find_project_config", "project_defaults"]

# The commands read, by their path on the command line, and their table under tool.suitebench.
_TABLES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("score",): ("score",),
    ("build", "mutants"): ("build", "mutants"),
    ("build", "init"): ("build", "init"),
}


class ConfigError(ValueError):
    """A ``[tool.suitebench]`` table that cannot be read: names the file and the key."""


def _table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("suitebench")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.suitebench] must be a table")
    return table


def find_project_config(target: Path, *, instance: bool) -> Path | None:
    """The ``pyproject.toml`` holding ``[tool.suitebench]`` for the project at ``target`` (an
    instance directory or its ``instance.toml``, or a repository), or None."""
    start = target.parent if target.is_file() else target
    start = start.resolve()
    candidates: list[Path] = []
    if instance:
        candidates.append(start / "project" / "pyproject.toml")
    for directory in (start, *start.parents):
        if (directory / "pyproject.toml").is_file():
            candidates.append(directory / "pyproject.toml")
            break  # the first pyproject.toml upward is the project's (as pytest's rootdir)
    for path in candidates:
        if path.is_file() and _table(path) is not None:
            return path
    return None


def _command_path(args: list[str], group: Any) -> tuple[tuple[str, ...], list[str]]:
    """The command words (``("build", "mutants")``) and the words after them."""
    words: list[str] = []
    cmd = group
    rest = list(args)
    while rest:
        sub = getattr(cmd, "commands", None)
        if sub is None:
            break
        k = 0
        while k < len(rest) and rest[k].startswith("-"):
            k += 1  # global options were hoisted in front: flags and their values are skipped
            if k < len(rest) and rest[k - 1] in ("--store", "--jobs", "-j", "--dask"):
                k += 1
        if k >= len(rest) or rest[k] not in sub:
            break
        words.append(rest[k])
        cmd = sub[rest[k]]
        rest = rest[k + 1 :]
    return tuple(words), rest


def _first_argument(rest: list[str], cmd: Any) -> str | None:
    """The command's first positional argument in ``rest`` (its options and their values
    skipped)."""
    valued = {
        opt
        for p in cmd.params
        if hasattr(p, "is_flag") and not p.is_flag
        for opt in (*p.opts, *p.secondary_opts)
    }
    k = 0
    while k < len(rest):
        a = rest[k]
        if a == "--":
            return rest[k + 1] if k + 1 < len(rest) else None
        if a.startswith("-"):
            k += 2 if a in valued else 1
            continue
        return a
    return None


def project_defaults(args: list[str], group: Any) -> tuple[dict[str, Any] | None, Path | None]:
    """Click's ``default_map`` for the command ``args`` runs, from the project's
    ``[tool.suitebench]``, and the file it came from (None, None: no such table)."""
    words, rest = _command_path(args, group)
    table_path = _TABLES.get(words)
    if table_path is None:
        return None, None
    cmd = group
    for w in words:
        cmd = cmd.commands[w]
    target = _first_argument(rest, cmd)
    if target is None or not Path(target).exists():
        return None, None
    config = find_project_config(Path(target), instance=words != ("build", "init"))
    if config is None:
        return None, None
    table: Any = _table(config) or {}
    for key in table_path:
        table = table.get(key, {}) if isinstance(table, dict) else {}
    where = "tool.suitebench." + ".".join(table_path)
    if not isinstance(table, dict):
        raise ConfigError(f"{config}: [{where}] must be a table")
    # an option's long name without its dashes, or its parameter's name -> the parameter
    names: dict[str, str] = {}
    for p in cmd.params:
        if not hasattr(p, "is_flag") or p.name is None:
            continue
        names[p.name.replace("_", "-")] = p.name
        for opt in p.opts:
            if opt.startswith("--"):
                names[opt[2:]] = p.name
    defaults: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            continue  # a nested table (build.mutants under build): read on its own
        name = names.get(key.replace("_", "-"))
        if name is None:
            known = ", ".join(sorted({k for k in names if "_" not in k}))
            raise ConfigError(f"{config}: [{where}] {key}: no such option (known: {known})")
        defaults[name] = value
    if not defaults:
        return None, config
    nested: dict[str, Any] = defaults
    for key in reversed(words):
        nested = {key: nested}
    return nested, config
