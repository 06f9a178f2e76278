"""Harness errors: the audit's own instruments broke, so its figures rest on nothing.

A checker that answers FAIL (testlib's exit 3), crashes or times out turns verdicts into
``FAIL`` or, worse, into wrong answers; a validator that rejects the problem's own tests
withdraws every flag at legality; a reference or brute-force solution that does not build
leaves inputs without gold; an official answer that the references' consensus does not pass
against means the references, the answer or the checker is wrong. None of that is a finding
about the submissions ("never confuse the harness broke with the test failed"), and none of it
may pass in silence: each broken
program becomes one :class:`HarnessError` (its role, its path, the stage that first met it,
its first message and how many times it failed), listed in ``results.json`` and on the
terminal, and the command exits non-zero unless asked to keep going.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum

from suitebench.run.outcome import Status
from suitebench.run.toolchain import Built, Language

__all__ = [
    "HarnessError",
    "HarnessLog",
    "Role",
    "build_message",
    "crashed",
    "first_message",
    "run_message",
]

_TRACEBACK = "Traceback (most recent call last):"


class Role(StrEnum):
    """What the broken program was for: the parts of the harness a user supplies."""

    CHECKER = "checker"
    VALIDATOR = "validator"
    REFERENCE = "reference"
    BRUTE = "brute"
    ANSWER = "answer"  # an official answer (X.ans beside X.in) the references' gold contradicts
    INTERACTOR = "interactor"


@dataclass(frozen=True)
class HarnessError:
    """One broken program of one problem: where it first broke, its first message, how often."""

    problem: str
    stage: str  # the chain stage that first met it (chain.STAGES: build, legality, ...)
    role: str
    program: str  # path relative to the problem
    message: str
    count: int  # failed builds and calls

    def to_dict(self) -> dict[str, object]:
        return {
            "problem": self.problem,
            "stage": self.stage,
            "role": self.role,
            "program": self.program,
            "message": self.message,
            "count": self.count,
        }


def first_message(text: str, limit: int = 200) -> str:
    """The line of a program's stderr that says what went wrong: its first non-empty line, or
    for a Python traceback the exception line at its end (the first line of a traceback names
    nothing)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if lines[0] == _TRACEBACK else lines[0]
    return line[:limit]


def build_message(text: str, limit: int = 200) -> str:
    """The line of a build log that says why it failed: the first that mentions an error (a
    compiler's first lines name the function it is in), else its first line."""
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:limit]
    return first_message(text, limit)


def crashed(built: Built, status: Status, stderr: str) -> bool:
    """Whether a run of a harness program crashed rather than answered: a signal, or (Python)
    an uncaught exception, whose exit status 1 would otherwise read as testlib's WA."""
    if status is Status.SIGNALED:
        return True
    return (
        status is Status.RUNTIME_ERROR
        and built.language is Language.PYTHON
        and _TRACEBACK in stderr
    )


def run_message(
    status: Status, exit_code: int | None, signal: int | None, wall: float, stderr: str
) -> str:
    """A failed run of a harness program, in one line: how it ended and its first message."""
    match status:
        case Status.TIMEOUT:
            how = f"timed out after {wall:.1f} s"
        case Status.SIGNALED:
            how = f"killed by signal {signal}"
        case Status.MEMORY:
            how = "ran out of memory"
        case Status.OUTPUT_LIMIT:
            how = "wrote past its output limit"
        case Status.RUNTIME_ERROR:
            how = f"exit {exit_code}" + (" (FAIL)" if exit_code == 3 else "")
        case _:
            how = str(status)
    msg = first_message(stderr)
    return f"{how}: {msg}" if msg else how


@dataclass
class _Entry:
    stage: str
    message: str
    count: int


@dataclass
class HarnessLog:
    """The harness errors of one problem, one entry per (role, program): the first stage and
    message it was met with, and every failure counted. Thread-safe (stages may record from
    worker callbacks)."""

    problem: str
    _entries: dict[tuple[str, str], _Entry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, stage: str, role: Role, program: str, message: str, count: int = 1) -> None:
        if count <= 0:
            return
        with self._lock:
            e = self._entries.get((str(role), program))
            if e is None:
                self._entries[(str(role), program)] = _Entry(stage, message, count)
            else:
                e.count += count

    def build_failed(self, stage: str, role: Role, program: str, built: Built) -> None:
        if not built.ok:
            self.record(stage, role, program, f"did not build: {build_message(built.message)}")

    def errors(self) -> list[HarnessError]:
        with self._lock:
            return [
                HarnessError(self.problem, e.stage, role, program, e.message, e.count)
                for (role, program), e in self._entries.items()
            ]
