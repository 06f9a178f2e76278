"""Figures the docs quote, written by the bench that measured them.

Hand-typed figures drift from the code. Every bench script runs its ``main`` through
:func:`run_recorded`: with ``--record`` anywhere on its command line (the flag is taken out
before the script's own options are parsed) everything the bench prints is also written to
``docs/figures/<bench>.md``, headed by the run it came from: date, commit, the machine's cores
and load average at the start, and the exact command. The docs link to those files instead of
copying their numbers.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

FIGURES_DIR = Path(__file__).resolve().parent.parent / "docs" / "figures"


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self.stream = stream
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=FIGURES_DIR.parent.parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def header(name: str, argv: list[str]) -> str:
    """Where a recorded run came from, as the markdown file's first lines."""
    load = os.getloadavg()[0]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    # a directory of the machine the run was made on says nothing to a reader: DIR
    shown = ["DIR" if os.path.isabs(a) else a for a in argv]
    command = " ".join(["python", f"bench/{name}.py", *shown])
    return (
        f"# `bench/{name}.py`: the last recorded run\n\n"
        f"Written by the bench itself (`--record`); do not edit by hand.\n\n"
        f"- run: {when}, commit `{_commit()}`\n"
        f"- machine: {os.cpu_count()} cores, load average {load:.2f} at the start\n"
        f"- command: `{command}`\n\n"
    )


def scrub(text: str, argv: list[str]) -> str:
    """What a bench printed, without this machine's directories: the ones its command line
    names are ``DIR`` (as in the header), this checkout is ``.`` (a failing tool's command line
    names both)."""
    for arg in sorted({a for a in argv if os.path.isabs(a)}, key=len, reverse=True):
        text = text.replace(str(Path(arg).resolve()), "DIR").replace(arg, "DIR")
    return text.replace(str(FIGURES_DIR.parent.parent) + "/", "./")


def run_recorded(name: str, main: Callable[[], int | None]) -> int:
    """Run a bench's ``main``; with ``--record``, also write what it printed to the docs."""
    record = "--record" in sys.argv[1:]
    if record:
        sys.argv = [a for a in sys.argv if a != "--record"]
    if not record:
        return main() or 0
    top = header(name, sys.argv[1:])
    tee = _Tee(sys.stdout)  # type: ignore[arg-type]
    with contextlib.redirect_stdout(tee):  # type: ignore[type-var]
        code = main() or 0
    if code == 0:
        FIGURES_DIR.mkdir(parents=True, exist_ok=True)
        path = FIGURES_DIR / f"{name}.md"
        printed = scrub(tee.copy.getvalue().rstrip(), sys.argv[1:])
        path.write_text(top + "```\n" + printed + "\n```\n")
        print(f"figures recorded in {path.relative_to(FIGURES_DIR.parent.parent)}", file=sys.stderr)
    return code
