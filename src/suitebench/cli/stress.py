"""``suitebench stress``: a solution against the references (or brute force) on a generator's
inputs until they differ; the first counter-example is printed (``audit/stress.py``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer

from suitebench.audit.runs import AuditEngine
from suitebench.audit.stress import StressError, StressOptions, StressResult, stress
from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli._interrupt import run_interruptibly, store_note
from suitebench.cli._options import allow_unsandboxed_option, backend_option, sandbox_backend
from suitebench.cli.main import OPTIONS
from suitebench.model.errors import FormatError
from suitebench.model.problem import load_problem
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Backend
from suitebench.run.store import Store, StoreError

_out = HumanConsole(soft_wrap=True)
_err = error_console(soft_wrap=True)

SHOW = 2000  # bytes of the input, expected and got shown on the console


def _show(label: str, data: bytes) -> None:
    text = data[:SHOW].decode("utf-8", errors="replace")
    more = f" ... ({len(data)} bytes in all)" if len(data) > SHOW else ""
    _out.print(f"{label}:", markup=False, highlight=False)
    for line in (text.rstrip("\n") or "(empty)").split("\n"):
        _out.print(f"  {line}", markup=False, highlight=False)
    if more:
        _out.print(f" {more}", markup=False, highlight=False)


def _report(r: StressResult, out: Path | None) -> None:
    against = ", ".join(r.against)
    _out.print(
        f"{r.solution} against {against} on {r.generator}: {r.tried} inputs judged "
        f"({r.seeds} seeds, {r.illegal} illegal, {r.duplicates} duplicates) in {r.seconds:.1f} s",
        markup=False,
        highlight=False,
    )
    if r.unchecked:
        _out.print("  no validator: the inputs' legality was not checked", markup=False)
    ce = r.counterexample
    if ce is None:
        why = {"count": "the seed count", "time": "the time budget"}.get(r.stopped, r.stopped)
        _out.print(f"no difference found (stopped at {why})", markup=False, highlight=False)
        return
    _out.print(
        f"counter-example on seed {ce.seed}: {ce.verdict}"
        + (f" ({ce.message})" if ce.message else ""),
        markup=False,
        highlight=False,
    )
    _show("input", ce.input)
    _show("expected", ce.expected)
    _show("got", ce.got)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in (("input", ce.input), ("expected", ce.expected), ("got", ce.got)):
            (out / f"counterexample.{name}").write_bytes(data)
        _out.print(f"written to {out}/counterexample.{{input,expected,got}}", markup=False)


def stress_command(
    problem: Path = typer.Argument(..., help="Problem directory (or problem.toml)."),
    solution: Path = typer.Argument(..., help="The solution to stress (a source file)."),
    against: str = typer.Option(
        "references", "--against", help="'references' (all must agree) or 'brute'."
    ),
    generator: Path | None = typer.Option(
        None, "--generator", help="Generator program (default: the problem's generator)."
    ),
    args: str = typer.Option(
        "", "--args", help="Generator arguments before the seed, e.g. '--n 10' (shell words)."
    ),
    count: int = typer.Option(1000, "--count", min=1, help="Seeds (generated inputs) at most."),
    seconds: float = typer.Option(60.0, "--time", min=0.0, help="Seconds at most."),
    seed: int = typer.Option(1, "--seed", help="The first seed; seeds count up from it."),
    out: Path | None = typer.Option(
        None, "--out", help="Directory for counterexample.{input,expected,got}."
    ),
    build_cache: Path | None = typer.Option(
        None, "--build-cache", help="Build cache directory (default: next to the store)."
    ),
    backend: Backend | None = backend_option(),
    allow_unsandboxed: bool = allow_unsandboxed_option(),
) -> None:
    """Stress a solution on generated inputs until it differs from the references.

    The generator is called testlib's way: its arguments (--args), then the seed as the last
    argument (the seed is its stdin too). Each input must pass the validator; every reference
    (or brute force) must agree on it. Exit status: 0 no difference within --count seeds / --time;
    1 a counter-example (printed; the solution's verdict is not AC), or the solution does not
    build; 2 bad usage or input; 4 a harness error (a generator that fails or ignores its seed,
    a broken validator, references that disagree, a checker or interactor that fails).
    """
    if against not in ("references", "brute"):
        _err.print(f"[red]error:[/red] --against: 'references' or 'brute', got {against!r}")
        raise typer.Exit(2)
    chosen = sandbox_backend(backend, allow_unsandboxed)
    try:
        prob = load_problem(problem)
        gen_args = tuple(shlex.split(args))
        store = Store(OPTIONS.store)
    except (FormatError, StoreError, ValueError) as exc:
        _err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    if not solution.exists():
        _err.print(f"[red]error:[/red] solution {solution} does not exist", highlight=False)
        raise typer.Exit(2)
    options = StressOptions(
        count=count, seconds=seconds, seed=seed, against=against, generator_args=gen_args
    )
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    try:
        cache = build_cache or OPTIONS.store.parent / "builds"
        engine = AuditEngine(store, executor, cache, backend=chosen)
        result = run_interruptibly(
            lambda: stress(
                prob,
                solution.resolve(),
                engine,
                options,
                generator=generator.resolve() if generator else None,
            ),
            _err,
            lambda: store_note(engine.executed_runs, engine.cached_runs),
        )
        _err.print(store_note(engine.executed_runs, engine.cached_runs), markup=False)
    except StressError as exc:
        _err.print(f"[red]harness error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(4) from None
    finally:
        executor.close()
        store.close()
    if OPTIONS.json:
        json.dump(_as_json(result), sys.stdout, indent=1)
        sys.stdout.write("\n")
    if result.build_error:
        _err.print(f"solution {result.solution} does not build: {result.build_error}", markup=False)
        raise typer.Exit(1)
    _report(result, out)
    if result.counterexample is not None:
        raise typer.Exit(1)


def _as_json(r: StressResult) -> dict[str, object]:
    ce = r.counterexample
    return {
        "solution": r.solution,
        "against": r.against,
        "generator": r.generator,
        "tried": r.tried,
        "seeds": r.seeds,
        "illegal": r.illegal,
        "duplicates": r.duplicates,
        "validated": not r.unchecked,
        "stopped": r.stopped,
        "seconds": round(r.seconds, 3),
        "build_error": r.build_error,
        "counterexample": None
        if ce is None
        else {
            "seed": ce.seed,
            "verdict": ce.verdict,
            "message": ce.message,
            "input": ce.input.decode("utf-8", errors="replace"),
            "expected": ce.expected.decode("utf-8", errors="replace"),
            "got": ce.got.decode("utf-8", errors="replace"),
        },
    }


def register(app: typer.Typer) -> None:
    app.command("stress")(stress_command)
