"""The report's building blocks: table cells, tables and captioned plots, as template data."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Cell", "Plot", "Table", "num", "pct", "table"]


@dataclass
class Cell:
    text: str
    sort: str | None = None
    css: str = ""
    code: bool = False


@dataclass
class Table:
    head: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    numeric: list[bool] = field(default_factory=list)
    id: str = ""

    def add(self, *cells: Cell | str | int | float | None) -> None:
        self.rows.append([c if isinstance(c, Cell) else num(c) for c in cells])


def num(x: str | int | float | None, digits: int = 3) -> Cell:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return Cell("–", sort="")
    if isinstance(x, (bool, str)):
        return Cell(str(x))
    if isinstance(x, int):
        return Cell(str(x), sort=str(x))
    return Cell(f"{x:.{digits}f}", sort=repr(x))


def pct(x: float | None) -> Cell:
    if x is None or math.isnan(x):
        return Cell("n/a", sort="")
    return Cell(f"{100 * x:.1f}%", sort=repr(x))


def table(head: Sequence[str], numeric: Sequence[bool] = (), id: str = "") -> Table:
    flags = list(numeric) + [False] * (len(head) - len(numeric))
    return Table(list(head), [], flags, id)


@dataclass
class Plot:
    svg: str
    caption: str
