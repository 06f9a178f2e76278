"""What this machine offers the sandbox: backends, what a program sees, cgroups, the runner,
compilers and interpreters (what ``suitebench doctor`` prints)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.run.cgroups import describe as describe_cgroups
from suitebench.run.layout import (
    SandboxUnavailable,
    available_backends,
    build_layout,
    choose_backend,
    detect_backend,
    drops_to_nobody,
    hides_files,
    interpreter,
    isolates_network,
    runner_env,
)
from suitebench.run.outcome import Backend
from suitebench.run.protocol import c_runner
from suitebench.run.syscalls import REFUSED, FilterUnavailable, program_filter


@dataclass(frozen=True)
class Tool:
    """A compiler or interpreter found on this machine (for ``suitebench doctor``)."""

    name: str
    path: str | None
    version: str


def _tool_version(path: str, args: Sequence[str]) -> str:
    try:
        res = subprocess.run(
            [path, *args], capture_output=True, timeout=20, env=runner_env(), check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (res.stdout or res.stderr).decode(errors="replace").strip()
    return text.splitlines()[0] if text else ""


def file_view(backend: Backend) -> str:
    """What a program sees of the file system under ``backend``, in one sentence."""
    if not hides_files(backend):
        return (
            "the whole file system, as the caller's user (nothing hidden: plain isolates "
            "nothing but limits)"
        )
    lay = build_layout(Path("/nonexistent-work-dir"), [], [])
    system = [str(p) for p in [*lay.system, *lay.symlinks] if p.parent == Path("/")]
    etc = [p.name for p in [*lay.etc, *lay.symlinks] if p.parent == Path("/etc")]
    return (
        f"read-only {' '.join(sorted(system))}, /etc/{{{','.join(sorted(etc))}}}, the "
        "interpreter, the program and ro_binds; a fresh /dev and /proc, a private /tmp; the "
        "work dir writable; nothing else"
    )


def describe_environment() -> dict[str, Any]:
    """What isolation, cgroups, compilers and interpreters exist here, and which are used."""
    backends = available_backends()
    chosen = detect_backend()
    try:
        choose_backend()
        refusal = ""
    except SandboxUnavailable as exc:  # plain is all there is, and nobody asked for it
        refusal = str(exc)
    tools: list[Tool] = []
    for name, args in (
        ("gcc", ["--version"]),
        ("g++", ["--version"]),
        ("rustc", ["--version"]),
        ("go", ["version"]),
    ):
        path = shutil.which(name)
        tools.append(Tool(name, path, _tool_version(path, args) if path else ""))
    interp = interpreter()
    tools.append(Tool("python", interp, _tool_version(interp, ["--version"])))
    cgroups = describe_cgroups()
    writable = {c.controller: c.writable for c in cgroups}
    binary = c_runner()
    try:
        program_filter()
        syscall_filter = f"on (seccomp, {len({r.name for r in REFUSED})} calls refused)"
    except FilterUnavailable as exc:
        syscall_filter = f"MISSING: {exc}"
    return {
        "backends": {
            str(b): {"available": r is None, "reason": r or ""} for b, r in backends.items()
        },
        "backend": str(chosen),
        "refusal": refusal,
        "network_isolation": isolates_network(chosen),
        "hides_files": hides_files(chosen),
        "file_view": file_view(chosen),
        "runs_as": "nobody (65534)" if drops_to_nobody(chosen) else f"uid {os.geteuid()}",
        "runner": f"C ({binary})" if binary else "Python (no C compiler)",
        "syscall_filter": syscall_filter,
        "ipc_per_run": hides_files(chosen),
        "memory_limit_by": "cgroup" if writable.get("memory") else "RLIMIT_AS",
        "process_limit_by": "pids cgroup" if writable.get("pids") else "RLIMIT_NPROC",
        "cgroups": [
            {
                "controller": c.controller,
                "version": str(c.version) if c.version else None,
                "parent": c.parent,
                "writable": c.writable,
                "reason": c.reason,
            }
            for c in cgroups
        ],
        "tools": [{"name": t.name, "path": t.path, "version": t.version} for t in tools],
    }
