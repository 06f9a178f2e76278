"""``suitebench doctor``: what isolation, cgroups, compilers and interpreters exist here.

A figure is only as good as the sandbox behind it, so before a long run a user checks which
backend will be used (and why a better one is not), whether memory and process limits come from
a cgroup (so ``memory`` is the kernel's word, not a guess) or only from rlimits, and which
toolchains the programs under test can be built with.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from suitebench.cli._console import HumanConsole
from suitebench.cli.main import OPTIONS
from suitebench.run import jvm
from suitebench.run.recipes import compiler, toolchain_version
from suitebench.run.sandbox import describe_environment
from suitebench.run.toolchain import Language

_out = HumanConsole(soft_wrap=True)  # the tables: stdout (stderr under --json)


def _mark(ok: bool) -> str:
    return "[green]yes[/green]" if ok else "[red]no[/red]"


def print_environment(env: dict[str, Any], console: Console = _out) -> None:
    backends = Table("backend", "available", "used", "note", title="isolation", show_edge=False)
    for name, info in env["backends"].items():
        used = "[bold]<- used[/bold]" if name == env["backend"] else ""
        backends.add_row(name, _mark(info["available"]), used, escape(info["reason"]))
    console.print(backends)
    console.print(
        f"network isolation: {_mark(env['network_isolation'])}   programs run as: {env['runs_as']}"
        f"   runner: {env['runner']}"
    )
    console.print(
        f"state between runs: syscall filter {escape(env['syscall_filter'])}   "
        f"IPC namespace per run: {_mark(env['ipc_per_run'])}"
    )
    if env.get("refusal"):
        console.print(f"[red]untrusted code is refused:[/red] {escape(env['refusal'])}")
    hidden = "[green]only its layout[/green]" if env["hides_files"] else "[red]everything[/red]"
    console.print(f"a program sees: {hidden}: {escape(env['file_view'])}")
    cgroups = Table(
        "controller", "version", "writable", "where", "note", title="cgroups", show_edge=False
    )
    for c in env["cgroups"]:
        cgroups.add_row(
            c["controller"],
            c["version"] or "-",
            _mark(c["writable"]),
            escape(c["parent"] or "-"),
            escape(c["reason"]),
        )
    console.print(cgroups)
    console.print(
        f"memory limit by: {env['memory_limit_by']}   process limit by: {env['process_limit_by']}"
    )
    tools = Table("tool", "found", "path", "version", title="toolchains", show_edge=False)
    for t in env["tools"]:
        tools.add_row(t["name"], _mark(t["path"] is not None), t["path"] or "-", t["version"])
    console.print(tools)


def judge_runtimes() -> list[dict[str, Any]]:
    """The Java and PyPy rows of the toolchains table: each tool's path and version, or what to
    install when it is missing (programs in that language then do not build)."""
    rows: list[dict[str, Any]] = []
    jdk = "missing: apt-get install openjdk-17-jdk-headless"
    for name in ("javac", "java"):
        path = jvm.java_tool(name)
        found = path is not None and Path(path).is_file()
        version = ""
        if found:
            version = toolchain_version(Language.JAVA).split("; ")[0 if name == "javac" else 1]
        rows.append({"name": name, "path": path if found else None, "version": version or jdk})
    pypy = compiler(Language.PYPY3)
    rows.append(
        {
            "name": "pypy3",
            "path": pypy,
            "version": toolchain_version(Language.PYPY3)
            if pypy
            else "missing: apt-get install pypy3",
        }
    )
    return rows


def doctor() -> None:
    """Say which sandbox backends, cgroup controllers, compilers and interpreters exist."""
    env = describe_environment()
    env["tools"] = [*env["tools"], *judge_runtimes()]
    if OPTIONS.json:
        sys.stdout.write(json.dumps(env) + "\n")
    print_environment(env)  # stderr under --json


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
