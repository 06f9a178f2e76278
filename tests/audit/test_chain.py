"""The whole chain on the project's problems: every certified or withdrawn row is explained.

maxsum (tokens checker, three references, validator, brute force):
  overflow.c    int sum           -> WA on 01-overflow (3e9 does not fit)      -> DET_WA
  tiebreak.cpp  `>=` keeps last   -> WA on 02-tie (twenty tied maxima)         -> DET_WA
  offbyone.c    stops one early   -> WA on 03-max-last                         -> DET_WA
  n1crash.py    reads a[1]        -> RE on 04-n1                               -> DET_RE
  nondet.c      random later tie  -> WA with a different output on re-judges  -> NONDET
  05-n0-illegal (n = 0) would crash n1crash.py but the validator rejects it: never judged.
divsum (lines checker, majority of three references, one of them wrong on squares):
  slow_ok.c     correct, O(N)     -> TLE only: never a bug
  slow_n2.c     O(N), D(2) wrong  -> WA on 07 (N=2), TLE on the official 10^12: not new
mean (float:1e-6 checker):
  float32.c, intdiv.c, two_places.py -> WA on 01-cancel (mean 2/3);  ok_9digits.c -> AC
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig
from suitebench.audit.pipeline import AuditResult, run_audit
from suitebench.audit.records import Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.metrics.cov_at_k import cov_at_k
from suitebench.run.executor import make_executor
from suitebench.run.store import Store

from .conftest import PROBLEMS

ACC = "submissions/accepted/"


@pytest.fixture(scope="module")
def audited(
    tmp_path_factory: pytest.TempPathFactory, build_cache: Path
) -> tuple[AuditResult, Path]:
    tmp = tmp_path_factory.mktemp("chain")
    store = Store(tmp / "store.sqlite")
    ex = make_executor(jobs=2)
    try:
        engine = AuditEngine(store, ex, build_cache)
        result = run_audit(
            [PROBLEMS / "maxsum", PROBLEMS / "divsum", PROBLEMS / "mean"],
            [parse_arm("hand=arms/handmade")],
            engine,
            config=AuditConfig(pool="accepted"),
            out_dir=tmp / "out",
        )
    finally:
        ex.close()
        store.close()
    return result, tmp / "out"


def ledger(out: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    with (out / "ledger.csv").open() as fh:
        return {(r["problem"], r["arm"], r["submission_id"]): r for r in csv.DictReader(fh)}


def test_certified_rows_are_the_planted_bugs(audited: tuple[AuditResult, Path]) -> None:
    _, out = audited
    rows = ledger(out)
    want = {
        ("maxsum", "hand", ACC + "overflow.c"): ("01-overflow.in", "WA", "DET_WA"),
        ("maxsum", "hand", ACC + "tiebreak.cpp"): ("02-tie.in", "WA", "DET_WA"),
        ("maxsum", "hand", ACC + "offbyone.c"): ("03-max-last.in", "WA", "DET_WA"),
        ("maxsum", "hand", ACC + "n1crash.py"): ("04-n1.in", "RE", "DET_RE"),
        ("divsum", "hand", ACC + "slow_n2.c"): ("07.in", "WA", "DET_WA"),
        ("mean", "hand", ACC + "float32.c"): ("01-cancel.in", "WA", "DET_WA"),
        ("mean", "hand", ACC + "intdiv.c"): ("01-cancel.in", "WA", "DET_WA"),
        ("mean", "hand", ACC + "two_places.py"): ("01-cancel.in", "WA", "DET_WA"),
    }
    assert {k: (r["input_id"], r["verdict"], r["determinism"]) for k, r in rows.items()} == want
    overflow = rows[("maxsum", "hand", ACC + "overflow.c")]
    assert overflow["expected_head"] == "2999999997 2\\n"
    assert overflow["got_head"] == "-1294967299 2\\n"  # 2999999997 - 2^32
    assert overflow["legality"] == "legal" and overflow["validator"] == "validator.py"
    assert overflow["oracle_references"] == "refs/ref1.c;refs/ref2.py;refs/ref3.cpp"
    assert overflow["brute"].startswith("confirms gold")
    assert overflow["official_verdict"] == "AC" and overflow["new_finding"] == "true"
    # the killing inputs are saved next to the ledger, for re-checking
    for r in rows.values():
        assert (out / "inputs" / r["input_sha256"]).is_file()


def test_official_tle_reconciliation(audited: tuple[AuditResult, Path]) -> None:
    result, out = audited
    row = ledger(out)[("divsum", "hand", ACC + "slow_n2.c")]
    assert row["official_verdict"] == "TLE" and row["new_finding"] == "false"
    divsum = result.results["problems"]["divsum"]
    assert divsum["arms"]["hand"]["funnel"]["official_tle"] == 1
    assert divsum["arms"]["hand"]["funnel"]["new_findings"] == 0
    # the correct but slow solution is only ever TLE: its own bucket, never killed
    assert divsum["official_verdicts"][ACC + "slow_ok.c"] == "TLE"
    assert ACC + "slow_ok.c" in divsum["arms"]["hand"]["tle_only_submissions"]
    assert ACC + "slow_ok.c" not in divsum["arms"]["hand"]["killed_submissions"]


def test_nondeterministic_submission_is_withdrawn(audited: tuple[AuditResult, Path]) -> None:
    result, out = audited
    assert ("maxsum", "hand", ACC + "nondet.c") not in ledger(out)
    with (out / "retractions.csv").open() as fh:
        retr = [r for r in csv.DictReader(fh) if r["submission_id"] == ACC + "nondet.c"]
    assert retr and all(r["stage"] == "determinism" for r in retr)
    assert all(r["reason"].startswith("NONDET") for r in retr)
    f = result.results["problems"]["maxsum"]["arms"]["hand"]["funnel"]
    assert f["flagged"] == 5 and f["reproducible"] == 4 and f["certified"] == 4


def test_illegal_and_duplicate_inputs(audited: tuple[AuditResult, Path]) -> None:
    result, out = audited
    hand = result.results["problems"]["maxsum"]["arms"]["hand"]
    assert hand["counts"]["inputs"] == 7 and hand["counts"]["duplicates"] == 1
    assert hand["counts"]["illegal"] == 1 and hand["counts"]["scored"] == 6
    with (out / "maxsum" / "kills.csv").open() as fh:
        cells = [r for r in csv.DictReader(fh) if r["input_id"] == "05-n0-illegal.in"]
    assert cells and {r["legality"] for r in cells} == {"illegal"}
    assert {r["verdict"] for r in cells} == {"SKIP"}


def test_majority_oracle_outvotes_the_wrong_reference(audited: tuple[AuditResult, Path]) -> None:
    result, _out = audited
    divsum = next(a for a in result.audits if a.problem.id == "divsum")
    squares = [s for s, d in divsum.inputs.items() if d in (b"1\n", b"4\n", b"36\n")]
    assert len(squares) == 3
    for s in squares:
        g = divsum.golds[s]
        assert g.dissent == ("refs/ref_square.py",)
        assert g.references == ("refs/ref_block.c", "refs/ref_sqrt.py")
    assert divsum.golds[squares[0]].answer is not None


def test_kill_matrix_files_agree_with_results(audited: tuple[AuditResult, Path]) -> None:
    _result, out = audited
    data = json.loads((out / "results.json").read_text())
    assert data["backend"] and data["ks"] == [1, 2, 5, 10, 20, 40, 50, 60]
    assert set(data["toolchains"]) == {"c", "cpp", "python"}
    for pid in ("maxsum", "divsum", "mean"):
        npz = np.load(out / pid / "kills.npz")
        subs = list(npz["submissions"])
        names = list(npz["verdict_names"])
        with (out / pid / "kills.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        col = {s: i for i, s in enumerate(npz["inputs"])}
        for r in rows:
            code = npz["verdicts"][subs.index(r["submission_id"]), col[r["input_sha256"]]]
            assert names[code] == r["verdict"]
        # cov@k recomputed from the long CSV alone
        for arm, info in data["problems"][pid]["arms"].items():
            scored = [r for r in rows if r["arm"] == arm and r["verdict"] != "SKIP"]
            inputs = list(dict.fromkeys(r["input_sha256"] for r in scored))
            kill = {
                (r["input_sha256"], r["submission_id"]): Verdict(r["verdict"]).is_kill
                for r in scored
            }
            mat = np.array([[kill[(i, s)] for s in subs] for i in inputs], dtype=bool)
            mat = mat.reshape(len(inputs), len(subs))
            for k in (1, 2, 5, 60):
                assert info["cov_at_k"][str(k)] == pytest.approx(cov_at_k(mat, k), abs=1e-6)
    assert (out / "funnel.txt").read_text().startswith("arm official")
    hand = data["arms"]["hand"]
    assert hand["certified"] == 8 and hand["problems"] == 3
    assert 0 < hand["micro_coverage"] <= 1 and 0 < hand["macro_recall"] <= 1


def test_correct_submissions_are_never_killed(audited: tuple[AuditResult, Path]) -> None:
    result, _ = audited
    killed = {
        s
        for p in result.results["problems"].values()
        for a in p["arms"].values()
        for s in a["killed_submissions"]
    }
    for ok in ("ok_a.c", "ok_b.py", "ok_block.c", "ok_hyper.py", "ok_9digits.c", "slow_ok.c"):
        assert ACC + ok not in killed
