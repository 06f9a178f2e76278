"""Ctrl-C in a long command (``audit``, ``score``, ``generate``, ``stress``): stop within a
second or two, say what the store kept, exit 130 (128 + SIGINT, the shell's convention).

A process-directed SIGINT may be delivered to any thread, and Python runs its handler only in
the main thread, once that thread runs Python code again: a main thread blocked on a worker's
result would not see Ctrl-C until the batch ended (what happened before). So the command's work
runs in a thread of its own (:func:`run_interruptibly`) while the main thread only waits, in
short slices; its SIGINT handler raises the flag of :mod:`suitebench.run.interrupt`, which
kills every live sandbox, and the work then ends at its next run with
:class:`~suitebench.run.interrupt.Interrupted` -- no half-done chunk reaches the store. The
command's outputs are written after its runs, by the work's thread, which is never stopped in
the middle of a file: an interrupted command writes none of them (or, interrupted while
writing, all of them). The same command again takes every finished run from the store and
says how many.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from suitebench.run import interrupt

__all__ = ["INTERRUPTED_EXIT", "run_interruptibly", "store_note"]

INTERRUPTED_EXIT = 130
T = TypeVar("T")


def store_note(executed: int, cached: int, unit: str = "runs") -> str:
    """One line on where a command's runs (or stored results) came from, printed by a run and
    a rerun alike."""
    done = "executed" if unit == "runs" else "stored"
    return f"{unit}: {executed} {done} now, {cached} taken from the store"


def run_interruptibly(
    work: Callable[[], T], console: Console, stored: Callable[[], str] | None = None
) -> T:
    """``work()``'s result; on Ctrl-C, every run is cancelled, the work's thread is waited
    for, what the store kept (``stored()``) is said on ``console`` and the command exits 130."""
    box: dict[str, Any] = {}
    # The work's end is an event it sets last, not the thread's join: in Python 3.11 a
    # Ctrl-C that interrupts ``Thread.join`` marks the thread stopped while it still runs
    # (``_wait_for_tstate_lock`` releases the lock its thread holds), so a later join
    # returned at once and the command exited while the work was still taking away (or
    # writing) its files.
    done = threading.Event()

    def body() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the main thread, which raises it
            box["error"] = exc
        finally:
            done.set()

    thread = threading.Thread(target=body, name="suitebench-command", daemon=True)
    interrupted = False
    with interrupt.sigint_cancels():
        try:
            thread.start()
            while not done.wait(0.1):
                pass
        except KeyboardInterrupt:
            interrupted = True
            interrupt.cancel()
    if interrupted:
        done.wait()  # quick: every run is refused or killed (a second Ctrl-C still exits)
    error = box.get("error")
    if isinstance(error, KeyboardInterrupt) or (interrupted and "value" not in box):
        kept = f"; {stored()}" if stored is not None else ""
        console.print(
            f"interrupted: nothing written{kept}; the same command again resumes from the store",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(INTERRUPTED_EXIT)
    if error is not None:
        raise error
    return box["value"]
