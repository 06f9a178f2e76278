"""Progress when stderr is not a terminal: a plain line every few seconds with the counts and
an estimate of the time left (a piped ``build mutants`` used to say nothing for minutes)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from suitebench.cli._progress import PlainProgress, progress_bar


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_with_counts_and_time_left() -> None:
    out = io.StringIO()
    clock = Clock()
    plain = PlainProgress("building mutants", Console(file=out, width=200), clock=clock)
    plain(1, 24)  # at 0 s: too soon for a line
    clock.now += 2
    plain(2, 24)
    assert out.getvalue() == ""
    # 6 of 24 done after 6 s: 1 s each, 18 left -> about 18 s.
    clock.now += 4
    plain(6, 24)
    # 12 of 24 after 72 s: 6 s each, 12 left -> 72 s = 1m12s.
    clock.now += 66
    plain(12, 24)
    clock.now += 1
    plain(13, 24)  # 1 s after the last line: none
    clock.now += 10
    plain(24, 24)  # done: no time left to show
    plain.finish()  # the last line printed already says 24/24
    assert out.getvalue().splitlines() == [
        "building mutants: 6/24 (25%), 6s elapsed, about 18s left",
        "building mutants: 12/24 (50%), 1m12s elapsed, about 1m12s left",
        "building mutants: 24/24 (100%), 1m23s elapsed",
    ]


def test_short_work_prints_nothing_and_long_work_ends_with_its_last_count() -> None:
    out = io.StringIO()
    clock = Clock()
    plain = PlainProgress("scoring", Console(file=out, width=200), clock=clock)
    plain(3, 3)
    plain.finish()
    assert out.getvalue() == ""
    clock.now += 7
    plain(4, 9)  # a line (7 s): 4/9
    plain(9, 9)  # none yet: the same instant
    plain.finish()
    assert out.getvalue().splitlines() == [
        "scoring: 4/9 (44%), 7s elapsed, about 9s left",
        "scoring: 9/9 (100%), 7s elapsed",
    ]


def test_the_bar_becomes_plain_lines_on_a_pipe(tmp_path: Path) -> None:
    # A real process whose stderr is a pipe: rich sees no terminal, the callback is plain.
    code = (
        "import sys\n"
        "from rich.console import Console\n"
        "from suitebench.cli import _progress\n"
        "_progress.PLAIN_INTERVAL = 0.0\n"
        "con = Console(stderr=True, width=200)\n"
        "with _progress.progress_bar('building mutants', console=con, quiet=False) as p:\n"
        "    print(type(p).__name__)\n"
        "    p(1, 2); p(2, 2)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "PlainProgress"
    assert proc.stderr.splitlines()[0].startswith("building mutants: 1/2 (50%), 0s elapsed")
    quiet = io.StringIO()
    with progress_bar("x", console=Console(file=quiet), quiet=True) as p:
        p(1, 2)
    assert quiet.getvalue() == ""
