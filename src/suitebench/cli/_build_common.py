"""What the ``suitebench build`` steps share: the ``build`` command group, its consoles, and the
helpers that load an instance, open the store, run an executor and fail with a clear message.
Kept apart so ``cli/build.py`` and ``cli/build_mutants.py`` both import it, not each other."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli._progress import ProgressFn, progress_bar
from suitebench.cli.main import OPTIONS
from suitebench.model.errors import FormatError
from suitebench.model.instance import Instance, load_instance
from suitebench.model.programbench import (
    is_programbench_task,
    load_programbench_task,
)
from suitebench.run.executor import Executor, make_executor

if TYPE_CHECKING:
    from suitebench.run.store import Store

_out = HumanConsole(soft_wrap=True)  # each step's report: stdout (stderr under --json)
_err = error_console(soft_wrap=True)  # errors and the progress bars
build_app = typer.Typer(
    name="build",
    help="Build benchmark instances: mutants, targets, refinement, hygiene, specs, statistics.",
    no_args_is_help=True,
)


def _fail(message: str, code: int = 2) -> typer.Exit:
    _err.print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(code)


# What the steps that edit an instance's instance.toml (or its sections map) need of it.
_NEEDS_INSTANCE = {
    "hygiene": "records its changes in",
    "targets": "reads the sections map from",
    "refine": "rewrites the mutant list of",
    "spec": "points at the new spec from",
}


def _load(path: Path, step: str | None = None, branch: str | None = None) -> Instance:
    """The instance at ``path``, or the ProgramBench task there; a step that needs an
    ``instance.toml`` says so on a task, naming the command that makes one."""
    try:
        if is_programbench_task(path):
            if step in _NEEDS_INSTANCE:
                raise _fail(
                    f"{path}: a ProgramBench task has no instance.toml, which `build {step}` "
                    f"{_NEEDS_INSTANCE[step]}; make an instance of it first: "
                    f"suitebench build init {path} --out DIR"
                )
            return load_programbench_task(path, branch)
        return load_instance(path)
    except FormatError as exc:
        raise _fail(str(exc)) from None


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data) + "\n")


def _open_store() -> Store:
    from suitebench.run.store import Store, StoreError

    try:
        return Store(OPTIONS.store)
    except StoreError as exc:
        raise _fail(str(exc)) from None


@contextmanager
def _executor_run(label: str) -> Iterator[tuple[Executor, ProgressFn]]:
    """An executor and a progress bar for one construction step; the step's bad input, existing
    output and run failures become a clear error, and the executor is closed in any case."""
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    try:
        with progress_bar(label, console=_err, quiet=OPTIONS.quiet) as progress:
            yield executor, progress
    except (FormatError, FileExistsError, RuntimeError) as exc:
        raise _fail(str(exc)) from None
    finally:
        executor.close()


@contextmanager
def _stored_run(label: str) -> Iterator[tuple[Store, Executor, ProgressFn]]:
    """As ``_executor_run``, with the store open (closed after the executor)."""
    store = _open_store()
    try:
        with _executor_run(label) as (executor, progress):
            yield store, executor, progress
    finally:
        store.close()


def _client(model: str | None, base_url: str | None, api_key: str | None, store: Any) -> Any:
    from suitebench.llm.client import ModelClient, ModelError

    try:
        return ModelClient.from_env(model, base_url=base_url, api_key=api_key, store=store)
    except ModelError as exc:
        raise _fail(str(exc)) from None
