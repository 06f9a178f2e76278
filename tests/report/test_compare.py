"""``suitebench compare``: paired deltas, robustness seeds, noninferiority with Holm, kappa.

On real audit and score results. Every figure is recomputed here from the result files with
plain arithmetic (per-problem recall = killed / pool, kappa from the two killed sets), apart
from the bootstrap interval, whose own correctness is checked in tests/metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suitebench.metrics.bootstrap import paired_cluster_bootstrap

from .conftest import RealResults, suitebench


def _compare(real: RealResults, *args: str) -> dict[str, Any]:
    proc = suitebench(real.store, "--json", "compare", *args)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    data["_stderr"] = proc.stderr
    return data


def _kappa_by_hand(a: set[Any], b: set[Any], items: set[Any]) -> float:
    n = len(items)
    agree = sum((i in a) == (i in b) for i in items) / n
    pa, pb = len(a) / n, len(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return (agree - chance) / (1 - chance)


def test_arms_compared_per_problem(real_results: RealResults) -> None:
    audit = str(real_results.audit)
    data = _compare(
        real_results,
        f"{audit}:handmade",
        f"{audit}:random",
        "--resamples",
        "2000",
        "--seed",
        "7",
        "--robustness-seeds",
        "3",
    )
    results = json.loads((real_results.audit / "results.json").read_text())
    problems = results["problems"]
    side = data["sides"][0]
    assert data["kind"] == "arm" and data["comparator"] == f"{audit}:random"
    assert side["problems"] == sorted(problems)
    rows = {m["metric"]: m for m in side["metrics"]}
    assert list(rows) == ["recall", "cov@1", "cov@5", "cov@10", "cov@50"]

    recall = {
        arm: {p: v["arms"][arm]["killed"] / v["pool_size"] for p, v in problems.items()}
        for arm in ("handmade", "random")
    }
    r = rows["recall"]
    assert r["weighting"] == "macro"
    assert r["value"] == pytest.approx(sum(recall["handmade"].values()) / len(problems))
    assert r["comparator_value"] == pytest.approx(sum(recall["random"].values()) / len(problems))
    assert r["estimate"] == pytest.approx(r["value"] - r["comparator_value"])
    direct = paired_cluster_bootstrap(recall["handmade"], recall["random"], n_boot=2000, seed=7)
    assert (r["lo"], r["hi"]) == pytest.approx((direct.lo, direct.hi))
    # the interval is recomputed under seeds 8, 9, 10 and the envelope reported
    assert r["robustness_seeds"] == [8, 9, 10] and len(r["robust_lo"]) == 3
    assert r["lo_range"][0] == min([r["lo"], *r["robust_lo"]])
    assert r["hi_range"][1] == max([r["hi"], *r["robust_hi"]])

    for k in ("1", "5", "10", "50"):  # pooled cov@k = the audit's own pooled figure
        m = rows[f"cov@{k}"]
        assert m["weighting"] == "pooled by pool size"
        assert m["value"] == pytest.approx(results["arms"]["handmade"]["cov_at_k"][k], abs=1e-6)
        assert m["comparator_value"] == pytest.approx(
            results["arms"]["random"]["cov_at_k"][k], abs=1e-6
        )

    items = {(p, s) for p, v in problems.items() for s in v["submissions"]}
    killed = {
        arm: {(p, s) for p, v in problems.items() for s in v["arms"][arm]["killed_submissions"]}
        for arm in ("handmade", "random")
    }
    k = side["kappa"]
    assert k["items"] == len(items)
    assert k["kappa"] == pytest.approx(_kappa_by_hand(killed["handmade"], killed["random"], items))

    ni = data["noninferiority"]
    assert ni["metric"] == "recall" and ni["margin"] == 0.02
    (res,) = ni["results"]
    assert res["delta"] == pytest.approx(r["estimate"])
    assert res["noninferior"] == (res["lo"] > -0.02)
    assert "noninferiority on per-problem recall" in data["_stderr"]


def test_several_arms_against_one_comparator_use_holm(real_results: RealResults) -> None:
    audit = str(real_results.audit)
    data = _compare(
        real_results,
        f"{audit}:handmade",
        f"{audit}:random",
        f"{audit}:samples",
        "--resamples",
        "1000",
        "--robustness-seeds",
        "0",
        "--k",
        "1,2",
    )
    assert [s["name"] for s in data["sides"]] == [f"{audit}:handmade", f"{audit}:random"]
    assert [m["metric"] for m in data["sides"][0]["metrics"]] == ["recall", "cov@1", "cov@2"]
    results = data["noninferiority"]["results"]
    # Holm at 2.5% over two arms: the smaller p must be <= 0.0125, the larger <= 0.025,
    # and the second passes only if the first does
    ordered = sorted(results, key=lambda x: x["p_value"])
    first = ordered[0]["p_value"] <= 0.025 / 2
    assert ordered[0]["holm_pass"] == first
    assert ordered[1]["holm_pass"] == (first and ordered[1]["p_value"] <= 0.025)


def test_suites_compared_per_instance(real_results: RealResults) -> None:
    data = _compare(
        real_results,
        str(real_results.score_bad),
        str(real_results.score_reference),
        "--resamples",
        "500",
        "--robustness-seeds",
        "2",
    )
    bad = json.loads((real_results.score_bad / "results.json").read_text())
    ref = json.loads((real_results.score_reference / "results.json").read_text())
    side = data["sides"][0]
    rows = {m["metric"]: m for m in side["metrics"]}
    assert data["kind"] == "suite" and side["problems"] == ["wordfreq"]
    assert rows["M"]["estimate"] == pytest.approx(bad["mutation_score"] - ref["mutation_score"])
    assert rows["V"]["estimate"] == pytest.approx(bad["validity"] - ref["validity"])
    scored = {m["id"] for m in ref["mutants"] if m["status"] in ("killed", "survived", "timeout")}
    k_bad = {m["id"] for m in bad["mutants"] if m["status"] in ("killed", "timeout")}
    k_ref = {m["id"] for m in ref["mutants"] if m["status"] in ("killed", "timeout")}
    assert side["kappa"]["items"] == len(scored)
    assert side["kappa"]["kappa"] == pytest.approx(_kappa_by_hand(k_bad, k_ref, scored))
    assert data["noninferiority"]["metric"] == "M"
    assert data["noninferiority"]["results"][0]["noninferior"] is False
    assert "only 1 paired problem(s)" in data["_stderr"]


@pytest.mark.parametrize(
    ("sides", "message"),
    [
        (["{audit}", "{audit}:random"], "an arm to compare"),
        (["{audit}:nosuch", "{audit}:random"], "'nosuch'"),
        (["{audit}:handmade", "{bad}"], "cannot compare an arm with a suite"),
        (["{audit}:handmade"], "at least two sides"),
        (["{bad}:handmade", "{audit}:random"], "DIR:ARM names an audit's arm"),
    ],
)
def test_compare_errors_say_what_is_wrong(
    real_results: RealResults, sides: list[str], message: str
) -> None:
    args = [s.format(audit=real_results.audit, bad=real_results.score_bad) for s in sides]
    proc = suitebench(real_results.store, "compare", *args, "--resamples", "100")
    assert proc.returncode == 2
    assert message in proc.stderr.replace("\n", " ")


def test_input_overlap_finds_the_arm_input_copied_from_the_official_tests(
    real_results: RealResults,
) -> None:
    """maxsum's hand-made arm holds a copy of an official test (07-dup-of-official.in): the
    leakage check must find exactly it, byte-identical, and the generator arm has no files."""
    proc = suitebench(
        real_results.store,
        "--json",
        "report",
        str(real_results.audit),
        "--out",
        str(real_results.root / "overlap.html"),
    )
    assert proc.returncode == 0, proc.stderr
    overlap = json.loads(proc.stdout)["audits"][0]["input_overlap"]
    maxsum = Path(
        json.loads((real_results.audit / "results.json").read_text())["problems"]["maxsum"][
            "problem_dir"
        ]
    )
    copy = (maxsum / "arms" / "handmade" / "07-dup-of-official.in").read_bytes()
    assert any(f.read_bytes() == copy for f in (maxsum / "tests").glob("*.in"))
    hm = overlap["handmade"]["per_problem"]["maxsum"]
    assert hm["exact"] == 1 and hm["normalized"] >= 1
    assert overlap["random"]["normalized"] is None  # generator inputs are not kept on disk
    assert overlap["random"]["exact"] == 0


def test_suites_collections_are_paired_by_instance(
    real_results: RealResults, tmp_path: Path
) -> None:
    """A side may be a directory of one suite's scores on several instances."""
    import shutil

    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(real_results.score_bad, a / "wordfreq")
    shutil.copytree(real_results.score_rpn, a / "rpn")
    shutil.copytree(real_results.score_reference, b / "wordfreq")
    shutil.copytree(real_results.score_rpn, b / "rpn")
    data = _compare(real_results, str(a), str(b), "--resamples", "500", "--robustness-seeds", "1")
    side = data["sides"][0]
    assert side["problems"] == ["rpn", "wordfreq"]
    m = {r["metric"]: r for r in side["metrics"]}["M"]
    bad = json.loads((real_results.score_bad / "results.json").read_text())["mutation_score"]
    ref = json.loads((real_results.score_reference / "results.json").read_text())["mutation_score"]
    assert m["estimate"] == pytest.approx((bad - ref) / 2)  # rpn is the same suite on both sides
    # resampling 2 instances: each resample is (rpn, rpn), a mix, or (wordfreq, wordfreq)
    assert m["lo"] == pytest.approx(bad - ref) and m["hi"] == pytest.approx(0.0)

    shutil.copytree(real_results.score_reference, a / "again")
    proc = suitebench(real_results.store, "compare", str(a), str(b), "--resamples", "100")
    assert proc.returncode == 2 and "one score per instance" in proc.stderr
