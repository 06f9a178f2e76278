"""``suitebench build ...``: turn a program with a reference suite into a benchmark instance
(TestSuiteBench Section 2 and Appendix B), one inspectable step at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from suitebench.cli._build_common import (
    _client,
    _emit_json,
    _err,
    _fail,
    _load,
    _open_store,
    _out,
    _stored_run,
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
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Backend


def _infer_map(
    instance: Instance, model: str | None, base_url: str | None, api_key: str | None
) -> Instance:
    from suitebench.construct.targets import infer_sections_map, write_sections_map
    from suitebench.llm.client import ModelError, ModelReplyError

    store = _open_store()
    client = _client(model, base_url, api_key, store)
    try:
        links = infer_sections_map(instance, client, retryable=(ModelReplyError,))
        path = write_sections_map(instance, links, "sections.toml")
    except FormatError as exc:
        raise _fail(str(exc)) from None
    except (ModelError, RuntimeError) as exc:
        raise _fail(str(exc), 1) from None
    finally:
        store.close()
    _out.print(f"sections map inferred by {escape(client.model)} -> {path} (review and edit it)")
    return _load(instance.root)


@build_app.command("targets")
def targets(
    instance_path: Path = typer.Argument(..., help="instance.toml or a directory holding one."),
    per_section: int = typer.Option(6, "--per-section", min=0, help="Targets per section."),
    out: Path = typer.Option(Path("targets.json"), "--out", help="Where to write the targets."),
    llm: bool = typer.Option(
        False, "--llm", help="No sections_map: have a model infer it (written as sections.toml)."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name ($SUITEBENCH_MODEL)."),
    base_url: str | None = typer.Option(None, "--base-url", help="($OPENAI_BASE_URL)"),
    api_key: str | None = typer.Option(None, "--api-key", help="($OPENAI_API_KEY)"),
) -> None:
    """Mutant targets by min-cost max-flow on the section/test bigraph (Appendix B.2)."""
    from suitebench.construct.targets import targets_for_instance

    instance = _load(instance_path, "targets")
    if llm and not instance.sections_map:
        instance = _infer_map(instance, model, base_url, api_key)
    try:
        selection = targets_for_instance(instance, per_section=per_section)
    except FormatError as exc:
        raise _fail(str(exc)) from None
    data = selection.to_dict()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if OPTIONS.json:
        _emit_json(data)
    _out.print(
        f"[bold]{instance.name}[/bold]  {selection.selected} targets over "
        f"{len(selection.targets)} sections (at most {per_section} each, cost "
        f"{selection.cost}, {selection.edges} edges) -> {out}"
    )
    table = Table("section", "targets", "tests", show_edge=False)
    for section, chosen in selection.targets.items():
        table.add_row(escape(section), str(len(chosen)), escape(", ".join(chosen[:3])))
    _out.print(table)


def _figure(value: Any, percent: bool = True) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if percent else str(value)


@build_app.command("refine")
def refine(
    instance_path: Path = typer.Argument(..., help="instance.toml or a directory holding one."),
    out: Path | None = typer.Option(None, "--out", help="Write a refined copy here."),
    max_unrelated: float = typer.Option(
        0.2, "--max-unrelated", min=0.0, max=1.0, help="Largest share of other tests killing it."
    ),
    keep: int = typer.Option(3, "--keep", min=1, help="Mutants kept per section."),
    literal_check: bool = typer.Option(
        True,
        "--literal-check/--no-literal-check",
        help="Re-run the target with perturbed literals on mutants that hard-code them.",
    ),
    literal_tries: int = typer.Option(
        6, "--literal-tries", min=1, help="Perturbations tried per target, at most."
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Keep mutants their target kills and few other tests do; top --keep per section; drop
    mutants that only differ on their target's literals."""
    sandbox_backend(backend, allow_unsandboxed)  # the construction runs programs
    from suitebench.construct.refine import refine_instance

    instance = _load(instance_path, "refine")
    with _stored_run("scoring candidates") as (store, executor, progress):
        report = refine_instance(
            instance,
            store=store,
            out=out,
            max_unrelated=max_unrelated,
            keep_per_section=keep,
            literal_check=literal_check,
            literal_tries=literal_tries,
            cache_dir=OPTIONS.store.parent / "builds",
            executor=executor,
            progress=progress,
        )
    if OPTIONS.json:
        _emit_json(report.to_dict())
    where = out if out is not None else instance.root
    _out.print(
        f"[bold]{instance.name}[/bold]  kept {report.after['mutants']} of "
        f"{report.before['mutants']} mutants ({report.valid_tests} valid reference tests) "
        f"-> {where}/refine.json"
    )
    table = Table("figure", "before", "after", show_edge=False)
    for key, label, pct in (
        ("mutants", "mutants", False),
        ("killed_by_target", "killed by their target", False),
        ("killed_exactly_by_target", "killed exactly by their target", True),
        ("mean_unrelated_fraction", "mean unrelated killers |T-bar|/|T|", True),
        ("hardcodes_target_literal", "hard-code a target literal", False),
        ("literal_special_case", "  literal special cases", False),
        ("genuine_kill", "  genuine kills (perturbed target)", False),
        ("not_applicable", "  perturbation not applicable", False),
    ):
        table.add_row(label, _figure(report.before[key], pct), _figure(report.after[key], pct))
    _out.print(table)
    for d in report.mutants:
        mark = "[green]kept[/green]   " if d.kept else "[yellow]dropped[/yellow]"
        flags = f"  [red]{escape('; '.join(d.flags))}[/red]" if d.flags else ""
        _out.print(f"  {mark} {escape(d.id)}  {escape(d.reason)}{flags}")


