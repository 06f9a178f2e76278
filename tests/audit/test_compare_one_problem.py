"""``compare`` on an audit of one problem: one cluster is no interval, so no decision."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli_ledger import suitebench
from .test_harness_errors import _audit, _problem


def test_one_problem_is_not_enough_clusters(tmp_path: Path, build_cache: Path) -> None:
    """The edge arm (2^31 - 1) kills nothing of ok.c / wrong_exit.c; the official arm kills
    wrong_exit.c: recall 0 against 1/2. One problem: the bootstrap resamples one delta, so
    the "interval" is the point -0.5 and a p-value of 1/(B+1) or 1 says nothing. Before, a
    delta above the margin printed "noninferior yes" and "pass"; now no test is made."""
    proc, _ = _audit(_problem(tmp_path / "p"), tmp_path, build_cache)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    # the same arm against itself: delta 0 > -margin, which one cluster used to call a pass
    same = suitebench("compare", f"{out}:official", f"{out}:official", store=tmp_path / "s")
    assert same.returncode == 0, same.stderr
    assert "not enough clusters (1)" in same.stdout and "pass" not in same.stdout
    js = suitebench("--json", "compare", f"{out}:edge", f"{out}:official", store=tmp_path / "s")
    (res,) = json.loads(js.stdout)["noninferiority"]["results"]
    assert res["n_clusters"] == 1 and res["decision"] == "not enough clusters"
    assert res["delta"] == -0.5
    assert res["noninferior"] is False and res["holm_pass"] is False and res["p_value"] == 1.0
    assert "not enough clusters" in js.stderr  # the human table moves to stderr under --json
