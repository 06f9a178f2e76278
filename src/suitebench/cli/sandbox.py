"""``suitebench sandbox [limits] -- CMD ...``: run one command sandboxed and print its Outcome.

The same path every submission, mutant and generated test takes, so a user can see exactly what
a judge would see for one program: status, exit code or signal, times, peak memory, output, and
the backend that isolated it. The human table goes to stdout (errors to stderr); with the
global ``--json`` the outcome is one JSON object on stdout instead (``stdout_b64``/``stderr_b64``
exact, ``stdout_text``/``stderr_text`` decoded with replacement characters for reading).

A command is found on the caller's ``PATH`` and runs inside as it runs outside: a version
manager's shim (pyenv's ``python3``) runs the interpreter it would pick here, and a relative
program path (``./a.out``) is the caller's file, whatever ``--cwd`` says.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli.main import OPTIONS
from suitebench.run import sandbox as sandbox_mod
from suitebench.run.outcome import Backend, Limits, Outcome, Status

_out = HumanConsole(soft_wrap=True)  # the outcome table: stdout
_err = error_console(soft_wrap=True)
_SHOW = 4000  # characters of each stream shown in the human table


def outcome_json(outcome: Outcome) -> dict[str, object]:
    """The outcome as JSON: exact bytes in base64, plus text for reading."""
    d = outcome.to_dict()
    d["stdout_text"] = outcome.stdout_text()
    d["stderr_text"] = outcome.stderr_text()
    return d


def _stream(data: bytes, truncated: bool) -> str:
    text = data.decode("utf-8", errors="replace")
    shown = text[:_SHOW] + (f"\n... ({len(data)} bytes in all)" if len(text) > _SHOW else "")
    return escape(shown) + (
        "\n[yellow](truncated at the output limit)[/yellow]" if truncated else ""
    )


def print_outcome(outcome: Outcome, console: Console = _out) -> None:
    style = "green" if outcome.status is Status.OK else "red"
    table = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    status = f"[{style}]{outcome.status}[/{style}]"
    if outcome.timeout_kind:
        status += f" ({outcome.timeout_kind})"
    table.add_row("status", status)
    table.add_row("exit code", "-" if outcome.exit_code is None else str(outcome.exit_code))
    table.add_row("signal", "-" if outcome.signal is None else str(outcome.signal))
    table.add_row("wall time", f"{outcome.wall_time:.3f} s")
    table.add_row("cpu time", f"{outcome.cpu_time:.3f} s")
    peak = "-" if outcome.peak_memory_kb is None else f"{outcome.peak_memory_kb / 1024:.1f} MiB"
    table.add_row("peak memory", peak)
    table.add_row("backend", str(outcome.backend))
    lim = outcome.limits
    mem = "unlimited" if lim.memory_mb is None else f"{lim.memory_mb} MiB"
    table.add_row(
        "limits",
        f"wall {lim.effective_wall:g} s, cpu {lim.effective_cpu:g} s, memory {mem}, "
        f"output {lim.output_bytes} B, processes {lim.processes}, "
        f"network {'on' if lim.network else 'off'}",
    )
    if outcome.message:
        table.add_row("message", escape(outcome.message))
    table.add_row("stdout", _stream(outcome.stdout, outcome.stdout_truncated))
    table.add_row("stderr", _stream(outcome.stderr, outcome.stderr_truncated))
    console.print(table)


def sandbox(
    command: list[str] = typer.Argument(..., help="The command to run, after --."),
    time_limit: float = typer.Option(10.0, "--time", min=0.001, help="Wall-clock limit (s)."),
    cpu: float | None = typer.Option(None, "--cpu", min=0.001, help="CPU limit (s; = --time)."),
    memory: int = typer.Option(512, "--memory", min=0, help="Memory limit (MiB; 0 = none)."),
    output: int = typer.Option(
        16 * 1024, "--output", min=1, help="Cap on stdout and on stderr, each (KiB)."
    ),
    processes: int = typer.Option(64, "--processes", min=1, help="Processes at once."),
    network: bool = typer.Option(False, "--network", help="Keep the network (off by default)."),
    backend: Backend | None = typer.Option(
        None, "--backend", help="bwrap, unshare or plain (default: the best available)."
    ),
    require_isolation: bool = typer.Option(
        False, "--require-isolation", help="Refuse to run without network isolation."
    ),
    cwd: Path | None = typer.Option(
        None, "--cwd", help="Work dir, the only writable one (default: a fresh temporary dir)."
    ),
    stdin: Path | None = typer.Option(
        None, "--stdin", help="File to feed on stdin ('-' = this command's stdin)."
    ),
    ro_bind: list[Path] = typer.Option(
        [], "--ro-bind", help="Extra path visible read-only (repeatable)."
    ),
) -> None:
    """Run CMD in the sandbox and print the outcome (exit status 0 whatever CMD did)."""
    limits = Limits(
        wall_time=time_limit,
        cpu_time=cpu,
        memory_mb=memory or None,
        output_bytes=output * 1024,
        processes=processes,
        network=network,
    )
    if stdin is None:
        data = b""
    elif str(stdin) == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = stdin.read_bytes()
        except OSError as exc:
            _err.print(f"[red]cannot read --stdin {stdin}: {exc.strerror}[/red]")
            raise typer.Exit(2) from exc
    if cwd is not None and not cwd.is_dir():
        _err.print(f"[red]--cwd {cwd}: not a directory[/red]")
        raise typer.Exit(2)
    program = command[0]
    if "/" in program and not os.path.isabs(program):
        # ./a.out is the caller's, not the (temporary) work dir's.
        command = [os.path.abspath(program), *command[1:]]
    with tempfile.TemporaryDirectory(prefix="suitebench-sandbox-") as tmp:
        outcome = sandbox_mod.run(
            command,
            cwd=cwd if cwd is not None else tmp,
            stdin=data,
            limits=limits,
            backend=backend,
            ro_binds=ro_bind,
            require_isolation=require_isolation,
        )
    if OPTIONS.json:
        sys.stdout.write(json.dumps(outcome_json(outcome)) + "\n")
    print_outcome(outcome)  # stderr under --json


def register(app: typer.Typer) -> None:
    app.command(
        "sandbox",
        context_settings={"allow_interspersed_args": False},
    )(sandbox)
