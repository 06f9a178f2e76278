"""``suitebench score``: validity V, mutation_score M and the kill matrix of a suite, or R."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from suitebench.cli._console import (
    HumanConsole,
    end_on_harness_errors,
    error_console,
    keep_going_option,
)
from suitebench.cli._interrupt import run_interruptibly, store_note
from suitebench.cli._options import (
    allow_unsandboxed_option,
    backend_option,
    branch_option,
    sandbox_backend,
)
from suitebench.cli._progress import progress_bar
from suitebench.cli._store import open_store
from suitebench.cli._survivors import (
    FAIL_UNDER_EXIT,
    gate,
    print_survivors,
    remember_last_score,
    where,
)
from suitebench.cli.main import OPTIONS
from suitebench.model.diffs import content_digest
from suitebench.model.instance import Instance, InstanceError, load_instance
from suitebench.model.programbench import is_programbench_task, load_programbench_task
from suitebench.report.mutation_report import write_mutation_report
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Backend
from suitebench.run.unpack import ArchiveError
from suitebench.suite.execute.runspec import Engine, SuiteLimits, TestProtocol, engine_for
from suitebench.suite.implementation import score_implementation
from suitebench.suite.result import ImplementationResult, MutantStatus, SuiteResult
from suitebench.suite.score import (
    DEFAULT_BATCH,
    ReferenceBuildError,
    SuiteInputError,
    score_suite,
)
from suitebench.suite.select.locate import mutation_score_by
from suitebench.suite.select.since import SinceError

# soft_wrap: paths and test ids stay greppable
_out = HumanConsole(soft_wrap=True)  # tables and summaries: stdout (stderr under --json)
_err = error_console(soft_wrap=True)  # errors, warnings, the progress bar


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _print_mutant_table(result: SuiteResult) -> None:
    """Every mutant one per line (``--verbose``): place, status and killers."""
    table = Table("mutant", "section", "status", "where", "killed by", show_edge=False)
    for m in result.mutants:
        style = {
            MutantStatus.KILLED: "green",
            MutantStatus.TIMEOUT: "green",
            MutantStatus.SURVIVED: "red",
            MutantStatus.EQUIVALENT: "cyan",
        }.get(m.status, "yellow")
        killers = ", ".join(m.killed_by[:3]) + (" ..." if len(m.killed_by) > 3 else "")
        table.add_row(
            escape(m.id),
            escape(m.section or ""),
            f"[{style}]{m.status}[/{style}]",
            escape(where(m)),
            escape(killers),
        )
    _out.print(table)


def _print_suite(result: SuiteResult, show_failures: bool = False, verbose: bool = False) -> None:
    c = result.counts
    _out.print(
        f"[bold]{result.instance}[/bold]  V = {_pct(result.validity)} ({c.valid}/{c.tests} valid, "
        f"{c.flaky} flaky, {c.skipped} skipped)   M = {_pct(result.mutation_score)} "
        f"({c.killed}/{c.scored} killed, {c.build_errors} build errors, {c.crashed} crashed"
        + (f", {c.equivalent} equivalent" if c.equivalent else "")
        + ")"
    )
    selection = f"test selection: {result.test_selection} ({result.coverage.reason})"
    if result.test_selection != "all":
        ran = sum(m.tests_run for m in result.mutants)
        cells = c.tests * sum(1 for m in result.mutants if m.outcomes)
        selection += f"; {ran} of {cells} matrix cells run, the others kept their reference outcome"
    _out.print(selection)
    if result.limits.get("protocol_note"):  # a pytest the direct protocol does not know
        _out.print(
            f"[yellow]test protocol: pytest[/yellow] ({escape(result.limits['protocol_note'])})"
        )
    _print_edits(result)
    for figure, why in result.withheld.items():
        name = {"validity": "V", "mutation_score": "M"}.get(figure, figure)
        _out.print(f"[yellow]{name} is not given (null in results.json):[/yellow] {escape(why)}")
    if verbose:
        _print_mutant_table(result)
    print_survivors(result, _out)
    _print_equivalent(result)
    if any(result.per_section):  # sections come from a spec; operator mutants have none
        sections = "  ".join(f"{s or '(none)'}: {_pct(v)}" for s, v in result.per_section.items())
        _out.print(f"M per section: {sections}")
    by_file = mutation_score_by(result.mutants, "file")
    if len(by_file) == 1:
        ((name, (k, n)),) = by_file.items()
        _out.print(f"M per file: {escape(name)} {_pct(k / n)} ({k}/{n})")
    elif by_file:
        _out.print("M per file (weakest first):")
        weakest = sorted(by_file.items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0]))
        for name, (k, n) in weakest[:20]:
            _out.print(f"  {_pct(k / n):>6} ({k}/{n})  {escape(name)}")
        if len(weakest) > 20:
            _out.print(f"  ... and {len(weakest) - 20} more files (the report has them all)")
    skipped = [t for t in result.tests if t.skipped]
    invalid = [t for t in result.tests if not t.valid and not t.skipped]
    if invalid:
        _out.print(f"{len(invalid)} invalid test(s) (not counted for M):")
        for t in invalid[:20]:
            tag = "flaky" if t.flaky else "/".join(sorted({str(s) for s in t.reference}))
            tag = tag if t.decoy is None else f"{t.decoy} on a decoy"
            why = f"  {t.message}" if t.message else ""
            _out.print(f"  {escape(t.id)}  {escape(f'[{tag}]')}{escape(why)}")
    if skipped:
        _out.print(f"{len(skipped)} skipped test(s) (not valid, not failing):")
        for t in skipped[:20]:
            why = f"  {t.message}" if t.message else ""
            _out.print(f"  {escape(t.id)}{escape(why)}")
    if show_failures:
        for m in result.mutants:
            for test in m.killed_by:
                why = m.kill_messages.get(test, "")
                _out.print(f"  {escape(m.id)} killed by {escape(test)}: {escape(why)}")


def _print_equivalent(result: SuiteResult) -> None:
    """The mutants left out of M as equivalent, each with why."""
    equivalent = [m for m in result.mutants if m.status is MutantStatus.EQUIVALENT]
    if not equivalent:
        return
    _out.print(f"{len(equivalent)} equivalent mutant(s) (not counted for M):")
    for m in equivalent:
        what = f"  {m.description}" if m.description else ""
        _out.print(
            f"  {escape(m.id)}  [cyan]{escape(f'[{m.equivalent}]')}[/cyan] "
            f"{escape(m.message)}{escape(what)}"
        )


def _warn_unkeyed(instance: Instance) -> None:
    """Declarations of equivalence by id alone: a rebuild that renumbers the mutants would
    move them to other mutants; the digest to add keys them to what the mutant changes."""
    for mutant_id in instance.equivalent_unkeyed:
        digest = content_digest(instance.mutant(mutant_id).patch.read_bytes())
        _err.print(
            f"[yellow]warning:[/yellow] {escape(str(instance.root / 'instance.toml'))}: "
            + escape(
                f'[[equivalent]] {mutant_id} has no digest; add digest = "{digest}" so that '
                "it stays with this mutant if the mutants are rebuilt"
            )
        )


def _print_edits(result: SuiteResult) -> None:
    """What --since left out and what --incremental reused, one line each."""
    if result.since is not None:
        s = result.since
        files = ", ".join(s["left_out_files"][:5]) + (
            " ..." if len(s["left_out_files"]) > 5 else ""
        )
        _out.print(
            f"since {escape(s['rev'])} ({s['commit'][:12]}): {s['mutants_scored']} mutant(s) on "
            f"changed lines in {len(s['changed_files'])} changed file(s) scored; "
            f"{s['mutants_left_out']} left out, not run"
            + (f" (in {escape(files)})" if files else "")
        )
    if result.incremental is not None:
        inc = result.incremental
        ran = sum(m.tests_run for m in result.mutants if m.reused_from is None)
        reused = (
            f"{inc['reused']} row(s) reused from run {inc['previous']}"
            if inc["previous"] is not None
            else "no earlier run"
        )
        line = (
            f"incremental: run {inc['run_id']}: {reused}"
            + (", the reference's runs too" if inc["reference_runs_reused"] else "")
            + f"; {inc['rerun']} mutant(s) run ({ran} cells), {inc['unreached']} reached by no test"
        )
        if inc["everything_reruns"]:
            line += f"; nothing reused: {escape(inc['everything_reruns'])}"
        elif inc["rerun_reasons"]:
            why = "; ".join(f"{n} {escape(r)}" for r, n in inc["rerun_reasons"].items())
            line += f"; run because: {why}"
        _out.print(line)


def _print_implementation(result: ImplementationResult) -> None:
    _out.print(
        f"[bold]{result.instance}[/bold]  R = {_pct(result.reference_pass_rate)} "
        f"({result.passed}/{result.total} valid reference tests pass; build {result.build_status})"
    )
    if result.build_message:
        _out.print(result.build_message[-2000:])
    for test, status in result.failing.items():
        _out.print(f"  [red]{status}[/red]  {escape(test)}")


def score(
    instance_path: Path = typer.Argument(..., help="instance.toml or a directory holding one."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite to score (default: the instance's reference suite)."
    ),
    implementation: Path | None = typer.Option(
        None,
        "--implementation",
        help="Report R of this implementation: a directory with build.sh or compile.sh, or a "
        "submission archive (submission.zip, .tar.gz).",
    ),
    branch: str | None = branch_option(),
    out: Path | None = typer.Option(None, "--out", help="Write results.json and kills.csv here."),
    engine: Engine | None = typer.Option(
        None,
        "--engine",
        help="batched (one pytest for a batch of programs: fast, for suites you trust) or plain "
        "(a sandbox and a pytest per program). Default: batched for the instance's own suite, "
        "plain for any other.",
    ),
    fast: bool = typer.Option(
        False, "--fast", help="Only M: stop each mutant at its first kill (partial matrix)."
    ),
    reference_runs: int = typer.Option(3, "--reference-runs", min=1),
    per_test: float = typer.Option(10.0, "--per-test-timeout", help="Seconds per test."),
    timeout_factor: float = typer.Option(
        1.25,
        "--timeout-factor",
        min=1.0,
        help="A mutant's limit per test: this x its reference time + --timeout-constant "
        "(at most --per-test-timeout).",
    ),
    timeout_constant: float = typer.Option(
        1.0, "--timeout-constant", min=0.0, help="Seconds added to a mutant's limit per test."
    ),
    batch_size: int = typer.Option(
        DEFAULT_BATCH, "--batch-size", min=1, help="Most programs per sandbox (batched engine)."
    ),
    mutant: list[str] = typer.Option([], "--mutant", help="Score only these mutant ids."),
    all_tests: bool = typer.Option(
        False,
        "--all-tests",
        help="Run every test on every mutant (no coverage-guided test selection).",
    ),
    overlap: int | None = typer.Option(
        None,
        "--overlap",
        min=0,
        help="Most timeouts confirmed side by side (each waits, holding no core; default: as "
        "many as the memory holds at the memory limit, at most 64; 0: at --jobs).",
    ),
    protocol: TestProtocol = typer.Option(
        TestProtocol.DIRECT,
        "--protocol",
        help="How a batch runs each test on a mutant: direct (pytest's own per-phase work done "
        "in one place wherever only pytest's plugins take part; failures still reported by "
        "pytest) or pytest (every test through pytest's hooks).",
    ),
    show_failures: bool = typer.Option(
        False, "--show-failures", help="Print each kill's failure message (the killing test's)."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Also list every mutant, one per line, with its killers."
    ),
    fail_under: float | None = typer.Option(
        None,
        "--fail-under",
        min=0.0,
        max=100.0,
        help=f"Exit {FAIL_UNDER_EXIT} when M (in percent) is below this, or not given: a CI gate.",
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="REV",
        help="Score only the mutants on lines changed since this git revision (the source must "
        "be in a git work tree); the others are left out, not run, and listed.",
    ),
    incremental: bool = typer.Option(
        False,
        "--incremental",
        help="Reuse a mutant's row from the last --incremental score of this instance and suite "
        "when neither its code, what its tests reach, nor its tests changed; rerun the rest.",
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
    keep_going: bool = keep_going_option(),
) -> None:
    """Score a test suite against an instance's reference and mutants (V, M, kill matrix),
    or a generated implementation against the reference suite (R).

    A broken harness -- a reference that does not build, reference runs that do not finish
    even when continued in fresh runs, a mutant's run the sandbox lost -- is named on stderr,
    listed under harness_errors in results.json, and exits 4 unless --keep-going. With
    --fail-under, an M below the threshold exits 5."""
    if branch is not None and not is_programbench_task(instance_path):
        _err.print(f"[red]error:[/red] {instance_path}: --branch is for a ProgramBench task")
        raise typer.Exit(2)
    instance = _load(instance_path, branch)
    if incremental and (fast or implementation is not None):
        _err.print("[red]error:[/red] --incremental keeps full kill-matrix rows: not with --fast "
                   "or --implementation")  # fmt: skip
        raise typer.Exit(2)
    chosen = sandbox_backend(backend, allow_unsandboxed)
    if engine is Engine.BATCHED and engine_for(instance.tests, suite, None) is Engine.PLAIN:
        _err.print(
            "note: --engine batched imports this suite once for a batch of programs, where a "
            "suite written to cheat can move M (docs/threat-model.md): use it for suites you trust"
        )
    limits = SuiteLimits(
        per_test=per_test,
        protocol=protocol,
        timeout_factor=timeout_factor,
        timeout_constant=timeout_constant,
    )
    result = _compute(
        instance,
        suite,
        implementation,
        engine=engine,
        reference_runs=reference_runs,
        fast=fast,
        limits=limits,
        batch_size=batch_size,
        mutant_ids=mutant or None,
        all_tests=all_tests,
        backend=chosen,
        keep_going=keep_going,
        overlap=overlap,
        since=since,
        incremental=incremental,
        write=lambda r: _write(r, instance, out),
    )
    if isinstance(result, ImplementationResult):
        _emit_implementation(result, out)
    else:
        _emit_suite(result, instance, out, show_failures, keep_going, verbose)
        gate(result.mutation_score, fail_under, _err)


def _compute(
    instance: Instance,
    suite: Path | None,
    implementation: Path | None,
    *,
    engine: Engine | None,
    reference_runs: int,
    fast: bool,
    limits: SuiteLimits,
    batch_size: int,
    mutant_ids: list[str] | None,
    all_tests: bool,
    backend: Backend,
    keep_going: bool,
    overlap: int | None = None,
    since: str | None = None,
    incremental: bool = False,
    write: Callable[[ImplementationResult | SuiteResult], None] | None = None,
) -> ImplementationResult | SuiteResult:
    """R of ``implementation`` or the suite's score, under a progress bar. A reference that
    does not build ends the command as a harness error (exit 4, or 0 under --keep-going); an
    instance whose interpreter cannot run suites, or a suite that cannot be scored (a Python
    file not named in UTF-8, no test collected), exits 2; any other failure to start, 1."""
    store = open_store(_err)
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    quiet = OPTIONS.quiet  # progress is on stderr, with --json too

    def work() -> ImplementationResult | SuiteResult:
        result = compute()
        if write is not None:  # here, in the work's thread, which Ctrl-C never stops mid-file
            write(result)
        return result

    def compute() -> ImplementationResult | SuiteResult:
        with progress_bar("scoring", console=_err, quiet=quiet) as progress:
            if implementation is not None:
                return score_implementation(
                    instance,
                    implementation,
                    store=store,
                    executor=executor,
                    engine=engine or Engine.BATCHED,  # the instance's own suite
                    reference_runs=reference_runs,
                    limits=limits,
                    progress=progress,
                    backend=backend,
                )
            return score_suite(
                instance,
                suite,
                store=store,
                executor=executor,
                engine=engine,
                reference_runs=reference_runs,
                fast=fast,
                limits=limits,
                batch_size=batch_size,
                mutant_ids=mutant_ids,
                all_tests=all_tests,
                progress=progress,
                backend=backend,
                overlap=overlap,
                since=since,
                incremental=incremental,
            )

    def stored() -> str:
        return store_note(store.written, store.found, "results")

    try:
        result = run_interruptibly(work, _err, stored)
        _err.print(stored(), markup=False, highlight=False)
        return result
    except typer.Exit:  # interrupted (a RuntimeError to click): not an error of its own
        raise
    except ReferenceBuildError as exc:
        first = str(exc).splitlines()
        end_on_harness_errors([" ".join(first[:2])], keep_going=keep_going, console=_err)
        raise typer.Exit(0) from None
    except (
        InstanceError,
        SuiteInputError,
        ArchiveError,
        SinceError,
    ) as exc:  # an interpreter that cannot
        _err.print(f"[red]error:[/red] {escape(str(exc))}")  # run suites, a suite that cannot be
        # scored, a submission archive refused
        raise typer.Exit(2) from None
    except (RuntimeError, FileNotFoundError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    finally:
        executor.close()
        store.close()


def _load(instance_path: Path, branch: str | None = None) -> Instance:
    """The instance at ``instance_path`` (ours or a ProgramBench task, every branch not ignored
    or ``branch``), or exit 2 naming why."""
    try:
        if is_programbench_task(instance_path):
            return load_programbench_task(instance_path, branch)
        return load_instance(instance_path)
    except InstanceError as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


def _write(
    result: ImplementationResult | SuiteResult, instance: Instance, out: Path | None
) -> None:
    """A score's files: ``out`` (with the mutation-testing report) and a suite's result as the
    last score beside the store (what ``show`` and ``apply`` read by default)."""
    if isinstance(result, ImplementationResult):
        if out is not None:
            result.write(out)
        return
    if out is not None:
        result.write(out)
        write_mutation_report(out / "mutation-report.json", instance, result)
    remember_last_score(result, OPTIONS.store)


def _emit_implementation(impl: ImplementationResult, out: Path | None) -> None:
    """R's result (written to ``out`` by :func:`_write`), printed, or as JSON on stdout."""
    _print_implementation(impl)  # stderr under --json
    if out is not None:
        _out.print(f"results in {out}")
    if OPTIONS.json:
        sys.stdout.write(impl.model_dump_json() + "\n")


def _emit_suite(
    result: SuiteResult,
    instance: Instance,
    out: Path | None,
    show_failures: bool,
    keep_going: bool,
    verbose: bool = False,
) -> None:
    """A suite's result (its files written by :func:`_write`, in the work's thread): printed
    (on stderr under --json), and as JSON on stdout (the full matrix runs to megabytes:
    pydantic's own encoder); then a broken harness ends the command."""
    _warn_unkeyed(instance)
    _print_suite(result, show_failures, verbose)
    if out is not None:
        _out.print(f"results in {out}")
    if OPTIONS.json:
        sys.stdout.write(result.model_dump_json() + "\n")
    broken = [
        f"{e.stage} {e.program} ({e.count} run(s)): {e.message}" for e in result.harness_errors
    ]
    end_on_harness_errors(broken, keep_going=keep_going, console=_err)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
