"""Opening the store named by the global ``--store`` option, the same way in every command."""

from __future__ import annotations

import typer
from rich.console import Console

from suitebench.cli.main import OPTIONS
from suitebench.run.store import Store, StoreError


def open_store(console: Console) -> Store:
    """The store, or an error on ``console`` and exit code 2 when it cannot be opened."""
    try:
        return Store(OPTIONS.store)
    except StoreError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
