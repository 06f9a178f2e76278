"""``suitebench agent run``: one agent, one task, one target, contained, collected and scored.

The pipeline of one run (every stage leaves its file in ``DIR``):

1. **workspace** -- ``DIR/workspace`` laid out for the task (:mod:`suitebench.agents.workspace`);
2. **agent** -- run contained (:mod:`suitebench.agents.contain`) until it ends or its time limit
   stops it; ``DIR/transcript.txt`` (stdout), ``DIR/transcript.stderr.txt``, the preset's
   trajectory file as ``DIR/trajectory.json``;
3. **collect** -- what the task asks for is copied out of the workspace as the agent left it,
   also after a crash or a stop at the limit (``DIR/tests/``, ``DIR/final/``,
   ``DIR/implementation/``), by :mod:`suitebench.agents.collect`, which follows no link: what
   it refuses is ``collect.refused`` in ``agent.json``;
4. **score** -- ``DIR/results.json`` and its companions (:mod:`suitebench.agents.scoring`);
5. **record** -- ``DIR/agent.json``: exit status, wall time, whether the limit stopped it, tokens
   and cost where the agent reports them, containment facts, the score's summary.

The workspace has a total disk quota (``RunOptions.disk_limit_mb``, :mod:`suitebench.agents.quota`):
an agent that fills it is stopped, ``disk_limit`` is true in its round's record, and what it left
is collected and scored as after a stop at the time limit; no further round runs.

``rounds`` > 0 (suite task): mutation-guided rounds. After scoring, the brief gains the spec
sections of the surviving mutants -- never the mutants -- and the agent runs again in the same
workspace; each round is scored and recorded (``DIR/rounds/N/``, ``agent.json`` ``rounds``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import suitebench
from suitebench.agents import briefs
from suitebench.agents.collect import Collection, collect_tree, merge, take_file
from suitebench.agents.contain import AgentLimits, ContainedRun, run_contained
from suitebench.agents.gateway import Endpoint, with_relayed_calls
from suitebench.agents.leaks import held_out_digests, held_out_line_hashes
from suitebench.agents.presets import (
    AgentCommand,
    PresetContext,
    custom_command,
    preset_command,
    resolve_program,
)
from suitebench.agents.quota import DEFAULT_MB, DISK_EXIT, WorkspaceQuota
from suitebench.agents.scoring import (
    ScoreContext,
    score_code_task,
    score_inputs_task,
    score_suite_task,
)
from suitebench.agents.trajectory import ACTIONS_FILE, read_usage
from suitebench.agents.workspace import (
    AGENT_DIR,
    Task,
    Workspace,
    WorkspaceError,
    check_apart,
    code_workspace,
    held_out_files,
    inputs_workspace,
    open_tree,
    suite_workspace,
    uses_workspaces,
)
from suitebench.model.instance import Instance, InstanceError, load_instance
from suitebench.model.problem import Problem, load_problem
from suitebench.model.programbench import is_programbench_task, load_programbench_task
from suitebench.suite.execute.programs import Builder


@dataclass
class AgentSpec:
    """Which agent: a preset name or a shell command, and the model it talks to."""

    preset: str | None = None
    command: str | None = None
    model: str | None = None
    endpoint: str | None = None
    api_key: str | None = None

    @property
    def label(self) -> str:
        return self.preset if self.preset else "agent-cmd"

    def build(self, brief: str, time_limit: float) -> AgentCommand:
        if (self.preset is None) == (self.command is None):
            raise WorkspaceError("give exactly one of a preset (--agent) or --agent-cmd")
        if self.command is not None:
            return custom_command(self.command)
        endpoint = Endpoint.parse(self.endpoint) if self.endpoint else None
        ctx = PresetContext(brief, self.model, endpoint, self.api_key, time_limit)
        assert self.preset is not None
        return resolve_program(preset_command(self.preset, ctx))


@dataclass
class RunOptions:
    time_limit: float
    memory_mb: int | None = 4096
    with_executable: bool = False
    wrongs: bool = True
    budget: int = 50
    rounds: int = 0
    allow_visible: bool = False
    extra_binds: list[Path] = field(default_factory=list)
    score: bool = True
    disk_limit_mb: int = DEFAULT_MB  # 0: no quota
    branch: str | None = None  # a ProgramBench task: only this test branch


def load_target(task: Task, target: Path, branch: str | None = None) -> Instance | Problem:
    """The problem, the instance, or the ProgramBench task (every branch not ignored, or
    ``branch``)."""
    if task is Task.INPUTS:
        return load_problem(target)
    if is_programbench_task(target):
        return load_programbench_task(target, branch)
    if branch is not None:
        raise InstanceError(target, "--branch", "is for a ProgramBench task, this is not one")
    return load_instance(target)


def _user_tree() -> list[Path]:
    return [Path.cwd()]


def _held_out(ws: Workspace, ctx: ScoreContext, out: Path) -> tuple[list[Path], list[Path]]:
    """Files to probe: the target's, the store's and the build cache's (always held out), and
    the user's tree minus the run's own output directory."""
    out = out.resolve()
    strict = held_out_files([*ws.held_out, ctx.store.path, ctx.cache_dir])
    user = [
        f
        for f in held_out_files(_user_tree(), links_out=False)
        if f != out and out not in f.parents
    ]
    return strict, [f for f in user if f not in set(strict)]


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _run_record(run: ContainedRun, command: AgentCommand, usage: dict[str, Any]) -> dict[str, Any]:
    oc = run.outcome
    return {
        "status": str(oc.status),
        "exit_code": oc.exit_code,
        "signal": oc.signal,
        "wall_time": run.wall_time,
        "stopped_by_limit": run.stopped_by_limit,
        "message": oc.message,
        "transcript_truncated": oc.stdout_truncated or oc.stderr_truncated,
        "transcript_format": command.transcript_format,
        **usage,
        "gateway": run.gateway,
        "containment": {**run.probe, "ro_binds": run.binds},
    }


def _collect_transcript(
    run: ContainedRun, command: AgentCommand, ws: Path, dest: Path
) -> list[Collection]:
    """The transcript, and the files the agent's own program left in the workspace (its
    actions log, the preset's trajectory), moved out without following a link."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "transcript.txt").write_bytes(run.outcome.stdout)
    (dest / "transcript.stderr.txt").write_bytes(run.outcome.stderr)
    taken = [take_file(ws, f"{AGENT_DIR}/{ACTIONS_FILE}", dest / ACTIONS_FILE)]
    if command.trajectory_file:
        taken.append(take_file(ws, command.trajectory_file, dest / "trajectory.json"))
    return taken


