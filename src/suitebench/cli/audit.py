"""``suitebench audit``: certify kills of input sets (arms) against problems' submission pools."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from suitebench.audit.arms import ArmError, ArmSource, parse_arm
from suitebench.audit.chain import DEFAULT_MAX_CANDIDATES, AuditConfig, AuditError, ProblemAudit
from suitebench.audit.fuzz import FuzzReport, fuzz_validator
from suitebench.audit.harness import build_message
from suitebench.audit.ledger import LedgerError, recheck_ledger
from suitebench.audit.pipeline import AuditResult, format_funnel, run_audit
from suitebench.audit.review import ReviewError, read_ledger_csv, review_sample, write_review_csv
from suitebench.audit.runs import AuditEngine
from suitebench.cli._console import (
    HumanConsole,
    end_on_harness_errors,
    error_console,
    keep_going_option,
    name_failed_generator,
)
from suitebench.cli._interrupt import run_interruptibly, store_note
from suitebench.cli._options import allow_unsandboxed_option, backend_option, sandbox_backend
from suitebench.cli._progress import plain_progress
from suitebench.cli.main import OPTIONS
from suitebench.datasets.writer import defaults_taken
from suitebench.metrics.bootstrap import DEFAULT_SEED
from suitebench.model.problem import ProblemError
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Backend
from suitebench.run.store import Store, StoreError

_out = HumanConsole()  # tables and summaries: stdout (stderr under --json)
_err = error_console()  # errors, warnings, the progress bar
_TABLE_KS = ("1", "5", "10", "50")


def _summary(result: AuditResult) -> None:
    table = Table(title="cov@k per arm (micro-pooled over problems)")
    table.add_column("arm")
    for k in _TABLE_KS:
        table.add_column(f"cov@{k}", justify="right")
    table.add_column("killed/pool", justify="right")
    table.add_column("certified", justify="right")
    table.add_column("new", justify="right")
    problems = result.results["problems"].values()
    left = any(p["build_errors"] for p in problems)
    if left:  # submissions that did not build are out of the pool: said, never silent
        table.add_column("left", justify="right")
        table.caption = "left: pool submissions that did not build (named below)"
    for arm, r in result.results["arms"].items():
        killed = sum(
            p["arms"][arm]["killed"]
            for p in result.results["problems"].values()
            if arm in p["arms"]
        )
        pool = sum(p["pool_size"] for p in result.results["problems"].values() if arm in p["arms"])
        cells = ["-" if r["cov_at_k"][k] is None else f"{r['cov_at_k'][k]:.3f}" for k in _TABLE_KS]
        out = sum(len(p["build_errors"]) for p in problems if arm in p["arms"])
        table.add_row(
            arm,
            *cells,
            f"{killed}/{pool}",
            str(r["certified"]),
            str(r["funnel"]["new_findings"]),
            *([str(out)] if left else []),
        )
    _out.print(table)
    _out.print(format_funnel(result.funnel), end="")


def audit(
    problems: list[Path] = typer.Argument(
        None, help="Problem directories (or problem.toml files)."
    ),
    arm: list[str] = typer.Option(
        [],
        "--arm",
        help="NAME=DIR (input files) or NAME=PROGRAM [ARGS]@SEEDS (called PROGRAM ARGS SEED); "
        "PROGRAM 'generator' is the problem's generator. Repeatable.",
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
    fuzz: bool = typer.Option(
        False,
        "--fuzz-validator",
        help="Also fuzz each problem's validator with structurally illegal variants of its "
        "official inputs; writes <out>/<problem>/validator-fuzz.json and lists false accepts.",
    ),
    review_cap: int | None = typer.Option(
        None,
        "--review-sample",
        min=1,
        metavar="N",
        help="Write <out>/review-sample.csv: at most N ledger rows per problem, drawn at random "
        "with inverse-probability weights, for human adjudication (see review-fdr).",
    ),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the --review-sample draw."),
    keep_going: bool = keep_going_option(),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Judge arms against problems, certify every kill and write ledger, kill matrix, results.

    Exit status: 0 done; 2 bad usage or input; 1 (--recheck) a ledger row no longer holds;
    4 a harness error: a checker that answers FAIL (exit 3), crashes or times out, a validator
    that rejects an official test or cannot decide an input, a reference or brute-force
    solution that does not build, an official answer (X.ans beside X.in) the references'
    consensus does not pass against, references with a gold on no input, an interactor that
    fails. Each is named on stderr and listed in results.json (harness_errors); the outputs
    are written either way, and --keep-going exits 0. 130 interrupted (Ctrl-C): nothing
    written, what was run is in the store.
    """
    chosen = sandbox_backend(backend, allow_unsandboxed)
    if recheck is not None:
        _recheck(recheck, chosen)
        return
    if not problems:
        _err.print("[red]error:[/red] give at least one PROBLEM (or --recheck LEDGER)")
        raise typer.Exit(2)
    config = AuditConfig(pool=pool, consensus_pool=consensus_pool, max_candidates=max_candidates)
    result, fuzzed, sample_note = _run(
        problems, arm, config, out, build_cache, chosen, fuzz=fuzz, review=(review_cap, seed)
    )
    _report(result, out, fuzzed if fuzz else None, sample_note, keep_going=keep_going)