@build_app.command("stats")
def stats(
    instance_paths: list[Path] = typer.Argument(..., help="Instances (directories or tomls)."),
    out: Path | None = typer.Option(None, "--out", help="Also write the figures as JSON."),
    branch: str | None = branch_option(),
) -> None:
    """TestSuiteBench Table 1: spec, source, reference tests and mutants; min/max/median."""
    from suitebench.construct.stats import FIGURES, instance_stats, summarize

    rows = [instance_stats(_load(p, branch=branch)) for p in instance_paths]
    summary = summarize(rows)
    data = {"instances": [r.to_dict() for r in rows], "summary": summary}
    if out is not None:
        out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if OPTIONS.json:
        _emit_json(data)
    table = Table("", "", "Min", "Max", "Median", show_edge=False)
    for key, group, label in FIGURES:
        figure = summary[key]
        table.add_row(
            group, label, f"{figure['min']:,}", f"{figure['max']:,}", f"{figure['median']:,g}"
        )
    _out.print(f"{len(rows)} instance(s)")
    _out.print(table)
    if len(rows) > 1:
        short = ("words", "lines", "sections", "files", "LOC", "tests", "mutants")
        per = Table("instance", *short, show_edge=False)
        for r in rows:
            per.add_row(escape(r.instance), *(f"{getattr(r, k):,}" for k, _, _ in FIGURES))
        _out.print(per)


def _print_harness_errors(report: Any) -> None:
    """Why the reference's runs did not finish (a conftest's failed import: no test at all)."""
    for error in report.harness_errors:
        _out.print(f"  [red]the reference's runs did not finish[/red]: {escape(error)}")