_IGNORED = frozenset({"__pycache__"})
_NOT_IMPLEMENTATION = frozenset({AGENT_DIR, "AGENTS.md", "CLAUDE.md", "__pycache__"})


def _collect(ws: Path, rel: str, dest: Path, ignore: frozenset[str] = _IGNORED) -> Collection:
    """``ws/rel`` copied afresh to ``dest`` (:func:`~suitebench.agents.collect.collect_tree`)."""
    if dest.exists():
        shutil.rmtree(dest)
    return collect_tree(ws, rel, dest, ignore=ignore)


def _prepare(
    task: Task,
    target: Instance | Problem,
    ws_root: Path,
    opts: RunOptions,
    ctx: ScoreContext,
) -> Workspace:
    if task is Task.INPUTS:
        assert isinstance(target, Problem)
        return inputs_workspace(
            target, ws_root, time_limit=opts.time_limit, budget=opts.budget, wrongs=opts.wrongs
        )
    assert isinstance(target, Instance)
    if task is Task.CODE:
        return code_workspace(target, ws_root, time_limit=opts.time_limit)
    reference_dir = None
    if opts.with_executable:
        built = Builder(target, ctx.cache_dir).reference()
        if not built.ok:
            raise RuntimeError(f"the reference of {target.name} does not build: {built.message}")
        reference_dir = Path(built.directory)
    return suite_workspace(
        target,
        ws_root,
        time_limit=opts.time_limit,
        with_executable=opts.with_executable,
        reference_dir=reference_dir,
    )


