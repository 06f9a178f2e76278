"""The suite-mode part of the report: suites, candidate implementations, their drill-down."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from suitebench.report import plots
from suitebench.report.load import ScoreRun
from suitebench.report.tables import Cell, Plot, Table, num, pct, table
from suitebench.suite.select.locate import mutation_score_by

__all__ = ["correlations_table", "natural_key", "suite_section", "suites_table"]

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[str | tuple[int, str], ...]:
    """Order test ids as a reader counts: ``test_x[2]`` before ``test_x[10]``.

    Runs of digits compare as numbers, the text between them case-blind. The page's script
    sorts a clicked column by the same rule, so the order the report prints and the order a
    click gives agree.
    """
    parts = _DIGITS.split(text)
    return tuple((int(p), p) if i % 2 else p.lower() for i, p in enumerate(parts))


def row_labels(test_ids: Sequence[str]) -> list[str]:
    """A heatmap row's label: the test's name, or its whole id where two files share it."""
    names = [t.split("::")[-1] for t in test_ids]
    seen = Counter(names)
    return [n if seen[n] == 1 else t for n, t in zip(names, test_ids, strict=True)]


def _reason(reference: Sequence[str], flaky: bool) -> str:
    runs = ", ".join(reference)
    if flaky:
        return f"changes across the reference runs ({runs})"
    return f"fails on the reference ({runs})"


def _diff_text(patch: str) -> str:
    path = Path(patch)
    if patch and path.is_file():
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
    return f"(diff not found at {patch})" if patch else "(no diff recorded)"


def _suite_heatmap(run: ScoreRun) -> Plot:
    res = run.result
    tests = sorted(res.test_ids(), key=natural_key)
    valid = {t.id: t.valid for t in res.tests}
    cells = np.zeros((len(tests), len(res.mutants)), dtype=np.int_)
    for j, m in enumerate(res.mutants):
        for i, t in enumerate(tests):
            st = m.outcomes.get(t)
            if st is None:
                continue
            cells[i, j] = (2 if valid[t] else 3) if st.fails else 1
    svg = plots.heatmap_svg(
        cells,
        row_labels(tests),
        [m.id for m in res.mutants],
        title=f"{res.instance} / {run.suite_label}: kill matrix",
        xlabel="mutant",
        ylabel="test",
    )
    return Plot(
        svg,
        "Red: a valid test fails on the mutant (a kill); green: passes; amber: an invalid "
        "test fails (not counted); grey: not run (build error, or stopped at the first kill).",
    )


def _patch_path(patch: str, root: Path | None) -> str:
    """A patch path of results.json: relative to the instance (absolute in older results)."""
    if patch and not Path(patch).is_absolute() and root is not None:
        return str(root / patch)
    return patch


def _reached(covered_by: list[str] | None) -> str:
    if covered_by is None:
        return "every test ran on it"
    if not covered_by:
        return "no test reaches the change (or computes a different value there)"
    shown = ", ".join(covered_by[:5]) + (" ..." if len(covered_by) > 5 else "")
    return f"reached by {len(covered_by)} test(s): {shown}"


def _m_table(res: Any, key: str) -> Table | None:
    """M per file or per function, weakest first (None with a single row: the headline M)."""
    rows = mutation_score_by(res.mutants, key)
    if len(rows) < 2:
        return None
    t = table([key, "killed", "scored", "survived", "M"], [False, True, True, True, True])
    for name, (killed, scored) in sorted(rows.items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0])):
        t.add(Cell(name, code=True), killed, scored, scored - killed, pct(killed / scored))
    return t


def suite_section(run: ScoreRun) -> dict[str, Any]:
    res = run.result
    invalid = table(["test", "valid", "flaky", "reason"])
    for t in sorted(res.tests, key=lambda t: natural_key(t.id)):
        if not t.valid or t.flaky:
            invalid.add(
                Cell(t.id, code=True), str(t.valid), str(t.flaky), _reason(t.reference, t.flaky)
            )
    excluded = None
    if res.excluded_tests:
        excluded = table(["test", "reasons"])
        for test, reasons in sorted(res.excluded_tests.items(), key=lambda x: natural_key(x[0])):
            excluded.add(Cell(test, code=True), "; ".join(reasons))
    mt = table(
        ["mutant", "section", "operator", "status", "killed by", "description"],
        [False, False, False, False, True, False],
    )
    for m in res.mutants:
        mt.add(
            Cell(m.id, code=True),
            m.section or "",
            m.operator or "",
            Cell(str(m.status), css=str(m.status)),
            len(m.killed_by),
            m.description + (f" ({m.message})" if m.message else ""),
        )
    survivor_files: dict[str, list[dict[str, Any]]] = {}
    for m in res.mutants:
        if str(m.status) != "survived":
            continue
        survivor_files.setdefault(m.file or "?", []).append(
            {
                "id": m.id,
                "where": f"{m.file}:{m.line}" + (f" in {m.function}" if m.function else "")
                if m.file
                else "?",
                "operator": m.operator or m.section or "",
                "description": m.description,
                "target": m.target,
                "reached": _reached(m.covered_by),
                "diff": m.diff or _diff_text(_patch_path(m.patch, run.instance_root)),
            }
        )
    equivalent = [
        {"id": m.id, "kind": m.equivalent, "reason": m.message, "description": m.description}
        for m in res.mutants
        if str(m.status) == "equivalent"
    ]
    return {
        "label": run.label,
        "instance": res.instance,
        "suite": run.suite_label,
        "V": pct(res.validity).text,
        "M": pct(res.mutation_score).text,
        "invalid_table": invalid if invalid.rows else None,
        "excluded_table": excluded,
        "mutants_table": mt,
        "survivor_files": [{"file": f, "mutants": ms} for f, ms in survivor_files.items()],
        "survivor_count": sum(len(ms) for ms in survivor_files.values()),
        "equivalent": equivalent,
        "by_file_table": _m_table(res, "file"),
        "by_function_table": _m_table(res, "function"),
        "heatmap": _suite_heatmap(run),
        "mutation_report": str(run.mutation_report) if run.mutation_report else "",
    }


def suites_table(runs: Sequence[ScoreRun]) -> Table:
    """One row per score; the ``M per section`` column only where a score has spec sections
    (a package's operator mutants have none: an empty column says nothing)."""
    with_sections = any(k for r in runs for k in r.result.per_section)
    t = table(
        [
            "result",
            "instance",
            "suite",
            "tests",
            "valid",
            "flaky",
            "invalid",
            "V",
            "mutants",
            "scored",
            "killed",
            "survived",
            "build errors",
            "crashed",
            "M",
            *["M per section"] * with_sections,
        ],
        [False, False, False] + [True] * (11 + with_sections),
    )
    for r in runs:
        c = r.result.counts
        sections = ", ".join(
            f"{k}: {pct(v).text}" for k, v in r.result.per_section.items() if k
        )  # operator mutants have no section: nothing to show without a spec
        t.add(
            Cell(r.label, code=True),
            r.result.instance,
            r.suite_label,
            c.tests,
            c.valid,
            c.flaky,
            c.tests - c.valid,
            pct(r.result.validity),
            c.mutants,
            c.scored,
            c.killed,
            c.survived,
            c.build_errors,
            c.crashed,
            pct(r.result.mutation_score),
            *[sections] * with_sections,
        )
    return t


def correlations_table(corr: Mapping[str, Any]) -> Table:
    t = table(["relation", "pairs", "ρ", "95% interval", "p"], [False, True, True, False, True])
    names = {
        "sections_vs_mutation_score": "spec sections (with mutants) vs M",
        "reference_tests_vs_tests_written": "reference suite size vs tests written",
    }
    for key, c in corr.items():
        lo, hi = c.get("lo"), c.get("hi")
        interval = "n/a (needs 4 pairs)" if lo is None else f"[{lo:.3f}, {hi:.3f}]"
        if c.get("coefficient") is None and c["n"] >= 2:
            interval = "n/a (a variable is constant)"
        t.add(
            names.get(key, key), c["n"], num(c.get("coefficient")), interval, num(c.get("p_value"))
        )
    return t
