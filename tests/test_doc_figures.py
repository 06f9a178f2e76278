"""The figures README.md and docs/*.md quote from the bundled data are what the code gives.

A figure typed into a doc drifts from the code the first time a mutant, a test or a rule changes.
Every V, M, per-section M and R line that the docs print for a bundled instance (``suitebench
demo``'s suite table, ``suitebench score`` outputs) is read back here and compared with the
instance's ``expected.toml`` and its mutants' sections -- the figures
``tests/suite/endtoend/test_fixtures_instances.py`` asserts against real scores -- and the bad
suite's with its README's expected line (asserted by
``tests/suite/endtoend/test_fixtures_bad_suite.py``). The input-mode figures of the hand-made arm
(the demo's ``handmade`` row, audit.md's real run) are compared with one audit of the bundled
problems, as ``tests/audit/test_chain.py`` runs it. Figures measured by a bench are not here: the
docs link to ``docs/figures/``, which the benches write themselves.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections import defaultdict
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig
from suitebench.audit.pipeline import AuditResult, format_funnel, run_audit
from suitebench.audit.runs import AuditEngine
from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR, SUITES_DIR
from suitebench.model.instance import Instance, load_instance
from suitebench.run.executor import make_executor
from suitebench.run.store import Store

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
BAD_SUITE = SUITES_DIR / "bad-suite"

# `rpn  V = 100.0% (24/24 valid, 0 flaky)   M = 87.5% (14/16 killed, 2 build errors, 0 crashed)`
SCORE_LINE = re.compile(
    r"^(?P<name>[\w-]+)\s+V = (?P<v>[\d.]+)% \((?P<valid>\d+)/(?P<tests>\d+) valid, "
    r"(?P<flaky>\d+) flaky(?:, \d+ skipped)?\)\s+M = (?P<m>[\d.]+)% \((?P<killed>\d+)/"
    r"(?P<scored>\d+) killed, (?P<build_errors>\d+) build errors, (?P<crashed>\d+) crashed\)"
)
SECTION_LINE = re.compile(r"^M per section: (.*)$")
SECTION_FIGURE = re.compile(r"([A-Z][\w ]*?): ([\d.]+)%")


def pct(x: float | Fraction) -> str:
    return f"{100 * float(x):.1f}%"


@cache
def instances() -> dict[str, tuple[Instance, dict[str, Any]]]:
    """Every bundled instance by its directory name and by its ``name``, with its expected
    figures."""
    found: dict[str, tuple[Instance, dict[str, Any]]] = {}
    for path in sorted(INSTANCES_DIR.iterdir()):
        if not (path / "expected.toml").is_file():
            continue
        inst = load_instance(path)
        with (path / "expected.toml").open("rb") as fh:
            exp = tomllib.load(fh)
        found[path.name] = found[inst.name] = (inst, exp)
    return found


def scored_mutants(exp: dict[str, Any]) -> list[str]:
    return [m for m in exp["kills"] if m not in exp["build_errors"]]


def per_section(inst: Instance, exp: dict[str, Any]) -> dict[str, Fraction]:
    """M per spec section: killed / scored among the mutants of each section."""
    killed: dict[str, int] = defaultdict(int)
    scored: dict[str, int] = defaultdict(int)
    sections = {m.id: m.section for m in inst.mutants}
    for m in scored_mutants(exp):
        section = sections[m]
        assert section is not None, m
        scored[section] += 1
        killed[section] += bool(exp["kills"][m])
    return {s: Fraction(killed[s], scored[s]) for s in scored}


def bad_suite_expected() -> dict[str, int]:
    """The bad suite's figures as its README states them (``Expected: 7 units, 3 valid, V =
    3/7; M = 4/16 ...``), the statement ``test_fixtures_bad_suite.py`` checks on a real score."""
    text = (BAD_SUITE / "README.md").read_text()
    m = re.search(r"Expected: (\d+) units, (\d+) valid, V = \d+/\d+; M = (\d+)/(\d+)", text)
    assert m, "the bad suite's README no longer states its expected figures"
    units, valid, killed, scored = map(int, m.groups())
    return {"tests": units, "valid": valid, "killed": killed, "scored": scored}


def bad_suite_units() -> int:
    """Test functions of the bad suite's files, a file that does not parse counting as one."""
    units = 0
    for path in sorted((BAD_SUITE / "tests").glob("test_*.py")):
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            units += 1
            continue
        units += sum(
            isinstance(n, ast.FunctionDef) and n.name.startswith("test") for n in tree.body
        )
    return units


def doc_lines() -> list[tuple[str, int, str]]:
    out = []
    for path in [README, *DOCS]:
        for i, line in enumerate(path.read_text().splitlines(), 1):
            out.append((path.relative_to(ROOT).as_posix(), i, line.strip()))
    return out