def _score(
    task: Task, target: Instance | Problem, ws: Workspace, out: Path, ctx: ScoreContext
) -> tuple[dict[str, Any], list[str], Collection]:
    """(summary, surviving sections, collection) of what the agent left in ``ws``: its output
    is collected into ``out`` first, and only the collected copy is scored."""
    if task is Task.SUITE:
        assert isinstance(target, Instance)
        if uses_workspaces(target):  # eval/ whole, scored as the workspace "agent"
            got = _collect(ws.root, "eval", out / "tests" / "agent" / "eval")
            _, summary = score_suite_task(target, out / "tests", out, ctx)
        else:
            got = _collect(ws.root, "tests", out / "tests")
            _, summary = score_suite_task(target, got.dest, out, ctx)
        return summary, list(summary["surviving_sections"]), got
    if task is Task.CODE:
        assert isinstance(target, Instance)
        got = _collect(ws.root, ".", out / "implementation", _NOT_IMPLEMENTATION)
        return score_code_task(target, got.dest, out, ctx), [], got
    assert isinstance(target, Problem)
    got = _collect(ws.root, "workspace/final", out / "final")
    return score_inputs_task(target, got.dest, out, ctx), [], got


def run_agent(
    task: Task | str,
    target_path: Path,
    agent: AgentSpec,
    out: Path,
    opts: RunOptions,
    ctx: ScoreContext,
) -> dict[str, Any]:
    """One contained agent run, collected and scored; returns what ``DIR/agent.json`` holds."""
    task = Task(task)
    target = load_target(task, target_path, opts.branch)
    agent.build("", opts.time_limit)  # an unknown preset or missing program fails before any work
    endpoint = Endpoint.parse(agent.endpoint) if agent.endpoint else None
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    check_apart(out, [target.root, ctx.store.path, ctx.cache_dir])
    quota = WorkspaceQuota(out / "workspace", opts.disk_limit_mb) if opts.disk_limit_mb else None
    with quota if quota is not None else contextlib.nullcontext():
        record = _run_rounds(task, target, target_path, agent, endpoint, out, opts, ctx, quota)
    if task is Task.SUITE and opts.rounds > 0:
        _finish_rounds(record, out)
    record["finished"] = _now()
    _write_json(out / "agent.json", record)
    os.chmod(out, 0o755)
    return record


