"""The suitebench command line: the only package that imports typer and rich.

Each command group lives in its own module under ``suitebench.cli`` and registers itself on the
one typer app through ``register(app)``; global options (``--store``, ``--jobs``, ``--dask``,
``--json``) are parsed here and handed to commands through :class:`GlobalOptions`.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import typer

app = typer.Typer(
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
        """No progress bars in CI or when stderr is not a terminal."""
        return bool(os.environ.get("CI")) or not sys.stderr.isatty()


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
        False, "--json", help="Machine output (JSON) on stdout, human output on stderr."
    ),
) -> None:
    OPTIONS.store = store
    OPTIONS.jobs = jobs
    OPTIONS.dask = dask
    OPTIONS.json = json_out


# Command modules, each with register(app). A module that is not there yet is skipped so that
# the CLI works while the tool grows.
_COMMAND_MODULES = ["sandbox", "doctor", "audit", "score", "demo", "review", "build"]


def _register_all() -> None:
    for name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"suitebench.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"suitebench.cli.{name}":
                continue
            raise
        mod.register(app)


_register_all()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