def test_bad_suite_expectation_counts_its_own_files() -> None:
    assert bad_suite_units() == bad_suite_expected()["tests"]


def test_score_lines_of_bundled_instances() -> None:
    """Every `NAME  V = ...   M = ...` line the docs print for a bundled instance."""
    seen = 0
    for where, n, line in doc_lines():
        m = SCORE_LINE.match(line.removeprefix("$ "))
        if not m or m["name"] not in instances():
            continue
        inst, exp = instances()[m["name"]]
        if int(m["tests"]) == exp["tests"]:  # the instance's reference suite
            want = {
                "valid": exp["valid"],
                "tests": exp["tests"],
                "killed": exp["killed"],
                "scored": len(scored_mutants(exp)),
                "build_errors": len(exp["build_errors"]),
            }
        else:  # another suite: only the bad suite is scored against a bundled instance
            assert inst.name == "wordfreq", f"{where}:{n}: {line}"
            bad = bad_suite_expected()
            want = {**bad, "build_errors": 0}
        got = {k: int(m[k]) for k in want}
        assert got == want, f"{where}:{n}: {line}"
        assert m["v"] + "%" == pct(Fraction(want["valid"], want["tests"])), f"{where}:{n}"
        assert m["m"] + "%" == pct(Fraction(want["killed"], want["scored"])), f"{where}:{n}"
        assert (m["flaky"], m["crashed"]) == ("0", "0"), f"{where}:{n}"
        seen += 1
    assert seen >= 5  # README's score example, suite.md's examples


def test_per_section_lines_of_bundled_instances() -> None:
    """`M per section: ...` after a score line of a bundled instance's reference suite."""
    seen = 0
    last: str | None = None
    for where, n, line in doc_lines():
        m = SCORE_LINE.match(line.removeprefix("$ "))
        if m:
            known = m["name"] in instances()
            full = known and int(m["tests"]) == instances()[m["name"]][1]["tests"]
            last = m["name"] if full else None
            continue
        s = SECTION_LINE.match(line)
        if not s or last is None:
            continue
        inst, exp = instances()[last]
        want = per_section(inst, exp)
        figures = SECTION_FIGURE.findall(s[1])
        assert figures, f"{where}:{n}"
        for section, value in figures:
            assert section in want, f"{where}:{n}: no section {section!r}"
            assert value + "%" == pct(want[section]), f"{where}:{n}: {section}"
        seen += 1
    assert seen >= 2


def test_mutant_rows_of_bundled_instances() -> None:
    """Rows of a score table (`c05 │ Operators │ survived │`) under a bundled instance's line."""
    statuses = {"killed", "survived", "build_error"}
    seen = 0
    last: str | None = None
    for where, n, line in doc_lines():
        m = SCORE_LINE.match(line.removeprefix("$ "))
        if m:
            known = m["name"] in instances()
            full = known and int(m["tests"]) == instances()[m["name"]][1]["tests"]
            last = m["name"] if full else None
            continue
        cells = [c.strip() for c in line.split("│")]
        if last is None or len(cells) < 3 or cells[2] not in statuses:
            continue
        inst, exp = instances()[last]
        sections = {mu.id: mu.section for mu in inst.mutants}
        mutant = cells[0]
        assert sections.get(mutant) == cells[1], f"{where}:{n}"
        if mutant in exp["build_errors"]:
            want = "build_error"
        else:
            want = "killed" if exp["kills"][mutant] else "survived"
        assert cells[2] == want, f"{where}:{n}"
        # the killers are the last column (after `where` in today's --verbose table)
        if want == "killed" and len(cells) > 3 and cells[-1]:
            first = cells[-1].rstrip("…").split(",")[0].strip()
            assert any(t.startswith(first) for t in exp["kills"][mutant]), f"{where}:{n}"
        seen += 1
    assert seen >= 3


def test_demo_suite_table_in_readme() -> None:
    """The demo's suite-mode table and R line in README.md."""
    text = README.read_text()
    rows = 0
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) != 7 or cells[1] not in ("reference", "bad tests"):
            continue
        _inst, exp = instances()[cells[0]]
        if cells[1] == "reference":
            tests, valid = exp["tests"], exp["valid"]
            killed, scored = exp["killed"], len(scored_mutants(exp))
        else:
            bad = bad_suite_expected()
            tests, valid, killed, scored = bad["tests"], bad["valid"], bad["killed"], bad["scored"]
        assert cells[2:] == [
            str(tests),
            pct(Fraction(valid, tests)),
            f"{killed}/{scored}",
            pct(Fraction(killed, scored)),
            "0",
        ], line
        rows += 1
    assert rows == 4

    # R of the bundled candidate: the reference's valid tests less the two its patch breaks
    # (which tests/report/test_demo.py and tests/agents/test_harness.py check on real runs).
    m = re.search(
        r"R of a candidate rpn-c implementation: ([\d.]+)% \((\d+)/(\d+) reference tests pass\)"
        r"((?:\n\s+failed\s+\S+)+)",
        text,
    )
    assert m, "README's R line"
    failed = re.findall(r"failed\s+(\S+)", m[4])
    _inst, exp = instances()["rpn-c"]
    assert sorted(failed) == [
        "tests/test_stack.py::test_thirty_two_values_fit",
        "tests/test_stack.py::test_values_left_on_stack",
    ]
    total = exp["valid"]
    assert (int(m[2]), int(m[3])) == (total - len(failed), total)
    assert m[1] + "%" == pct(Fraction(total - len(failed), total))


