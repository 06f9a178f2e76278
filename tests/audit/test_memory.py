"""Bounded memory: a submission that prints forever on every input of a 40-input problem.

Before outputs were digested as they came, one such problem made the audit hold every run's
whole output (as base64 in JSON) and die in the store with ``string longer than INT_MAX``.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from .problems import FOREVER_C, WRAPCHECK_C, write_next_int

GiB = 1024**3

# Runs the audit as a child and prints the largest resident size of any process it waited for
# (the audit itself and everything it ran: an upper bound of the audit's own peak).
MEASURE = """
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
print(rc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
sys.stderr.buffer.write(rc.stderr[-3000:])
"""


def test_printing_forever_on_40_inputs_stays_under_1_gib(tmp_path: Path, build_cache: Path) -> None:
    tests = {f"{i:02d}.in": f"{1_000_000 + i}\n" for i in range(40)}
    d = write_next_int(
        tmp_path / "p", {"forever.c": FOREVER_C, "wrapcheck.c": WRAPCHECK_C}, tests=tests
    )
    store, out = tmp_path / "store.sqlite", tmp_path / "out"
    audit = [sys.executable, "-c", "from suitebench.cli.main import main; main()"]
    audit += ["--store", str(store), "--jobs", "2", "--json", "audit", str(d)]
    audit += ["--build-cache", str(build_cache), "--out", str(out), "--pool", "accepted"]
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, *audit], capture_output=True, text=True, timeout=900
    )
    rc, peak = (int(x) for x in proc.stdout.split())
    assert rc == 0, proc.stderr
    assert peak < 1 * GiB, f"peak RSS {peak / 2**20:.0f} MiB"
    results = json.loads((out / "results.json").read_text())
    official = results["problems"]["next-int"]["arms"]["official"]
    assert official["killed_submissions"] == ["submissions/forever.c"]
    with sqlite3.connect(store) as db:
        (biggest_row,) = db.execute("SELECT MAX(LENGTH(value)) FROM outcomes").fetchone()
        (outputs,) = db.execute("SELECT COUNT(*) FROM blobs WHERE size = 64 * 1048576").fetchone()
    assert biggest_row < 4096
    assert outputs == 1  # 40 inputs + re-judges, one identical 64 MiB output, stored once
