"""The suitebench command line: the only package that imports typer and rich.

Each command group lives in its own module under ``suitebench.cli`` and registers itself on the
one typer app through ``register(app)``; global options (``--store``, ``--jobs``, ``--dask``,
``--json``) are parsed here and handed to commands through :class:`GlobalOptions`; they may be
given before or after the subcommand (``suitebench --json doctor`` = ``suitebench doctor
--json``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

# The global options: those that take a value, and flags.
_GLOBAL_VALUED = ("--store", "--jobs", "-j", "--dask")
_GLOBAL_FLAGS = ("--json",)


def _is_global(token: str) -> tuple[bool, int]:
    """Whether ``token`` is a global option, and how many tokens it takes (1 or 2)."""
    name = token.split("=", 1)[0]
    if name in _GLOBAL_FLAGS and "=" not in token:
        return True, 1
    if name in _GLOBAL_VALUED:
        return True, 1 if "=" in token else 2
    if token.startswith("-j") and token[2:].isdigit():
        return True, 1
    return False, 0


def hoist_global_options(args: list[str], commands: Mapping[str, Any]) -> list[str]:
    """Move global options given after the subcommand (``suitebench sandbox --json -- ...``)
    in front of it, where the group parses them. Nothing after ``--`` moves, nor anything after
    the first argument of a command that stops at it (``sandbox CMD --json`` is CMD's)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args
        is_global, width = _is_global(a)
        if is_global:
            i += width
        elif a.startswith("-"):
            i += 1
        else:
            break
    cmd = commands.get(args[i]) if i < len(args) else None
    if cmd is None:
        return args
    hoisted: list[str] = []
    kept: list[str] = []
    rest = args[i + 1 :]
    while cmd is not None:
        # A command group (``build``): its own options, then its subcommand, whose options
        # the rest of the line is read with (``build mutants X --json``).
        sub = getattr(cmd, "commands", None)
        own = _own_options(cmd)
        j = 0
        nxt = None
        interspersed = (cmd.context_settings or {}).get(
            "allow_interspersed_args", cmd.allow_interspersed_args
        )
        while j < len(rest):
            a = rest[j]
            is_global, width = _is_global(a)
            name = a.split("=", 1)[0]
            if a == "--":
                kept += rest[j:]
                j = len(rest)
                break
            if is_global and name not in own:
                hoisted += rest[j : j + width]
                j += width
            elif name in own:
                width = 2 if own[name] and "=" not in a else 1
                kept += rest[j : j + width]
                j += width
            elif a.startswith("-") and a != "-":
                kept.append(a)
                j += 1
            elif sub is not None:
                kept.append(a)
                nxt = sub.get(a)
                j += 1
                break
            else:
                kept.append(a)
                j += 1
                if not interspersed:
                    kept += rest[j:]
                    j = len(rest)
                    break
        rest = rest[j:]
        cmd = nxt
    kept += rest
    return [*args[:i], *hoisted, args[i], *kept]


def _own_options(cmd: Any) -> dict[str, bool]:
    """A command's own options, and whether each takes a value (options, not arguments)."""
    return {
        opt: not (p.is_flag or getattr(p, "count", False))
        for p in cmd.params
        if hasattr(p, "is_flag")
        for opt in (*p.opts, *p.secondary_opts)
    }


class _Group(TyperGroup):
    """The app's group: global options are accepted after the subcommand as well."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(list(args), self.commands))


app = typer.Typer(
    cls=_Group,
    name="suitebench",
    help="Measure, build and certify the strength of test suites.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@dataclass
class GlobalOptions:
    """Options every command shares (DESIGN.md: the command-line contract)."""

    store: Path = Path(".suitebench/store.sqlite")
    jobs: int = os.cpu_count() or 1
    dask: str | None = None
    json: bool = False

    @property
    def quiet(self) -> bool:
        """No progress in CI. Elsewhere a bar on a terminal, and when stderr is not one (a
        pipe, a log file) a plain line every few seconds (``cli/_progress.py``)."""
        return bool(os.environ.get("CI"))


OPTIONS = GlobalOptions()


@app.callback()
def _global(
    store: Path = typer.Option(
        Path(".suitebench/store.sqlite"), "--store", help="SQLite store of cached outcomes."
    ),
    jobs: int = typer.Option(
        os.cpu_count() or 1, "--jobs", "-j", min=1, help="Parallel workers (default: cores)."
    ),
    dask: str | None = typer.Option(
        None, "--dask", help="Run on Dask: 'local' for a LocalCluster or tcp://host:port."
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Machine output (JSON) on stdout, human output on stderr (without it, human "
        "output goes to stdout).",
    ),
) -> None:
    OPTIONS.store = store
    OPTIONS.jobs = jobs
    OPTIONS.dask = dask
    OPTIONS.json = json_out


# Command modules, each with register(app), by the command it registers.
_COMMAND_MODULES = {
    "sandbox": "sandbox",
    "doctor": "doctor",
    "audit": "audit",
    "score": "score",
    "demo": "demo",
    "review-fdr": "review",
    "generate": "generate",
    "agent": "agent",
    "report": "report",
    "compare": "compare",
    "build": "build",
    "import": "import_",
    "show": "mutant",
    "apply": "mutant",
    "stress": "stress",
}


def requested_command(args: list[str]) -> str | None:
    """The command ``args`` names (its first word after the global options), if any."""
    i = 0
    while i < len(args):
        is_global, width = _is_global(args[i])
        if is_global:
            i += width
        elif args[i].startswith("-"):
            return None  # --help, or an unknown option: the group answers
        else:
            return args[i]
    return None


def _register(args: list[str]) -> None:
    """Register the command ``args`` asks for, or every command (help, an unknown word, or
    a program importing this module): a command's module, and what it imports (numpy, scipy,
    the audit's chain...), costs a few hundred milliseconds to import."""
    wanted = requested_command(args)
    names = [wanted] if wanted in _COMMAND_MODULES else list(_COMMAND_MODULES)
    for module in dict.fromkeys(_COMMAND_MODULES[name] for name in names):
        importlib.import_module(f"suitebench.cli.{module}").register(app)


# Only the command line (the script, ``python -m suitebench``) knows which command it runs.
_register(sys.argv[1:] if Path(sys.argv[0]).name in ("suitebench", "__main__.py") else [])


def main() -> None:
    """The command line, with the defaults the project's ``[tool.suitebench]`` gives the
    command it runs (``cli/_config.py``): named on stderr, overridden by the options given."""
    from suitebench.cli._config import ConfigError, project_defaults

    args = sys.argv[1:]
    group = typer.main.get_command(app)
    try:
        commands = getattr(group, "commands", {})
        default_map, source = project_defaults(hoist_global_options(args, commands), group)
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None
    if default_map and source is not None:
        sys.stderr.write(f"settings: {source} [tool.suitebench]\n")
    app(default_map=default_map)


if __name__ == "__main__":
    main()
