"""The audits of the chain itself from the command line: ``audit --fuzz-validator``,
``audit --review-sample N`` and ``review-fdr``, run as a user runs them (a subprocess)."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from suitebench.audit.fuzz import structural_variants

from .conftest import copy_problem
from .test_cli_ledger import suitebench

# A validator with a classic bug: it reads the tokens it needs and never checks that the input
# ends there or that the lines are where the statement puts them, so trailing tokens, an extra
# line and a header folded into the data pass as legal.
SLOPPY_VALIDATOR = """\
import sys

tok = sys.stdin.buffer.read().split()
try:
    n = int(tok[0])
    a = [int(x) for x in tok[1 : 1 + n]]
except (IndexError, ValueError):
    sys.exit("bad format")
if not 1 <= n <= 1000 or len(a) != n:
    sys.exit("bad n")
if any(abs(x) > 10**9 for x in a):
    sys.exit("a_i out of range")
"""

CAP = 2
SEED = 7


@pytest.fixture(scope="module")
def chain_audit(tmp_path_factory: pytest.TempPathFactory, build_cache: Path) -> dict[str, Any]:
    """One audit of three problems: ``mean`` with its strict validator, the same problem with a
    sloppy validator (``mean_sloppy``), and ``maxsum``; validators fuzzed, review sample drawn."""
    tmp = tmp_path_factory.mktemp("chain")
    strict = copy_problem(tmp / "a", "mean")
    sloppy = copy_problem(
        tmp / "b",
        "mean",
        id='id = "mean"|id = "mean_sloppy"',
        validator='validator = "validator.py"|validator = "validator_sloppy.py"',
    )
    (sloppy / "validator_sloppy.py").write_text(SLOPPY_VALIDATOR)
    maxsum = copy_problem(tmp / "c", "maxsum")
    out = tmp / "out"
    args = [
        "audit",
        str(strict),
        str(sloppy),
        str(maxsum),
        "--arm",
        "hand=arms/handmade",
        "--build-cache",
        str(build_cache),
        "--fuzz-validator",
        "--review-sample",
        str(CAP),
        "--seed",
        str(SEED),
    ]
    store = tmp / "store.sqlite"
    proc = suitebench(*args, "--out", str(out), store=store)
    assert proc.returncode == 0, proc.stderr
    return {
        "tmp": tmp,
        "out": out,
        "stdout": proc.stdout,  # the human summary: stdout without --json
        "problems": {"mean": strict, "mean_sloppy": sloppy, "maxsum": maxsum},
        "args": args,
        "store": store,
    }


def _really_accepted(validator: Path, problem: Path) -> tuple[int, set[str]]:
    """Run the validator directly (no sandbox, no suitebench) on every distinct structural
    variant of the problem's official inputs: (number of variants, sha256 of those accepted)."""
    originals = [p.read_bytes() for p in sorted((problem / "tests").glob("*.in"))]
    seen = {hashlib.sha256(d).hexdigest() for d in originals}
    variants: dict[str, bytes] = {}
    for data in originals:
        for v in structural_variants(data):
            if v.sha256 not in seen and v.sha256 not in variants:
                variants[v.sha256] = v.data
    accepted = set()
    for sha, data in variants.items():
        rc = subprocess.run(
            [sys.executable, str(validator)], input=data, capture_output=True, timeout=60
        ).returncode
        if rc == 0:
            accepted.add(sha)
    return len(variants), accepted


def _fuzz_report(chain_audit: dict[str, Any], pid: str) -> dict[str, Any]:
    path = chain_audit["out"] / pid / "validator-fuzz.json"
    assert path.is_file()
    report: dict[str, Any] = json.loads(path.read_text())
    return report


