"""The Stryker report, really opened: the published schema and the published viewer.

``mutation-report.json`` from real ``score`` runs is validated against the schema the
mutation-testing-elements project publishes (npm ``mutation-testing-report-schema``), then
opened in its real viewer (npm ``mutation-testing-elements``) in headless Chromium: the viewer
must render with no console error and show the same counts and score as ``results.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from suitebench.report.browser import Chromium

from .conftest import RealResults, StrykerPackages

# The text a reader sees: every text node, descending into the web components' shadow roots.
DEEP_TEXT = """(() => {
  const out = [];
  const walk = (n) => {
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) {
      if (c.nodeType === 3) out.push(c.textContent);
      else if (c.nodeName !== 'SCRIPT' && c.nodeName !== 'STYLE') walk(c);
    }
  };
  walk(document.querySelector('mutation-test-report-app'));
  return out.join(' ').replace(/\\s+/g, ' ');
})()"""


def _viewer_page(report: Path, packages: StrykerPackages, dest: Path) -> Path:
    """A page that loads the published viewer bundle and hands it the report, as Stryker's
    own HTML reporter does."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(packages.elements_js, dest / "mutation-test-elements.js")
    data = report.read_text(encoding="utf-8")
    page = dest / "index.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>mutation report</title>"
        "<script src='mutation-test-elements.js'></script></head><body>"
        "<mutation-test-report-app title-postfix='suitebench'></mutation-test-report-app>"
        f"<script>document.querySelector('mutation-test-report-app').report = {data};</script>"
        "</body></html>",
        encoding="utf-8",
    )
    return page


@pytest.mark.parametrize("which", ["score_rpn", "score_bad"])
def test_mutation_report_validates_against_the_published_schema(
    real_results: RealResults, stryker_packages: StrykerPackages, which: str
) -> None:
    schema = json.loads(stryker_packages.schema.read_text(encoding="utf-8"))
    report = json.loads((getattr(real_results, which) / "mutation-report.json").read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(report), key=lambda e: list(e.path))
    assert errors == [], "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_broken_report_is_rejected_by_the_published_schema(
    real_results: RealResults, stryker_packages: StrykerPackages
) -> None:
    """The schema check can fail: a status the schema does not know is caught."""
    schema = json.loads(stryker_packages.schema.read_text(encoding="utf-8"))
    report = json.loads((real_results.score_rpn / "mutation-report.json").read_text())
    first = next(iter(report["files"].values()))
    first["mutants"][0]["status"] = "Dead"
    assert list(jsonschema.validators.validator_for(schema)(schema).iter_errors(report))


def test_the_real_viewer_shows_the_scores(
    real_results: RealResults, stryker_packages: StrykerPackages, chromium: str, tmp_path: Path
) -> None:
    for which in ("score_rpn", "score_bad"):
        out = getattr(real_results, which)
        results = json.loads((out / "results.json").read_text())
        page = _viewer_page(out / "mutation-report.json", stryker_packages, tmp_path / which)
        with Chromium(binary=chromium) as browser:
            browser.open(page.as_uri(), settle=1.5)
            summary = browser.evaluate(DEEP_TEXT)
            browser.evaluate("location.hash = '#test'")
            browser.evaluate("new Promise(r => setTimeout(r, 800))")
            tests_view = browser.evaluate(DEEP_TEXT)
            errors = browser.errors()
        assert errors == []
        c = results["counts"]
        score = f"{100 * results['mutation_score']:.2f}"
        # the metrics row of "All files": score of total and of covered, then the counts
        row = (
            f"All files {score} {score} {c['killed']} {c['survived']} 0 0 0 "
            f"{c['crashed']} {c['build_errors']} {c['killed']} {c['survived']} {c['mutants']}"
        )
        assert row in summary, summary[:600]
        # the tests view: the valid tests that kill a mutant, the other valid ones (they ran on
        # every mutant: covering), the invalid ones (they neither cover nor kill), all tests
        tests = results["tests"]
        valid = [t for t in tests if t["valid"]]
        killing = {k for m in results["mutants"] for k in m["killed_by"]}
        n_invalid = len(tests) - len(valid)
        row = f"All tests {len(killing)} {len(valid) - len(killing)} {n_invalid} {len(tests)}"
        assert row in tests_view, tests_view[:600]
        assert all(Path(t["file"]).name in tests_view for t in valid)
