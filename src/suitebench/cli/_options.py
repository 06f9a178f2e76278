"""Where a command runs untrusted code: ``--backend`` and ``--allow-unsandboxed``, one
definition and one check for every command that runs submissions, mutants, suites, generators,
validators or agents.

The check runs before any work: where neither bwrap nor unshare works, a command exits 2 with
what to install instead of running hostile code with rlimits only (which lets it rewrite
reference solutions, write in the user's home and reach local servers). Plain runs only when
asked for by name. The backend asked for reaches the workers the command starts and the code
that takes no backend (builds) through ``$SUITEBENCH_BACKEND``
(:func:`suitebench.run.sandbox.choose_backend` decides, here and in every sandbox).
"""

from __future__ import annotations

import os
from typing import Any

import typer
from rich.markup import escape

from suitebench.cli._console import error_console
from suitebench.run.sandbox import BACKEND_ENV, Backend, SandboxUnavailable, choose_backend

__all__ = ["allow_unsandboxed_option", "backend_option", "branch_option", "sandbox_backend"]

#: Exit status when untrusted code would have to run unsandboxed (bad usage or environment).
REFUSED_EXIT = 2


def branch_option() -> Any:
    """``--branch``: one test branch of a ProgramBench task (default: every branch not ignored,
    together, as ProgramBench scores a task)."""
    return typer.Option(
        None,
        "--branch",
        help="ProgramBench task: score only this test branch (default: every branch not "
        "ignored in tests.json).",
    )


def backend_option() -> Any:
    """The ``--backend`` option (as ``suitebench sandbox`` has it)."""
    return typer.Option(
        None,
        "--backend",
        help="Sandbox backend: bwrap, unshare or plain (default: the best available; plain, "
        "rlimits only, is never chosen unless named).",
    )


def allow_unsandboxed_option() -> Any:
    """The ``--allow-unsandboxed`` option."""
    return typer.Option(
        False,
        "--allow-unsandboxed",
        help="Where neither bwrap nor unshare works, run untrusted code with the plain backend "
        "(rlimits only: no network, pid or file isolation) instead of refusing; recorded.",
    )


def sandbox_backend(backend: Backend | None, allow_unsandboxed: bool) -> Backend:
    """The backend this command runs untrusted code on, or exit 2 naming what to install.

    A backend named, or plain allowed, is put in ``$SUITEBENCH_BACKEND`` so that the command's
    workers and its builds use the same one and the results record the backend that ran.
    """
    err = error_console(soft_wrap=True)
    try:
        chosen = choose_backend(backend, allow_unsandboxed)
    except SandboxUnavailable as exc:
        err.print(f"[red]refused:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(REFUSED_EXIT) from None
    if backend is not None or chosen is Backend.PLAIN:
        os.environ[BACKEND_ENV] = str(chosen)
    if chosen is Backend.PLAIN:
        err.print(
            "[yellow]warning:[/yellow] backend plain: untrusted code runs without network or "
            "pid isolation (rlimits only); the results record it (unsandboxed)",
            highlight=False,
        )
    return chosen