def test_strict_validator_fuzz_has_no_false_accept(chain_audit: dict[str, Any]) -> None:
    problem = chain_audit["problems"]["mean"]
    report = _fuzz_report(chain_audit, "mean")
    n_variants, accepted = _really_accepted(problem / "validator.py", problem)
    assert accepted == set()  # the bundled validator is strict: a fullmatch on the format
    assert report["n_variants"] == n_variants > 0
    assert report["n_accepted"] == 0 and report["accepted"] == []
    assert report["originals_rejected"] == [] and report["sound"] is True
    summary = json.loads((chain_audit["out"] / "results.json").read_text())["problems"]["mean"]
    assert summary["validator_fuzz"] == {
        "validator": "validator.py",
        "variants": n_variants,
        "false_accepts": 0,
        "errors": 0,
        "originals_rejected": [],
        "build_message": "",
        "sound": True,
        "report": "mean/validator-fuzz.json",
    }
    assert not (chain_audit["out"] / "mean" / "validator-fuzz-accepts").exists()
    assert (
        f"validator fuzz mean: {n_variants} variants, 0 false accept(s)" in (chain_audit["stdout"])
    )


def test_sloppy_validator_false_accepts_match_what_it_really_does(
    chain_audit: dict[str, Any],
) -> None:
    problem = chain_audit["problems"]["mean_sloppy"]
    report = _fuzz_report(chain_audit, "mean_sloppy")
    n_variants, accepted = _really_accepted(problem / "validator_sloppy.py", problem)
    assert accepted  # trailing tokens and an extra line pass a token-reading validator
    assert report["n_variants"] == n_variants
    assert {f["sha256"] for f in report["accepted"]} == accepted
    assert report["n_accepted"] == len(accepted) and report["sound"] is False
    kinds = {f["kind"] for f in report["accepted"]}
    assert {"trailing_token", "extra_line"} <= kinds
    assert "non_numeric" not in kinds  # int("1a") fails: that much it does check

    # each accepted variant is written out, and it is a *false* accept: the strict validator
    # of the same statement rejects it
    strict = chain_audit["problems"]["mean"] / "validator.py"
    written = chain_audit["out"] / "mean_sloppy" / "validator-fuzz-accepts"
    for sha in accepted:
        data = (written / f"{sha}.in").read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha
        rc = subprocess.run([sys.executable, str(strict)], input=data, capture_output=True)
        assert rc.returncode != 0

    results = json.loads((chain_audit["out"] / "results.json").read_text())
    fz = results["problems"]["mean_sloppy"]["validator_fuzz"]
    assert (fz["variants"], fz["false_accepts"], fz["sound"]) == (n_variants, len(accepted), False)
    # the human summary lists every false accept with its kind and source
    err = chain_audit["stdout"]
    assert f"validator fuzz mean_sloppy: {n_variants} variants, {len(accepted)} false" in err
    listed = [ln for ln in err.splitlines() if ln.startswith("  accepts ")]
    assert len(listed) == len(accepted)
    for f in report["accepted"]:
        assert any(f"{f['kind']} of {f['source_id']} ({f['detail']})" in ln for ln in listed)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_review_sample_is_capped_per_problem_with_weights(chain_audit: dict[str, Any]) -> None:
    out = chain_audit["out"]
    ledger = _csv(out / "ledger.csv")
    sample = _csv(out / "review-sample.csv")
    sizes = Counter(r["problem"] for r in ledger)
    assert set(sizes) == {"mean", "mean_sloppy", "maxsum"}
    assert max(sizes.values()) > CAP  # the cap bites somewhere
    taken = Counter(r["problem"] for r in sample)
    assert taken == {p: min(CAP, n) for p, n in sizes.items()}
    ledger_keys = {tuple(sorted(r.items())) for r in ledger}
    seen = set()
    for r in sample:
        n, k = sizes[r["problem"]], taken[r["problem"]]
        assert float(r["weight"]) == pytest.approx(n / k)
        assert (int(r["stratum_size"]), int(r["stratum_sampled"])) == (n, k)
        assert r["human_verdict"] == "" and r["reviewer_note"] == ""
        row = {c: v for c, v in r.items() if c in ledger[0]}
        assert tuple(sorted(row.items())) in ledger_keys  # a ledger row, unchanged
        seen.add((row["problem"], row["submission_id"], row["input_id"], row["arm"]))
    assert len(seen) == len(sample)  # no row drawn twice
    # the weights stand for the whole ledger
    assert sum(float(r["weight"]) for r in sample) == pytest.approx(len(ledger))
    assert f"review sample: {len(sample)} of {len(ledger)} ledger rows" in chain_audit["stdout"]

    # the same seed draws the same sample (the store answers every run: nothing re-executes)
    again = chain_audit["tmp"] / "again"
    proc = suitebench(*chain_audit["args"], "--out", str(again), store=chain_audit["store"])
    assert proc.returncode == 0, proc.stderr
    assert (again / "review-sample.csv").read_bytes() == (out / "review-sample.csv").read_bytes()


