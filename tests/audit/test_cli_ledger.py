"""The audit command end to end, and re-checking its ledger from scratch."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from ..cli_helpers import run_suitebench
from .conftest import PROBLEMS, copy_problem


def suitebench(*args: str, store: Path) -> subprocess.CompletedProcess[str]:
    return run_suitebench(*args, store=store, timeout=600)


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, build_cache: Path) -> tuple[Path, Path, str]:
    """One audit of a copy of ``mean`` (a copy, so tests may edit its submissions)."""
    tmp = tmp_path_factory.mktemp("cli")
    problem = copy_problem(tmp, "mean")
    out = tmp / "out"
    proc = suitebench(
        "--json",
        "audit",
        str(problem),
        "--arm",
        "hand=arms/handmade",
        "--arm",
        "gen=generator@6",
        "--build-cache",
        str(build_cache),
        "--out",
        str(out),
        store=tmp / "store.sqlite",
    )
    assert proc.returncode == 0, proc.stderr
    return problem, out, proc.stdout


def test_json_on_stdout_and_summary_on_stdout_without_json(
    audited: tuple[Path, Path, str], tmp_path: Path, build_cache: Path
) -> None:
    _, out, stdout = audited
    data = json.loads(stdout)
    assert set(data["arms"]) == {"official", "samples", "hand", "gen"}
    assert data["problems"]["mean"]["arms"]["hand"]["killed"] == 3
    assert data == json.loads((out / "results.json").read_text())
    # without --json: the table and the funnel go to stdout (`audit ... > out.txt` keeps them)
    proc = suitebench(
        "audit",
        str(PROBLEMS / "mean"),
        "--arm",
        "hand=arms/handmade",
        "--build-cache",
        str(build_cache),
        "--out",
        str(tmp_path / "o"),
        store=tmp_path / "s.sqlite",
    )
    assert proc.returncode == 0, proc.stderr
    assert "cov@1" in proc.stdout and "hand" in proc.stdout
    assert "reproducible (DET_WA / DET_RE)" in proc.stdout
    assert "3 certified rows" in proc.stdout
    assert "cov@1" not in proc.stderr


def test_clear_errors(tmp_path: Path) -> None:
    proc = suitebench("audit", str(tmp_path), store=tmp_path / "s.sqlite")
    assert proc.returncode == 2 and "problem.toml" in proc.stderr
    proc = suitebench(
        "audit", str(PROBLEMS / "mean"), "--pool", "buggy", store=tmp_path / "s.sqlite"
    )
    assert proc.returncode == 2 and "no pool 'buggy'" in proc.stderr
    proc = suitebench(
        "audit", str(PROBLEMS / "mean"), "--arm", "x=no/such/dir", store=tmp_path / "s.sqlite"
    )
    assert proc.returncode == 2 and "no/such/dir" in proc.stderr


def _rewrite(ledger: Path, target: Path, edit: dict[int, dict[str, str]]) -> None:
    with ledger.open() as fh:
        rows = list(csv.DictReader(fh))
        fields = list(rows[0])
    for n, changes in edit.items():
        rows[n - 1].update(changes)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def test_recheck_passes_on_a_fresh_ledger_and_flags_tampering(
    audited: tuple[Path, Path, str], tmp_path: Path
) -> None:
    _problem, out, _ = audited
    ledger = out / "ledger.csv"
    ok = suitebench("audit", "--recheck", str(ledger), store=tmp_path / "unused.sqlite")
    assert ok.returncode == 0, ok.stderr
    assert "every ledger row holds" in ok.stdout

    with ledger.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= 3  # hand: float32, intdiv, two_places; gen: what its seeds catch
    tampered = out / "tampered.csv"  # same directory: the inputs/ are found
    _rewrite(
        ledger,
        tampered,
        {
            1: {"legality": "no-such-class"},
            2: {"got_sha256": "0" * 64},
            3: {"expected_sha256": "f" * 64, "verdict": "RE"},
        },
    )
    bad = suitebench("--json", "audit", "--recheck", str(tampered), store=tmp_path / "u.sqlite")
    assert bad.returncode == 1
    issues = {i["row"]: i["reasons"] for i in json.loads(bad.stdout)["issues"]}
    assert set(issues) == {1, 2, 3}
    assert issues[1] == ["legality is now legal, ledger says no-such-class"]
    assert any("output sha256 differs" in r for r in issues[2])
    assert any("gold sha256" in r for r in issues[3])
    assert any("ledger says RE" in r for r in issues[3])


def test_recheck_notices_a_fixed_submission(
    audited: tuple[Path, Path, str], tmp_path: Path
) -> None:
    problem, out, _ = audited
    src = problem / "submissions" / "accepted" / "intdiv.c"
    original = src.read_text()
    try:
        src.write_text(
            original.replace('printf("%lld\\n", s / n);', 'printf("%.10f\\n", (double)s / n);')
        )
        assert src.read_text() != original
        proc = suitebench(
            "--json", "audit", "--recheck", str(out / "ledger.csv"), store=tmp_path / "u.sqlite"
        )
    finally:
        src.write_text(original)
    assert proc.returncode == 1
    issues = json.loads(proc.stdout)["issues"]
    assert issues and {i["submission_id"] for i in issues} == {"submissions/accepted/intdiv.c"}
    for issue in issues:  # one per arm that certified intdiv.c
        assert "submission sha256 differs" in issue["reasons"]
        assert any("re-judge 1: AC" in r for r in issue["reasons"])
