"""``suitebench build mutants``: operator mutants (libcst, tree-sitter) or requirement-targeted
LLM mutants of an instance or a ProgramBench task, written as diffs with their manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from suitebench.cli._build_common import (
    _client,
    _emit_json,
    _err,
    _executor_run,
    _fail,
    _load,
    _out,
    build_app,
)
from suitebench.cli._options import (
    allow_unsandboxed_option,
    backend_option,
    branch_option,
    sandbox_backend,
)
from suitebench.cli._progress import progress_bar
from suitebench.cli.main import OPTIONS
from suitebench.model.errors import FormatError
from suitebench.model.instance import Instance
from suitebench.run.outcome import Backend


@build_app.command("mutants")
def mutants(
    instance_path: Path = typer.Argument(..., help="instance.toml or a directory holding one."),
    out: Path | None = typer.Option(
        None, "--out", help="Write into a copy of the instance here instead of in place."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the caps' random samples."),
    max_total: int | None = typer.Option(None, "--max", min=1, help="At most N mutants."),
    max_per_file: int | None = typer.Option(
        None,
        "--max-per-file",
        min=1,
        help="Sample at most N per file (default: every site of a Python package; 400 for a "
        "program built by a recipe, where each mutant is a build).",
    ),
    max_per_function: int | None = typer.Option(
        None,
        "--max-per-function",
        min=1,
        help="Sample at most N per function (default: every site of a Python package; 40 for "
        "a program built by a recipe).",
    ),
    operator: list[str] = typer.Option([], "--operator", help="Only these operators."),
    include: list[str] = typer.Option(
        [], "--include", help="Only files matching this glob (relative to the source root)."
    ),
    exclude: list[str] = typer.Option(
        [], "--exclude", help="Leave out files matching this glob (relative to the source root)."
    ),
    project_settings: bool = typer.Option(
        True,
        "--project-settings/--no-project-settings",
        help="Read mutmut's paths_to_mutate/do_not_mutate/source_paths and cosmic-ray's "
        "module-path/excluded-modules from the project (build init's project/ copy, the "
        "instance's directory, or the source root).",
    ),
    scope: str = typer.Option(
        "all",
        "--scope",
        help="all, or functions: only inside function bodies (no module or class-level code, "
        "decorators or default arguments; what mutmut mutates).",
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="REV",
        help="Only sites on lines changed since this git revision (the source must be in a git "
        "work tree).",
    ),
    llm: bool = typer.Option(
        False, "--llm", help="Requirement-targeted mutants from a model, one per target."
    ),
    targets_file: Path | None = typer.Option(
        None, "--targets", help="targets.json of `build targets` (--llm; default: computed)."
    ),
    per_section: int = typer.Option(6, "--per-section", min=1, help="Targets per section."),
    attempts: int = typer.Option(3, "--attempts", min=1, help="Model attempts per target."),
    model: str | None = typer.Option(None, "--model", help="Model name ($SUITEBENCH_MODEL)."),
    base_url: str | None = typer.Option(None, "--base-url", help="($OPENAI_BASE_URL)"),
    api_key: str | None = typer.Option(None, "--api-key", help="($OPENAI_API_KEY)"),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Name every site the caps dropped (file:line, operator)."
    ),
    branch: str | None = branch_option(),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Operator mutants (no model), or with --llm requirement-targeted mutants: one unified
    diff each, listed in instance.toml."""
    sandbox_backend(backend, allow_unsandboxed)  # the construction runs programs
    from suitebench.construct.mutants import SCOPES, default_caps, write_mutants
    from suitebench.construct.mutate_paths import path_filter, project_root_of

    instance = _load(instance_path, branch=branch)
    if scope not in SCOPES:
        raise _fail(f"--scope {scope}: expected one of {', '.join(SCOPES)}")
    if llm:
        _llm_mutants(instance, out, targets_file, per_section, attempts, model, base_url, api_key)
        return
    settings_root, prefix = project_root_of(
        instance.root, instance.source, getattr(instance, "pytest_config", None)
    )
    paths = path_filter(settings_root, include, exclude, project=project_settings, prefix=prefix)
    per_file, per_function = default_caps(instance)
    max_per_file = per_file if max_per_file is None else max_per_file
    max_per_function = per_function if max_per_function is None else max_per_function
    changes = None
    if since is not None:
        from suitebench.suite.select.since import SinceError, changed_lines

        try:
            changes = changed_lines(instance.source, since)
        except SinceError as exc:
            raise _fail(str(exc)) from None
    with _executor_run("building mutants") as (executor, progress):
        report = write_mutants(
            instance,
            out=out,
            seed=seed,
            max_total=max_total,
            max_per_file=max_per_file,
            max_per_function=max_per_function,
            operators=set(operator) or None,
            scope=scope,
            paths=paths,
            cache_dir=OPTIONS.store.parent / "builds",
            executor=executor,
            progress=progress,
            since=changes,
        )
    if OPTIONS.json:
        _emit_json(report.to_dict())
    _print_report(instance, report, out, scope, verbose)


