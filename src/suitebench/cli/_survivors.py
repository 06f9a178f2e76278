"""A score on the terminal, survivors first: what a suite lets through is what to act on.

Each survived mutant gets its place (``file:line``, function), operator, its change on one
line and the tests that reached it (the coverage the score's test selection used); the killed
mutants are summarised by count and by the tests that killed most, the rest (build errors,
crashed, equivalent) by count with their ids. ``suitebench show ID`` prints any one of them.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from suitebench.suite.result import MutantResult, MutantStatus, SuiteResult
from suitebench.suite.select.locate import main_change

__all__ = [
    "FAIL_UNDER_EXIT",
    "gate",
    "last_score_path",
    "print_survivors",
    "reached_line",
    "remember_last_score",
    "where",
]

#: Exit status of ``score --fail-under M`` when M is below M (or not given): the CI gate.
FAIL_UNDER_EXIT = 5

SHOWN_SURVIVORS = 50  # survivors listed one by one; the rest are counted (results.json has all)
_EQUIVALENT = "equivalent"  # a status another part of the tool gives: out of M, not a survivor


def where(m: MutantResult) -> str:
    """``file:line`` (``in function``) of a mutant's main change, or ``?`` if unknown."""
    if not m.file:
        return "?"
    text = f"{m.file}:{m.line}" if m.line is not None else m.file
    return text + (f" in {m.function}" if m.function else "")


def reached_line(m: MutantResult, shown: int = 3) -> str:
    """Which tests ran on the mutant: those whose reference run reaches the changed code
    (and, for a probed operator change, computes a different value there); from the score's
    coverage-guided selection."""
    if m.covered_by is None:
        return "every test ran on it (no coverage-guided selection)"
    if not m.covered_by:
        return (
            "no test reaches the change (or, reaching it, computes a different value there): "
            "no test can kill it"
        )
    names = ", ".join(m.covered_by[:shown])
    more = f" (+{len(m.covered_by) - shown} more)" if len(m.covered_by) > shown else ""
    return f"reached by {len(m.covered_by)} test(s): {names}{more}"


def _ids(mutants: Iterable[MutantResult], shown: int = 10) -> str:
    ids = [m.id for m in mutants]
    return ", ".join(ids[:shown]) + (f" ... (+{len(ids) - shown})" if len(ids) > shown else "")


def print_survivors(result: SuiteResult, out: Console) -> None:
    """The survivors one by one, then the killed and the rest summarised."""
    survivors = [m for m in result.mutants if m.status is MutantStatus.SURVIVED]
    if survivors:
        out.print(
            f"[red]{len(survivors)} survived[/red] (changes no valid test notices; "
            "`suitebench show ID` for one, `suitebench apply ID` to try it):",
            highlight=False,
        )
    for m in survivors[:SHOWN_SURVIVORS]:
        change = main_change(m.diff) if m.diff else None
        what = change.one_line() if change is not None else m.description
        operator = m.operator or m.section or ""
        out.print(
            f"  [bold]{escape(m.id)}[/bold]  {escape(where(m))}  [dim]{escape(operator)}[/dim]",
            highlight=False,
        )
        out.print(f"      {escape(what)}", highlight=False)
        out.print(f"      [dim]{escape(reached_line(m))}[/dim]", highlight=False)
    if len(survivors) > SHOWN_SURVIVORS:
        out.print(f"  ... and {len(survivors) - SHOWN_SURVIVORS} more (results.json)")
    killed = [m for m in result.mutants if m.status.detected]
    if killed:
        timeouts = sum(1 for m in killed if m.status is MutantStatus.TIMEOUT)
        top = Counter(t for m in killed for t in m.killed_by).most_common(3)
        most = ", ".join(f"{escape(t)} ({n})" for t, n in top)
        out.print(
            f"[green]{len(killed)} killed[/green]"
            + (f" ({timeouts} by timeouts only)" if timeouts else "")
            + (f"; most kills: {most}" if most else ""),
            highlight=False,
        )
    for status, label in (
        (MutantStatus.BUILD_ERROR, "do not build (not scored)"),
        (MutantStatus.CRASHED, "lost to a harness error (not scored)"),
    ):
        these = [m for m in result.mutants if m.status is status]
        if these:
            out.print(f"[yellow]{len(these)} {label}[/yellow]: {escape(_ids(these))}")
    equivalent = [m for m in result.mutants if str(m.status) == _EQUIVALENT]
    if equivalent:
        out.print(
            f"[cyan]{len(equivalent)} equivalent[/cyan] (left out of M): {escape(_ids(equivalent))}"
        )


def last_score_path(store: Path) -> Path:
    """Where the last score's ``results.json`` is kept, beside the store."""
    return store.parent / "last-score" / "results.json"


def remember_last_score(result: SuiteResult, store: Path) -> None:
    """Keep the score's results beside the store: ``show`` and ``apply`` read it when no
    ``--results`` is named (as mutmut's ``show`` reads its last run)."""
    path = last_score_path(store)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_suffix(f".{os.getpid()}.tmp")
        staged.write_text(result.model_dump_json(indent=1) + "\n", encoding="utf-8")
        staged.replace(path)
    except OSError:
        pass  # a read-only store's directory: show/apply then need --results


def gate(mutation_score: float | None, fail_under: float | None, err: Console) -> None:
    """``--fail-under``: exit :data:`FAIL_UNDER_EXIT` when M is below the threshold (in
    percent), or when M is not given (withheld on a harness error, or no mutant scored): a gate
    cannot pass on a figure that was not measured."""
    if fail_under is None:
        return
    if mutation_score is None:
        err.print(
            f"[red]fail-under:[/red] M is not given; the gate needs M >= {fail_under:g}%: "
            f"exit {FAIL_UNDER_EXIT}",
            highlight=False,
        )
        raise typer.Exit(FAIL_UNDER_EXIT)
    m = round(100 * mutation_score, 9)  # 100 * 0.29 is 28.999...: no false failure
    if m < fail_under:
        err.print(
            f"[red]fail-under:[/red] M = {m:.1f}% is below {fail_under:g}%: exit {FAIL_UNDER_EXIT}",
            highlight=False,
        )
        raise typer.Exit(FAIL_UNDER_EXIT)
    err.print(f"fail-under: M = {m:.1f}% >= {fail_under:g}%: pass", highlight=False)
