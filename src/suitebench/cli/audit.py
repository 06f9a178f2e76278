"""``suitebench audit``: certify kills of input sets (arms) against problems' submission pools."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from suitebench.audit.arms import ArmError, ArmSource, parse_arm
from suitebench.audit.chain import DEFAULT_MAX_CANDIDATES, AuditConfig, AuditError
from suitebench.audit.ledger import LedgerError, recheck_ledger
from suitebench.audit.run import AuditResult, format_funnel, run_audit
from suitebench.audit.runs import Engine
from suitebench.cli.main import OPTIONS
from suitebench.model.problem import ProblemError
from suitebench.run.executor import make_executor
from suitebench.run.store import Store, StoreError

_err = Console(stderr=True)
_TABLE_KS = ("1", "5", "10", "50")


def _summary(result: AuditResult) -> None:
    table = Table(title="cov@k per arm (micro-pooled over problems)")
    table.add_column("arm")
    for k in _TABLE_KS:
        table.add_column(f"cov@{k}", justify="right")
    table.add_column("killed/pool", justify="right")
    table.add_column("certified", justify="right")
    table.add_column("new", justify="right")
    for arm, r in result.results["arms"].items():
        killed = sum(
            p["arms"][arm]["killed"]
            for p in result.results["problems"].values()
            if arm in p["arms"]
        )
        pool = sum(p["pool_size"] for p in result.results["problems"].values() if arm in p["arms"])
        cells = ["-" if r["cov_at_k"][k] is None else f"{r['cov_at_k'][k]:.3f}" for k in _TABLE_KS]
        table.add_row(
            arm, *cells, f"{killed}/{pool}", str(r["certified"]), str(r["funnel"]["new_findings"])
        )
    _err.print(table)
    _err.print(format_funnel(result.funnel), end="")


def audit(
    problems: list[Path] = typer.Argument(
        None, help="Problem directories (or problem.toml files)."
    ),
    arm: list[str] = typer.Option(
        [],
        "--arm",
        help="NAME=DIR (input files) or NAME=PROGRAM@SEEDS; PROGRAM 'generator' "
        "is the problem's generator. Repeatable.",
    ),
    pool: str = typer.Option("accepted", "--pool", help="Submission pool to audit."),
    out: Path = typer.Option(Path("audit-out"), "--out", help="Output directory."),
    consensus_pool: str | None = typer.Option(
        None, "--consensus-pool", help="A larger accepted pool that votes on flagged inputs."
    ),
    max_candidates: int = typer.Option(
        DEFAULT_MAX_CANDIDATES,
        "--max-candidates",
        min=1,
        help="Killing inputs examined per round for each arm and submission "
        "(rounds go on until one is certified or none is left).",
    ),
    build_cache: Path | None = typer.Option(
        None, "--build-cache", help="Build cache directory (default: next to the store)."
    ),
    recheck: Path | None = typer.Option(
        None, "--recheck", help="Re-check a ledger.csv from scratch; exit 1 if a row fails."
    ),
) -> None:
    """Judge arms against problems, certify every kill and write ledger, kill matrix, results."""
    quiet = OPTIONS.quiet or OPTIONS.json
    if recheck is not None:
        _recheck(recheck)
        return
    if not problems:
        _err.print("[red]error:[/red] give at least one PROBLEM (or --recheck LEDGER)")
        raise typer.Exit(2)
    try:
        sources: list[ArmSource] = [parse_arm(a) for a in arm]
        store = Store(OPTIONS.store)
    except (ArmError, StoreError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    cache = build_cache or OPTIONS.store.parent / "builds"
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    config = AuditConfig(pool=pool, consensus_pool=consensus_pool, max_candidates=max_candidates)
    try:
        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=_err,
            disable=quiet,
        ) as bar:
            task = bar.add_task("auditing (runs)", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            engine = Engine(store, executor, cache, progress=progress)
            result = run_audit(problems, sources, engine, config=config, out_dir=out)
    except (ProblemError, ArmError, AuditError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    finally:
        executor.close()
        store.close()
    if OPTIONS.json:
        sys.stdout.write(json.dumps(result.results) + "\n")
    else:
        _summary(result)
        _err.print(f"ledger: {result.ledger_rows} certified rows; outputs in {out}")


def _recheck(ledger: Path) -> None:
    """From scratch: a fresh store and build cache, so nothing stored by the audit is reused."""
    with tempfile.TemporaryDirectory(prefix="suitebench-recheck-") as tmp:
        store = Store(Path(tmp) / "store.sqlite")
        executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
        try:
            engine = Engine(store, executor, Path(tmp) / "builds")
            issues = recheck_ledger(ledger, engine)
        except LedgerError as exc:
            _err.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
        finally:
            executor.close()
            store.close()
    if OPTIONS.json:
        sys.stdout.write(
            json.dumps({"ledger": str(ledger), "issues": [i.to_dict() for i in issues]}) + "\n"
        )
    for i in issues:
        _err.print(
            f"[red]row {i.row}[/red] {i.problem} {i.arm} {i.submission_id}: " + "; ".join(i.reasons)
        )
    if not OPTIONS.json:
        _err.print(
            f"recheck: {len(issues)} row(s) no longer hold"
            if issues
            else "recheck: every ledger row holds"
        )
    if issues:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
