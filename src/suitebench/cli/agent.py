"""``suitebench agent``: run coding agents on tasks, contained, and score what they write."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from suitebench.agents.batch import BatchJob, batch_summary, run_batch
from suitebench.agents.contain import ContainmentError
from suitebench.agents.gateway import EndpointError
from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.presets import PRESETS, PresetError
from suitebench.agents.quota import DEFAULT_MB
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.trajectory import CLASSES, analyse_run
from suitebench.agents.workspace import Task, WorkspaceError
from suitebench.audit.arms import ArmError
from suitebench.audit.chain import AuditError
from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli._options import (
    allow_unsandboxed_option,
    backend_option,
    branch_option,
    sandbox_backend,
)
from suitebench.cli._store import open_store
from suitebench.cli.main import OPTIONS
from suitebench.model.errors import FormatError
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Backend

# Piped or redirected, rich would fold the tables at 80 columns; 140 keeps a row on one line.
_out = HumanConsole(soft_wrap=True, width=None if sys.stdout.isatty() else 140)  # tables
_err = error_console(soft_wrap=True, width=None if sys.stderr.isatty() else 140)
agent_app = typer.Typer(
    help="Run coding agents on suite / inputs / code tasks, contained, and score their output.",
    no_args_is_help=True,
)

_AGENT_HELP = f"Agent preset: {', '.join(PRESETS)}."


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _score_line(task: str, score: dict[str, Any] | None) -> str:
    if not score:
        return "not scored"
    if task == "suite" and score.get("error"):
        return f"not scored: {score['error']}"  # its suite cannot be scored (bad input)
    if task == "suite":
        return (
            f"V = {_pct(score['validity'])} ({score['valid']}/{score['tests']} valid)   "
            f"M = {_pct(score['mutation_score'])} ({score['killed']}/{score['scored']} killed)"
        )
    if task == "code":
        return f"R = {_pct(score['reference_pass_rate'])} ({score['passed']}/{score['total']})"
    cov = score.get("cov_at_k", {})
    shown = [k for k in ("1", "5", "10", "50") if k in cov] or list(cov)
    covs = "  ".join(f"cov@{k} {'-' if cov[k] is None else f'{cov[k]:.3f}'}" for k in shown)
    return f"{score['inputs']} inputs   {covs}   certified {score['certified']}"


def _spec(
    agent: str | None, agent_cmd: str | None, model: str | None, endpoint: str | None, key_env: str
) -> AgentSpec:
    if (agent is None) == (agent_cmd is None):
        _err.print("[red]error:[/red] give exactly one of --agent PRESET or --agent-cmd CMD")
        raise typer.Exit(2)
    return AgentSpec(agent, agent_cmd, model, endpoint, os.environ.get(key_env))


@contextmanager
def _score_context() -> Iterator[ScoreContext]:
    """What scoring an agent's output needs: the store, its build cache and an executor (both
    closed when the command is done with them)."""
    store = open_store(_err)
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    try:
        yield ScoreContext(store, OPTIONS.store.parent / "builds", executor)
    finally:
        executor.close()
        store.close()


@agent_app.command("run")
def run(
    task: Task = typer.Argument(..., help="suite (write tests), inputs (write inputs), code."),
    target: Path = typer.Argument(..., help="Instance (suite, code) or problem (inputs) dir."),
    out: Path = typer.Option(..., "--out", help="Run directory (must be new or empty)."),
    agent: str | None = typer.Option(None, "--agent", help=_AGENT_HELP),
    agent_cmd: str | None = typer.Option(
        None, "--agent-cmd", help="Any program (run by /bin/sh -c in the workspace)."
    ),
    time_limit: float = typer.Option(3600.0, "--time-limit", min=1, help="Seconds."),
    model: str | None = typer.Option(None, "--model", help="Model name for the agent."),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="Model base URL (the only address the agent can reach)."
    ),
    api_key_env: str = typer.Option(
        "SUITEBENCH_API_KEY", "--api-key-env", help="Environment variable holding the key."
    ),
    with_executable: bool = typer.Option(
        False, "--with-executable", help="suite: also give the reference executable (ablation)."
    ),
    no_wrongs: bool = typer.Option(
        False, "--no-wrongs", help="inputs: disable gen_wrongs.py (the paper's ablation)."
    ),
    budget: int = typer.Option(50, "--budget", min=1, help="inputs: the input budget."),
    rounds: int = typer.Option(
        0, "--rounds", min=0, help="suite: mutation-guided rounds after the first run."
    ),
    memory: int = typer.Option(4096, "--memory", min=64, help="MiB for the agent's sandbox."),
    disk_limit: int = typer.Option(
        DEFAULT_MB, "--disk-limit", min=0, help="MB for the agent's workspace in all (0: no cap)."
    ),
    bind: list[Path] = typer.Option([], "--bind", help="Extra read-only path for the agent."),
    allow_visible: bool = typer.Option(
        False, "--allow-visible", help="Run even if held-out files are visible (recorded)."
    ),
    branch: str | None = branch_option(),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Run one agent on one task, contained; collect, score and record what it wrote."""
    sandbox_backend(backend, allow_unsandboxed)
    spec = _spec(agent, agent_cmd, model, endpoint, api_key_env)
    opts = RunOptions(
        time_limit=time_limit,
        memory_mb=memory,
        disk_limit_mb=disk_limit,
        with_executable=with_executable,
        wrongs=not no_wrongs,
        budget=budget,
        rounds=rounds,
        allow_visible=allow_visible,
        extra_binds=list(bind),
        branch=branch,
    )
    record = _run_contained(task, target, spec, out, opts)
    if OPTIONS.json:  # and the human output on stderr, as every command does
        sys.stdout.write(json.dumps(record) + "\n")
    _print_record(record, out)


