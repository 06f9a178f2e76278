"""``suitebench report RESULTS... [--out report.html]``: one self-contained HTML report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli.main import OPTIONS
from suitebench.model.errors import FormatError
from suitebench.report.analyses import DEFAULT_DESIGN_BUDGET, summary
from suitebench.report.load import load_results

_out = HumanConsole(soft_wrap=True)  # what was written: stdout (stderr under --json)
_err = error_console(soft_wrap=True)


def report(
    results: list[Path] = typer.Argument(
        ...,
        help="Result directories of `audit` or `score` (or directories holding several).",
        show_default=False,
    ),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", help="The HTML file to write."),
    design_budget: int = typer.Option(
        DEFAULT_DESIGN_BUDGET,
        "--design-budget",
        min=0,
        help="Input budget marked on the cov@k plot (0: none).",
    ),
) -> None:
    """Write one self-contained HTML report (tables, plots, drill-down, environment)."""
    from suitebench.report.html import write_report  # matplotlib: only when it is needed

    try:
        loaded = load_results(results)
    except FormatError as exc:
        _err.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None
    if loaded.empty:
        _err.print("[red]error:[/red] no result found")
        raise typer.Exit(2)
    path = write_report(
        loaded, out, sources=[str(p) for p in results], design_budget=design_budget or None
    )
    _out.print(
        f"{len(loaded.audits)} audit(s), {len(loaded.scores)} suite score(s), "
        f"{len(loaded.implementations)} implementation(s)"
    )
    _out.print(f"report written to {path}", highlight=False)
    if OPTIONS.json:
        ks = list(range(1, (design_budget or 50) + 1))
        data = {"report": str(path), **summary(loaded, ks)}
        sys.stdout.write(json.dumps(data) + "\n")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