# --- input mode: the hand-made arm on the bundled problems ----------------------------------


@pytest.fixture(scope="module")
def hand_audit(tmp_path_factory: pytest.TempPathFactory, build_cache: Path) -> AuditResult:
    tmp = tmp_path_factory.mktemp("doc-figures")
    store = Store(tmp / "store.sqlite")
    ex = make_executor(jobs=2)
    try:
        engine = AuditEngine(store, ex, build_cache)
        return run_audit(
            [PROBLEMS_DIR / "maxsum", PROBLEMS_DIR / "divsum", PROBLEMS_DIR / "mean"],
            [parse_arm("hand=arms/handmade")],
            engine,
            config=AuditConfig(pool="accepted"),
        )
    finally:
        ex.close()
        store.close()


def arm_figures(result: AuditResult, arm: str) -> dict[str, str]:
    r = result.results["arms"][arm]
    problems = [p for p in result.results["problems"].values() if arm in p["arms"]]
    cov = {f"cov@{k}": f"{r['cov_at_k'][k]:.3f}" for k in ("1", "5", "10", "50")}
    return {
        **cov,
        "inputs": str(sum(p["arms"][arm]["counts"].get("inputs", 0) for p in problems)),
        "killed/pool": f"{sum(p['arms'][arm]['killed'] for p in problems)}/"
        f"{sum(p['pool_size'] for p in problems)}",
        "certified": str(r["certified"]),
        "new": str(r["funnel"]["new_findings"]),
    }


def table_row(text: str, first: str) -> list[str]:
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)]
        if len(cells) > 4 and cells[0] == first:
            return cells
        if len(cells) > 4 and len(cells) > 1 and cells[1] == first:  # a boxed table
            return cells[1:]
    raise AssertionError(f"no row {first!r}")


def funnel_block(text: str, arm: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"arm {arm}")
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(" ".join(line.split()))
    return block


@pytest.mark.slow
def test_demo_audit_row_in_readme(hand_audit: AuditResult) -> None:
    text = README.read_text()
    got = arm_figures(hand_audit, "hand")
    row = table_row(text, "handmade")
    keys = ["inputs", "cov@1", "cov@5", "cov@10", "cov@50", "certified", "new"]
    assert row[1:8] == [got[k] for k in keys]
    want = [" ".join(x.split()) for x in format_funnel_lines(hand_audit)]
    assert funnel_block(text, "handmade") == want


@pytest.mark.slow
def test_real_run_in_audit_md(hand_audit: AuditResult) -> None:
    text = (ROOT / "docs" / "audit.md").read_text()
    start = text.index("## A real run")
    section = text[start : text.index("\n## ", start + 1)]
    got = arm_figures(hand_audit, "hand")
    row = table_row(section, "hand")
    keys = ["cov@1", "cov@5", "cov@10", "cov@50", "killed/pool", "certified", "new"]
    assert row[1:8] == [got[k] for k in keys]
    assert funnel_block(section, "hand") == [
        " ".join(x.split()) for x in format_funnel_lines(hand_audit)
    ]
    rows = hand_audit.ledger_rows
    assert f"ledger: {rows} certified rows; outputs in audit-out" in section


def format_funnel_lines(result: AuditResult) -> list[str]:
    """The funnel's lines for the hand-made arm, without their ``arm NAME`` head."""
    text = format_funnel({"hand": result.funnel["hand"]})
    return text.splitlines()[1:]


# --- bench figures the engine notes quote from a recorded run --------------------------------

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")

# (doc, figures file, where the quote starts, where it ends): every number between the two
# markers must be one the figures file holds (as printed, or rounded to the digits quoted).
RECORD_QUOTES = [
    (
        "docs/engine/suite.md",
        "score_throughput.md",
        "(../figures/score_throughput.md), written by the bench itself:",
        "s). This instance's tests are",
    ),
    (
        "docs/engine/build.md",
        "mutation_vs_mutmut.md",
        "(../figures/mutation_vs_mutmut.md), written by the bench itself:",
        "humanize 4.17.0 has no ratio",
    ),
    (
        "docs/engine/audit.md",
        "judge_throughput.md",
        "The figures of the last recorded run (`python bench/judge_throughput.py --record`",
        "are in [figures/judge_throughput.md]",
    ),
]


