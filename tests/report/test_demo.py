"""``suitebench demo`` end to end: its printed figures are what its data implies.

One run (a few minutes on a cold store): the figures the demo prints must equal the result
files it writes, and those must say what the bundled data was built to show: the bad suite's
four broken tests are invalid and nothing else is, the candidate fails exactly the two stack
tests its patch breaks, the printed cov@k are what the kill matrices give by a formula written
here (checked against every ordering of a tiny matrix), the official tests kill no accepted
submission, correct submissions are never certified, the nondeterministic one is withdrawn by
the determinism stage on the inputs with many ties, and the report it writes holds all of it.
"""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import permutations
from math import comb
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from suitebench.report.load import load_results

from .conftest import suitebench


def expected_killed(kills: npt.NDArray[np.bool_], k: int) -> Fraction:
    """The expected number of pool members a uniform random k-subset of the inputs kills
    (rows are inputs, columns submissions): a member killed by c of the n inputs escapes only
    when all k drawn inputs are among the n - c others, with probability C(n-c, k) / C(n, k);
    an arm with fewer than k inputs uses them all."""
    n = kills.shape[0]
    total = Fraction(0)
    for c in (int(x) for x in kills.sum(axis=0)):
        total += (1 if c else 0) if k >= n else 1 - Fraction(comb(n - c, k), comb(n, k))
    return total


def pooled_cov_at_k(matrices: list[npt.NDArray[np.bool_]], k: int) -> float:
    """cov@k pooled over problems as the demo prints it: expected kills over all pool members."""
    return float(sum(expected_killed(m, k) for m in matrices) / sum(m.shape[1] for m in matrices))


def test_cov_at_k_formula_against_every_ordering() -> None:
    """The formula above, checked on a tiny matrix against all orderings of the inputs and
    against figures worked out by hand: A is killed by input 0, B by inputs 0 and 1, C by none.
    k=1: (1/3 + 2/3 + 0) / 3 = 1/3; k=2: (2/3 + 1 + 0) / 3 = 5/9; k>=3: 2/3."""
    kills = np.array([[1, 1, 0], [0, 1, 0], [0, 0, 0]], dtype=bool)
    by_hand = {1: Fraction(1, 3), 2: Fraction(5, 9), 3: Fraction(2, 3), 5: Fraction(2, 3)}
    orders = list(permutations(range(3)))
    for k, want in by_hand.items():
        brute = sum(
            Fraction(int(kills[list(order[:k])].any(axis=0).sum()), 3) for order in orders
        ) / len(orders)
        assert brute == want
        assert expected_killed(kills, k) / 3 == want


