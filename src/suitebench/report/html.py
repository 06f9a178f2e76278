"""``report.html``: one self-contained page for audit results, score results, or both.

:func:`render_report` turns loaded results into the page: summary tables, the plots (inline
SVG), a drill-down per problem and per suite, and the environment that produced each result.
The page fetches nothing: no external script, style sheet, font or image, and a
Content-Security-Policy that forbids any request, so what a reviewer opens is all there is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

import suitebench
from suitebench.report import analyses as an
from suitebench.report import plots
from suitebench.report.analyses import DEFAULT_DESIGN_BUDGET
from suitebench.report.load import AuditRun, Results, ScoreRun
from suitebench.report.suite_sections import (
    correlations_table,
    natural_key,
    suite_section,
    suites_table,
)
from suitebench.report.tables import Cell, Plot, Table, num, pct, table
from suitebench.report.template import SCRIPT, STYLE, TEMPLATE

__all__ = ["DEFAULT_DESIGN_BUDGET", "render_report", "write_report"]


# --- input mode ---------------------------------------------------------------------------


def _curve_ks(run: AuditRun, design_budget: int | None) -> list[int]:
    longest = 0
    for m in run.matrices.values():
        for cols in m.arm_columns.values():
            longest = max(longest, len(cols))
    top = max(longest, design_budget or 0, 10)
    return list(range(1, top + 1))


def _audit_heatmap(run: AuditRun, problem: str) -> Plot:
    m = run.matrices[problem]
    kill = m.kill_codes()
    skip = m.verdict_names.index("SKIP") if "SKIP" in m.verdict_names else -1
    ac = m.verdict_names.index("AC") if "AC" in m.verdict_names else -1
    cols: list[int] = []
    labels: list[str] = []
    groups: list[tuple[str, int, int]] = []
    for arm, arm_cols in m.arm_columns.items():
        start = len(cols)
        cols += arm_cols
        labels += m.arm_input_ids.get(arm, [str(c) for c in arm_cols])
        groups.append((arm, start, len(cols)))
    v = m.verdicts[:, cols] if cols else np.zeros((len(m.submissions), 0), dtype=np.uint8)
    cells = np.full(v.shape, 3, dtype=np.int_)
    cells[v == skip] = 0
    cells[v == ac] = 1
    cells[kill[v]] = 2
    svg = plots.heatmap_svg(
        cells,
        [s.split("/")[-1] for s in m.submissions],
        labels,
        title=f"{problem}: verdicts of the pool on every arm's inputs",
        xlabel="inputs, per arm in emission order",
        ylabel="pool submission",
        groups=groups,
    )
    return Plot(
        svg,
        "Red: a kill (WA/PE/RE/MLE/OLE); green: accepted; amber: TLE or a harness failure; "
        "grey: not judged (illegal input or no gold).",
    )


def _arms_table(run: AuditRun, clusters: Mapping[str, Any], ks: Sequence[str]) -> Table:
    t = table(
        [
            "arm",
            "problems",
            "inputs",
            "scored",
            *[f"cov@{k}" for k in ks],
            "micro coverage",
            "macro recall",
            "certified",
            "new findings",
            "distinct (near-clone clusters)",
        ],
        [False] + [True] * (8 + len(ks)),
    )
    for arm in run.arms:
        r = run.results["arms"][arm]
        per = [p["arms"][arm] for p in run.results["problems"].values() if arm in p["arms"]]
        inputs = sum(p["counts"].get("inputs", 0) for p in per)
        scored = sum(p["counts"].get("scored", 0) for p in per)
        cov = r.get("cov_at_k", {})
        t.add(
            Cell(arm, code=True),
            r.get("problems"),
            inputs,
            scored,
            *[num(cov.get(k)) for k in ks],
            num(r.get("micro_coverage")),
            num(r.get("macro_recall")),
            r.get("certified"),
            r.get("funnel", {}).get("new_findings"),
            clusters.get(arm, {}).get("clusters", 0),
        )
    return t


def _funnel_table(run: AuditRun) -> Table:
    keys = ["flagged", "official_tle", "reproducible", "after_corrections", "certified"]
    t = table(
        [
            "arm",
            "flagged",
            "of which official TLE",
            "reproducible",
            "after corrections",
            "certified",
            "new findings",
            "withdrawn by stage",
        ],
        [False] + [True] * 6,
    )
    for arm in run.arms:
        f = run.results["arms"][arm].get("funnel", {})
        by = ", ".join(f"{k} {v}" for k, v in sorted(f.get("withdrawn_by", {}).items()))
        t.add(Cell(arm, code=True), *[f.get(k) for k in keys], f.get("new_findings"), by or "none")
    return t


def _overlap_regions_table(overlap: Mapping[str, Any], what: str) -> Table:
    t = table(["sets", f"{what} in exactly these", f"{what} in all of these"], [False, True, True])
    inter = {tuple(r["sets"]): r["count"] for r in overlap["intersections"]}
    for r in overlap["regions"]:
        t.add(" & ".join(r["sets"]), r["count"], inter[tuple(r["sets"])])
    t.add(Cell("union"), overlap["union"], None)
    t.add(Cell("killed by none"), overlap["none"], None)
    return t


def _input_overlap_table(overlaps: Mapping[str, Any]) -> Table:
    t = table(
        ["arm", "inputs", "identical to an official test", "equal after whitespace normalising"],
        [False, True, True, True],
    )
    for arm, o in overlaps.items():
        n = o["arm_inputs"]
        norm = o["normalized"]
        t.add(
            Cell(arm, code=True),
            n,
            Cell(f"{o['exact']} ({o['exact'] / n:.1%})" if n else "0", sort=str(o["exact"])),
            Cell("n/a (inputs not kept on disk)", sort="")
            if norm is None
            else Cell(f"{norm} ({norm / n:.1%})" if n else "0", sort=str(norm)),
        )
    return t


def _input_head(run: AuditRun, sha: str) -> str:
    path = run.path / "inputs" / sha
    try:
        data = path.read_bytes()
    except OSError:
        return "(input not kept)"
    # written as the ledger writes expected and got: first 80 characters, newlines as \n
    return data.decode("utf-8", errors="replace")[:80].replace("\n", "\\n")


def _shown_ks(run: AuditRun) -> list[str]:
    """The budgets the tables show: the paper's 1, 5, 10 and 50 where the audit has them."""
    have = [str(k) for k in run.results.get("ks", [])]
    shown: list[str] = [k for k in ("1", "5", "10", "50") if k in have]
    return shown or have[:4]


