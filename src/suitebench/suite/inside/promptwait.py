"""Wake a test waiting on a subprocess when the subprocess ends, not up to a poll later.

Black-box tests run the program under test with ``subprocess.run(..., timeout=T)``.  With a
timeout, CPython's ``Popen._wait`` (3.11-3.13) polls: check, sleep 1 ms, check, sleep 2 ms, ...
By the time ``communicate`` has read the child's output to the end, the child has closed its
pipes but has often not finished exiting, so nearly every call pays the first 1 ms sleep:
measured on a 24-test CLI suite, that idle time is about 40% of the time the tests take.

:func:`install` replaces ``Popen._wait`` for the timeout case with a wait on a *pidfd* (Linux
5.3+): ``select`` on the descriptor wakes the moment the child exits.  Everything a test can
observe is unchanged -- the same ``returncode``, the same ``TimeoutExpired`` at the same
deadline, the same locking against other threads waiting on the same process -- only the idle
gap is gone.  Where a pidfd cannot be had (an old kernel, a process already reaped elsewhere)
the original method runs.  The batched engine installs it in its fork server; the plain engine,
the reference, leaves the standard library as it is.  A test proves both engines give the same
kill matrix.

This module runs inside the sandbox: the standard library only.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from typing import Any

_ORIGINAL: Any = getattr(subprocess.Popen, "_wait", None)
# What the replacement calls on Popen (``_waitpid_lock`` is per instance, made in __init__).
_NEEDED = ("_try_wait", "_handle_exitstatus", "_remaining_time")


def _prompt_wait(self: Any, timeout: float | None) -> int | None:
    if self.returncode is not None:
        return self.returncode
    if timeout is None:
        return _ORIGINAL(self, timeout)
    try:
        fd = os.pidfd_open(self.pid)
    except (AttributeError, OSError):
        return _ORIGINAL(self, timeout)
    endtime = time.monotonic() + timeout
    try:
        while True:
            if self._waitpid_lock.acquire(False):
                try:
                    if self.returncode is not None:
                        break  # another thread waited
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)
                        break
                finally:
                    self._waitpid_lock.release()
                remaining = self._remaining_time(endtime)
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                select.select([fd], [], [], min(remaining, 0.05))
            else:  # another thread holds the lock: let it reap, as the original does
                remaining = self._remaining_time(endtime)
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                time.sleep(min(0.001, remaining))
    finally:
        os.close(fd)
    return self.returncode


def install() -> bool:
    """Use the prompt wait in this process (and the children it forks); whether it took."""
    if os.name != "posix" or _ORIGINAL is None or not hasattr(os, "pidfd_open"):
        return False
    if not all(hasattr(subprocess.Popen, name) for name in _NEEDED):
        return False
    subprocess.Popen._wait = _prompt_wait  # type: ignore[attr-defined]
    return True


def uninstall() -> None:
    """Put the standard library's method back."""
    if _ORIGINAL is not None:
        subprocess.Popen._wait = _ORIGINAL  # type: ignore[attr-defined]
