"""The report's plots and tables as a reader sees them in headless Chromium.

Every label of a kill matrix is drawn whole and inside its plot (a test id cut at the left can
read as another test), no two labels of a plot lie on top of each other (narrow arms side by
side in an audit's verdict heatmap), and test ids come in the order a reader counts:
``test_p[2]`` before ``test_p[10]``, in the printed tables, the heatmap rows and after a click
on a column head. The plots' text is drawn as paths; matplotlib keeps each text's string in a
comment inside its group, which is how the labels are read back from the page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from suitebench.report.browser import Chromium
from suitebench.report.load import load_results

from .conftest import RealResults, html_tables, suitebench

# Per plot: its title and box, and every text in it with its string and its box on screen.
PLOT_TEXTS = """(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  return [...document.querySelectorAll('svg.plot')].map(svg => {
    const b = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('g[id*="-text_"]')].map(g => {
      const c = [...g.childNodes].find(n => n.nodeType === 8);
      const r = g.getBoundingClientRect();
      return {label: c ? c.textContent.trim() : '', box: [r.left, r.top, r.right, r.bottom]};
    }).filter(t => t.label);
    return {title: svg.getAttribute('aria-label'), box: [b.left, b.top, b.right, b.bottom],
            texts: texts};
  });
})()"""


@pytest.fixture(scope="module")
def plot_texts(report_html: Path, chromium: str) -> list[dict[str, Any]]:
    with Chromium(binary=chromium) as page:
        page.open(report_html.as_uri())
        plots: list[dict[str, Any]] = page.evaluate(PLOT_TEXTS)
        assert page.errors() == []
    return plots


def _heatmaps(plots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [p for p in plots if "kill matrix" in p["title"] or "verdicts" in p["title"]]
    assert len(found) == 5  # three suites' kill matrices, two problems' verdicts
    return found


def test_kill_matrix_labels_are_whole_and_inside_the_plot(
    plot_texts: list[dict[str, Any]], real_results: RealResults
) -> None:
    heatmaps = _heatmaps(plot_texts)
    for p in heatmaps:
        left, _, right, _ = p["box"]
        outside = [t["label"] for t in p["texts"] if t["box"][0] < left - 0.5]
        outside += [t["label"] for t in p["texts"] if t["box"][2] > right + 0.5]
        assert outside == [], p["title"]
    # every test of the rpn suite is a row label, its name whole (several pass 28 characters)
    rpn = json.loads((real_results.score_rpn / "results.json").read_text())
    names = {t["id"].split("::")[-1] for t in rpn["tests"]}
    assert max(len(n) for n in names) > 28
    labels = {t["label"] for p in heatmaps if p["title"].startswith("rpn") for t in p["texts"]}
    assert names <= labels, sorted(names - labels)
    # and every input of the audit's arms is a column label, its id whole ("07-dup-of-
    # official.in" passes 18 characters), every pool submission a row label
    run = load_results([real_results.audit]).audits[0]
    labels = {t["label"] for p in heatmaps if "verdicts" in p["title"] for t in p["texts"]}
    for m in run.matrices.values():
        inputs = {i for ids in m.arm_input_ids.values() for i in ids}
        assert max(len(i) for i in inputs) > 18 or m is not run.matrices["maxsum"]
        assert inputs <= labels, sorted(inputs - labels)
        assert {s.split("/")[-1] for s in m.submissions} <= labels


def _overlaps(texts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes share more than half a pixel both ways."""
    found = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a["box"], b["box"]
            if min(ax1, bx1) - max(ax0, bx0) > 0.5 and min(ay1, by1) - max(ay0, by0) > 0.5:
                found.append((a["label"], b["label"]))
    return found


def test_no_two_labels_of_a_plot_overlap(plot_texts: list[dict[str, Any]]) -> None:
    assert len(plot_texts) >= 10
    for p in plot_texts:
        assert len(p["texts"]) > 5, p["title"]
        assert _overlaps(p["texts"]) == [], p["title"]
    # the audit's heatmaps name every arm above its columns, the title above them all
    for p in _heatmaps(plot_texts):
        if "verdicts" in p["title"]:
            arms = [t for t in p["texts"] if t["label"] in ("official", "samples", "handmade")]
            title = next(t for t in p["texts"] if t["label"] == p["title"])
            assert len(arms) == 3 and all(t["box"][1] >= title["box"][3] for t in arms)


PARAM = "tests/tests/test_param.py::test_p"


def _parametrized_suite(real_results: RealResults, root: Path) -> Path:
    """The bad suite's result with twelve parametrised tests added, listed in text order
    ([0], [10], [11], [1], [2], ...), every one failing on the reference."""
    res = json.loads((real_results.score_bad / "results.json").read_text())
    ids = sorted(f"{PARAM}[{i}]" for i in range(12))
    assert ids[:4] == [f"{PARAM}[{i}]" for i in (0, 10, 11, 1)]
    for test in ids:
        res["tests"].append(
            {
                "id": test,
                "file": "tests/tests/test_param.py",
                "valid": False,
                "flaky": False,
                "reference": ["failed"] * 3,
                "sections": [],
                "message": "assert False",
            }
        )
        for m in res["mutants"]:
            if m["outcomes"]:
                m["outcomes"][test] = "failed"
    res["counts"]["tests"] += len(ids)
    out = root / "param-suite"
    out.mkdir()
    (out / "results.json").write_text(json.dumps(res))
    return out


def test_parametrized_ids_sort_naturally(
    real_results: RealResults, chromium: str, tmp_path: Path
) -> None:
    suite = _parametrized_suite(real_results, tmp_path)
    out = tmp_path / "r.html"
    proc = suitebench(real_results.store, "report", str(suite), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    want = [f"{PARAM}[{i}]" for i in range(12)]
    # the printed table of invalid tests
    invalid = next(t for t in html_tables(text) if t.head[:2] == ["test", "valid"])
    assert [r[0].text for r in invalid.rows if r[0].text.startswith(PARAM)] == want
    # the kill matrix's rows, top to bottom
    svg = next(
        s for s in re.findall(r"<svg class=\"plot\".*?</svg>", text, re.S) if "kill matrix" in s
    )
    rows = re.findall(r"<!-- (test_p\[\d+\]) -->", svg)
    assert rows == [w.split("::")[-1] for w in want]
    # a click on the column head sorts by the same rule, and a second click reverses it
    table = """[...document.querySelectorAll('table')].find(t =>
        t.tHead.rows[0].cells[0].textContent.trim() === 'test'
        && t.tHead.rows[0].cells[1].textContent.trim() === 'valid')"""
    column = (
        f"[...{table}.tBodies[0].rows].map(r => r.cells[0].textContent.trim())"
        f".filter(s => s.startsWith({json.dumps(PARAM)}))"
    )
    head = f"{table}.tHead.rows[0].cells[0].click()"
    with Chromium(binary=chromium) as page:
        page.open(out.as_uri())
        page.evaluate(head)
        asc = page.evaluate(column)
        page.evaluate(head)
        desc = page.evaluate(column)
        assert page.errors() == []
    assert asc == want and desc == want[::-1]
