"""Bounded memory: a submission that prints forever on every input of a 40-input problem.

Before outputs were digested as they came, one such problem made the audit hold every run's
whole output (as base64 in JSON) and die in the store with ``string longer than INT_MAX``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from suitebench.audit.runs import AuditEngine, RunSpec
from suitebench.run import sandbox
from suitebench.run.outcome import Limits, MiB, Status, sha256_bytes
from suitebench.run.session import STREAM_ABOVE

from ..cli_helpers import suitebench_argv
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
    audit = suitebench_argv("--jobs", "2", "--json", "audit", d, store=store)
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


def test_a_long_output_is_digested_as_it_arrives(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """An output past 1 MiB is handed to the chunk's digest piece by piece, never held whole
    (two workers each holding a 64 MiB output twice over raised the audit's peak by 100 MiB);
    the record and the stored blob are still those of the whole output."""
    d = write_next_int(tmp_path / "p", {"forever.c": FOREVER_C})
    engine = make_engine()
    built = engine.build(d / "submissions" / "forever.c")
    limits = Limits(wall_time=5.0, cpu_time=2.0, output_bytes=8 * MiB)
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o777)
        whole = sandbox.run(
            built.argv, cwd=work, stdin=b"1000007\n", limits=limits, ro_binds=built.ro_binds
        )
        pieces: list[bytes] = []
        with sandbox.Session(built.argv, cwd=work, limits=limits, ro_binds=built.ro_binds) as s:
            streamed = s.run(b"1000007\n", stdout_sink=pieces.append)
    assert whole.status is streamed.status is Status.OUTPUT_LIMIT
    assert len(whole.stdout) > STREAM_ABOVE and streamed.stdout == b""
    assert len(pieces) > 1 and b"".join(pieces) == whole.stdout

    (r,) = engine.run([RunSpec(built, b"1000007\n", limits)])
    assert r.status is Status.OUTPUT_LIMIT
    assert (r.stdout_sha256, r.stdout_size) == (sha256_bytes(whole.stdout), len(whole.stdout))
    assert r.read_stdout() == whole.stdout
