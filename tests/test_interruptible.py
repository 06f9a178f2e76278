"""Ctrl-C in a long command: the command exits only once its work has stopped.

The generate test of a real Ctrl-C (``tests/generate/test_generate_interrupt.py``) once saw
"interrupted: nothing written" with the first repetition's files still on disk: the command had
exited while its work was still taking them away. Here the same order is checked without the
timing of a whole command: the work takes a while to stop after the interrupt, and the
command must not return before it has.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import typer
from rich.console import Console

from suitebench.cli._interrupt import INTERRUPTED_EXIT, run_interruptibly
from suitebench.run import interrupt


@pytest.fixture(autouse=True)
def _lowered_flag():
    interrupt.reset()
    yield
    interrupt.reset()


@pytest.fixture(autouse=True)
def _terminal_sigint():
    """SIGINT handled as in a command started from a terminal: a test run started in the
    background inherits it ignored, and a command so started is not interrupted by it (as
    the shell means), which is not what these tests are about."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_the_command_exits_only_after_its_work_has_cleaned_up() -> None:
    events: list[str] = []
    started = threading.Event()

    def work() -> None:
        started.set()  # the command's SIGINT handler is in place by now
        while not interrupt.cancelled():
            time.sleep(0.01)
        time.sleep(0.5)  # taking away what it wrote
        events.append("cleaned up")
        interrupt.check()

    def ctrl_c() -> None:
        started.wait(60)
        time.sleep(0.2)  # the main thread is waiting for the work by now
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c, daemon=True).start()
    console = Console(record=True, width=200)
    with pytest.raises(typer.Exit) as exited:
        run_interruptibly(work, console)
    assert exited.value.exit_code == INTERRUPTED_EXIT
    assert events == ["cleaned up"]
    assert "interrupted: nothing written" in console.export_text()


def test_work_that_ends_by_itself_returns_its_value() -> None:
    assert run_interruptibly(lambda: 42, Console()) == 42
