"""``suitebench review-fdr``: the ledger's false-discovery rate from its adjudicated sample.

``suitebench audit --review-sample N`` exports a stratified, inverse-probability weighted sample
of the ledger (``review-sample.csv``); a human fills in ``human_verdict`` (``bug``, ``not_bug``
or ``unsure``) and this command turns the file into the paper's figure: the weighted
false-discovery rate with its Wilson 95% upper bound (see ``suitebench.audit.review``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from suitebench.audit.review import FdrEstimate, ReviewError, UnsurePolicy, fdr_from_review
from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli.main import OPTIONS

_out = HumanConsole()  # the estimate: stdout (--json puts the JSON there instead)
_err = error_console()


def _human(est: FdrEstimate, path: Path) -> str:
    pct = f"{est.confidence:.0%}"
    policy = "counted as false" if est.unsure_policy is UnsurePolicy.AS_FALSE else "left out"
    return "\n".join(
        [
            f"review: {path}",
            f"  rows in the estimate  {est.n_reviewed}  (bug {est.n_bug}, false {est.n_false}; "
            f"unsure {est.n_unsure}, {policy}; excluded {est.n_excluded})",
            f"  weighted FDR          {est.fdr:.4f}  (effective sample size {est.n_effective:.1f})",
            f"  {'Wilson ' + pct + ' upper':<22}{est.upper:.4f}",
            f"  unweighted FDR        {est.unweighted_fdr:.4f}  ({est.n_false}/{est.n_reviewed}; "
            f"Wilson {pct} upper {est.unweighted_upper:.4f})",
        ]
    )


def review_fdr(
    review: Path = typer.Argument(
        ...,
        metavar="REVIEW.csv",
        help="A review-sample.csv whose human_verdict column is filled in.",
    ),
    unsure: UnsurePolicy = typer.Option(
        UnsurePolicy.AS_FALSE,
        "--unsure",
        help="as_false: an unsure row counts as a false discovery (a bound stays a bound); "
        "exclude: unsure rows are left out and counted.",
    ),
    confidence: float = typer.Option(
        0.95, "--confidence", min=0.5, max=0.999999, help="Two-sided Wilson confidence level."
    ),
    allow_blank: bool = typer.Option(
        False, "--allow-blank", help="Leave rows without a verdict out instead of failing."
    ),
) -> None:
    """Weighted false-discovery rate of a ledger from its filled-in review sample."""
    try:
        est = fdr_from_review(review, confidence=confidence, unsure=unsure, allow_blank=allow_blank)
    except (ReviewError, OSError) as exc:
        _err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if OPTIONS.json:
        sys.stdout.write(json.dumps({"review": str(review), **est.to_dict()}) + "\n")
    # on stderr under --json
    _out.print(_human(est, review), markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("review-fdr")(review_fdr)