def _problem_arms_table(run: AuditRun, entry: Mapping[str, Any], pool: int) -> Table:
    """One row per arm on the problem: its input counts, kills and cov@k."""
    ks = _shown_ks(run)
    arms = table(
        ["arm", "inputs", "scored", "illegal", "no gold", "killed", *[f"cov@{k}" for k in ks]],
        [False] + [True] * (5 + len(ks)),
    )
    for arm, a in entry["arms"].items():
        c = a.get("counts", {})
        arms.add(
            Cell(arm, code=True),
            c.get("inputs"),
            c.get("scored"),
            c.get("illegal"),
            c.get("no_gold"),
            Cell(f"{a.get('killed', 0)}/{pool}", sort=str(a.get("killed", 0))),
            *[num(a.get("cov_at_k", {}).get(k)) for k in ks],
        )
    return arms


def _ledger_table(run: AuditRun, ledger: list[dict[str, Any]]) -> Table:
    """The problem's ledger: each kill with its input, the outputs and the checks made."""
    lt = table(
        [
            "arm",
            "submission",
            "official",
            "new",
            "input",
            "input head",
            "expected",
            "got",
            "verdict",
            "determinism",
            "consensus / brute",
        ]
    )
    for r in ledger:
        lt.add(
            Cell(r["arm"], code=True),
            Cell(r["submission_id"], code=True),
            r["official_verdict"],
            r["new_finding"],
            Cell(r["input_id"], code=True),
            Cell(_input_head(run, r["input_sha256"]), code=True),
            Cell(r["expected_head"], code=True),
            Cell(r["got_head"] or "(crash: no output compared)", code=bool(r["got_head"])),
            Cell(r["verdict"], css="killed"),
            r["determinism"],
            "; ".join(x for x in (r.get("consensus", ""), r.get("brute", "")) if x),
        )
    return lt


def _retractions_table(retr: list[dict[str, Any]]) -> Table:
    """The problem's retracted kills: at which stage and why."""
    rt = table(["arm", "submission", "input", "verdict", "stage", "reason", "output judged"])
    for r in retr:
        head = r.get("output_head", "")  # older results have no such column
        rt.add(
            Cell(r["arm"], code=True),
            Cell(r["submission_id"], code=True),
            Cell(r["input_id"], code=True),
            r["verdict"],
            r["stage"],
            r["reason"],
            Cell(head or "(no output)", code=bool(head)),
        )
    return rt


