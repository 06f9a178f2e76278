"""The report's plots, drawn with matplotlib and returned as inline SVG text.

Text is drawn as paths (matplotlib's default ``svg.fonttype = "path"``), so an SVG needs no
font; ids inside each SVG get a per-figure prefix so that many SVGs can live in one HTML page
without their clip paths and glyph definitions colliding. The hash salt is fixed and the date
left out, so the same results give the same bytes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

__all__ = [
    "cov_curves_svg",
    "heatmap_svg",
    "overlap_svg",
    "prefix_curves_svg",
    "scatter_svg",
    "sections_svg",
]

_ids = count(1)
_ID = re.compile(r'id="([^"]+)"')


def _svg(fig: Figure, title: str) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "suitebench", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    prefix = f"f{next(_ids)}-"
    names = set(_ID.findall(text))
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(f'id="{name}"', f'id="{prefix}{name}"')
        text = text.replace(f"#{name})", f"#{prefix}{name})")
        text = text.replace(f'href="#{name}"', f'href="#{prefix}{name}"')
    safe = title.replace("&", "&amp;").replace("<", "&lt;")
    return text.replace(">", f' role="img" aria-label="{safe}">', 1).replace(
        "<svg ", '<svg class="plot" ', 1
    )


def _curves(
    ax: plt.Axes, curves: Mapping[str, tuple[Sequence[float], Sequence[float | None]]]
) -> None:
    for name, (xs, ys) in curves.items():
        pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=name)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")


def cov_curves_svg(
    ks: Sequence[int], curves: Mapping[str, Sequence[float | None]], design_budget: int | None
) -> str:
    """cov@k against the budget k per arm, the design budget marked (Auditors Figure 3)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    _curves(ax, {a: (list(ks), c) for a, c in curves.items()})
    if design_budget is not None:
        ax.axvline(design_budget, color="0.4", linestyle=":", linewidth=1)
        ax.annotate(
            f"design budget k={design_budget}",
            (design_budget, 1.0),
            xytext=(-4, 0),
            textcoords="offset points",
            rotation=90,
            ha="right",
            va="top",
            fontsize=8,
            color="0.3",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
        )
    ax.set_xlabel("input budget k (legal inputs)")
    ax.set_ylabel("pooled cov@k")
    return _svg(fig, "cov@k per arm")


