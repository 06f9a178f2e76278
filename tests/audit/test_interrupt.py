"""Ctrl-C (SIGINT) in ``audit`` and ``stress``: a real subprocess, a real signal.

Before, the audit went on to the end of its batch (40-56 s on real packages) and then wrote
nothing; now every live sandbox is killed at once, the command exits 130 (128 + SIGINT), no
output file is written, and the same command again takes the finished runs from the store and
says how many -- and ends with the ledger an uninterrupted audit writes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ..cli_helpers import interrupt_when, stored_rows, suitebench_argv
from .conftest import copy_problem

# A correct maxsum (Kadane) that first sleeps a second: the audit's runs take long enough
# to be interrupted in the middle.
SLOW = """\
import time

time.sleep(1.0)
n = int(input())
a = list(map(int, input().split()))
best = cur = a[0]
for x in a[1:]:
    cur = max(x, cur + x)
    best = max(best, cur)
print(best)
"""


def _audit(problem: Path, out: Path, store: Path) -> list[str]:
    return suitebench_argv(
        "-j",
        "2",
        "audit",
        str(problem),
        "--arm",
        "g=generator@12",
        "--out",
        out,
        store=store,
    )


def test_ctrl_c_stops_audit_keeps_the_store_and_the_rerun_says_so(tmp_path: Path) -> None:
    problem = copy_problem(tmp_path, "maxsum")
    (problem / "submissions" / "accepted" / "slow.py").write_text(SLOW)
    store, out = tmp_path / "s.db", tmp_path / "out"
    done, took = interrupt_when(
        _audit(problem, out, store), lambda: stored_rows(store, "audit-run") >= 20
    )
    rc, err = done.returncode, done.stderr
    assert rc == 130, err
    # Measured 0.2-0.4 s; before, the audit ran on to its end (> 12 s of sleeps alone).
    assert took < 10, took
    assert "interrupted: nothing written" in err
    assert not out.exists()
    again = subprocess.run(_audit(problem, out, store), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    m = re.search(r"runs: (\d+) executed now, (\d+) taken from the store", again.stderr)
    assert m is not None, again.stderr
    assert int(m[2]) > 0, (err, again.stderr)
    # The same ledger as an audit never interrupted, on a fresh store.
    clean_out = tmp_path / "clean"
    clean = subprocess.run(
        _audit(problem, clean_out, tmp_path / "fresh.db"), capture_output=True, text=True
    )
    assert clean.returncode == 0, clean.stderr
    assert (out / "ledger.csv").read_text() == (clean_out / "ledger.csv").read_text()
    # ... and a third run takes everything from the store
    third = subprocess.run(_audit(problem, out, store), capture_output=True, text=True)
    assert re.search(r"runs: 0 executed now, \d+ taken from the store", third.stderr)
    shutil.rmtree(out)


def test_ctrl_c_stops_stress(tmp_path: Path) -> None:
    """A stress of a correct solution with a large count, interrupted after a few seconds."""
    pairs = Path(__file__).resolve().parents[1] / "fixtures" / "stress" / "pairs"
    argv = suitebench_argv(
        "stress",
        str(pairs),
        str(pairs / "submissions" / "correct.py"),
        "--args",
        "1000000",
        "--count",
        "100000",
        "--time",
        "600",
        store=tmp_path / "s.db",
    )
    # interrupt once the store holds runs of the judged programs: stress is under way
    done, took = interrupt_when(argv, lambda: stored_rows(tmp_path / "s.db", "audit-run") >= 20)
    out, err = done.stdout, done.stderr
    assert done.returncode == 130, err
    assert took < 10
    assert "interrupted: nothing written" in err and out == ""
