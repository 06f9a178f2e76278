"""Processes a test left running are ended with it: one test's fault stays that test's fault.

A test that forks without bound, daemonises a child or leaves a subprocess spinning would
otherwise take the process limit, the CPU or the output of every test after it, on the
reference and on each mutant alike, moving their verdicts by timing.  So the pytest process is
made a *child subreaper* (a daemonised grandchild is reparented to it, not to the sandbox's
init), and when a test ends, every process started since its call phase began and still alive
-- a child, or a descendant reparented to it -- is killed and reaped, round after round until
none is left.  Processes that existed when the call phase began (a server a fixture started
while setting up, shared by later tests) are left alone.

Cheap where nothing was left: one read of ``/proc/self/task/*/children`` per test.  The batch's
parent does the same after each program's child (:mod:`.forking`), so that what a child left
never reaches the next program's tests.  Inside the sandbox only: standard library and ctypes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading

_PR_SET_CHILD_SUBREAPER = 36
_MAX_ROUNDS = 100  # each round kills the tree it finds; what was forked meanwhile is next


class _Watch:
    """This process's watch over what tests start: whether it is a subreaper yet, and the
    children there were when the running test's call began."""

    __slots__ = ("before", "pid")

    def __init__(self) -> None:
        self.pid = 0  # the process that became a subreaper (a forked child is another)
        self.before: set[int] | None = None


_WATCH = _Watch()


def children() -> set[int]:
    """This process's children (each thread's: a fork from a thread is that thread's; an
    orphan reparented to a subreaper goes to its main thread).  With one Python thread only the
    main thread's list is read: ~5 us, paid twice a test."""
    pid = os.getpid()
    tids: list[str] | tuple[int, ...] = (pid,)
    if threading.active_count() > 1:
        with contextlib.suppress(OSError):
            tids = os.listdir("/proc/self/task")
    kids: set[int] = set()
    for tid in tids:
        try:
            fd = os.open(f"/proc/{pid}/task/{tid}/children", os.O_RDONLY)
        except OSError:
            continue
        try:
            data = os.read(fd, 1 << 16)
        finally:
            os.close(fd)
        kids.update(int(p) for p in data.split())
    return kids


def _tree(roots: set[int]) -> set[int]:
    """``roots`` and every descendant of theirs, by each process's parent in ``/proc``."""
    kids: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            with contextlib.suppress(OSError), open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(name))
    found, stack = set(roots), list(roots)
    while stack:
        for kid in kids.get(stack.pop(), ()):
            if kid not in found:
                found.add(kid)
                stack.append(kid)
    return found


def become_subreaper() -> None:
    """Orphans of this process's descendants come to it (once per process: not inherited)."""
    if _WATCH.pid == os.getpid():
        return
    _WATCH.pid = os.getpid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def call_starts() -> None:
    """The test's call phase is starting: what runs now is the fixtures'."""
    become_subreaper()
    _WATCH.before = children()


def test_ended() -> int:
    """The test has ended: kill and reap what it started and left; returns how many."""
    before = _WATCH.before
    _WATCH.before = None
    return end_new(before) if before is not None else 0


def end_new(before: set[int]) -> int:
    """Kill and reap every child of this process not in ``before`` (a subreaper's children
    include its descendants' orphans), with each one's whole tree; returns how many."""
    ended = 0
    for _ in range(_MAX_ROUNDS):
        left = children() - before
        if not left:
            break
        # The whole tree at once (stopped first, so none of it forks while it is killed).
        tree = _tree(left)
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in tree:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        for pid in left:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
                ended += 1
    return ended


test_ended.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def thread_idents() -> frozenset[int]:
    """The threads running now (nothing to list while the main thread is alone: ~0.1 us)."""
    if threading.active_count() == 1:
        return frozenset()
    return frozenset(t.ident for t in threading.enumerate() if t.ident is not None)


def new_threads(before: frozenset[int]) -> int:
    """How many threads not in ``before`` (daemons too) still run, by the kernel's list of
    this process's threads: a ``join`` that a timeout interrupted leaves Python 3.11 saying
    the thread has stopped (``is_alive()`` is False) while it goes on running."""
    if threading.active_count() == 1:
        return 0
    try:
        running = {int(tid) for tid in os.listdir("/proc/self/task")}
    except OSError:
        running = set()
    main = threading.main_thread()
    return sum(
        1
        for t in threading.enumerate()
        if t is not main
        and t.ident not in before
        and (t.native_id in running if running else t.is_alive())
    )