def prefix_curves_svg(curves: Mapping[str, Sequence[float | None]]) -> str:
    """Pooled coverage of the first k inputs in emission order (Auditors Figure B.1)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    _curves(ax, {a: (list(range(1, len(c) + 1)), c) for a, c in curves.items()})
    ax.set_xlabel("first k inputs in emission order")
    ax.set_ylabel("pooled prefix coverage")
    return _svg(fig, "prefix coverage per arm")


# 0 = not judged / not run, 1 = passed / not killed, 2 = killed, 3 = other (TLE, error)
_HEAT = ListedColormap(["#eeeeee", "#cfe3cf", "#c0392b", "#f0b429"])


def heatmap_svg(
    cells: npt.NDArray[np.int_],
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    groups: Sequence[tuple[str, int, int]] = (),
) -> str:
    """A kill matrix: ``cells`` of 0 (not judged), 1 (not killed), 2 (killed), 3 (other).

    Row and column labels are drawn whole: a test or input id cut short can name another one,
    and the tight bounding box widens the figure to fit them. ``groups`` are (name, first
    column, end column) spans drawn as separators with labels above the matrix (an audit's
    arms along the inputs axis).
    """
    h, w = cells.shape
    fig, ax = plt.subplots(
        figsize=(min(12.0, 2.5 + 0.09 * max(w, 10)), min(9.0, 1.4 + 0.18 * max(h, 4)))
    )
    ax.imshow(cells, cmap=_HEAT, vmin=0, vmax=3, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(h))
    ax.set_yticklabels([str(r) for r in rows], fontsize=6 if h > 20 else 7)
    if w <= 40:
        ax.set_xticks(range(w))
        ax.set_xticklabels([str(c) for c in cols], rotation=90, fontsize=6)
    else:
        ax.set_xticks([])
    for _, start, _end in groups:
        if start > 0:
            ax.axvline(start - 0.5, color="black", linewidth=0.8)
    levels = _group_labels(fig, ax, groups)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9, pad=6 + _GROUP_ROW * levels)
    return _svg(fig, title)


_GROUP_ROW = 10.0  # points between two rows of group labels


def _group_labels(fig: Figure, ax: plt.Axes, groups: Sequence[tuple[str, int, int]]) -> int:
    """Label each group above its columns; a label that would overlap one already placed
    (narrow groups side by side, say three official inputs next to one sample) goes up a row.
    Returns the number of rows used, so that the title can sit above them all."""
    texts = [
        ax.annotate(
            name,
            ((start + end - 1) / 2, 1.0),
            xycoords=ax.get_xaxis_transform(),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
        )
        for name, start, end in groups
    ]
    if not texts:
        return 0
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    gap = 4 * fig.dpi / 72  # 4 points between labels on one row, in pixels
    rows: list[list[tuple[float, float]]] = []
    for text in texts:
        box = text.get_window_extent(renderer)
        span = (box.x0 - gap, box.x1 + gap)
        level = next(
            (i for i, row in enumerate(rows) if all(span[1] <= a or b <= span[0] for a, b in row)),
            len(rows),
        )
        if level == len(rows):
            rows.append([])
        rows[level].append(span)
        text.set_position((0, 2 + _GROUP_ROW * level))
    return len(rows)


def overlap_svg(overlap: Mapping[str, object], what: str) -> str:
    """Every exclusive region of the killed sets, the union and the killed-by-none count
    (an UpSet-style bar chart: TestSuiteBench Figure 12 for any number of sets)."""
    all_regions: list[dict[str, Any]] = list(overlap["regions"])  # type: ignore[call-overload]
    regions = [r for r in all_regions if r["count"] or len(r["sets"]) == 1]
    labels = [" & ".join(r["sets"]) + (" only" if len(r["sets"]) == 1 else "") for r in regions]
    values = [r["count"] for r in regions]
    labels += ["union", "killed by none"]
    values += [overlap["union"], overlap["none"] if overlap["none"] is not None else 0]
    colors = ["#4c78a8"] * len(regions) + ["#54a24b", "#9d9d9d"]
    fig, ax = plt.subplots(figsize=(6.4, 0.6 + 0.3 * len(labels)))
    y = np.arange(len(labels))
    ax.barh(y, values, color=colors)
    for yi, v in enumerate(values):
        ax.text(float(v), float(yi), f" {v}", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"{what} (of {overlap['universe']})")
    ax.set_xlim(0, max([*values, 1]) * 1.15)
    return _svg(fig, f"overlap of {what}")


def sections_svg(per_section: Mapping[str, Mapping[str, float | None]]) -> str:
    """M per spec section: one row per section, one column per suite, the value in the cell
    (grey where the suite has no scored mutant of that section)."""
    rows: list[str] = []
    for scores in per_section.values():
        rows += [s for s in scores if s not in rows]
    cols = list(per_section)
    grid = np.full((len(rows), len(cols)), np.nan)
    for j, name in enumerate(cols):
        for i, sec in enumerate(rows):
            v = per_section[name].get(sec)
            if v is not None:
                grid[i, j] = v
    fig, ax = plt.subplots(figsize=(2.2 + 1.3 * len(cols), 0.9 + 0.3 * len(rows)))
    cmap = matplotlib.colormaps["RdYlGn"].copy()
    cmap.set_bad("#e6e6e6")
    ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i in range(len(rows)):
        for j in range(len(cols)):
            v = grid[i, j]
            text = "–" if np.isnan(v) else f"{100 * v:.0f}%"
            dark = not np.isnan(v) and (v >= 0.85 or v <= 0.15)
            ax.text(
                j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black"
            )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=30, ha="right", fontsize=7)
    ax.set_title("mutation score M per spec section", fontsize=9)
    return _svg(fig, "M per spec section")


def scatter_svg(
    x: Sequence[float], y: Sequence[float], labels: Sequence[str], *, xlabel: str, ylabel: str
) -> str:
    """A correlation's points, labelled."""
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    ax.scatter(x, y)
    for xi, yi, lab in zip(x, y, labels, strict=True):
        ax.annotate(lab, (xi, yi), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return _svg(fig, f"{ylabel} against {xlabel}")
