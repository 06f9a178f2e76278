"""The command line as a user runs it, in a child process: one way to start it for every test.

A test that checks what a user sees (exit status, stdout, stderr, the files a command leaves)
runs ``suitebench`` in a child process of this interpreter, so a crash of the command cannot
take the test process with it, and nothing the command imports or sets stays behind.  Each
caller says how long its command may take (``timeout``): a ``--help`` is seconds, a score of a
real instance on a loaded machine is minutes.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The installed ``suitebench`` script's entry, with ``argv[0]`` as that script sets it (usage
# lines read ``usage: suitebench ...``).
ENTRY = "import sys; from suitebench.cli.main import main; sys.argv[0] = 'suitebench'; main()"
# The argv that starts the command line; a test that starts it with Popen (to interrupt it, or
# to measure it from a wrapper) puts its arguments after this.
SUITEBENCH = (sys.executable, "-c", ENTRY)


def suitebench_argv(
    *args: str | Path, store: Path | None = None, module: bool = False
) -> list[str]:
    """``suitebench [--store STORE] ARGS`` as an argv (``module``: as ``python -m suitebench``,
    which pool workers started afresh import again as their main module)."""
    start = [sys.executable, "-m", "suitebench"] if module else list(SUITEBENCH)
    return [*start, *(["--store", str(store)] if store is not None else []), *map(str, args)]


def run_suitebench(
    *args: str | Path,
    store: Path | None = None,
    timeout: float = 600,
    module: bool = False,
    **options: Any,
) -> subprocess.CompletedProcess[Any]:
    """Run ``suitebench [--store STORE] ARGS`` and wait at most ``timeout`` seconds for it.
    Its output is captured as text unless ``options`` (``subprocess.run``'s) say otherwise:
    ``stdout=`` a file, ``text=False`` with ``input=`` bytes; ``cwd=`` and ``env=`` pass on."""
    if "stdout" not in options and "stderr" not in options:
        options.setdefault("capture_output", True)
    options.setdefault("text", True)
    argv = suitebench_argv(*args, store=store, module=module)
    return subprocess.run(argv, timeout=timeout, **options)


def stored_rows(db: Path, kind: str) -> int:
    """How many rows of ``kind`` the SQLite store at ``db`` holds (0 while it is being made)."""
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            row = conn.execute("SELECT COUNT(*) FROM outcomes WHERE kind = ?", (kind,))
            return int(row.fetchone()[0])
    except sqlite3.Error:
        return 0


def interrupt_when(
    argv: list[str], ready: Callable[[], bool], **options: Any
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Start ``argv``, send it SIGINT (a terminal's Ctrl-C) once ``ready()`` holds -- polled
    on what the command stored, never after a sleep that assumes a fast machine -- and wait
    for it: its result and the seconds it took to exit after the signal. ``ready`` must come
    true before the command ends (asserted)."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal's Ctrl-C finds it (a background job would have it ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **options,
    )
    while not ready():
        assert proc.poll() is None, ("ended before it could be interrupted", proc.communicate())
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=300)
    took = time.monotonic() - t0
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), took
