"""Interactive runs: a submission and an interactor talk over pipes, each in its own sandbox.

An interactive problem's verdict comes from a second program, the *interactor*, that reads the
test's input from a file and converses with the submission: what the interactor prints is the
submission's stdin, what the submission prints is the interactor's stdin. Two conventions:

``testlib`` (Polygon, Codeforces; ``registerInteraction``)
    ``interactor input output answer``: the interactor reads the test from ``input``, may write
    a result to ``output`` (which the problem's checker then compares with the gold, as Polygon
    does), and exits 0 OK, 1 WA, 2 PE, 3 FAIL (the interactor or the test is broken).
``kattis`` (the Kattis / ICPC problem package format's interactive output validator)
    ``validator input answer feedback_dir``: exits 42 to accept and 43 to reject; anything else
    is a broken validator. There is no ``output`` file: the run's output is empty.

Both programs run sandboxed, each in a sandbox of its own (:func:`suitebench.run.sandbox.run`):
its own work dir, limits, cgroups, namespaces (no network), seccomp filter, uid -- so neither
can touch the other's files or processes. The two are joined by two named pipes in a directory
both see read-only (opening a FIFO for writing does not write to its file system); each program
is started by ``/bin/sh -c 'exec ... <fifo >fifo'``, so after the ``exec`` the process the
runner limits and times is the program itself. The submission opens its stdin first and the
interactor its stdout first, so neither blocks the other while opening. The interactor runs
with SIGPIPE ignored, as the Kattis problem package format's judges run an interactive
validator: writing to a submission that has gone fails with EPIPE instead of killing it, and it
goes on to read end-of-file and give its verdict (a C++ validator writing with ``cout`` would
otherwise die with no word, a harness error, where the submission is the one that hung up).
When one side ends
(a sandbox that never started included), the coordinator opens and closes both pipes, so a side
still waiting to open them sees end-of-file instead of waiting for its wall-clock limit.

The answer file handed to the interactor is empty: input mode's gold comes from the references
(their interactor ``output`` files), not from a file shipped with the test.

The verdict (:class:`InteractorVerdict`; the judge combines, ``audit/judge.py``): the
submission's own limit verdicts (time, memory, output) come first -- a submission that stalls
makes the interactor wait, not the other way; then the interactor's word: WA or PE, or FAIL (exit
3, an unknown exit status), a harness error; then, where the interactor gave no word
(``crashed``: killed by a signal, its own time-out, a Python traceback, whose exit 1 is not
testlib's WA), the submission's own
runtime error if it had one (it left first), else a harness error; then the submission's
runtime error (after a WA, the submission dying of SIGPIPE is the interactor hanging up on it).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from suitebench.run import jvm
from suitebench.run.layout import DEFAULT_PATH, program_paths
from suitebench.run.outcome import Backend, Limits, Outcome, Status
from suitebench.run.sandbox import run as sandbox_run

__all__ = [
    "CONVENTIONS",
    "Convention",
    "Interaction",
    "InteractorVerdict",
    "interact",
    "interactor_limits",
]


class Convention(StrEnum):
    """How the interactor is called and what its exit status means (module docstring)."""

    TESTLIB = "testlib"
    KATTIS = "kattis"


CONVENTIONS = tuple(str(c) for c in Convention)


class InteractorVerdict(StrEnum):
    """The interactor's word on one run: ``fail`` it said the test or itself is broken (exit
    3, an unknown status); ``crashed`` it gave no word (a signal -- SIGPIPE from a submission
    that was gone --, its own time-out, a Python traceback)."""

    OK = "ok"
    WA = "wa"
    PE = "pe"
    FAIL = "fail"
    CRASHED = "crashed"


_TESTLIB_EXIT = {
    0: InteractorVerdict.OK,
    1: InteractorVerdict.WA,
    2: InteractorVerdict.PE,
    3: InteractorVerdict.FAIL,
}
_KATTIS_EXIT = {42: InteractorVerdict.OK, 43: InteractorVerdict.WA}

_TO_SUB = "to_submission"
_FROM_SUB = "from_submission"
_TRACEBACK = "Traceback (most recent call last):"
_KEEP_OUTPUT = 16 << 20  # bytes of the interactor's output file read back, at most


@dataclass(frozen=True)
class Interaction:
    """One interactive run: both outcomes, the interactor's verdict and its output file."""

    submission: Outcome
    interactor: Outcome
    verdict: InteractorVerdict
    output: bytes  # the interactor's ``output`` file (testlib), empty under kattis
    message: str  # why the interactor decided as it did (its stderr or feedback), short
    # The interactor ended before the submission did: its word came first (a WA it gave while
    # the submission was still running stands over that submission's time limit, as the
    # package format's judges rule).
    interactor_first: bool = False


