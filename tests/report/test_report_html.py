"""``suitebench report``: one self-contained HTML page, opened in a real headless Chromium.

Results come from real ``score`` and ``audit`` runs on the bundled data. The page must hold the
same figures as the result files, fetch nothing, render every table and plot with no console
error, read with scripts off, and its sorting and search must work.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from markupsafe import escape

from suitebench.metrics.cov_at_k import cov_at_k
from suitebench.report.browser import Chromium
from suitebench.report.load import load_results

from .conftest import RealResults, html_tables, suitebench


def test_recomputed_kill_matrices_give_the_audits_cov_at_k(real_results: RealResults) -> None:
    """The report rebuilds each arm's kill matrix from kills.npz: it must be the audit's own."""
    run = load_results([real_results.audit]).audits[0]
    checked = 0
    for pid, entry in run.results["problems"].items():
        for arm, a in entry["arms"].items():
            m = run.matrices[pid].kill_matrix(arm)
            assert m.shape == (a["counts"]["scored"], entry["pool_size"])
            assert int(m.any(axis=0).sum()) == a["killed"]
            for k, v in a["cov_at_k"].items():
                assert v == pytest.approx(cov_at_k(m, int(k)), abs=1e-6)
                checked += 1
    assert checked >= 2 * 4 * 8


def test_page_is_self_contained(report_html: Path) -> None:
    text = report_html.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    # nothing fetched: no external script, style sheet, image or font
    assert not re.search(r"""<(script|img|link|iframe)[^>]*\s(src|href)=""", text)
    assert "@import" not in text and "@font-face" not in text
    assert not re.search(r"url\((?!#)", text)  # only in-page references (clip paths)
    assert "default-src 'none'" in text  # and the page forbids any request
    # every plot is inline SVG with its text drawn as paths (no font needed)
    assert text.count('<svg class="plot"') >= 10
    svgs = re.findall(r"<svg class=\"plot\".*?</svg>", text, re.S)
    assert svgs and not any("<text" in s or "font-family" in s for s in svgs)
    # ids of many SVGs in one page do not collide
    ids = re.findall(r'\sid="([^"]+)"', text)
    assert len(ids) == len(set(ids))


def test_page_holds_the_result_files_figures(report_html: Path, real_results: RealResults) -> None:
    text = report_html.read_text(encoding="utf-8")
    audit = json.loads((real_results.audit / "results.json").read_text())
    # each arm's row of the arms table holds its own cov@k, in the column of that k
    arms = next(t for t in html_tables(text) if t.head[:2] == ["arm", "problems"])
    assert sorted(row[0].text for row in arms.rows) == sorted(audit["arms"])
    for arm, r in audit["arms"].items():
        row = next(row for row in arms.rows if row[0].text == arm)
        for k in ("1", "5", "10", "50"):
            cell = row[arms.head.index(f"cov@{k}")]
            assert cell.text == f"{r['cov_at_k'][k]:.3f}", (arm, k)
            assert cell.sort is not None and float(cell.sort) == r["cov_at_k"][k], (arm, k)
    ledger = (real_results.audit / "ledger.csv").read_text().splitlines()
    assert len(ledger) - 1 == audit["certified"] > 0
    for row in ledger[1:]:
        sub = row.split(",")[4]
        assert sub in text
    retractions = (real_results.audit / "retractions.csv").read_text().splitlines()[1:]
    for row in retractions:
        assert row.split(",")[6] in text  # the stage that withdrew it
    # and the head of the output each withdrawn flag judged
    with open(real_results.audit / "retractions.csv", newline="") as fh:
        heads = [r["output_head"] for r in csv.DictReader(fh) if r["output_head"].strip()]
    assert heads, "the demo's audit withdraws flags that judged an output"
    for head in heads:
        first = str(escape(head.splitlines()[0].strip()))  # as Jinja escapes it
        assert first in text, head
    bad = json.loads((real_results.score_bad / "results.json").read_text())
    assert f"{100 * bad['validity']:.1f}%" in text and f"{100 * bad['mutation_score']:.1f}%" in text
    # invalid tests carry their reason; surviving mutants their diff
    assert "fails on the reference (timeout, timeout, timeout)" in text
    survivor = next(m for m in bad["mutants"] if m["status"] == "survived")
    # the diff file, by its path relative to the instance the score records
    diff = (Path(bad["instance_dir"]) / survivor["patch"]).read_text()
    assert diff == survivor["diff"]  # and the diff as scored, carried in results.json
    first_change = next(
        ln for ln in diff.splitlines() if ln.startswith(("+", "-")) and ln[1:2] not in "+-"
    )
    assert (
        first_change.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&#34;")
        .replace("'", "&#39;")
        in text
    )
    # the environment: backend and versions of each result
    assert audit["backend"] in text and audit["python"] in text


def test_chromium_renders_tables_and_plots_without_console_errors(
    report_html: Path, chromium: str, tmp_path: Path
) -> None:
    with Chromium(binary=chromium) as page:
        page.open(report_html.as_uri())
        facts = page.evaluate(
            """(() => {
              const svgs = [...document.querySelectorAll('svg.plot')];
              const tables = [...document.querySelectorAll('table')];
              return {
                tables: tables.length,
                rows: tables.map(t => t.tBodies[0] ? t.tBodies[0].rows.length : 0),
                svgs: svgs.length,
                drawn: svgs.filter(s => {
                  const b = s.getBoundingClientRect(); return b.width > 50 && b.height > 50;
                }).length,
                paths: svgs.map(s => s.querySelectorAll('path').length),
                search: !document.getElementById('search').hidden,
              };
            })()"""
        )
        shot = page.screenshot(tmp_path / "report.png")
        errors = page.errors()
    assert errors == []
    assert facts["tables"] >= 12 and min(facts["rows"]) >= 1
    assert facts["svgs"] >= 10
    # every visible plot has a real size; plots inside closed <details> have none yet
    assert facts["drawn"] >= 6
    assert min(facts["paths"]) > 5  # drawn, not empty
    assert facts["search"]  # the script ran and showed the search box
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sorting_and_search_work(report_html: Path, chromium: str) -> None:
    with Chromium(binary=chromium) as page:
        page.open(report_html.as_uri())
        first_col = """(() => { const t = document.querySelectorAll('table')[0];
            return [...t.tBodies[0].rows].map(r => r.cells[0].textContent.trim()); })()"""
        before = page.evaluate(first_col)
        page.evaluate("document.querySelectorAll('table')[0].tHead.rows[0].cells[0].click()")
        asc = page.evaluate(first_col)
        page.evaluate("document.querySelectorAll('table')[0].tHead.rows[0].cells[0].click()")
        desc = page.evaluate(first_col)
        assert asc == sorted(before, key=str.lower) and desc == asc[::-1]
        visible = """[...document.querySelectorAll('table.searchable tbody tr')]
            .filter(r => r.offsetParent !== null || r.closest('details:not([open])'))
            .filter(r => !r.classList.contains('hidden')).length"""
        total = page.evaluate(visible)
        page.evaluate(
            "const i = document.querySelector('#search input'); i.value = 'tiebreak';"
            "i.dispatchEvent(new Event('input'))"
        )
        shown = page.evaluate(visible)
        texts = page.evaluate(
            """[...document.querySelectorAll('table.searchable tbody tr')]
               .filter(r => !r.classList.contains('hidden')).map(r => r.textContent)"""
        )
        assert 0 < shown < total
        assert all("tiebreak" in t.lower() for t in texts)
        assert page.errors() == []


def test_reads_with_scripts_off(report_html: Path, chromium: str) -> None:
    with Chromium(binary=chromium, scripts=False) as page:
        page.open(report_html.as_uri())
        facts = page.evaluate(
            """({tables: document.querySelectorAll('table tbody tr').length,
                 svgs: document.querySelectorAll('svg.plot').length,
                 searchHidden: document.getElementById('search').hidden,
                 noscript: document.querySelector('noscript') !== null})"""
        )
    assert facts["tables"] > 50 and facts["svgs"] >= 10
    assert facts["searchHidden"]  # the search box needs scripts: it stays hidden


def test_report_json_and_errors(real_results: RealResults, tmp_path: Path) -> None:
    proc = suitebench(
        real_results.store,
        "--json",
        "report",
        str(real_results.audit),
        "--out",
        str(tmp_path / "r.html"),
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    audit = data["audits"][0]
    results = json.loads((real_results.audit / "results.json").read_text())
    for arm, r in results["arms"].items():
        assert audit["arms"][arm]["cov_curve"]["10"] == pytest.approx(r["cov_at_k"]["10"], abs=1e-6)
    overlap = audit["kill_overlap"]
    assert (
        overlap["union"] + overlap["none"]
        == overlap["universe"]
        == sum(p["pool_size"] for p in results["problems"].values())
    )
    clusters = audit["near_clone_clusters"]
    assert sum(c["findings"] for c in clusters.values()) == results["certified"]

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.json").write_text('{"arms": {}, "problems": {"p1": {}}}')
    proc = suitebench(real_results.store, "report", str(broken), "--out", str(tmp_path / "x.html"))
    assert proc.returncode == 2
    assert "broken/results.json" in proc.stderr and "problems.p1" in proc.stderr
    assert "kills.npz" in proc.stderr
    proc = suitebench(real_results.store, "report", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "nowhere" in proc.stderr


def test_heatmap_cells_follow_the_verdicts(real_results: RealResults) -> None:
    """A red cell is a kill, exactly where kills.npz holds a kill verdict."""
    run = load_results([real_results.audit]).audits[0]
    m = run.matrices["maxsum"]
    kills = m.kill_codes()[m.verdicts]
    handmade = m.kill_matrix("handmade")
    cols = m.scored_columns("handmade")
    assert np.array_equal(handmade, kills[:, cols].T)


def test_unmeasured_figures_render_as_na(real_results: RealResults, tmp_path: Path) -> None:
    """A suite whose every mutant failed to build has no M (and no section scores): the report
    says n/a instead of inventing a 0, and still renders."""
    broken = tmp_path / "all-build-errors"
    broken.mkdir()
    res = json.loads((real_results.score_bad / "results.json").read_text())
    for m in res["mutants"]:
        m.update(status="build_error", killed_by=[], outcomes={})
    res.update(mutation_score=None, per_section={})
    res["counts"].update(scored=0, killed=0, survived=0, build_errors=len(res["mutants"]))
    (broken / "results.json").write_text(json.dumps(res))
    out = tmp_path / "r.html"
    proc = suitebench(real_results.store, "report", str(broken), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "M n/a" in text and ">n/a<" in text


def test_certified_near_clones_count_as_one_distinct_finding(
    real_results: RealResults, tmp_path: Path
) -> None:
    """Two certified submissions that differ only in comments and spacing are one cluster."""
    import csv
    import shutil

    from suitebench.report.analyses import certified_clusters

    audit = tmp_path / "audit"
    shutil.copytree(real_results.audit, audit)
    run = load_results([audit]).audits[0]
    row = next(r for r in run.ledger if r["submission_id"].endswith("overflow.c"))
    problem = tmp_path / "maxsum"
    shutil.copytree(row["problem_dir"], problem)
    source = (problem / row["submission_id"]).read_text()
    clone = "/* copied from a friend */\n" + source.replace("    ", "\t")
    (problem / "submissions/accepted/overflow_copy.c").write_text(clone)
    rows = [
        dict(r, problem_dir=str(problem)) if r["problem"] == "maxsum" else r for r in run.ledger
    ]
    rows.append(
        dict(row, problem_dir=str(problem), submission_id="submissions/accepted/overflow_copy.c")
    )
    with (audit / "ledger.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    run = load_results([audit]).audits[0]
    clusters = certified_clusters(run)[row["arm"]]
    assert clusters["findings"] == len([r for r in rows if r["arm"] == row["arm"]])
    assert clusters["clusters"] == clusters["findings"] - 1
    assert [
        "submissions/accepted/overflow.c",
        "submissions/accepted/overflow_copy.c",
    ] in clusters["per_problem"]["maxsum"]
