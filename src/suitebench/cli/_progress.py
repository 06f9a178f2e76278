"""The progress bar every long command shows on a terminal (and hides in CI or with --json)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

ProgressFn = Callable[[int, int], None]


@contextlib.contextmanager
def progress_bar(
    label: str, *, console: Console, quiet: bool, transient: bool = False
) -> Iterator[ProgressFn]:
    """Yield the ``progress(done, total)`` callback that library functions take."""
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=transient,
    )
    with bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
