"""Run one untrusted command under limits and return an Outcome.

PLACEHOLDER (being replaced by the full implementation): plain rlimits via subprocess.
The public API below is the contract: run(), run_batch(), detect_backend().
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from suitebench.run.outcome import Backend, Limits, Outcome, Status


def detect_backend() -> Backend:
    return Backend.PLAIN


def run(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    ro_binds: Sequence[str | Path] = (),
    require_isolation: bool = False,
) -> Outcome:
    def pre() -> None:
        os.setsid()
        cpu = max(1, int(limits.effective_cpu + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if limits.memory_mb:
            b = limits.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        if limits.stack_unlimited:
            resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY,) * 2)

    t0 = time.monotonic()
    p = subprocess.Popen(
        list(argv), cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=dict(env) if env is not None else None, preexec_fn=pre,
    )
    try:
        out, err = p.communicate(stdin, timeout=limits.effective_wall)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return Outcome(Status.TIMEOUT, wall_time=time.monotonic() - t0, stdout=out, stderr=err,
                       limits=limits, timeout_kind="wall")
    wall = time.monotonic() - t0
    rc = p.returncode
    if rc == 0:
        st = Status.OK
    elif rc < 0:
        st = Status.TIMEOUT if -rc in (signal.SIGXCPU, signal.SIGKILL) else Status.SIGNALED
    else:
        st = Status.RUNTIME_ERROR
    return Outcome(st, exit_code=rc if rc >= 0 else None, signal=-rc if rc < 0 else None,
                   wall_time=wall, stdout=out, stderr=err, limits=limits)


def run_batch(
    argv: Sequence[str],
    stdins: Sequence[bytes],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    ro_binds: Sequence[str | Path] = (),
) -> list[Outcome]:
    return [run(argv, cwd=cwd, stdin=s, env=env, limits=limits, backend=backend,
                ro_binds=ro_binds) for s in stdins]
