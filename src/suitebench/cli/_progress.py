"""The progress every long command shows: a bar on a terminal, and when stderr is not one (a
pipe, a log file, CI) a plain line every few seconds with the counts and an estimate of the
time left; nothing in quiet mode or with --json."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

ProgressFn = Callable[[int, int], None]

PLAIN_INTERVAL = 5.0  # seconds between two plain lines


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class PlainProgress:
    """``progress(done, total)`` as a line every ``interval`` seconds, and one at the end:
    ``building mutants: 12/24 (50%), 1m02s elapsed, about 1m02s left``.  The estimate is the
    mean time per unit so far times the units left (none before the first unit is done)."""

    def __init__(
        self,
        label: str,
        console: Console,
        *,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.console = console
        self.interval = PLAIN_INTERVAL if interval is None else interval
        self.clock = clock
        self.start = clock()
        self.last_line = self.start
        self.done = 0
        self.total: int | None = None
        self.printed: tuple[int, int | None] | None = None

    def line(self, now: float) -> str:
        elapsed = now - self.start
        if self.total:
            counts = f"{self.done}/{self.total} ({100 * self.done / self.total:.0f}%)"
        else:
            counts = f"{self.done} done"
        text = f"{self.label}: {counts}, {_duration(elapsed)} elapsed"
        if self.total and 0 < self.done < self.total:
            left = elapsed / self.done * (self.total - self.done)
            text += f", about {_duration(left)} left"
        return text

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = self.clock()
        if now - self.last_line >= self.interval:
            self.emit(now)

    def emit(self, now: float | None = None) -> None:
        now = self.clock() if now is None else now
        self.last_line = now
        self.printed = (self.done, self.total)
        self.console.print(escape(self.line(now)), highlight=False, soft_wrap=True)

    def finish(self) -> None:
        """The last line, when the work was long enough to print one before, unless the last
        one printed already says it (short work stays silent)."""
        if self.printed is not None and self.printed != (self.done, self.total):
            self.emit()


@contextlib.contextmanager
def plain_progress(label: str, *, console: Console, quiet: bool) -> Iterator[ProgressFn]:
    """Plain progress lines (nothing when ``quiet``), the last one when the work ends."""
    if quiet:
        yield lambda done, total: None
        return
    plain = PlainProgress(label, console)
    try:
        yield plain
    finally:
        plain.finish()


@contextlib.contextmanager
def progress_bar(
    label: str, *, console: Console, quiet: bool, transient: bool = False
) -> Iterator[ProgressFn]:
    """Yield the ``progress(done, total)`` callback that library functions take: a bar with
    the counts, the time spent and an estimate of the time left on a terminal, plain lines
    every few seconds elsewhere (:class:`PlainProgress`)."""
    if not console.is_terminal:
        with plain_progress(label.strip(), console=console, quiet=quiet) as plain:
            yield plain
        return
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
        transient=transient,
    )
    with bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