def _run_rounds(
    task: Task,
    target: Instance | Problem,
    target_path: Path,
    agent: AgentSpec,
    endpoint: Endpoint | None,
    out: Path,
    opts: RunOptions,
    ctx: ScoreContext,
    quota: WorkspaceQuota | None,
) -> dict[str, Any]:
    """Lay out the workspace, then run, collect and score every round; the record so far."""
    ws = _prepare(task, target, out / "workspace", opts, ctx)
    held, user_tree = _held_out(ws, ctx, out)
    limits = AgentLimits(time_limit=opts.time_limit, memory_mb=opts.memory_mb)
    record: dict[str, Any] = {
        "task": str(task),
        "target": str(Path(target_path).resolve()),
        "target_id": target.id if isinstance(target, Problem) else target.name,
        "agent": agent.label,
        "agent_cmd": agent.command,
        "model": agent.model,
        "endpoint": agent.endpoint,
        "time_limit": opts.time_limit,
        "with_executable": opts.with_executable if task is Task.SUITE else None,
        "branch": opts.branch,
        "wrongs": opts.wrongs if task is Task.INPUTS else None,
        "started": _now(),
        "suitebench_version": suitebench.__version__,
        "held_out": [str(p) for p in [*ws.held_out, ctx.store.path, ctx.cache_dir]],
        "held_out_content": held_out_digests(ws.held_out, ws.root),
        "held_out_lines": held_out_line_hashes(ws.held_out, ws.root),
        "disk_quota": None
        if quota is None
        else {"limit_mb": quota.limit_mb, "mechanism": quota.mechanism},
        "rounds": [],
    }
    rounds = opts.rounds if task is Task.SUITE else 0
    for round_no in range(rounds + 1):
        command = agent.build(ws.brief, opts.time_limit)
        run = run_contained(
            command,
            ws.root,
            limits=limits,
            endpoint=endpoint,
            model=agent.model,
            held_out=held,
            user_tree=user_tree,
            extra_binds=opts.extra_binds,
            allow_visible=opts.allow_visible,
            disk=None if quota is None else quota.launcher_config(),
        )
        round_dir = out if rounds == 0 else out / "rounds" / str(round_no)
        taken = _collect_transcript(run, command, ws.root, round_dir)
        usage = with_relayed_calls(read_usage(command.transcript_format, round_dir), run.gateway)
        open_tree(ws.root)  # the harness (and the user) can read and clean what it wrote
        entry: dict[str, Any] = {"round": round_no, **_run_record(run, command, usage)}
        entry["disk_limit"] = quota is not None and (
            quota.full()
            or (run.outcome.exit_code == DISK_EXIT and b"MiB quota" in run.outcome.stderr)
        )
        entry["disk"] = None if quota is None else quota.record()
        survivors: list[str] = []
        if opts.score:
            summary, survivors, got = _score(task, target, ws, round_dir, ctx)
            entry["score"] = summary
            taken.append(got)
        entry["collect"] = merge(taken)
        record["rounds"].append(entry)
        record.update({k: v for k, v in entry.items() if k != "round"})
        _write_json(out / "agent.json", record)
        if round_no < rounds:
            if not survivors or entry["disk_limit"]:
                break
            s = entry["score"]
            feedback = briefs.round_brief(
                round_no + 1, survivors, tests=s["tests"], invalid=s["tests"] - s["valid"]
            )
            ws.write_brief(ws.brief + feedback)
    return record


def _finish_rounds(record: dict[str, Any], out: Path) -> None:
    """The last round's results become the run's (``DIR/results.json``, ``DIR/tests``); M of
    every round and the wall time of all of them are recorded."""
    rounds = record["rounds"]
    record["mutation_score_per_round"] = [
        (r.get("score") or {}).get("mutation_score") for r in rounds
    ]
    record["wall_time_total"] = round(sum(r["wall_time"] for r in rounds), 3)
    last = out / "rounds" / str(rounds[-1]["round"])
    for name in ("results.json", "kills.csv", "kills.npz", "mutation-report.json"):
        if (last / name).exists():
            shutil.copyfile(last / name, out / name)
    if (last / "tests").is_dir():
        shutil.rmtree(out / "tests", ignore_errors=True)
        shutil.copytree(last / "tests", out / "tests", symlinks=True)


def score_run(out: Path, ctx: ScoreContext) -> dict[str, Any]:
    """Score a run that was recorded without scoring (``RunOptions.score=False``): what
    ``agent batch`` does in the coordinator after the agents ran in parallel."""
    out = out.resolve()
    record: dict[str, Any] = json.loads((out / "agent.json").read_text(encoding="utf-8"))
    task = Task(record["task"])
    target = load_target(task, Path(record["target"]), record.get("branch"))
    ws = Workspace(out / "workspace", task, "")
    summary, _, got = _score(task, target, ws, out, ctx)
    last = record["rounds"][-1]
    collect = merge([got])
    before = last.get("collect") or {}
    for key in ("files", "bytes", "refused_total"):
        collect[key] += before.get(key, 0)
    collect["refused"] = [*before.get("refused", []), *collect["refused"]]
    record["score"] = last["score"] = summary
    record["collect"] = last["collect"] = collect
    _write_json(out / "agent.json", record)
    return record
