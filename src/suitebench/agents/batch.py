"""``suitebench agent batch``: many (agent, target) runs in parallel, resumable, summarised.

Agents run in parallel on the executor (they mostly wait on their model); scoring happens
afterwards in the coordinator, which alone writes the store, one run at a time (scoring itself
runs its programs on the executor). A run directory whose ``agent.json`` says it finished and
was scored is never repeated; one left half-done by a killed batch is cleared and run again
(an agent cannot resume mid-task). With ``rounds`` > 0 a run must be scored between rounds, so
runs go one after another.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from suitebench.agents.harness import AgentSpec, RunOptions, run_agent, score_run
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.workspace import Task
from suitebench.run.executor import LocalExecutor


@dataclass(frozen=True)
class BatchJob:
    task: Task
    target: Path
    agent_name: str
    agent: AgentSpec

    @property
    def run_name(self) -> str:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{self.target.resolve().name}--{self.agent_name}")
        return safe


def _finished(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "agent.json"
    if not path.is_file():
        return None
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if record.get("finished") and "score" in record:
        return record
    return None


def _safe_run(job: BatchJob, run_dir: Path, opts: RunOptions, ctx: ScoreContext) -> dict[str, Any]:
    try:
        return run_agent(job.task, job.target, job.agent, run_dir, opts, ctx)
    except Exception as exc:  # one run's failure is marked in its row, never fatal for the batch
        return {"error": f"{type(exc).__name__}: {exc}"}


def run_batch(
    batch: list[BatchJob],
    out: Path,
    opts: RunOptions,
    *,
    ctx: ScoreContext,
    parallel: int = 1,
) -> list[dict[str, Any]]:
    """Run every job not finished yet (``parallel`` agents at a time), then score them; returns
    one row per job (its ``agent.json``, or ``{"error": ...}``) and writes ``summary.json``."""
    out.mkdir(parents=True, exist_ok=True)
    names = [j.run_name for j in batch]
    if len(set(names)) != len(names):
        raise ValueError(f"two batch jobs would share a run directory: {names}")
    rows: dict[str, dict[str, Any]] = {}
    todo: list[BatchJob] = []
    for job in batch:
        run_dir = out / job.run_name
        done = _finished(run_dir)
        if done is not None:
            rows[job.run_name] = {**done, "resumed": True}
            continue
        if run_dir.exists():
            shutil.rmtree(run_dir)  # half-done by a killed batch: an agent cannot resume
        todo.append(job)
    if opts.rounds > 0:
        for job in todo:
            rows[job.run_name] = _safe_run(job, out / job.run_name, opts, ctx)
    else:
        unscored = replace(opts, score=False)
        with LocalExecutor(jobs=parallel) as pool:
            results = pool.map_unordered(
                lambda job: _safe_run(job, out / job.run_name, unscored, ctx), todo
            )
            for i, record in results:
                rows[todo[i].run_name] = record
        for job in todo:
            if "error" in rows[job.run_name]:
                continue
            try:
                rows[job.run_name] = score_run(out / job.run_name, ctx)
            except Exception as exc:  # marked, not fatal
                rows[job.run_name] = {**rows[job.run_name], "error": f"scoring: {exc}"}
    ordered = [{**rows[j.run_name], "run": j.run_name, "agent_name": j.agent_name} for j in batch]
    (out / "summary.json").write_text(
        json.dumps(batch_summary(ordered), indent=1) + "\n", encoding="utf-8"
    )
    return ordered


def batch_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One line per run: target, agent, status, wall time, score summary, resumed or not."""
    out = []
    for r in rows:
        out.append(
            {
                "run": r.get("run"),
                "target": r.get("target_id", r.get("run", "?")),
                "agent": r.get("agent_name", r.get("agent", "?")),
                "status": r.get("status", "error") if "error" not in r else "error",
                "error": r.get("error"),
                "wall_time": r.get("wall_time"),
                "stopped_by_limit": r.get("stopped_by_limit"),
                "score": r.get("score"),
                "resumed": bool(r.get("resumed")),
            }
        )
    finished = sum(1 for r in out if r["status"] != "error" and r["score"] is not None)
    return {"total": len(out), "finished": finished, "runs": out}
