"""What the top-up gate's batching buys: one arm generated with batched checks vs one candidate
at a time, and a rerun from the store.

    python bench/generate_topup.py [--arm cc-mutation] [--problem maxsum] [--budget 30]

Both sides produce the same inputs (the test suite checks that generation is deterministic);
each starts from a fresh store and a warm build cache, so the difference is the sandbox
start-ups of the validator and reference runs. Timings on a shared machine are rough: read
the ratio from one run of both sides.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from suitebench.audit.runs import AuditEngine
from suitebench.data import PROBLEMS_DIR
from suitebench.generate import gate
from suitebench.generate.arms import GenerateOptions, generate_arm
from suitebench.model.problem import load_problem
from suitebench.run.executor import make_executor
from suitebench.run.store import Store


def _run(arm: str, problem: str, budget: int, tmp: Path, tag: str, cache: Path) -> float:
    store = Store(tmp / f"{tag}.sqlite")
    ex = make_executor(jobs=2)
    try:
        engine = AuditEngine(store, ex, cache)
        t0 = time.perf_counter()
        generate_arm(
            arm, load_problem(PROBLEMS_DIR / problem), engine, tmp / tag, GenerateOptions(budget)
        )
        return time.perf_counter() - t0
    finally:
        ex.close()
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arm", default="cc-mutation")
    ap.add_argument("--problem", default="maxsum")
    ap.add_argument("--budget", type=int, default=30)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cache = tmp / "builds"
        _run(a.arm, a.problem, 2, tmp, "warm-builds", cache)
        batched = _run(a.arm, a.problem, a.budget, tmp, "batched", cache)
        original = gate.legal_stream

        def one_at_a_time(source, g, log, batch, cap=None):  # type: ignore[no-untyped-def]
            return original(source, g, log, lambda: 1, cap)

        gate.legal_stream = one_at_a_time  # type: ignore[assignment]
        import suitebench.generate.arms as arms_mod

        arms_mod.legal_stream = one_at_a_time  # type: ignore[assignment]
        try:
            single = _run(a.arm, a.problem, a.budget, tmp, "single", cache)
        finally:
            gate.legal_stream = original
            arms_mod.legal_stream = original
        same = [p.read_bytes() for p in sorted((tmp / "batched").glob("*.in"))] == [
            p.read_bytes() for p in sorted((tmp / "single").glob("*.in"))
        ]
        t0 = time.perf_counter()
        store = Store(tmp / "batched.sqlite")
        ex = make_executor(jobs=2)
        generate_arm(
            a.arm,
            load_problem(PROBLEMS_DIR / a.problem),
            AuditEngine(store, ex, cache),
            tmp / "rerun",
            GenerateOptions(a.budget),
        )
        rerun = time.perf_counter() - t0
        ex.close()
        store.close()
    print(f"{a.arm} on {a.problem}, budget {a.budget}")
    print(f"  one candidate at a time  {single:7.2f} s")
    print(f"  batched gate             {batched:7.2f} s   ({single / batched:.1f}x faster)")
    print(f"  rerun from the store     {rerun:7.2f} s   ({batched / rerun:.1f}x faster)")
    print(f"  same inputs both ways: {same}")


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("generate_topup", main))
