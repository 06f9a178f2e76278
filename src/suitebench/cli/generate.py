"""``suitebench generate``: one arm's inputs for one problem, topped up to a legal budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from suitebench.audit.runs import AuditEngine
from suitebench.cli._console import HumanConsole, error_console, name_failed_generator
from suitebench.cli._interrupt import run_interruptibly, store_note
from suitebench.cli._options import allow_unsandboxed_option, backend_option, sandbox_backend
from suitebench.cli._progress import progress_bar
from suitebench.cli.main import OPTIONS
from suitebench.generate.arms import (
    ARMS,
    MODEL_ARMS,
    GenerateOptions,
    GenerateResult,
    generate_arm,
)
from suitebench.generate.records import GenerateError
from suitebench.llm.client import DEFAULT_RETRIES, DEFAULT_TIMEOUT, ModelClient, ModelError
from suitebench.model.errors import FormatError
from suitebench.model.problem import Problem, load_problem
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Backend
from suitebench.run.store import Store, StoreError

_out = HumanConsole(soft_wrap=True)  # what was kept and spent: stdout (stderr under --json)
_err = error_console(soft_wrap=True)  # errors, retries, the progress bar


def _describe(log: dict[str, object]) -> str:
    dropped = log.get("dropped") or {}
    assert isinstance(dropped, dict)
    why = ", ".join(f"{k} {v}" for k, v in dropped.items()) or "none"
    cap = "  (attempt cap reached)" if log.get("attempt_cap_hit") else ""
    extra = log.get("beyond_budget") or 0
    # "legal" only where a validator said so: without one, kept inputs are merely inputs
    # the references agree on
    legality = log.get("legality") or {}
    assert isinstance(legality, dict)
    gate = legality.get("quality_gate") or {}
    checked = bool(legality.get("validator")) and gate.get("passed", True)
    kept = "legal inputs kept" if checked else "inputs kept (no validator: legality unchecked)"
    beyond = f"; {extra} {'legal ' if checked else ''}beyond the budget" if extra else ""
    return (
        f"{log['kept']}/{log['budget']} {kept}, {log['tried']} tried; dropped: {why}{beyond}{cap}"
    )


def _usage(usage: object) -> str:
    if not isinstance(usage, dict):
        return ""
    cost = (
        "unknown (model not in the price table)"
        if usage.get("cost_usd") is None
        else (f"${usage['cost_usd']:.4f} (spent now ${usage['spent_usd']:.4f})")
    )
    return (
        f"model {usage['model']}: {usage['calls']} call(s), {usage['cached_calls']} from the "
        f"store, {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion "
        f"tokens, cost {cost}"
    )


def generate(
    arm: str = typer.Argument(..., help=f"One of: {', '.join(ARMS)}."),
    problem: Path = typer.Argument(..., help="Problem directory (or problem.toml)."),
    budget: int = typer.Option(..., "--budget", min=1, help="Legal inputs to produce."),
    out: Path = typer.Option(..., "--out", help="Directory for NNN.in files + generate.json."),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seed gives the same bytes."),
    max_attempts: int | None = typer.Option(
        None, "--max-attempts", min=1, help="Candidates tried at most (default 10 x budget)."
    ),
    mix: str = typer.Option(
        "", "--mix", help="mixture: comma-separated arms, interleaved by position (may repeat)."
    ),
    reps: int = typer.Option(1, "--reps", min=1, help="Independent repetitions (out/rep-K)."),
    model: str | None = typer.Option(
        None, "--model", help="Model arms: the model name (default $SUITEBENCH_MODEL)."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)."
    ),
    api_key: str | None = typer.Option(
        None, "--api-key", help="API key (default $OPENAI_API_KEY)."
    ),
    prices: Path | None = typer.Option(
        None, "--prices", help="A price TOML file read on top of the bundled table."
    ),
    temperature: float = typer.Option(1.0, "--temperature", help="Model arms: sampling."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Model arms: reply cap."),
    max_calls: int = typer.Option(
        3, "--max-calls", min=1, help="llm-single: calls per repetition incl. top-up (1 = paper)."
    ),
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT, "--timeout", min=0.001, help="Seconds to wait for one model reply."
    ),
    retries: int = typer.Option(
        DEFAULT_RETRIES, "--retries", min=0, help="Retries of a failed model call (printed)."
    ),
    build_cache: Path | None = typer.Option(
        None, "--build-cache", help="Build cache directory (default: next to the store)."
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Generate an arm's inputs: numbered files in emission order plus generate.json."""
    chosen = sandbox_backend(backend, allow_unsandboxed)
    mix_arms = tuple(a.strip() for a in mix.split(",") if a.strip())
    needs_model = arm in MODEL_ARMS or any(a in MODEL_ARMS for a in mix_arms)
    try:
        prob = load_problem(problem)
        store = Store(OPTIONS.store)
        client = None
        if needs_model:
            client = _model_client(model, base_url, api_key, store, prices, timeout, retries)
    except (FormatError, StoreError, ModelError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    options = GenerateOptions(
        budget=budget,
        seed=seed,
        max_attempts=max_attempts,
        mix=mix_arms,
        reps=reps,
        temperature=temperature,
        max_tokens=max_tokens,
        max_calls=max_calls,
    )
    result = _run_arm(arm, prob, store, client, out, options, build_cache, chosen)
    failed = _print_result(arm, prob.id, out, result)
    if OPTIONS.json:
        json.dump(result.log, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if failed:
        raise typer.Exit(1)


def _run_arm(
    arm: str,
    prob: Problem,
    store: Store,
    client: ModelClient | None,
    out: Path,
    options: GenerateOptions,
    build_cache: Path | None,
    chosen: Backend,
) -> GenerateResult:
    """Run the arm on the executor, with a progress bar; its failure is exit 1, and the
    executor and the store are closed in any case."""
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    quiet = OPTIONS.quiet  # progress is on stderr, with --json too

    def work() -> GenerateResult:
        with progress_bar(f"{arm} on {prob.id} (runs)", console=_err, quiet=quiet) as progress:
            cache = build_cache or OPTIONS.store.parent / "builds"
            engine = AuditEngine(store, executor, cache, backend=chosen, progress=progress)
            return generate_arm(arm, prob, engine, out, options, client=client)

    def stored() -> str:
        return store_note(store.written, store.found, "results")

    try:
        result = run_interruptibly(work, _err, stored)
        _err.print(stored(), markup=False, highlight=False)
        return result
    except (GenerateError, ModelError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    finally:
        executor.close()
        store.close()


def _model_client(
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    store: Store,
    prices: Path | None,
    timeout: float,
    retries: int,
) -> ModelClient:
    """The model arms' client, reading the store first and printing each retry."""
    return ModelClient.from_env(
        model,
        base_url=base_url,
        api_key=api_key,
        store=store,
        prices=prices,
        timeout=timeout,
        max_retries=retries,
        on_retry=lambda line: _err.print(f"  {line}", markup=False, highlight=False),
    )


def _print_result(arm: str, problem_id: str, out: Path, result: GenerateResult) -> bool:
    """Each repetition's counts, usage, notes and model errors; True when a model call
    failed (the inputs kept before it are written)."""
    logs = [r.log for r in result.reps] if result.reps else [result.log]
    failed = False
    for n, log in enumerate(logs, 1):
        head = f"rep {n}: " if result.reps else ""
        _out.print(f"{head}{arm} on {problem_id}: {_describe(log)}", markup=False, highlight=False)
        if log.get("usage"):
            _out.print("  " + _usage(log["usage"]), markup=False, highlight=False)
        for note in log.get("notes") or []:
            _out.print(f"  {note}", markup=False, highlight=False)
        _name_failed_generators(f"{head}{arm} on {problem_id}", log)
        for error in log.get("model_errors") or []:
            failed = True
            _err.print(f"  [red]model error:[/red] {escape(error)}", highlight=False)
    _out.print(f"inputs and generate.json in {out}", markup=False, highlight=False)
    if failed:
        _err.print(
            "the inputs kept before the failure are written; the same command again resumes "
            "(earlier replies come from the store)",
            markup=False,
            highlight=False,
        )
    return failed


def _name_failed_generators(what: str, log: dict[str, Any]) -> None:
    """Every generator run that gave no input (``generator_failed``), named on stderr with its
    seed and reason (``generate.json`` keeps the first 200 of them)."""
    total = int((log.get("dropped") or {}).get("generator_failed", 0))
    drops = [d for d in log.get("drops") or [] if d.get("reason") == "generator_failed"]
    lines = [f"{d['origin']}: {d['detail']}" for d in drops]
    programs = [c["generator"] for c in log.get("components") or [] if c.get("generator")]
    label = f"{what} ({', '.join(map(str, programs))})" if programs else what
    name_failed_generator(label, lines, total, _err)


def register(app: typer.Typer) -> None:
    app.command("generate")(generate)
