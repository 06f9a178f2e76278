"""Where a command's output goes, and how a broken harness ends a command.

Human output (tables, funnels, summaries) is what a command is run for, so it goes to stdout:
``suitebench audit ... > out.txt`` keeps it. With ``--json`` stdout carries the JSON alone and
the human output moves to stderr. Errors, warnings and progress bars always go to stderr.

A harness error (a checker that answers FAIL, crashes or times out, a validator that rejects
the official tests, a reference that does not build, a reference run that does not finish) is
not a finding: the figures rest on a broken instrument. Every command that can meet one names
each on stderr, records it in its results file, and exits with :data:`HARNESS_ERROR_EXIT`
unless ``--keep-going`` (:func:`keep_going_option`) is given.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import IO, Any

import typer
from rich.console import Console
from rich.markup import escape

from suitebench.cli.main import OPTIONS

__all__ = [
    "HARNESS_ERROR_EXIT",
    "KEEP_GOING_HELP",
    "HumanConsole",
    "end_on_harness_errors",
    "error_console",
    "keep_going_option",
]

#: Exit status of a command whose harness broke (1: a check failed, 2: bad usage or input,
#: 3: the agent command's containment refusal).
HARNESS_ERROR_EXIT = 4

KEEP_GOING_HELP = (
    "Exit 0 even when the harness broke (a checker or validator that fails, crashes or times "
    "out, a reference that does not build or finish); the errors are still printed and "
    f"recorded. Without it such a run exits {HARNESS_ERROR_EXIT}."
)


class HumanConsole(Console):
    """A console for human output: stdout, or stderr when ``--json`` holds stdout (decided at
    each print, since the options are parsed after the command modules are imported)."""

    @property
    def file(self) -> IO[str]:
        chosen = self._file or (sys.stderr if OPTIONS.json else sys.stdout)
        return getattr(chosen, "rich_proxied_file", chosen)

    @file.setter
    def file(self, new_file: IO[str]) -> None:
        self._file = new_file


def error_console(**kwargs: Any) -> Console:
    """A console for errors, warnings and progress bars: always stderr."""
    return Console(stderr=True, **kwargs)


def keep_going_option() -> Any:
    """The ``--keep-going`` option, one name and one meaning for every command."""
    return typer.Option(False, "--keep-going", help=KEEP_GOING_HELP)


def end_on_harness_errors(
    lines: Iterable[str], *, keep_going: bool, console: Console | None = None
) -> None:
    """Name every harness error (one line each: the program and its first message) on stderr,
    then exit with :data:`HARNESS_ERROR_EXIT` unless ``keep_going``."""
    err = console or error_console(soft_wrap=True)
    shown = list(lines)
    for line in shown:
        err.print(f"[red]harness error:[/red] {escape(line)}", highlight=False, soft_wrap=True)
    if not shown:
        return
    if keep_going:
        err.print(f"{len(shown)} harness error(s); --keep-going: exit 0", highlight=False)
        return
    err.print(
        f"{len(shown)} harness error(s): the figures rest on a broken harness; exit "
        f"{HARNESS_ERROR_EXIT} (--keep-going exits 0)",
        highlight=False,
    )
    raise typer.Exit(HARNESS_ERROR_EXIT)


# How many failed generator runs are named one by one; the rest are counted (the output files
# list them: ``generate.json``'s drops, ``failed_seeds`` in the audit's results.json).
SHOWN_FAILURES = 10


def name_failed_generator(what: str, failures: Sequence[str], total: int, console: Console) -> None:
    """Name a generator that failed (printed forever, crashed, timed out) on stderr: ``what``
    (the problem, arm and program), how many of its seeds failed, and each failed seed with its
    reason, the first :data:`SHOWN_FAILURES` of them -- not only a count in a file."""
    if total <= 0:
        return
    console.print(
        f"[yellow]warning:[/yellow] {escape(what)}: the generator failed on {total} seed(s)",
        highlight=False,
        soft_wrap=True,
    )
    for line in failures[:SHOWN_FAILURES]:
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    if total > min(len(failures), SHOWN_FAILURES):
        console.print(
            f"  ... and {total - min(len(failures), SHOWN_FAILURES)} more", highlight=False
        )
