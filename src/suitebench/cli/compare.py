"""``suitebench compare A [A2 ...] B``: paired differences of arms or suites, with intervals."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli.main import OPTIONS
from suitebench.metrics.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from suitebench.metrics.noninferiority import DEFAULT_MARGIN, NOT_ENOUGH_CLUSTERS
from suitebench.model.errors import FormatError
from suitebench.report.compare import DEFAULT_COMPARE_KS, DEFAULT_ROBUSTNESS, compare

_out = HumanConsole(soft_wrap=True)  # the tables: stdout (stderr under --json)
_err = error_console(soft_wrap=True)


def _ks(text: str) -> list[int]:
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected budgets like 1,5,10,50, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise typer.BadParameter("budgets must be positive integers")
    return ks


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def _print(result: dict[str, Any]) -> None:
    comp = escape(result["comparator"])
    for side in result["sides"]:
        _print_side(result, side, comp)
    _print_noninferiority(result["noninferiority"], comp)


def _print_side(result: dict[str, Any], side: dict[str, Any], comp: str) -> None:
    """One side against the comparator: the paired metrics, then the agreement of the
    killed labels."""
    name = escape(side["name"])
    _out.print(
        f"[bold]{name}[/bold] vs [bold]{comp}[/bold] over {len(side['problems'])} "
        f"problem(s); {result['n_boot']} resamples, seed {result['seed']}"
    )
    if len(side["problems"]) < 5:
        _out.print(
            f"  only {len(side['problems'])} paired problem(s): the intervals resample too "
            "few clusters to mean much"
        )
    if side["only_here"] or side["only_comparator"]:
        _out.print(
            f"  not paired (left out): {', '.join(side['only_here'] + side['only_comparator'])}"
        )
    n_seeds = len(side["metrics"][0]["robustness_seeds"]) + 1
    t = Table(
        "metric",
        "A",
        "B",
        "delta",
        f"{100 * result['confidence']:.0f}% interval",
        f"over {n_seeds} seeds",
        "separated",
        show_edge=False,
    )
    for m in side["metrics"]:
        pooled = "" if m["weighting"] == "macro" else " (pooled)"
        t.add_row(
            m["metric"] + pooled,
            _f(m["value"]),
            _f(m["comparator_value"]),
            _signed(m["estimate"]),
            f"[{m['lo']:+.3f}, {m['hi']:+.3f}]",
            f"[{m['lo_range'][0]:+.3f}, {m['hi_range'][1]:+.3f}]",
            f"all {n_seeds}" if m["separated_all_seeds"] else "no",
        )
    _out.print(t)
    k = side["kappa"]
    kappa = "undefined" if k["kappa"] is None else f"{k['kappa']:.3f}"
    interval = "" if k["lo"] is None else f" [{k['lo']:.3f}, {k['hi']:.3f}]"
    _out.print(
        f"  Cohen's kappa of the killed labels: {kappa}{interval} over {k['items']} items "
        f"(agreement {_f(k['observed'])}, by chance {_f(k['expected'])})"
    )


def _print_noninferiority(ni: dict[str, Any], comp: str) -> None:
    """The noninferiority family: each side's per-problem delta, its bound and Holm's pass."""
    t = Table(
        "side",
        f"delta {ni['metric']}",
        "lo",
        "margin",
        "noninferior",
        "p",
        "Holm",
        show_edge=False,
        title=f"noninferiority on per-problem {ni['metric']} against {comp}",
    )
    t.columns[4].no_wrap = True  # "not enough clusters" stays one phrase
    for r in ni["results"]:
        if r["decision"] == NOT_ENOUGH_CLUSTERS:  # one problem: no interval, no test
            verdict, p, holm = f"{NOT_ENOUGH_CLUSTERS} ({r['n_clusters']})", "n/a", "n/a"
        else:
            verdict = "yes" if r["noninferior"] else "no"
            p, holm = f"{r['p_value']:.4f}", "pass" if r["holm_pass"] else "fail"
        t.add_row(
            escape(r["arm"]),
            _signed(r["delta"]),
            _signed(r["lo"]),
            f"-{r['margin']:.3f}",
            verdict,
            p,
            holm,
        )
    _out.print(t)


def compare_command(
    sides: list[str] = typer.Argument(
        ...,
        help="Arms as AUDIT_DIR:ARM, or suites as score result dir(s); the last is the comparator.",
        show_default=False,
    ),
    k: str = typer.Option(
        ",".join(map(str, DEFAULT_COMPARE_KS)), "--k", help="cov@k budgets (arms)."
    ),
    resamples: int = typer.Option(DEFAULT_N_BOOT, "--resamples", min=100, help="Bootstrap B."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Bootstrap seed."),
    robustness: int = typer.Option(
        DEFAULT_ROBUSTNESS,
        "--robustness-seeds",
        min=0,
        help="Further seeds (seed+1..seed+N) each interval is recomputed under.",
    ),
    margin: float = typer.Option(DEFAULT_MARGIN, "--margin", min=0.0, help="Margin delta."),
    confidence: float = typer.Option(0.95, "--confidence", min=0.5, max=0.999),
) -> None:
    """Paired cluster-bootstrap deltas, noninferiority with Holm, and Cohen's kappa."""
    if len(sides) < 2:
        _err.print("[red]error:[/red] give at least two sides: A B (B is the comparator)")
        raise typer.Exit(2)
    try:
        result = compare(
            sides,
            ks=_ks(k),
            n_boot=resamples,
            seed=seed,
            robustness=robustness,
            margin=margin,
            confidence=confidence,
        )
    except (FormatError, ValueError) as exc:
        _err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    if OPTIONS.json:
        sys.stdout.write(json.dumps(result) + "\n")
    _print(result)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
