"""What isolation costs: the same batch of short C program runs, bare and through each backend.

Runs one small C program (reads numbers, prints their sum and maximum) on N different stdins:

* ``bare``: ``subprocess.run`` per input, no sandbox, no limits -- the floor;
* ``<backend> run``: :func:`suitebench.run.sandbox.run` per input (a sandbox per run), on the
  first ``--per-call`` inputs only, because a sandbox start per run is the slow path;
* ``<backend> batch``: :func:`suitebench.run.sandbox.run_batch` over all N inputs (one sandbox,
  the in-sandbox runner forks each run);
* ``<backend> batch, shared state``: the same without what keeps kernel state from one run to
  the next (no seccomp filter, one IPC namespace for the whole batch, the pages a run read
  left in the page cache: the protocol before ``run/syscalls.py``), to show what the filter,
  the per-run namespace and the per-run page cache drop cost per run.

The modes take turns on ``--rounds`` chunks of the inputs (a ``run_batch`` call, so a sandbox
start, per chunk), so a machine whose load drifts treats them alike. Prints runs/s per mode and
the ratio to the bare floor, and checks that every mode's stdout equals the bare run's.
Usage: ``python bench/sandbox_overhead.py [--runs 2000] [--per-call 400]``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suitebench.run import cgroups, sandbox, session
from suitebench.run.outcome import Limits, Status

PROGRAM = r"""
#include <stdio.h>
int main(void) {
    long n, x, sum = 0, max = -1000000000;
    if (scanf("%ld", &n) != 1) return 1;
    for (long i = 0; i < n; i++) {
        if (scanf("%ld", &x) != 1) return 1;
        sum += x;
        if (x > max) max = x;
    }
    printf("%ld %ld\n", sum, max);
    return 0;
}
"""


def _inputs(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        xs = [rng.randint(-1000, 1000) for _ in range(rng.randint(1, 20))]
        out.append(f"{len(xs)}\n{' '.join(map(str, xs))}\n".encode())
    return out


def _timed(fn: Callable[[], list[bytes]]) -> tuple[float, list[bytes]]:
    t0 = time.perf_counter()
    outs = fn()
    return time.perf_counter() - t0, outs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--per-call", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=4, help="modes take turns on this many chunks")
    args = ap.parse_args()
    if shutil.which("gcc") is None:
        print("needs gcc", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as tmp:
        d = Path(tmp)
        (d / "sum.c").write_text(PROGRAM)
        subprocess.run(["gcc", "-O2", "-o", str(d / "sum"), str(d / "sum.c")], check=True)
        work = d / "work"
        work.mkdir()
        prog = [str(d / "sum")]
        stdins = _inputs(args.runs)
        limits = Limits(wall_time=5, memory_mb=64)

        def bare(xs: list[bytes]) -> list[bytes]:
            return [subprocess.run(prog, input=x, capture_output=True, cwd=work).stdout for x in xs]

        def per_call(xs: list[bytes], b: sandbox.Backend) -> list[bytes]:
            outs = []
            for x in xs:
                o = sandbox.run(prog, cwd=work, stdin=x, limits=limits, backend=b, ro_binds=[d])
                outs.append(o.stdout if o.status is Status.OK else f"<{o.status}>".encode())
            return outs

        def batch(xs: list[bytes], b: sandbox.Backend) -> list[bytes]:
            res = sandbox.run_batch(prog, xs, cwd=work, limits=limits, backend=b, ro_binds=[d])
            return [o.stdout if o.status is Status.OK else f"<{o.status}>".encode() for o in res]

        encode = session.encode_config
        drop = cgroups.RunCgroup.drop_page_cache

        def shared(xs: list[bytes], b: sandbox.Backend) -> list[bytes]:
            def without(*a: Any, **k: Any) -> bytes:
                return encode(*a, **{**k, "new_ipc": False, "seccomp": b""})

            session.encode_config = without  # type: ignore[assignment]
            cgroups.RunCgroup.drop_page_cache = lambda self: None  # type: ignore[method-assign]
            try:
                return batch(xs, b)
            finally:
                session.encode_config = encode
                cgroups.RunCgroup.drop_page_cache = drop  # type: ignore[method-assign]

        # The machine's load drifts: the modes take turns on each chunk of the inputs, so each
        # sees the same conditions. Every run_batch call starts its own sandbox.
        backends = [b for b, r in sandbox.available_backends().items() if r is None]
        secs: dict[str, float] = {}
        outs: dict[str, list[bytes]] = {}
        expected: list[bytes] = []
        size = -(-args.runs // args.rounds)
        calls = -(-args.per_call // args.rounds)
        for start in range(0, args.runs, size):
            chunk = stdins[start : start + size]
            t, got = _timed(lambda chunk=chunk: bare(chunk))  # type: ignore[misc]
            secs["bare"] = secs.get("bare", 0.0) + t
            expected += got
            for b in backends:
                modes = (
                    ("run", per_call, chunk[:calls]),
                    ("run_batch", batch, chunk),
                    ("run_batch shared", shared, chunk),
                )
                for mode, fn, xs in modes:
                    key = f"{b} {mode}"
                    t, got = _timed(lambda fn=fn, xs=xs, b=b: fn(xs, b))  # type: ignore[misc]
                    secs[key] = secs.get(key, 0.0) + t
                    outs.setdefault(key, []).extend(got)
        floor = args.runs / secs["bare"]
        rows: list[tuple[str, int, float, str]] = [("bare subprocess.run", args.runs, floor, "")]
        failures = 0
        for b, reason in sandbox.available_backends().items():
            if reason is not None:
                rows.append((f"{b}", 0, 0.0, f"unavailable: {reason}"))
                continue
            for mode in ("run", "run_batch", "run_batch shared"):
                key = f"{b} {mode}"
                got = outs[key]
                want = [e for i, e in enumerate(expected) if mode != "run" or i % size < calls]
                same = got == want
                failures += not same
                note = "outputs match" if same else "OUTPUTS DIFFER"
                rows.append((key, len(got), len(got) / secs[key], note))

    print(f"{'mode':<26} {'runs':>6} {'runs/s':>9} {'x floor':>8}  note")
    for name, n, rate, note in rows:
        ratio = f"{rate / floor:8.2f}" if rate else f"{'-':>8}"
        print(f"{name:<26} {n:>6} {rate:9.1f} {ratio}  {note}")
    print()
    print("fresh kernel state per run (filter, IPC namespace, page cache drop) vs shared:")
    for b in backends:
        fresh, old = secs[f"{b} run_batch"], secs[f"{b} run_batch shared"]
        print(f"  {b:<8} {fresh / old:5.2f}x the time of the shared batch")
    return 1 if failures else 0


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("sandbox_overhead", main))