def record_numbers(name: str) -> list[str]:
    lines = (ROOT / "docs" / "figures" / name).read_text().splitlines()
    # the machine and the bench's output; not the run's date and commit
    body = "\n".join(line for line in lines if not line.startswith("- run:"))
    return [n.replace(",", "") for n in NUMBER.findall(body)]


def held_by(value: str, record: list[str]) -> bool:
    """``value`` is a number of the record, or one rounded to as many decimals as quoted."""
    value = value.replace(",", "")
    decimals = len(value.split(".")[1]) if "." in value else 0
    return any(round(float(r), decimals) == float(value) for r in record)


def quoted(doc: str, start: str, end: str) -> str:
    text = (ROOT / doc).read_text()
    assert text.count(start) == 1, f"{doc}: the quote's start {start!r}"
    begin = text.index(start) + len(start)
    return text[begin : text.index(end, begin)]


@pytest.mark.parametrize(("doc", "record", "start", "end"), RECORD_QUOTES)
def test_engine_notes_quote_the_recorded_run(doc: str, record: str, start: str, end: str) -> None:
    numbers = record_numbers(record)
    figures = NUMBER.findall(quoted(doc, start, end))
    assert figures
    missing = [f for f in figures if not held_by(f, numbers)]
    assert not missing, f"{doc} quotes figures that docs/figures/{record} does not hold: {missing}"


def test_audit_at_scale_second_run_is_the_recorded_one() -> None:
    """engine/audit.md's table: the second run is the one recorded in audit_at_scale.md."""
    table = quoted(
        "docs/engine/audit.md",
        "| 12 problems, 480 submissions (313 C++, 139 Python 3, 28 Java), 463 tests |",
        "\n\nWhat the figures say:",
    )
    numbers = record_numbers("audit_at_scale.md")
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) > 10
    for cells in rows:
        second = cells[-2]
        missing = [f for f in NUMBER.findall(second) if not held_by(f, numbers)]
        assert not missing, f"{cells[1].strip()}: {missing}"


# --- the selection lines of bundled instances' score runs ------------------------------------

SELECTION_LINE = re.compile(
    r"^test selection: (\w+) \((.*)\); (\d+) of (\d+) matrix cells run, the others kept"
)


def selection_lines() -> dict[str, list[tuple[str, int, re.Match[str]]]]:
    """Each `test selection: ...; N of M matrix cells run` line right under the score line of a
    bundled instance's reference suite, by instance directory."""
    found: dict[str, list[tuple[str, int, re.Match[str]]]] = defaultdict(list)
    last: str | None = None
    for where, n, line in doc_lines():
        m = SCORE_LINE.match(line.removeprefix("$ "))
        if m:
            known = m["name"] in instances()
            full = known and int(m["tests"]) == instances()[m["name"]][1]["tests"]
            last = m["name"] if full else None
            continue
        s = SELECTION_LINE.match(line)
        if s and last is not None:
            found[instances()[last][0].root.name].append((where, n, s))
        last = None
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", ["intervals-pkg", "rpn-c"])
def test_selection_lines_of_bundled_instances(name: str, tmp_path: Path) -> None:
    """What one score of the bundled instance selects, against every such line the docs print."""
    from suitebench.suite.score import score_suite

    lines = selection_lines()[name]
    assert lines, f"no selection line for {name} in the docs"
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score_suite(load_instance(INSTANCES_DIR / name), store=store, cache_dir=tmp_path)
    finally:
        store.close()
    cells = result.counts.tests * sum(1 for mu in result.mutants if mu.outcomes)
    ran = sum(mu.tests_run for mu in result.mutants)
    for where, n, m in lines:
        assert (m[1], m[2]) == (result.test_selection, result.coverage.reason), f"{where}:{n}"
        assert (int(m[3]), int(m[4])) == (ran, cells), f"{where}:{n}"
    if name == "rpn-c":  # suite.md: "the coverage build selects for N of the M mutants that build"
        text = (ROOT / "docs" / "suite.md").read_text()
        s = re.search(r"selects for (\d+) of the (\d+) mutants that build", text)
        assert s, "suite.md's rpn-c selection sentence"
        built = [mu for mu in result.mutants if str(mu.status) != "build_error"]
        selected = [mu for mu in built if mu.test_selection == "coverage"]
        assert (int(s[1]), int(s[2])) == (len(selected), len(built))
