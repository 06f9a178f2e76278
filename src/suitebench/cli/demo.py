"""``suitebench demo``: both modes end to end on the bundled data, in a few minutes.

It is the tour a newcomer takes first: what isolation this machine gives, a suite scored
against its mutants (V, M, kill matrix, mutation-testing-elements report), R of a candidate
implementation, and an audit of three problems by six arms (the official and sample tests, a
hand-made set, and the model-free arms of ``suitebench generate`` at an equal budget) with the
certification chain, the ledger and cov@k. Everything goes through the same store as every
other command, so a second run (or a run killed halfway and started again) reuses what is
stored.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from suitebench.audit.arms import ArmSource
from suitebench.audit.chain import AuditConfig
from suitebench.audit.pipeline import format_funnel, run_audit
from suitebench.audit.runs import AuditEngine
from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli._options import allow_unsandboxed_option, backend_option, sandbox_backend
from suitebench.cli._progress import ProgressFn, progress_bar
from suitebench.cli._store import open_store
from suitebench.cli.main import OPTIONS
from suitebench.data import IMPLEMENTATIONS_DIR, INSTANCES_DIR, PROBLEMS_DIR, SUITES_DIR
from suitebench.generate.arms import GenerateOptions, generate_arm
from suitebench.model.instance import load_instance
from suitebench.model.problem import load_problem
from suitebench.report.load import load_results
from suitebench.report.mutation_report import write_mutation_report
from suitebench.run.executor import Executor, make_executor
from suitebench.run.outcome import Backend
from suitebench.run.sandbox import describe_environment
from suitebench.run.store import Store
from suitebench.suite.implementation import score_implementation
from suitebench.suite.result import SuiteResult
from suitebench.suite.score import score_suite

_out = HumanConsole(soft_wrap=True)  # the tour: stdout (stderr under --json)
_err = error_console(soft_wrap=True)  # errors and the progress bars

# (instance, suite directory or None for the instance's reference suite, label)
_SUITES: list[tuple[str, str | None, str]] = [
    ("wordfreq-py", None, "reference"),
    ("rpn-c", None, "reference"),
    ("intervals-pkg", None, "reference"),
    ("wordfreq-py", "bad-suite", "bad tests"),
]
_CANDIDATE = ("rpn-c", "rpn-candidate.diff")
_PROBLEMS = ["maxsum", "divsum", "mean"]
_ARMS = [ArmSource("handmade", "arms/handmade")]
# The model-free arms of ``suitebench generate``, each topped up to the same legal budget per
# problem (``random`` at seed 0 is the problem's generator over seeds 0..29).
_GENERATED = ("random", "cc-mutation", "evalplus")
_BUDGET = 30


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _progress(label: str, quiet: bool) -> contextlib.AbstractContextManager[ProgressFn]:
    return progress_bar(f"  {label}", console=_err, quiet=quiet, transient=True)


def _candidate(out: Path) -> Path:
    """A candidate implementation: the reference with a patch of plausible slips applied."""
    instance, patch = _CANDIDATE
    dest = out / "implementations" / f"{instance}-candidate"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(INSTANCES_DIR / instance / "src", dest)
    subprocess.run(
        ["patch", "-p1", "--quiet", "--fuzz=0", "-i", str(IMPLEMENTATIONS_DIR / patch)],
        cwd=dest,
        check=True,
    )
    return dest


def _suite_mode(out: Path, store: Store, executor: Executor, quiet: bool) -> dict[str, Any]:
    table = Table("instance", "suite", "tests", "V", "mutants", "M", "flaky", show_edge=False)
    summary: dict[str, Any] = {}
    for name, suite, label in _SUITES:
        instance = load_instance(INSTANCES_DIR / name)
        suite_dir = SUITES_DIR / suite if suite else None
        tag = f"{name}/{suite or 'reference'}"
        with _progress(f"scoring {tag}", quiet) as progress:
            result: SuiteResult = score_suite(
                instance, suite_dir, store=store, executor=executor, progress=progress
            )
        dest = out / "suite" / tag.replace("/", "--")
        result.write(dest)
        write_mutation_report(dest / "mutation-report.json", instance, result)
        c = result.counts
        table.add_row(
            name,
            label,
            str(c.tests),
            _pct(result.validity),
            f"{c.killed}/{c.scored}",
            _pct(result.mutation_score),
            str(c.flaky),
        )
        summary[tag] = {"V": result.validity, "M": result.mutation_score, "dir": str(dest)}
    _out.print(table)

    name = _CANDIDATE[0]
    impl_dir = _candidate(out)
    impl = score_implementation(
        load_instance(INSTANCES_DIR / name), impl_dir, store=store, executor=executor
    )
    dest = out / "suite" / f"{name}--candidate"
    impl.write(dest)
    _out.print(
        f"  R of a candidate {name} implementation: {_pct(impl.reference_pass_rate)} "
        f"({impl.passed}/{impl.total} reference tests pass)"
    )
    for test, status in list(impl.failing.items())[:5]:
        _out.print(f"    {status:8s} {test}")
    summary[f"{name}/candidate"] = {"R": impl.reference_pass_rate, "dir": str(dest)}
    return summary


def _generate(out: Path, engine: AuditEngine) -> list[ArmSource]:
    """``suitebench generate ARM PROBLEM --budget 30`` for every model-free arm and problem."""
    sources = []
    for arm in _GENERATED:
        for name in _PROBLEMS:
            generate_arm(
                arm,
                load_problem(PROBLEMS_DIR / name),
                engine,
                out / "arms" / arm / name,
                GenerateOptions(budget=_BUDGET, seed=0),
            )
        sources.append(ArmSource(arm, str((out / "arms" / arm).resolve())))
    return sources


def _input_mode(out: Path, store: Store, executor: Executor, quiet: bool) -> dict[str, Any]:
    dest = out / "audit"
    with _progress("generating arms (runs)", quiet) as progress:
        engine = AuditEngine(store, executor, OPTIONS.store.parent / "builds", progress=progress)
        generated = _generate(out, engine)
    with _progress("auditing (runs)", quiet) as progress:
        engine = AuditEngine(store, executor, OPTIONS.store.parent / "builds", progress=progress)
        result = run_audit(
            [PROBLEMS_DIR / p for p in _PROBLEMS],
            _ARMS + generated,
            engine,
            config=AuditConfig(consensus_pool="accepted"),
            out_dir=dest,
            base=PROBLEMS_DIR,
        )
    table = Table("arm", "inputs", "cov@1", "cov@5", "cov@10", "cov@50", "certified", "new")
    table.show_edge = False
    for arm, r in result.results["arms"].items():
        n_inputs = sum(
            p["arms"][arm]["counts"].get("inputs", 0)
            for p in result.results["problems"].values()
            if arm in p["arms"]
        )
        cov = [
            "-" if r["cov_at_k"][k] is None else f"{r['cov_at_k'][k]:.3f}"
            for k in ("1", "5", "10", "50")
        ]
        table.add_row(
            arm, str(n_inputs), *cov, str(r["certified"]), str(r["funnel"]["new_findings"])
        )
    _out.print(table)
    _out.print(format_funnel(result.funnel), end="")
    return {"ledger_rows": result.ledger_rows, "dir": str(dest)}


def demo(
    out: Path = typer.Option(Path("suitebench-demo"), "--out", help="Output directory."),
    suite_mode: bool = typer.Option(True, "--suite/--no-suite", help="Run the suite-mode part."),
    input_mode: bool = typer.Option(True, "--audit/--no-audit", help="Run the input-mode part."),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Run both modes end to end on the bundled data and write every output under --out."""
    sandbox_backend(backend, allow_unsandboxed)
    quiet = OPTIONS.quiet  # progress is on stderr, with --json too
    started = time.monotonic()
    env = describe_environment()
    _out.print(
        f"[bold]1. environment[/bold]  backend {env['backend']}, network isolation "
        f"{'on' if env['network_isolation'] else 'OFF'}, programs run as {env['runs_as']}, "
        f"memory limit by {env['memory_limit_by']}, process limit by {env['process_limit_by']}, "
        f"syscall filter {env['syscall_filter']}"
    )
    store = open_store(_err)
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    summary: dict[str, Any] = {"environment": {k: env[k] for k in ("backend", "runs_as")}}
    try:
        if suite_mode:
            _out.print("[bold]2. suite mode[/bold]  suites scored against reference + mutants")
            summary["suite"] = _suite_mode(out, store, executor, quiet)
        if input_mode:
            _out.print("[bold]3. input mode[/bold]  arms audited with the certification chain")
            summary["audit"] = _input_mode(out, store, executor, quiet)
    finally:
        executor.close()
        store.close()
    out.mkdir(parents=True, exist_ok=True)
    parts = [d for d in (out / "suite", out / "audit") if d.is_dir()]
    if parts:
        from suitebench.report.html import write_report  # matplotlib: only when it is needed

        report = write_report(
            load_results(parts), out / "report.html", sources=[str(p) for p in parts]
        )
        summary["report"] = str(report)
    summary["seconds"] = round(time.monotonic() - started, 1)
    (out / "demo.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if OPTIONS.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    if "report" in summary:
        _out.print(f"report: {summary['report']} (open it in a browser)")
    _out.print(f"done in {summary['seconds']} s; outputs in {out}/ (demo.json lists them)")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