def interactor_limits(limits: Limits) -> Limits:
    """The interactor's limits: the submission's, with room to outlive it (it must answer
    after the submission's last word) and no less than a checker gets."""
    return Limits(
        wall_time=limits.effective_wall + 5.0,
        cpu_time=max(10.0, limits.effective_cpu + 5.0),
        memory_mb=max(1024, limits.memory_mb or 1024),
        output_bytes=limits.output_bytes,
        file_size_bytes=limits.file_size_bytes,
        processes=limits.processes,
    )


def _wrapped(
    argv: Sequence[str], memory_mb: int | None, redirect: str, *, no_sigpipe: bool = False
) -> list[str]:
    """``argv`` started by ``/bin/sh`` with ``redirect``; the shell ``exec``\\ s the program
    (``no_sigpipe``: with SIGPIPE ignored, a disposition the ``exec`` keeps)."""
    argv = list(argv)
    if jvm.is_jvm_run(argv):  # the session sees /bin/sh, not java: give the heap here
        argv = jvm.with_heap(argv, memory_mb)
    trap = "trap '' PIPE; " if no_sigpipe else ""
    return ["/bin/sh", "-c", f'{trap}exec "$@" {redirect}', "sh", *argv]


def _binds(argv: Sequence[str], cwd: Path, extra: Sequence[str | Path]) -> list[str | Path]:
    """What the wrapped program needs to see: its executable's installation and absolute
    paths on its command line (the session sees only ``/bin/sh`` as the program)."""
    env = {"PATH": os.environ.get("PATH", DEFAULT_PATH)}
    return [*extra, *program_paths(list(argv), env, cwd)]


def _unblock(pipes: Path) -> None:
    """Open and close both pipes, so a side still opening one returns (and then sees EOF)."""
    for name in (_TO_SUB, _FROM_SUB):
        with contextlib.suppress(OSError):
            os.close(os.open(pipes / name, os.O_RDWR | os.O_NONBLOCK))


def _verdict(convention: Convention, inter: Outcome) -> InteractorVerdict:
    if inter.status in (Status.OK, Status.RUNTIME_ERROR) and inter.exit_code is not None:
        if _TRACEBACK in inter.stderr_text():  # a Python interactor that crashed: exit 1 is
            return InteractorVerdict.CRASHED  # its interpreter's, not testlib's WA
        table = _TESTLIB_EXIT if convention is Convention.TESTLIB else _KATTIS_EXIT
        return table.get(inter.exit_code, InteractorVerdict.FAIL)
    return InteractorVerdict.CRASHED


def _message(convention: Convention, inter: Outcome, work: Path) -> str:
    text = inter.stderr_text().strip()
    if convention is Convention.KATTIS:
        with contextlib.suppress(OSError):
            text = (work / "feedback" / "judgemessage.txt").read_text(errors="replace").strip()
    if inter.status not in (Status.OK, Status.RUNTIME_ERROR):
        text = f"interactor {inter.status}: {inter.message} {text}".strip()
    elif inter.exit_code is not None:
        text = f"interactor exit {inter.exit_code}: {text}".strip()
    return text[:300]


