"""The records every run produces: limits in, an outcome out.

Statuses are explicit and never inferred from a single exit code (a judge that reads exit code
137 as "memory" misreports CPU-limit kills); every outcome records the isolation backend that
produced it so a figure can always be traced to how it was measured.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """How a sandboxed run ended."""

    OK = "ok"  # exited 0
    RUNTIME_ERROR = "runtime_error"  # exited non-zero
    SIGNALED = "signaled"  # killed by a signal that is not one of our limits
    TIMEOUT = "timeout"  # CPU or wall-clock limit
    MEMORY = "memory"  # memory limit (cgroup OOM kill, or allocation failure under RLIMIT_AS)
    OUTPUT_LIMIT = "output_limit"  # stdout/stderr/file size over its cap
    BUILD_ERROR = "build_error"  # the program did not build
    SANDBOX_ERROR = "sandbox_error"  # the harness failed, not the program


class Backend(StrEnum):
    """Isolation backends, best first."""

    BWRAP = "bwrap"
    UNSHARE = "unshare"
    PLAIN = "plain"


MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run.

    ``cpu_time`` defaults to ``wall_time``; ``extra_time`` is the judge's allowance added to both
    (the auditors paper judges at the time limit plus 0.5 s). ``memory_mb`` None means
    unlimited. Output caps apply to stdout and stderr each, while they are read.
    """

    wall_time: float = 10.0
    cpu_time: float | None = None
    memory_mb: int | None = 512
    output_bytes: int = 16 * MiB
    file_size_bytes: int = 64 * MiB
    processes: int = 64
    network: bool = False
    extra_time: float = 0.0
    stack_unlimited: bool = True

    @property
    def effective_wall(self) -> float:
        return self.wall_time + self.extra_time

    @property
    def effective_cpu(self) -> float:
        base = self.cpu_time if self.cpu_time is not None else self.wall_time
        return base + self.extra_time

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Limits:
        return cls(**d)

    def key(self) -> str:
        """A stable text form for job keys."""
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class Outcome:
    """What happened when a program ran (or failed to build)."""

    status: Status
    exit_code: int | None = None
    signal: int | None = None
    wall_time: float = 0.0
    cpu_time: float = 0.0
    peak_memory_kb: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    backend: Backend | str = Backend.PLAIN
    limits: Limits = field(default_factory=Limits)
    timeout_kind: str | None = None  # "cpu" or "wall" when status is TIMEOUT
    message: str = ""  # harness detail: why sandbox_error, which limit, compiler message

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def stdout_text(self) -> str:
        """For display only: figures compare bytes."""
        return self.stdout.decode("utf-8", errors="replace")

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    def to_dict(self, *, with_output: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "status": str(self.status),
            "exit_code": self.exit_code,
            "signal": self.signal,
            "wall_time": round(self.wall_time, 6),
            "cpu_time": round(self.cpu_time, 6),
            "peak_memory_kb": self.peak_memory_kb,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "backend": str(self.backend),
            "limits": self.limits.to_dict(),
            "timeout_kind": self.timeout_kind,
            "message": self.message,
        }
        if with_output:
            d["stdout_b64"] = base64.b64encode(self.stdout).decode()
            d["stderr_b64"] = base64.b64encode(self.stderr).decode()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Outcome:
        return cls(
            status=Status(d["status"]),
            exit_code=d.get("exit_code"),
            signal=d.get("signal"),
            wall_time=d.get("wall_time", 0.0),
            cpu_time=d.get("cpu_time", 0.0),
            peak_memory_kb=d.get("peak_memory_kb"),
            stdout=base64.b64decode(d.get("stdout_b64", "")),
            stderr=base64.b64decode(d.get("stderr_b64", "")),
            stdout_truncated=d.get("stdout_truncated", False),
            stderr_truncated=d.get("stderr_truncated", False),
            backend=d.get("backend", "plain"),
            limits=Limits.from_dict(d["limits"]) if "limits" in d else Limits(),
            timeout_kind=d.get("timeout_kind"),
            message=d.get("message", ""),
        )


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