def _run_contained(
    task: Task, target: Path, spec: AgentSpec, out: Path, opts: RunOptions
) -> dict[str, Any]:
    """The agent's run record; a refusal to run it uncontained is exit 3, bad input exit 2,
    a failure of the run (a reference that does not build, a probe) exit 1."""
    with _score_context() as ctx:
        try:
            return run_agent(task, target, spec, out, opts, ctx)
        except ContainmentError as exc:
            _err.print(f"[red]refused:[/red] {exc}")
            raise typer.Exit(3) from None
        except (
            FormatError,
            WorkspaceError,
            PresetError,
            EndpointError,
            ArmError,
            AuditError,
        ) as exc:
            _err.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
        except (
            RuntimeError,
            OSError,
        ) as exc:  # a reference that does not build, a probe that failed
            _err.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(1) from None


def _print_record(record: dict[str, Any], out: Path) -> None:
    """The run in words: its status, time and each round's score and refused files."""
    stop = " (stopped at the time limit)" if record["stopped_by_limit"] else ""
    if record.get("disk_limit"):
        stop = f" (stopped at the disk limit, {record['disk']['limit_mb']} MiB)"
    _out.print(
        f"[bold]{escape(record['target_id'])}[/bold]  {record['task']} by {record['agent']}: "
        f"{record['status']}{stop}, exit {record['exit_code']}, {record['wall_time']:.1f} s"
    )
    for r in record["rounds"]:
        prefix = f"  round {r['round']}: " if len(record["rounds"]) > 1 else "  "
        _out.print(prefix + _score_line(record["task"], r.get("score")))
        _print_refused(r.get("collect") or {}, "    " if len(record["rounds"]) > 1 else "  ")
    _out.print(f"outputs in {out}")


def _print_refused(collect: dict[str, Any], indent: str) -> None:
    """What the collector would not copy out of the workspace (never silent: it may be a link
    to held-out material)."""
    total = collect.get("refused_total", 0)
    if not total:
        return
    _out.print(f"{indent}[yellow]not collected:[/yellow] {total} entries")
    for r in collect.get("refused", []):
        _out.print(f"{indent}  {_refused_text(r)}")


def _refused_text(r: dict[str, Any]) -> str:
    target = f" -> {r['target']}" if r.get("target") else ""
    return escape(f"{r['path']}: {r['reason']}{target}")


