"""Review sample: stratified by problem, capped, seeded, inverse-probability weighted; and the
false-discovery rate with its Wilson bound from a filled-in review file."""

from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path

import pytest

from suitebench.audit.review import (
    ReviewError,
    UnsurePolicy,
    fdr_from_review,
    read_ledger_csv,
    review_sample,
    write_review_csv,
)


def ledger(sizes: dict[str, int]) -> list[dict[str, str]]:
    rows = []
    for problem, n in sizes.items():
        for i in range(n):
            rows.append(
                {
                    "problem": problem,
                    "submission_id": f"{problem}-s{i:03d}",
                    "submission_sha256": f"{i:064x}",
                    "input_id": f"agent/{i % 7:02d}.in",
                    "verdict": "WA" if i % 3 else "RE",
                }
            )
    return rows


def fill(path: Path, verdict_of: dict[str, str], default: str = "bug") -> None:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    for r in rows:
        r["human_verdict"] = verdict_of.get(r["submission_id"], default)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def test_stratified_capped_and_weighted() -> None:
    rows = ledger({"abc100_a": 10, "abc100_b": 2, "abc100_c": 5})
    s = review_sample(rows, cap=3, seed=1)
    per = Counter(r.stratum for r in s.rows)
    assert per == {"abc100_a": 3, "abc100_b": 2, "abc100_c": 3}
    assert s.strata == {"abc100_a": (10, 3), "abc100_b": (2, 2), "abc100_c": (5, 3)}
    weights = {r.stratum: r.weight for r in s.rows}
    assert weights == {"abc100_a": pytest.approx(10 / 3), "abc100_b": 1.0, "abc100_c": 5 / 3}
    # the weights stand for the whole ledger
    assert sum(r.weight for r in s.rows) == pytest.approx(len(rows)) == s.n_population
    # no row drawn twice, every drawn row is a ledger row of its own stratum
    ids = [r.row["submission_id"] for r in s.rows]
    assert len(ids) == len(set(ids))
    assert all(r.row["problem"] == r.stratum for r in s.rows)


def test_seeded_and_independent_of_ledger_order() -> None:
    rows = ledger({"p1": 30, "p2": 12})
    a = review_sample(rows, cap=4, seed=7)
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    b = review_sample(shuffled, cap=4, seed=7)
    c = review_sample(rows, cap=4, seed=8)
    pick = lambda s: [r.row["submission_id"] for r in s.rows]  # noqa: E731
    assert pick(a) == pick(b)
    assert pick(a) != pick(c)


def test_every_row_of_a_stratum_is_equally_likely() -> None:
    # inclusion probability of each of 10 rows at cap 3 is 0.3; 3000 draws: sd ~ 0.008
    rows = ledger({"p": 10})
    counts: Counter[str] = Counter()
    draws = 3000
    for seed in range(draws):
        counts.update(r.row["submission_id"] for r in review_sample(rows, cap=3, seed=seed).rows)
    assert len(counts) == 10
    for n in counts.values():
        assert abs(n / draws - 0.3) < 0.04


def test_missing_columns_are_named() -> None:
    with pytest.raises(ReviewError, match=r"row 2 lacks required column.*input_id"):
        review_sample(
            [
                {"problem": "p", "submission_id": "a", "input_id": "i"},
                {"problem": "p", "submission_id": "b"},
            ]
        )


def test_export_round_trip_and_fdr_with_no_false_discovery(tmp_path: Path) -> None:
    # 202 rows, one problem each, cap 3: every weight is 1 -> the paper's 0/202 bound, 1.87%
    rows = ledger({f"p{i:03d}": 1 for i in range(202)})
    ledger_csv = tmp_path / "ledger.csv"
    with ledger_csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    sample = review_sample(read_ledger_csv(ledger_csv), cap=3, seed=1)
    out = write_review_csv(sample, tmp_path / "review.csv")
    with out.open(newline="") as f:
        header = next(csv.reader(f))
    assert header[:4] == ["review_id", "weight", "stratum_size", "stratum_sampled"]
    assert header[-2:] == ["human_verdict", "reviewer_note"]
    assert "submission_sha256" in header
    # not filled in yet: refused, naming the lines
    with pytest.raises(ReviewError, match=r"202 row.*without a human_verdict: line 2, 3"):
        fdr_from_review(out)
    fill(out, {})
    est = fdr_from_review(out)
    assert est.n_reviewed == 202 and est.n_false == 0 and est.fdr == 0.0
    assert est.n_effective == pytest.approx(202)
    assert round(est.upper * 100, 2) == 1.87
    assert est.unweighted_upper == pytest.approx(est.upper)


def test_weighted_fdr_uses_effective_sample_size(tmp_path: Path) -> None:
    rows = ledger({"A": 10, "B": 2, "C": 5})
    sample = review_sample(rows, cap=3, seed=1)
    path = write_review_csv(sample, tmp_path / "review.csv")
    overturned = next(r.row["submission_id"] for r in sample.rows if r.stratum == "A")
    fill(path, {overturned: "not_bug"})
    est = fdr_from_review(path)
    # weights: 3 x 10/3 (A), 2 x 1 (B), 3 x 5/3 (C); sum = 17
    # fdr = (10/3) / 17 = 0.19608
    # n_eff = 17^2 / (3 (10/3)^2 + 2 + 3 (5/3)^2) = 289 / (100/3 + 2 + 25/3) = 289/43.667 = 6.6183
    assert est.fdr == pytest.approx((10 / 3) / 17)
    assert est.n_effective == pytest.approx(289 / (100 / 3 + 2 + 25 / 3))
    assert est.n_false == 1 and est.n_reviewed == 8
    assert est.unweighted_fdr == pytest.approx(1 / 8)
    # fewer effective rows and a larger rate: the weighted bound is the wider one
    assert est.upper > est.unweighted_upper > est.unweighted_fdr
    assert 0.19608 < est.upper < 1.0


def test_unsure_policy_and_bad_verdicts(tmp_path: Path) -> None:
    rows = ledger({"A": 4})
    sample = review_sample(rows, cap=4, seed=1)
    path = write_review_csv(sample, tmp_path / "review.csv")
    ids = [r.row["submission_id"] for r in sample.rows]
    fill(path, {ids[0]: " Unsure "})
    conservative = fdr_from_review(path)
    assert conservative.n_false == 1 and conservative.fdr == pytest.approx(0.25)
    assert conservative.unsure_policy is UnsurePolicy.AS_FALSE
    excluded = fdr_from_review(path, unsure="exclude")
    assert excluded.n_reviewed == 3 and excluded.n_false == 0 and excluded.n_excluded == 1
    assert excluded.upper < conservative.upper

    fill(path, {ids[1]: "maybe"})
    with pytest.raises(ReviewError, match=r"line \d+: human_verdict is 'maybe'"):
        fdr_from_review(path)
    fill(path, {ids[1]: ""})
    with pytest.raises(ReviewError, match="without a human_verdict"):
        fdr_from_review(path)
    partial = fdr_from_review(path, allow_blank=True)
    assert partial.n_reviewed == 3 and partial.n_excluded == 1