@build_app.command("hygiene")
def hygiene(
    instance_path: Path = typer.Argument(..., help="instance.toml or a directory holding one."),
    out: Path | None = typer.Option(None, "--out", help="Write a cleaned copy here."),
    runs: int = typer.Option(3, "--runs", min=1, help="Reference runs (flaky = they differ)."),
    per_test: float = typer.Option(10.0, "--per-test-timeout", help="Seconds per test."),
    no_network_check: bool = typer.Option(
        False, "--no-network-check", help="Do not re-run failing tests with the network on."
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Drop failing, flaky, too slow and network-bound reference tests; clean the spec."""
    sandbox_backend(backend, allow_unsandboxed)  # the construction runs programs
    from suitebench.construct.hygiene import apply_hygiene

    instance = _load(instance_path, "hygiene")
    with _stored_run("reference runs") as (store, executor, progress):
        report = apply_hygiene(
            instance,
            store=store,
            out=out,
            runs=runs,
            per_test=per_test,
            check_network=not no_network_check,
            cache_dir=OPTIONS.store.parent / "builds",
            executor=executor,
            progress=progress,
        )
    if OPTIONS.json:
        _emit_json(report.to_dict())
    where = out if out is not None else instance.root
    _out.print(
        f"[bold]{instance.name}[/bold]  {len(report.dropped)} of {report.tests} reference tests "
        f"dropped ({report.runs} runs), {len(report.spec_changes)} spec line(s) changed, "
        f"{len(report.sections_dropped)} section(s) dropped -> {where}/hygiene.json"
    )
    _print_harness_errors(report)
    for d in report.dropped:
        _out.print(f"  [yellow]{d.reason:8}[/yellow] {escape(d.id)}  {escape(d.detail)}")
    _print_skipped(report)
    for c in report.spec_changes:
        _out.print(f"  spec line {c['line']}: {escape(c['before'].strip())}")
        _out.print(f"           -> {escape(c['after'].strip())}")
    for s in report.sections_dropped:
        _out.print(f"  spec section dropped (all its tests were): {escape(s)}")
    for t in report.not_removed:
        _out.print(f"  [red]not found in its file, remove by hand:[/red] {escape(t)}")


def _print_skipped(report: Any) -> None:
    """Tests skipped on the reference: kept, but not valid (they kill no mutant)."""
    for d in getattr(report, "skipped", []):
        _out.print(f"  [cyan]skipped [/cyan] {escape(d.id)}  {escape(d.detail)} (kept)")


@build_app.command("init")
def init(
    repo: Path = typer.Argument(
        ...,
        help="A repository with build.sh and tests/, a Python project (a package and tests/), "
        "or a ProgramBench task directory.",
    ),
    out: Path = typer.Option(..., "--out", help="The new instance directory."),
    branch: str | None = branch_option(),
    runs: int = typer.Option(3, "--runs", min=1),
    per_test: float = typer.Option(10.0, "--per-test-timeout", help="Seconds per test."),
    python: Path | None = typer.Option(
        None, "--python", help="A Python project: the interpreter its tests run on (its venv)."
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """An instance skeleton from a repository, with hygiene applied to its reference suite."""
    sandbox_backend(backend, allow_unsandboxed)  # the construction runs programs
    from suitebench.construct.init import init_instance

    with _stored_run("reference runs") as (store, executor, progress):
        summary, report = init_instance(
            repo,
            out,
            store=store,
            branch=branch,
            runs=runs,
            per_test=per_test,
            cache_dir=OPTIONS.store.parent / "builds",
            executor=executor,
            progress=progress,
            python=python,
        )
    if OPTIONS.json:
        _emit_json({"init": summary, "hygiene": report.to_dict()})
    kept = summary.get("kept", report.tests - len(report.dropped))
    _out.print(
        f"[bold]{report.instance}[/bold]  instance written to {out}: "
        f"{kept} reference tests kept of {summary.get('tests', report.tests)}"
    )
    _print_harness_errors(report)
    found = summary.get("python_project", {})
    for setting in found.get("settings_read", []):
        _out.print(f"  settings: {escape(setting)}")
    if found.get("settings_files"):
        names = ", ".join(found["settings_files"])
        _out.print(
            f"  project/: {escape(names)} (mutation settings: build mutants and score read them)"
        )
    for test, reasons in summary["ignored_by_task"].items():
        _out.print(f"  [yellow]ignored[/yellow]  {escape(test)}  ({escape(', '.join(reasons))})")
    in_files = summary.get("dropped_in_files", {})
    for d in report.dropped:
        _out.print(f"  [yellow]{d.reason:8}[/yellow] {escape(d.id)}  {escape(d.detail)}")
        for test in in_files.get(d.id, []):
            _out.print(f"  [yellow]{d.reason:8}[/yellow] {escape(test)}  (its file: see above)")
    _print_skipped(report)
    for t in report.not_removed:
        _out.print(f"  [red]not found in its file, remove by hand:[/red] {escape(t)}")
    if not (out / "spec.md").is_file():
        _out.print("  no spec.md yet: write one, or draft it with `suitebench build spec`")


@build_app.command("spec")
def spec(
    instance_path: Path = typer.Argument(..., help="instance.toml or a directory holding one."),
    out: Path | None = typer.Option(None, "--out", help="Write into a copy of the instance."),
    iterations: int = typer.Option(3, "--iterations", min=1, help="Refinement iterations."),
    threshold: float = typer.Option(
        0.05, "--threshold", min=0.0, max=1.0, help="Stop when fewer failures are the spec's."
    ),
    max_sections: int = typer.Option(50, "--max-sections", min=1),
    attempts: int = typer.Option(3, "--attempts", min=1, help="Model attempts per question."),
    redraft: bool = typer.Option(False, "--redraft", help="Draft anew even if a spec exists."),
    model: str | None = typer.Option(None, "--model", help="Model name ($SUITEBENCH_MODEL)."),
    base_url: str | None = typer.Option(None, "--base-url", help="($OPENAI_BASE_URL)"),
    api_key: str | None = typer.Option(None, "--api-key", help="($OPENAI_API_KEY)"),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Draft a spec from the reference tests (if none), then the refinement loop."""
    sandbox_backend(backend, allow_unsandboxed)  # the construction runs programs
    from suitebench.construct.spec import SpecError, build_spec
    from suitebench.llm.client import ModelError, ModelReplyError

    instance = _load(instance_path, "spec")
    store = _open_store()
    client = _client(model, base_url, api_key, store)
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    try:
        with progress_bar("spec iterations", console=_err, quiet=OPTIONS.quiet) as progress:
            report = build_spec(
                instance,
                client,
                store=store,
                out=out,
                iterations=iterations,
                threshold=threshold,
                max_sections=max_sections,
                attempts=attempts,
                redraft=redraft,
                retryable=(ModelReplyError,),
                cache_dir=OPTIONS.store.parent / "builds",
                executor=executor,
                progress=progress,
            )
    except FormatError as exc:
        raise _fail(str(exc)) from None
    except (ModelError, SpecError, FileExistsError, RuntimeError) as exc:
        raise _fail(str(exc), 1) from None
    finally:
        executor.close()
        store.close()
    if OPTIONS.json:
        _emit_json({**report.to_dict(), "usage": client.usage.to_dict()})
    _out.print(
        f"[bold]{instance.name}[/bold]  spec {'drafted and ' if report.drafted else ''}refined: "
        f"{report.sections} sections -> {report.spec}  (stopped: {report.stopped})"
    )
    table = Table("iteration", "R", "V", "M", "failures", "spec's", "generation's",
                  "revised", show_edge=False)  # fmt: skip
    for it in report.iterations:
        table.add_row(
            str(it["iteration"]),
            _figure(it.get("R")),
            _figure(it.get("V")),
            _figure(it.get("M")),
            str(it["failures"]),
            f"{it['spec']} ({100 * it['spec_share']:.0f}%)",
            str(it["generation"]),
            escape(", ".join(it["sections_revised"])),
        )
    _out.print(table)


def register(app: typer.Typer) -> None:
    from suitebench.cli import build_mutants  # noqa: F401 -- registers ``build mutants``

    app.add_typer(build_app, name="build")