def _print_report(
    instance: Any, report: Any, out: Path | None, scope: str, verbose: bool = False
) -> None:
    """The human report of ``build mutants``: the files read and left out, the counts, the
    mutants per operator and what was dropped or not parsed."""
    where = out if out is not None else instance.root
    for setting in report.settings_read:
        _out.print(f"  files: {escape(setting)}")
    if report.excluded_files:
        shown = ", ".join(report.excluded_files[:10])
        more = (
            f" and {len(report.excluded_files) - 10} more"
            if len(report.excluded_files) > 10
            else ""
        )
        _out.print(f"  left out: {len(report.excluded_files)} file(s): {escape(shown)}{more}")
    if not report.mutants and report.sites == 0:
        _out.print(f"[bold]{instance.name}[/bold]  {_no_mutants_reason(report)}")
        return
    _out.print(
        f"[bold]{instance.name}[/bold]  {len(report.mutants)} mutants written to "
        f"{where}/mutants  ({report.sites} sites, "
        + (f"{report.out_of_scope} outside function bodies, " if scope != "all" else "")
        + f"{report.noops} no-ops, "
        + (f"{report.no_mutate} on 'pragma: no mutate' lines, " if report.no_mutate else "")
        + f"{report.duplicates} duplicates, {report.capped} over the caps, "
        f"{len(report.build_errors)} do not build"
        + (
            f"; {len(report.equivalent)} written as equivalent, out of M"
            if report.equivalent
            else ""
        )
        + ")"
    )
    _print_build_scope(report)
    if report.since is not None:
        s = report.since
        left = [str(f) for f in s["unchanged_files"]]
        shown = ", ".join(left[:5]) + (" ..." if len(left) > 5 else "")
        _out.print(
            f"  since {escape(str(s['rev']))}: {len(report.mutants)} mutants on changed lines; "
            f"{s['sites_left_out']} sites on unchanged lines left out"
            + (f" (no changed line in {escape(shown)})" if left else "")
        )
    if report.capped:
        _out.print(_capped_line(report))
        _print_capped(report, verbose)
    elif not any(report.caps.values()):
        _out.print("  every site kept: no sampling (--max-per-file, --max-per-function, --max)")
    table = Table("operator", "mutants", show_edge=False)
    for name, count in sorted(report.by_operator.items()):
        table.add_row(name, str(count))
    _out.print(table)
    for error in report.build_errors[:10]:
        reason = escape(str(error["reason"]))
        _out.print(f"  [yellow]dropped[/yellow] {escape(str(error['description']))}: {reason}")
    if len(report.build_errors) > 10:
        _out.print(f"  ... {len(report.build_errors) - 10} more in mutants/operators.json")
    for file, why in report.unparsable.items():
        _out.print(f"  [yellow]not parsed[/yellow] {escape(file)}: {escape(why)}")


def _print_build_scope(report: Any) -> None:
    """The sites the reference's build does not compile, by reason and file, and the
    mutants its compiler found equivalent (the same objects or bytecode as the reference's)."""
    if report.left_out:
        kept = report.sites - sum(report.left_out.values())
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(report.left_out.items()))
        _out.print(f"  built: {kept} of {report.sites} sites kept; left out: {reasons}")
        files = list(report.left_out_files.items())
        for file, why in files[:10]:
            _out.print(f"    {why:<12} {escape(file)}")
        if len(files) > 10:
            _out.print(f"    ... {len(files) - 10} more files in mutants/operators.json")
    elif not report.build_recorded and report.sites:
        _out.print("  built: no C/C++ compile seen in the reference's build; every file kept")
    for eq in report.equivalent[:10]:
        why = eq.get("reason", "same object code")
        _out.print(
            f"  [cyan]equivalent[/cyan] {escape(str(eq['description']))}: {escape(str(why))}"
        )
    if len(report.equivalent) > 10:
        _out.print(f"  ... {len(report.equivalent) - 10} more in mutants/operators.json")