def _problem_section(run: AuditRun, problem: str, clusters: Mapping[str, Any]) -> dict[str, Any]:
    """One problem's part of the page: its arms, ledger, retractions, clusters, build errors
    and heatmap."""
    entry = run.results["problems"][problem]
    pool = entry.get("pool_size", 0)
    arms = _problem_arms_table(run, entry, pool)
    ledger = [r for r in run.ledger if r["problem"] == problem]
    lt = _ledger_table(run, ledger)
    retr = [r for r in run.retractions if r["problem"] == problem]
    rt = _retractions_table(retr)
    builds = None
    if entry.get("build_errors"):
        builds = table(["submission", "build message"])
        for sub, msg in entry["build_errors"].items():
            builds.add(Cell(sub, code=True), Cell(msg, code=True))
    per_arm_clusters = {
        arm: c["per_problem"][problem] for arm, c in clusters.items() if problem in c["per_problem"]
    }
    return {
        "problem": problem,
        "pool": pool,
        "arms_table": arms,
        "ledger": ledger,
        "ledger_table": lt,
        "retractions": retr,
        "retractions_table": rt,
        "clusters": per_arm_clusters,
        "build_errors": builds,
        "heatmap": _audit_heatmap(run, problem),
    }


def _audit_context(run: AuditRun, design_budget: int | None) -> dict[str, Any]:
    clusters = an.certified_clusters(run)
    ks_all = _curve_ks(run, design_budget)
    shown = _shown_ks(run)
    curves = {arm: an.cov_curve(run, arm, ks_all) for arm in run.arms}
    prefix = {arm: an.prefix_curve(run, arm) for arm in run.arms}
    overlap = an.audit_kill_overlap(run)
    overlaps = an.input_overlaps(run)
    pool_total = sum(len(m.submissions) for m in run.matrices.values())
    the_plots = [
        Plot(
            plots.cov_curves_svg(ks_all, curves, design_budget),
            f"Pooled cov@k: the expected share of the {pool_total} pool submissions a uniform "
            "random k-subset of each problem's scored inputs kills (order-free; an arm with "
            "fewer than k inputs uses them all). The dotted line marks the design budget.",
        ),
        Plot(
            plots.prefix_curves_svg(prefix),
            "Prefix coverage: the share killed by each problem's first k inputs in the order "
            "the arm emitted them (how front-loaded an arm is).",
        ),
        Plot(
            plots.overlap_svg(overlap, "killed submissions"),
            "Every exclusive intersection of the arms' killed submissions, their union and "
            "the submissions no arm kills.",
        ),
    ]
    return {
        "label": str(run.path),
        "problems": run.problems,
        "pool": run.results.get("pool", ""),
        "basis": run.results.get("basis", ""),
        "ledger_rows": len(run.ledger),
        "retraction_rows": len(run.retractions),
        "arms_table": _arms_table(run, clusters, shown),
        "funnel_table": _funnel_table(run),
        "overlap_table": _input_overlap_table(overlaps) if overlaps else None,
        "regions_table": _overlap_regions_table(overlap, "killed"),
        "plots": the_plots,
        "per_problem": [_problem_section(run, p, clusters) for p in run.problems],
    }


# --- environment --------------------------------------------------------------------------