def _table_rows(text: str, first_cell: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 3 and cells[0] == first_cell:
            rows.append(cells)
    return rows


@pytest.mark.slow
@pytest.mark.timeout(1500)  # the whole demo from a cold store; slow on a busy machine
def test_demo_figures_match_what_its_data_implies(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = suitebench(tmp_path / "store" / "s.sqlite", "demo", "--out", str(out), timeout=1500)
    assert proc.returncode == 0, proc.stderr
    got = proc.stdout  # the tour's tables and summaries (stderr: progress bars only)
    assert f"report: {out / 'report.html'}" in got
    summary = json.loads((out / "demo.json").read_text())
    assert summary["report"] == str(out / "report.html")

    # --- suite mode: the printed V and M are the files' figures, and the files' figures are
    # the counts of their own tests and mutants
    suites = {
        "wordfreq-py/reference": ("wordfreq-py", "reference"),
        "rpn-c/reference": ("rpn-c", "reference"),
        "intervals-pkg/reference": ("intervals-pkg", "reference"),
        "wordfreq-py/bad-suite": ("wordfreq-py", "bad tests"),
    }
    for tag, (instance, label) in suites.items():
        res = json.loads((Path(summary["suite"][tag]["dir"]) / "results.json").read_text())
        valid = sum(t["valid"] for t in res["tests"])
        scored = [m for m in res["mutants"] if m["status"] in ("killed", "timeout", "survived")]
        killed = [m for m in scored if m["status"] != "survived"]
        assert res["validity"] == valid / len(res["tests"])
        assert res["mutation_score"] == len(killed) / len(scored)
        for m in killed:  # a kill is a valid test failing on the mutant
            assert m["killed_by"] and all(
                next(t for t in res["tests"] if t["id"] == k)["valid"] for k in m["killed_by"]
            )
        row = next(r for r in _table_rows(got, instance) if r[1] == label)
        assert row[2:7] == [
            str(len(res["tests"])),
            f"{100 * res['validity']:.1f}%",
            f"{len(killed)}/{len(scored)}",
            f"{100 * res['mutation_score']:.1f}%",
            str(sum(t["flaky"] for t in res["tests"])),
        ]
    bad = json.loads(
        (Path(summary["suite"]["wordfreq-py/bad-suite"]["dir"]) / "results.json").read_text()
    )
    invalid = sorted(Path(t["file"]).name for t in bad["tests"] if not t["valid"])
    # the bad suite was written with four broken tests: one that fails on the reference, one
    # that hangs, one that needs the network, one that does not parse
    assert invalid == ["test_flaky.py", "test_hangs.py", "test_network.py", "test_syntax_error.py"]

    cand = json.loads(
        (Path(summary["suite"]["rpn-c/candidate"]["dir"]) / "results.json").read_text()
    )
    assert cand["reference_pass_rate"] == cand["passed"] / cand["total"]
    assert sorted(cand["failing"]) == [
        "tests/test_stack.py::test_thirty_two_values_fit",
        "tests/test_stack.py::test_values_left_on_stack",
    ]
    assert (
        f"R of a candidate rpn-c implementation: {100 * cand['passed'] / cand['total']:.1f}%" in got
    )

    # --- input mode
    audit_dir = Path(summary["audit"]["dir"])
    results = json.loads((audit_dir / "results.json").read_text())
    run = load_results([audit_dir]).audits[0]
    for pid, p in results["problems"].items():
        # the pools are the accepted submissions: the official tests kill none of them (a
        # too-slow one may time out there, which is not a logic kill)
        assert set(p["official_verdicts"].values()) <= {"AC", "TLE"}, pid
        assert p["arms"]["official"]["killed"] == 0
    timed_out = {
        s
        for p in results["problems"].values()
        for s, v in p["official_verdicts"].items()
        if v == "TLE"
    }
    # only divsum's two O(N) submissions are slow enough to time out on the official tests
    assert {s.rsplit("/", 1)[-1] for s in timed_out} <= {"slow_n2.c", "slow_ok.c"}
    ledger = run.ledger
    assert len(ledger) == results["certified"] == summary["audit"]["ledger_rows"] > 0
    certified = {r["submission_id"].rsplit("/", 1)[-1] for r in ledger}
    assert not any(name.startswith("ok_") or name == "slow_ok.c" for name in certified)
    # the nondeterministic submission is withdrawn by the determinism stage on the hand-made
    # tie inputs (on a random input with two tied maxima it is wrong the same way every time,
    # and on three its re-judges can all agree by luck: it is not asserted absent from the ledger)
    assert any(
        r["submission_id"].endswith("nondet.c") and r["stage"] == "determinism"
        for r in run.retractions
    )
    for arm, r in results["arms"].items():
        # an official TLE is marked, not new: the funnel counts the flagged ones
        tle_flagged = {x["submission_id"] for x in ledger if x["arm"] == arm} & timed_out
        assert r["funnel"]["official_tle"] >= len(tle_flagged)
        row = _table_rows(got, arm)[0]
        mats = [m.kill_matrix(arm) for m in run.matrices.values()]
        n_inputs = sum(p["arms"][arm]["counts"]["inputs"] for p in results["problems"].values())
        printed = [float(x) for x in row[2:6]]
        expected = [pooled_cov_at_k(mats, k) for k in (1, 5, 10, 50)]
        assert printed == pytest.approx(expected, abs=6e-4)
        new = sum(1 for x in ledger if x["arm"] == arm and x["new_finding"] == "true")
        assert row[1] == str(n_inputs)
        assert row[6:8] == [str(r["certified"]), str(new)]

    # --- the report holds it
    html = (out / "report.html").read_text(encoding="utf-8")
    for r in ledger:
        assert r["submission_id"] in html
    assert "wordfreq-py--bad-suite" in html and "rpn-c--candidate" in html