@agent_app.command("batch")
def batch(
    task: Task = typer.Argument(...),
    targets: list[Path] = typer.Argument(..., help="Instances or problems."),
    out: Path = typer.Option(..., "--out", help="Batch directory: one run dir per pair."),
    agent: list[str] = typer.Option([], "--agent", help=_AGENT_HELP + " Repeatable."),
    agent_cmd: list[str] = typer.Option(
        [], "--agent-cmd", help="NAME=CMD: a named custom agent. Repeatable."
    ),
    time_limit: float = typer.Option(3600.0, "--time-limit", min=1),
    model: str | None = typer.Option(None, "--model"),
    endpoint: str | None = typer.Option(None, "--endpoint"),
    api_key_env: str = typer.Option("SUITEBENCH_API_KEY", "--api-key-env"),
    with_executable: bool = typer.Option(False, "--with-executable"),
    no_wrongs: bool = typer.Option(False, "--no-wrongs"),
    budget: int = typer.Option(50, "--budget", min=1),
    rounds: int = typer.Option(0, "--rounds", min=0),
    memory: int = typer.Option(4096, "--memory", min=64),
    disk_limit: int = typer.Option(DEFAULT_MB, "--disk-limit", min=0),
    bind: list[Path] = typer.Option([], "--bind"),
    parallel: int = typer.Option(
        2, "--parallel", min=1, help="Agents running at once (scoring uses --jobs)."
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Every (agent, target) pair in parallel on the executor; finished runs are not repeated."""
    sandbox_backend(backend, allow_unsandboxed)
    key = os.environ.get(api_key_env)
    agents: dict[str, AgentSpec] = {a: AgentSpec(a, None, model, endpoint, key) for a in agent}
    for item in agent_cmd:
        name, sep, cmd = item.partition("=")
        if not sep or not name or not cmd:
            _err.print(f"[red]error:[/red] --agent-cmd {item!r}: expected NAME=CMD")
            raise typer.Exit(2)
        agents[name] = AgentSpec(None, cmd, model, endpoint, key)
    if not agents:
        _err.print("[red]error:[/red] give at least one --agent or --agent-cmd NAME=CMD")
        raise typer.Exit(2)
    opts = RunOptions(
        time_limit=time_limit,
        memory_mb=memory,
        disk_limit_mb=disk_limit,
        with_executable=with_executable,
        wrongs=not no_wrongs,
        budget=budget,
        rounds=rounds,
        extra_binds=list(bind),
    )
    jobs = [BatchJob(task, t, name, spec) for t in targets for name, spec in agents.items()]
    with _score_context() as ctx:
        try:
            results = run_batch(jobs, out, opts, ctx=ctx, parallel=parallel)
        except (FormatError, WorkspaceError, ValueError) as exc:
            _err.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
    summary = batch_summary(results)
    if OPTIONS.json:  # and the table on stderr
        sys.stdout.write(json.dumps(summary) + "\n")
    table = Table("target", "agent", "status", "wall s", "score", "", show_edge=False)
    for row in summary["runs"]:
        table.add_row(
            escape(row["target"]),
            escape(row["agent"]),
            row["status"],
            f"{row['wall_time']:.1f}" if row["wall_time"] is not None else "-",
            escape(_score_line(str(task), row["score"])) if row["score"] else "-",
            "resumed" if row["resumed"] else "",
        )
    _out.print(table)
    _out.print(f"{summary['finished']}/{summary['total']} runs finished; summary in {out}")


@agent_app.command("trajectories")
def trajectories(
    runs: list[Path] = typer.Argument(..., help="Run directories (or batch directories)."),
) -> None:
    """Classify every action, detect executable / mutant creation, audit leaks."""
    dirs: list[Path] = []
    for r in runs:
        if (r / "agent.json").is_file():
            dirs.append(r)
        else:
            dirs += sorted(p.parent for p in r.glob("*/agent.json"))
    if not dirs:
        _err.print("[red]error:[/red] no run directory (with agent.json) given")
        raise typer.Exit(2)
    reports = [analyse_run(d) for d in dirs]
    if OPTIONS.json:  # and the table on stderr
        sys.stdout.write(json.dumps([r.to_dict() for r in reports]) + "\n")
    table = Table(
        "run",
        "actions",
        *CLASSES,
        "exec.",
        "mutants",
        "leaks",
        "content",
        "refused",
        "M",
        show_edge=False,
    )
    for rep in reports:
        table.add_row(
            escape(Path(rep.run).name),
            str(rep.actions),
            *(str(rep.classes[c]) for c in CLASSES),
            "yes" if rep.executable_attempt else "no",
            "yes" if rep.mutant_attempt else "no",
            str(len(rep.leaks)),
            str(len(rep.content_leaks)),
            str(rep.collect_refused_total),
            _pct(rep.mutation_score),
        )
    _out.print(table)
    total_leaks = sum(len(r.leaks) for r in reports)
    content = sum(len(r.content_leaks) for r in reports)
    refused = sum(r.collect_refused_total for r in reports)
    _out.print(
        f"{len(reports)} runs: {sum(r.executable_attempt for r in reports)} with executable "
        f"creation, {sum(r.mutant_attempt for r in reports)} with mutant creation, "
        f"{total_leaks} leaks ({sum(1 for r in reports if r.leaks)} runs), "
        f"{content} content leaks ({sum(1 for r in reports if r.content_leaks)} runs), "
        f"{refused} entries not collected"
    )
    for rep in reports:
        for leak in rep.leaks:
            _out.print(f"  leak in {escape(rep.run)}: {escape(leak['text'])}")
        for c in rep.content_leaks:
            _out.print(
                f"  content leak in {escape(rep.run)}: {escape(c['file'])} is "
                f"{escape(c['held_out'])}"
            )
        for entry in rep.collect_refused:
            _out.print(f"  not collected in {escape(rep.run)}: {_refused_text(entry)}")


def register(app: typer.Typer) -> None:
    app.add_typer(agent_app, name="agent")
