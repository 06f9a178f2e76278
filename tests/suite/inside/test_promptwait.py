"""The batched engine's prompt wait must behave exactly like ``Popen.wait`` for every caller.

It replaces the standard library's timed wait (a poll with growing sleeps) by a wait on a pidfd.
Tests of the suites we run rely on ``subprocess.run(..., timeout=...)``: the same return codes,
the same ``TimeoutExpired`` at the deadline, the child killed and reaped afterwards, threads that
wait on the same process agreeing, and a process reaped behind ``Popen``'s back handled as the
standard library handles it.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from suitebench.suite.inside import promptwait

T = TypeVar("T")
ORIGINAL = subprocess.Popen._wait  # type: ignore[attr-defined]


@pytest.fixture
def prompt() -> Iterator[None]:
    if not promptwait.install():
        pytest.skip("no pidfd_open here: the standard library's wait stays in place")
    try:
        yield
    finally:
        promptwait.uninstall()
    assert subprocess.Popen._wait is ORIGINAL  # type: ignore[attr-defined]


def _both_ways(fn: Callable[[], T]) -> tuple[T, T]:
    """The same call with the standard wait and with the prompt one."""
    standard = fn()
    if not promptwait.install():
        pytest.skip("no pidfd_open here: the standard library's wait stays in place")
    try:
        fast = fn()
    finally:
        promptwait.uninstall()
    return standard, fast


def test_results_are_those_of_the_standard_wait() -> None:
    def calls() -> list[tuple[int, str, str]]:
        out = []
        for code in (0, 1, 3, 77):
            done = subprocess.run(
                ["sh", "-c", f"cat; echo err >&2; exit {code}"],
                input="line\n",
                capture_output=True,
                text=True,
                timeout=30,
            )
            out.append((done.returncode, done.stdout, done.stderr))
        killed = subprocess.run(["sh", "-c", "kill -TERM $$"], timeout=30)
        out.append((killed.returncode, "", ""))
        return out

    standard, fast = _both_ways(calls)
    assert standard == fast
    assert fast[0] == (0, "line\n", "err\n")
    assert fast[-1][0] == -15  # a signal death reads as a negative return code either way


def test_timeout_raises_at_the_deadline_and_the_child_is_gone(prompt: None, tmp_path: Path) -> None:
    assert subprocess.Popen._wait is not ORIGINAL  # type: ignore[attr-defined]
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(["sh", "-c", f"echo $$ > {pidfile}; exec sleep 30"], timeout=0.3)
    waited = time.monotonic() - started
    assert 0.3 <= waited < 10  # not early; the child does not get its 30 s
    # subprocess.run kills the child on a timeout and reaps it: no such process any more.
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)


def test_wait_with_timeout_on_a_live_process_then_again(prompt: None) -> None:
    proc = subprocess.Popen(["sh", "-c", "sleep 0.5; exit 4"])
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.05)
    assert proc.returncode is None  # still running, still ours to wait for
    assert proc.wait(timeout=30) == 4
    assert proc.wait(timeout=30) == 4  # an ended process answers at once


def test_threads_waiting_on_one_process_agree(prompt: None) -> None:
    proc = subprocess.Popen(["sh", "-c", "sleep 0.3; exit 9"])
    codes: list[int] = []

    def waiter(timeout: float | None) -> None:
        codes.append(proc.wait(timeout=timeout))

    threads = [threading.Thread(target=waiter, args=(t,)) for t in (None, 30, 30, None)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes == [9, 9, 9, 9]


def test_process_reaped_behind_popens_back() -> None:
    """Someone else's ``os.waitpid`` took the exit status: the wait ends as the standard
    library's does (it reads such a child as exit status 0)."""

    def reaped_elsewhere() -> int | None:
        proc = subprocess.Popen(["sh", "-c", "exit 5"])
        os.waitpid(proc.pid, 0)
        return proc.wait(timeout=5)

    standard, fast = _both_ways(reaped_elsewhere)
    assert standard == fast == 0


def test_uninstall_puts_the_standard_method_back() -> None:
    if promptwait.install():
        assert subprocess.Popen._wait is not ORIGINAL  # type: ignore[attr-defined]
    promptwait.uninstall()
    assert subprocess.Popen._wait is ORIGINAL  # type: ignore[attr-defined]