def _wilson_upper(x: float, n: float) -> float:
    """The upper end of the two-sided 95% Wilson score interval, written out."""
    z = NormalDist().inv_cdf(0.975)
    p = x / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (centre + half) / (1 + z * z / n))


def _expected(rows: list[dict[str, str]], unsure_as_false: bool) -> dict[str, float]:
    """docs/metrics.md: fdr = sum(w*false)/sum(w); Wilson bound at n_eff = (sum w)^2/sum(w^2)
    with n_eff * fdr false discoveries; unsure rows count as false or are left out."""
    kept = [r for r in rows if unsure_as_false or r["human_verdict"] != "unsure"]
    w = [float(r["weight"]) for r in kept]
    false = [r["human_verdict"] != "bug" for r in kept]
    fdr = sum(wi for wi, f in zip(w, false, strict=True) if f) / sum(w)
    n_eff = sum(w) ** 2 / sum(wi * wi for wi in w)
    return {
        "fdr": fdr,
        "n_effective": n_eff,
        "upper": _wilson_upper(fdr * n_eff, n_eff),
        "unweighted_fdr": sum(false) / len(kept),
        "unweighted_upper": _wilson_upper(sum(false), len(kept)),
        "n_reviewed": len(kept),
        "n_false": sum(false),
    }


def test_review_fdr_from_filled_in_verdicts(chain_audit: dict[str, Any], tmp_path: Path) -> None:
    sample = chain_audit["out"] / "review-sample.csv"
    rows = _csv(sample)
    fields = list(rows[0])
    assert len(rows) >= 3
    # a reviewer overturns a row that stands for the most ledger rows, is unsure about another
    heavy = max(rows, key=lambda r: float(r["weight"]))
    light = min(rows, key=lambda r: float(r["weight"]))
    assert float(heavy["weight"]) > float(light["weight"])  # strata sampled at unequal rates
    for r in rows:
        r["human_verdict"] = "bug"
    heavy["human_verdict"] = "not_bug"
    next(r for r in rows if r is not heavy)["human_verdict"] = "unsure"
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)

    store = tmp_path / "unused.sqlite"
    for policy, as_false in (("as_false", True), ("exclude", False)):
        proc = suitebench("--json", "review-fdr", str(filled), "--unsure", policy, store=store)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        want = _expected(rows, as_false)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-9), key
        assert got["unsure_policy"] == policy and got["n_unsure"] == 1
        assert got["n_excluded"] == (0 if as_false else 1)

    human = suitebench("review-fdr", str(filled), store=store)
    assert human.returncode == 0 and human.stderr == ""
    want = _expected(rows, True)
    assert f"weighted FDR          {want['fdr']:.4f}" in human.stdout
    assert f"Wilson 95% upper      {want['upper']:.4f}" in human.stdout

    # a sample nobody has adjudicated yet is refused, naming the rows
    blank = suitebench("review-fdr", str(sample), store=store)
    assert blank.returncode == 2
    assert f"{len(rows)} row(s) without a human_verdict" in blank.stderr