def interact(
    submission: Sequence[str],
    interactor: Sequence[str],
    stdin: bytes,
    *,
    convention: Convention = Convention.TESTLIB,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    submission_binds: Sequence[str | Path] = (),
    interactor_binds: Sequence[str | Path] = (),
    scratch: str | Path | None = None,
) -> Interaction:
    """Run ``submission`` against ``interactor`` on the test ``stdin`` (the interactor's
    ``input`` file), each sandboxed, joined by pipes; the interactor gets
    :func:`interactor_limits`. ``scratch`` is where the work dirs and pipes go (a new
    temporary directory by default)."""
    with contextlib.ExitStack() as stack:
        if scratch is None:
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="suitebench-ia-"))
        root = Path(tempfile.mkdtemp(prefix="ia-", dir=scratch))
        os.chmod(root, 0o755)
        pipes, sub_work, int_work = root / "pipes", root / "submission", root / "interactor"
        pipes.mkdir()
        os.chmod(pipes, 0o755)
        for name in (_TO_SUB, _FROM_SUB):
            os.mkfifo(pipes / name)
            os.chmod(pipes / name, 0o666)
        for d in (sub_work, int_work):
            d.mkdir()
            os.chmod(d, 0o777)
        for name, data in (("input", stdin), ("answer", b"")):
            (int_work / name).write_bytes(data)
            os.chmod(int_work / name, 0o644)
        to_sub, from_sub = shlex.quote(str(pipes / _TO_SUB)), shlex.quote(str(pipes / _FROM_SUB))
        if convention is Convention.TESTLIB:
            int_args = [*interactor, "input", "output", "answer"]
        else:
            (int_work / "feedback").mkdir()
            os.chmod(int_work / "feedback", 0o777)
            int_args = [*interactor, "input", "answer", "feedback/"]
        ilimits = interactor_limits(limits)
        sub_argv = _wrapped(submission, limits.memory_mb, f"<{to_sub} >{from_sub}")
        # As the package format's judges run an output validator: SIGPIPE ignored, so one
        # that writes to a submission that has gone gets EPIPE and goes on to its verdict.
        int_argv = _wrapped(int_args, ilimits.memory_mb, f">{to_sub} <{from_sub}", no_sigpipe=True)
        outcomes: dict[str, Outcome] = {}
        ended: dict[str, float] = {}

        def side(name: str, argv: list[str], work: Path, lim: Limits, binds: list) -> None:
            outcomes[name] = sandbox_run(
                argv, cwd=work, limits=lim, backend=backend, ro_binds=binds
            )
            ended[name] = time.monotonic()

        threads = [
            threading.Thread(
                target=side,
                args=(
                    "sub",
                    sub_argv,
                    sub_work,
                    limits,
                    _binds(submission, sub_work, [*submission_binds, pipes]),
                ),
                daemon=True,
            ),
            threading.Thread(
                target=side,
                args=(
                    "int",
                    int_argv,
                    int_work,
                    ilimits,
                    _binds(interactor, int_work, [*interactor_binds, pipes]),
                ),
                daemon=True,
            ),
        ]
        for t in threads:
            t.start()
        # Once one side has ended, the other may still be opening a pipe (it started later):
        # open and close both pipes until it ends, so it meets end-of-file or a broken pipe
        # instead of waiting for its wall-clock limit.
        while any(t.is_alive() for t in threads):
            if not all(t.is_alive() for t in threads):
                _unblock(pipes)
            for t in threads:
                t.join(0.05)
        sub, inter = outcomes["sub"], outcomes["int"]
        output = b""
        if convention is Convention.TESTLIB:
            with contextlib.suppress(OSError), open(int_work / "output", "rb") as fh:
                output = fh.read(_KEEP_OUTPUT)
        return Interaction(
            submission=sub,
            interactor=inter,
            verdict=_verdict(convention, inter),
            output=output,
            message=_message(convention, inter, int_work),
            interactor_first=ended.get("int", 0.0) < ended.get("sub", 0.0),
        )
    raise AssertionError("unreachable")  # pragma: no cover