def _run(
    problems: list[Path],
    arm: list[str],
    config: AuditConfig,
    out: Path,
    build_cache: Path | None,
    backend: Backend,
    *,
    fuzz: bool,
    review: tuple[int | None, int],
) -> tuple[AuditResult, dict[str, FuzzReport], str]:
    """The audit itself, under a progress bar: the result, each problem's validator fuzz
    (with ``fuzz``) and the review sample's line for the summary ("" without one)."""
    try:
        sources: list[ArmSource] = [parse_arm(a) for a in arm]
        store = Store(OPTIONS.store)
    except (ArmError, StoreError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    cache = build_cache or OPTIONS.store.parent / "builds"
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    review_cap, seed = review
    engine: AuditEngine | None = None

    def stored() -> str:
        if engine is None:
            return "no run had started"
        return store_note(engine.executed_runs, engine.cached_runs)

    fuzzed: dict[str, FuzzReport] = {}

    def work() -> tuple[AuditResult, str]:
        nonlocal engine
        with (
            Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=_err,
                disable=OPTIONS.quiet or not _err.is_terminal,
            ) as bar,
            plain_progress(
                "auditing (runs)",
                console=_err,
                quiet=OPTIONS.quiet or _err.is_terminal,
            ) as plain,
        ):
            task = bar.add_task("auditing (runs)", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)
                plain(done, total)  # lines when stderr is not a terminal

            engine = AuditEngine(store, executor, cache, backend=backend, progress=progress)
            extras = _fuzz_extras(bar, engine, out, fuzzed) if fuzz else None
            result = run_audit(
                problems, sources, engine, config=config, out_dir=out, problem_extras=extras
            )
            sample_note = _write_review_sample(out, review_cap, seed) if review_cap else ""
        return result, sample_note

    try:
        result, sample_note = run_interruptibly(work, _err, stored)
        _err.print(stored(), markup=False, highlight=False)
    except (ProblemError, ArmError, AuditError, ReviewError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    finally:
        executor.close()
        store.close()
    return result, fuzzed, sample_note


def _fuzz_extras(
    bar: Progress, engine: AuditEngine, out: Path, fuzzed: dict[str, FuzzReport]
) -> Callable[[ProblemAudit], dict[str, Any]]:
    """The ``problem_extras`` of ``--fuzz-validator``: each problem's validator fuzzed (its
    report kept in ``fuzzed``), its summary added to the problem's entry."""

    def fuzz_extras(a: ProblemAudit) -> dict[str, Any]:
        ftask = bar.add_task(f"validator fuzz {a.problem.id}", total=None)

        def fprogress(done: int, total: int) -> None:
            bar.update(ftask, completed=done, total=total)

        report = _fuzz_problem(a, engine, out, fprogress)
        if report is not None:
            fuzzed[a.problem.id] = report
        return {"validator_fuzz": _fuzz_summary(a, report)}

    return fuzz_extras


def _report(
    result: AuditResult,
    out: Path,
    fuzzed: dict[str, FuzzReport] | None,
    sample_note: str,
    *,
    keep_going: bool,
) -> None:
    """What the audit found: the JSON (with --json), the summary, the fuzz, the gates, and
    the exit status of harness errors."""
    if OPTIONS.json:
        sys.stdout.write(json.dumps(result.results) + "\n")
    _summary(result)  # stdout, or stderr when the JSON holds stdout
    for a in result.audits:  # limits an import took by default, named with their field
        for line in defaults_taken(a.problem.root):
            _out.print(
                f"{escape(a.problem.id)}: {escape(line)} (at import)",
                highlight=False,
                soft_wrap=True,
            )
    if fuzzed is not None:
        _print_fuzz(result, fuzzed)
    _out.print(f"ledger: {result.ledger_rows} certified rows; outputs in {out}")
    if sample_note:
        _out.print(sample_note, highlight=False, soft_wrap=True)
    _warn_gates(result)
    for a in result.audits:
        for name, why in a.build_errors.items():
            _err.print(
                f"{a.problem.id}: submission {name} left the pool {a.config.pool}: "
                f"does not build ({build_message(why)})",
                markup=False,
                highlight=False,
            )
        for name, r in a.arms.items():
            failed = zip(r.arm.failed_seeds, r.arm.failures, strict=False)
            lines = [f"seed {s}: {why}" for s, why in failed]
            what = f"{a.problem.id}: arm {name} ({r.arm.source})"
            name_failed_generator(what, lines, len(r.arm.failed_seeds), _err)
            if r.arm.ignores_seed:
                _err.print(
                    f"{what}: the generator gave the same input for every seed: it ignores "
                    "its seed (the seed is its last argument and its stdin)",
                    markup=False,
                    highlight=False,
                )
    end_on_harness_errors(
        (
            f"{e.problem}: {e.role} {e.program} ({e.stage}, {e.count} failure(s)): {e.message}"
            for e in result.harness_errors
        ),
        keep_going=keep_going,
        console=_err,
    )


def _warn_gates(result: AuditResult) -> None:
    """A validator that failed its quality gate certifies nothing: say so where it is seen."""
    for pid, entry in result.results["problems"].items():
        gate = entry.get("validator_gate")
        if gate and not gate["passed"]:
            why = escape(f"{pid}: validator {entry['validator']} failed its quality gate")
            reasons = escape("; ".join(gate["reasons"]))
            _err.print(
                f"[yellow]warning:[/yellow] {why} ({reasons}): every input is unmeasured",
                highlight=False,
                soft_wrap=True,
            )


def _fuzz_problem(
    a: ProblemAudit, engine: AuditEngine, out: Path, progress: Any
) -> FuzzReport | None:
    """Fuzz one problem's validator (built through the audit's build cache) and write the
    report to ``<out>/<problem>/validator-fuzz.json``; accepted variants go beside it so that
    each false accept can be reproduced. ``None`` for a problem without a validator."""
    p = a.problem
    if p.validator is None:
        return None
    built = engine.build(p.validator)
    with tempfile.TemporaryDirectory(prefix="suitebench-fuzz-") as work:
        os.chmod(work, 0o777)  # the sandbox runs the validator as an unprivileged uid
        report = fuzz_validator(
            built,
            [f.read_bytes() for f in p.official],
            cwd=work,
            input_ids=[p.rel(f) for f in p.official],
            progress=progress,
        )
    d = out / p.id
    d.mkdir(parents=True, exist_ok=True)
    data = {"problem": p.id, "validator_path": p.rel(p.validator), **report.to_dict()}
    (d / "validator-fuzz.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if report.accepts:
        report.write_accepts(d / "validator-fuzz-accepts")
    return report


def _fuzz_summary(a: ProblemAudit, report: FuzzReport | None) -> dict[str, Any] | None:
    """The per-problem ``validator_fuzz`` entry of results.json (the full report is a file)."""
    if report is None:
        return None
    return {
        "validator": a.problem.rel(a.problem.validator) if a.problem.validator else None,
        "variants": len(report.findings),
        "false_accepts": len(report.accepts),
        "errors": len(report.errors),
        "originals_rejected": list(report.originals_rejected),
        "build_message": report.build_message,
        "sound": report.sound,
        "report": f"{a.problem.id}/validator-fuzz.json",
    }


def _print_fuzz(result: AuditResult, fuzzed: dict[str, FuzzReport]) -> None:
    for pid in result.results["problems"]:
        report = fuzzed.get(pid)
        if report is None:
            _out.print(f"validator fuzz {pid}: no validator")
            continue
        if report.build_message:
            _out.print(f"[red]validator fuzz {pid}: validator did not build[/red]")
            continue
        n_acc = len(report.accepts)
        style = "red" if n_acc or report.originals_rejected else "green"
        _out.print(
            f"[{style}]validator fuzz {pid}: {len(report.findings)} variants, "
            f"{n_acc} false accept(s), {len(report.errors)} error(s)[/{style}]"
        )
        for name in report.originals_rejected:
            _out.print(f"  rejects official input {name}: the gate fails, rejections prove nothing")
        for f in report.accepts:
            _out.print(
                f"  accepts {f.kind} of {f.source_id} ({f.detail}): {f.preview}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


def _write_review_sample(out: Path, cap: int, seed: int) -> str:
    """Draw the review sample from the ledger just written; returns the line for the summary."""
    sample = review_sample(read_ledger_csv(out / "ledger.csv"), cap=cap, seed=seed)
    path = write_review_csv(sample, out / "review-sample.csv")
    return (
        f"review sample: {len(sample.rows)} of {sample.n_population} ledger rows "
        f"(at most {cap} per problem, seed {seed}) in {path}"
    )


def _recheck(ledger: Path, backend: Backend) -> None:
    """From scratch: a fresh store and build cache, so nothing stored by the audit is reused."""
    with tempfile.TemporaryDirectory(prefix="suitebench-recheck-") as tmp:
        store = Store(Path(tmp) / "store.sqlite")
        executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
        try:
            engine = AuditEngine(store, executor, Path(tmp) / "builds", backend=backend)
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
        _out.print(
            f"[red]row {i.row}[/red] {i.problem} {i.arm} {i.submission_id}: " + "; ".join(i.reasons)
        )
    if not OPTIONS.json:
        _out.print(
            f"recheck: {len(issues)} row(s) no longer hold"
            if issues
            else "recheck: every ledger row holds"
        )
    if issues:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