def _fmt(v: Any) -> str:
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {_fmt(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def _environment(results: Results) -> Table:
    t = table(["result", "kind", "what", "value"])
    for run in results.audits:
        r = run.results
        rows: list[tuple[str, Any]] = [
            ("suitebench", r.get("suitebench_version")),
            ("python", r.get("python")),
            ("isolation backend", r.get("backend")),
            ("toolchains", r.get("toolchains", {})),
            ("pool / consensus pool", f"{r.get('pool')} / {r.get('consensus_pool')}"),
            ("budgets k", r.get("ks")),
            ("runs executed / from the store", r.get("runs", {})),
        ]
        for pid, p in r["problems"].items():
            rows.append((f"{pid}: judge limits", p.get("limits", {}).get("judge", {})))
            rows.append((f"{pid}: oracle", p.get("oracle", {})))
            srcs = {a: v.get("source", "") for a, v in p.get("arms", {}).items()}
            rows.append((f"{pid}: arm sources (generator@seeds)", srcs))
        for what, value in rows:
            t.add(Cell(str(run.path), code=True), "audit", what, Cell(_fmt(value), code=True))
    for s in results.scores:
        res = s.result
        rows = [
            ("versions", res.versions),
            ("isolation backend", res.backend),
            ("engine / mode", f"{res.engine} / {res.mode}"),
            ("reference runs", res.reference_runs),
            ("limits", res.limits),
            ("wall time (s)", res.wall_time),
            ("suite", res.suite),
        ]
        for what, value in rows:
            t.add(Cell(str(s.path), code=True), "score", what, Cell(_fmt(value), code=True))
    for i in results.implementations:
        ir = i.result
        rows = [("versions", ir.versions), ("isolation backend", ir.backend), ("limits", ir.limits)]
        for what, value in rows:
            t.add(
                Cell(str(i.path), code=True), "implementation", what, Cell(_fmt(value), code=True)
            )
    return t


def _suites_context(scores: Sequence[ScoreRun]) -> dict[str, Any]:
    """The suites' part of the page: their table, the plots (M per spec section, the kill
    overlap, sections against M), the overlap's regions and the correlations."""
    ctx: dict[str, Any] = {"suites_table": suites_table(scores)}
    suite_plots: list[Plot] = []
    # Spec sections exist only where an instance has a spec; without one (operator mutants of
    # a package) the paper's charts -- M per section, the suites' kill overlap (Figure 12),
    # sections against M -- say nothing about it and are left out.
    sections = {
        r.label: {f"{r.result.instance}: {k}": v for k, v in r.result.per_section.items() if k}
        for r in scores
        if any(r.result.per_section)
    }
    if sections:
        suite_plots.append(
            Plot(
                plots.sections_svg(sections),
                "M per spec section: which requirements the suites leave untested.",
            )
        )
    overlap = an.score_kill_overlap(scores) if sections else None
    if overlap is not None:
        suite_plots.append(
            Plot(
                plots.overlap_svg(overlap, "killed mutants"),
                "Mutants killed by every combination of suites (TestSuiteBench Figure 12), "
                "their union and the mutants no suite kills.",
            )
        )
        ctx["suite_regions_table"] = _overlap_regions_table(overlap, "mutants")
        ctx["suite_overlap_instances"] = overlap["instances"]
    corr = an.suite_correlations(scores)
    sc = corr["sections_vs_mutation_score"]
    if sc["n"] >= 2 and sections:
        suite_plots.append(
            Plot(
                plots.scatter_svg(
                    sc["x"], sc["y"], sc["labels"], xlabel="spec sections", ylabel="M"
                ),
                "Spec sections (with mutants) against the mutation score M per suite.",
            )
        )
    ctx["suite_plots"] = suite_plots
    if not sections:  # no spec: "spec sections vs M" says nothing
        corr = {k: v for k, v in corr.items() if k != "sections_vs_mutation_score"}
    ctx["correlations_table"] = (
        correlations_table(corr) if any(c["n"] for c in corr.values()) else None
    )
    return ctx


def _implementations_table(results: Results) -> Table:
    """One row per implementation scored: its build, R, and the reference tests it fails."""
    it = table(
        ["result", "instance", "build", "R", "passed", "failing tests"],
        [False] * 3 + [True] * 2,
    )
    for i in results.implementations:
        ir = i.result
        it.add(
            Cell(i.label, code=True),
            ir.instance,
            ir.build_status,
            pct(ir.reference_pass_rate),
            Cell(f"{ir.passed}/{ir.total}", sort=str(ir.passed)),
            "; ".join(f"{k} ({ir.failing[k]})" for k in sorted(ir.failing, key=natural_key)),
        )
    return it


def render_report(
    results: Results,
    *,
    sources: Sequence[str] = (),
    design_budget: int | None = DEFAULT_DESIGN_BUDGET,
    title: str = "suitebench report",
) -> str:
    """The whole page as one string."""
    ctx: dict[str, Any] = {
        "title": title,
        "version": suitebench.__version__,
        "sources": list(sources),
        "style": STYLE,
        "script": SCRIPT,
        "audits": [_audit_context(r, design_budget) for r in results.audits if r.arms],
        "suites": [suite_section(r) for r in results.scores],
        "implementations": results.implementations,
        "environment_table": _environment(results),
    }
    if results.scores:
        ctx.update(_suites_context(results.scores))
    if results.implementations:
        ctx["implementations_table"] = _implementations_table(results)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    ctx.setdefault("suites_table", None)
    ctx.setdefault("suite_plots", [])
    ctx.setdefault("suite_regions_table", None)
    ctx.setdefault("suite_overlap_instances", [])
    ctx.setdefault("correlations_table", None)
    ctx.setdefault("implementations_table", None)
    return env.from_string(TEMPLATE).render(**ctx)


def write_report(
    results: Results,
    out: Path,
    *,
    sources: Sequence[str] = (),
    design_budget: int | None = DEFAULT_DESIGN_BUDGET,
) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render_report(results, sources=sources, design_budget=design_budget)
    out.write_text(text, encoding="utf-8")
    return out
