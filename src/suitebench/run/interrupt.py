"""Stopping on Ctrl-C: one process-wide flag, and every live sandbox killed when it is raised.

Sandboxes run in sessions of their own (``start_new_session``), so a terminal's Ctrl-C reaches
only the coordinator; and the coordinator's threads wait on runs that may last a time limit. So
a command that can be interrupted (``audit``, ``score``, ``generate``, ``stress``) calls
:func:`cancel` from its SIGINT handler (:func:`sigint_cancels`): the flag is set, every live
sandbox's process group is killed at once, and from then on a session refuses to start a run
and a run in flight ends in :class:`Interrupted` instead of an outcome. The chunk it was part of
raises instead of returning, so its records never reach the store: what the store holds was
finished before the interrupt, and nothing half-done is written. A second Ctrl-C falls back to
Python's default (a plain ``KeyboardInterrupt``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = [
    "Interrupted",
    "cancel",
    "cancelled",
    "check",
    "forget",
    "remember",
    "reset",
    "sigint_cancels",
]


class Interrupted(KeyboardInterrupt):
    """The command was interrupted (Ctrl-C): a run was refused or cut short."""


_flag = threading.Event()
_lock = threading.Lock()
_live: set[subprocess.Popen[bytes]] = set()


def remember(proc: subprocess.Popen[bytes]) -> None:
    """A sandbox's process (the leader of its own process group) to kill on :func:`cancel`."""
    with _lock:
        _live.add(proc)
    if _flag.is_set():
        _kill(proc)


def forget(proc: subprocess.Popen[bytes]) -> None:
    with _lock:
        _live.discard(proc)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def cancel() -> None:
    """Raise the flag and kill every live sandbox (safe from a signal handler: no lock wait
    that the interrupted thread could hold -- the set is copied under a non-blocking try)."""
    _flag.set()
    got = _lock.acquire(blocking=False)
    try:
        procs = list(_live)
    finally:
        if got:
            _lock.release()
    for proc in procs:
        _kill(proc)


def cancelled() -> bool:
    return _flag.is_set()


def check() -> None:
    """Raise :class:`Interrupted` once the command has been interrupted."""
    if _flag.is_set():
        raise Interrupted("interrupted")


def reset() -> None:
    """Lower the flag (tests, and a process that goes on after an interrupt)."""
    _flag.clear()


@contextlib.contextmanager
def sigint_cancels() -> Iterator[None]:
    """While inside, the first SIGINT cancels (module docstring) and raises
    :class:`Interrupted` in the main thread; the next one is Python's default."""
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # a background job's
    if ignored or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        cancel()
        raise Interrupted("interrupted")

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