def _no_mutants_reason(report: Any) -> str:
    """Why nothing was mutated, in words: the languages no operator handles, else no source."""
    if report.no_operator:
        return f"0 mutants: no operator for {', '.join(report.no_operator)}"
    if report.unparsable:
        return "0 mutants: no source file could be parsed"
    if report.excluded_files:
        return "0 mutants: every source file was left out"
    return (
        "0 mutants: no source file in a language with operators (Python, C, C++, Rust, Go, shell)"
    )


def _capped_line(report: Any) -> str:
    """How many sites the caps dropped and where (the five files that lost most)."""
    caps = ", ".join(f"{k}={v}" for k, v in report.caps.items() if v is not None)
    top = list(report.capped_by_file.items())[:5]
    where = ", ".join(f"{escape(f)}: {n}" for f, n in top)
    return (
        f"  [yellow]capped:[/yellow] {report.capped} of {report.candidates} sites dropped "
        f"({caps}): {where}" + (" (top 5)" if len(report.capped_by_file) > 5 else "")
    )


def _print_capped(report: Any, verbose: bool) -> None:
    """The sites the caps dropped, one per line with ``--verbose``; else where to find them."""
    if not verbose:
        _out.print(
            "    (--verbose names them; mutants/operators.json lists them under capped_sites)"
        )
        return
    for site in report.capped_sites:
        description = str(site["description"])
        where = f"{site['file']}:{site['line']}"
        if not description.startswith(where):
            description = f"{where}: {description}"
        function = f" in {site['function']}" if site["function"] else ""
        _out.print(
            f"    [yellow]capped[/yellow] {escape(description)}{escape(function)} "
            f"({escape(str(site['operator']))})",
            highlight=False,
        )


def _llm_mutants(
    instance: Instance,
    out: Path | None,
    targets_file: Path | None,
    per_section: int,
    attempts: int,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
) -> None:
    from suitebench.construct.llm_mutants import requirement_mutants
    from suitebench.construct.targets import read_targets, targets_for_instance
    from suitebench.llm.client import ModelError, ModelReplyError
    from suitebench.run.store import Store, StoreError

    try:
        if targets_file is not None:
            chosen = read_targets(targets_file, instance)
        else:
            chosen = targets_for_instance(instance, per_section=per_section).targets
        store = Store(OPTIONS.store)
    except (FormatError, StoreError) as exc:
        raise _fail(str(exc)) from None
    client = _client(model, base_url, api_key, store)
    try:
        with progress_bar("asking for mutants", console=_err, quiet=OPTIONS.quiet) as progress:
            report = requirement_mutants(
                instance,
                client,
                chosen,
                cache_dir=OPTIONS.store.parent / "builds",
                out=out,
                attempts=attempts,
                retryable=(ModelReplyError,),
                progress=progress,
            )
    except (ModelError, FileExistsError, RuntimeError, FormatError) as exc:
        raise _fail(str(exc), 1) from None
    finally:
        store.close()
    if OPTIONS.json:
        _emit_json({**report.to_dict(), "usage": client.usage.to_dict()})
    where = out if out is not None else instance.root
    _out.print(
        f"[bold]{instance.name}[/bold]  {len(report.mutants)} of {report.pairs} targets got a "
        f"mutant from {escape(client.model)} -> {where}/mutants "
        f"({client.usage.calls} calls, {client.usage.cached_calls} from the store)"
    )
    for m in report.mutants:
        _out.print(f"  [green]{m.id}[/green]  {escape(m.description)}")
    for f in report.failed_pairs:
        why = str(f["problem"]).splitlines()[0]
        _out.print(f"  [yellow]none[/yellow]   {escape(f['section'])} / {escape(f['target'])}: "
                   f"{escape(why)}")  # fmt: skip
