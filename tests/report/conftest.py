"""Real result directories, a real Chromium and the published Stryker packages, once a session.

The result directories come from running ``suitebench score`` and ``suitebench audit`` on the
bundled data, exactly as a user does. Chromium (Debian's ``chromium``) and the published
mutation-testing-elements viewer and report schema (npm packages, unpacked into ``.cache/npm``
of the checkout) are installed by ``scripts/bootstrap.sh`` with ``SUITEBENCH_TEST_TOOLS=1``,
which ``scripts/test.sh`` sets. The tests install nothing and change nothing on the host: a
browser test without them fails, naming that step, rather than skipping.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR, SUITES_DIR
from suitebench.report.browser import find_chromium

from ..cli_helpers import run_suitebench

NPM_CACHE = Path(__file__).resolve().parents[2] / ".cache" / "npm"


def suitebench(store: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run the command line as a user does, in a child process."""
    return run_suitebench(*args, store=store, timeout=timeout)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Whichever test first asks for the real results also waits for the score and audit runs
    that make them (minutes on a busy machine): those tests get a ceiling to match."""
    for item in items:
        if "real_results" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(1500))


@dataclass(frozen=True)
class RealResults:
    root: Path
    store: Path
    audit: Path  # maxsum and mean, arms handmade and random (+ official and samples)
    score_reference: Path  # wordfreq-py, its reference suite
    score_bad: Path  # wordfreq-py, the bundled bad suite
    score_rpn: Path  # rpn-c, its reference suite


@pytest.fixture(scope="session")
def real_results(tmp_path_factory: pytest.TempPathFactory) -> RealResults:
    root = tmp_path_factory.mktemp("results")
    store = root / "store" / "store.sqlite"
    res = RealResults(
        root,
        store,
        root / "audit",
        root / "scores" / "wordfreq-reference",
        root / "scores" / "wordfreq-bad",
        root / "scores" / "rpn-reference",
    )
    runs = [
        ("score", str(INSTANCES_DIR / "wordfreq-py"), "--out", str(res.score_reference)),
        (
            "score",
            str(INSTANCES_DIR / "wordfreq-py"),
            "--suite",
            str(SUITES_DIR / "bad-suite"),
            "--out",
            str(res.score_bad),
        ),
        ("score", str(INSTANCES_DIR / "rpn-c"), "--out", str(res.score_rpn)),
        (
            "audit",
            str(PROBLEMS_DIR / "maxsum"),
            str(PROBLEMS_DIR / "mean"),
            "--arm",
            "handmade=arms/handmade",
            "--arm",
            "random=generator@12",
            "--out",
            str(res.audit),
        ),
    ]
    for args in runs:
        proc = suitebench(store, *args)
        assert proc.returncode == 0, f"suitebench {' '.join(args)} failed:\n{proc.stderr}"
    return res


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of Debian's chromium; the test set-up installs it, a test never does."""
    path = find_chromium()
    if path is None:
        pytest.fail(
            "no chromium on PATH: `SUITEBENCH_TEST_TOOLS=1 bash scripts/bootstrap.sh` installs "
            "Debian's chromium (as root; scripts/test.sh runs it), or install it yourself"
        )
    return path


@dataclass(frozen=True)
class StrykerPackages:
    schema: Path  # mutation-testing-report-schema.json
    elements_js: Path  # the viewer's self-contained bundle (mutation-test-elements.js)


def _npm_package(name: str) -> Path:
    """An npm package the test set-up unpacked into the checkout's cache."""
    package = NPM_CACHE / name / "package"
    if not (package / "package.json").is_file():
        pytest.fail(
            f"npm package {name} missing at {package}: `SUITEBENCH_TEST_TOOLS=1 bash "
            "scripts/bootstrap.sh` fetches it with npm pack (scripts/test.sh runs it)"
        )
    return package


@pytest.fixture(scope="session")
def stryker_packages() -> StrykerPackages:
    """The published report schema and viewer, as the test set-up fetched them."""
    schema_pkg = _npm_package("mutation-testing-report-schema")
    elements_pkg = _npm_package("mutation-testing-elements")
    schema = next(schema_pkg.rglob("mutation-testing-report-schema.json"))
    return StrykerPackages(schema, elements_pkg / "dist" / "mutation-test-elements.js")


@dataclass(frozen=True)
class HtmlCell:
    text: str
    sort: str | None  # the data-v the page's sorting uses


@dataclass(frozen=True)
class HtmlTable:
    head: list[str]
    rows: list[list[HtmlCell]]


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[HtmlTable] = []
        self._cell: list[str] | None = None
        self._sort: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(HtmlTable([], []))
        elif tag == "tr" and self.tables:
            self.tables[-1].rows.append([])
        elif tag in ("td", "th"):
            self._cell, self._sort = [], dict(attrs).get("data-v")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell).strip()
            table = self.tables[-1]
            if tag == "th":
                table.head.append(text)
            else:
                table.rows[-1].append(HtmlCell(text, self._sort))
            self._cell = None
        elif tag == "table":
            last = self.tables[-1]
            self.tables[-1] = HtmlTable(last.head, [r for r in last.rows if r])


def html_tables(text: str) -> list[HtmlTable]:
    """Every table of a page, read as markup (what a reader with scripts off sees)."""
    parser = _Tables()
    parser.feed(text)
    return parser.tables


@pytest.fixture(scope="session")
def report_html(real_results: RealResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of every bundled result, written once, as ``suitebench report`` writes it."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    proc = suitebench(
        real_results.store,
        "report",
        str(real_results.audit),
        str(real_results.root / "scores"),
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert f"report written to {out}" in proc.stdout
    assert "1 audit(s), 3 suite score(s)" in proc.stdout
    return out
