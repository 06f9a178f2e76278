"""What the engine's plumbing costs: build cache, parallel builds, the store, the executors.

    python bench/engine_overhead.py [--runs 200] [--jobs 2] [--rewrite-runs 5]

Prints one line per figure.  The last: a reference run of the generated real-size suite
(``bench/realsize.py``, 240 tests in 6 modules) with and without the asserts rewritten once on
this side (``suite/inside/batch/rewrite.py``), alternating, plain and batched engine.  Everything
happens in a temporary directory; nothing touches the network beyond a Dask LocalCluster on
loopback.
"""

from __future__ import annotations

import argparse
import base64
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from suitebench.run.executor import DaskExecutor, LocalExecutor, run_all, run_cached, sandbox_job
from suitebench.run.outcome import Limits
from suitebench.run.sandbox import detect_backend
from suitebench.run.store import Store, job_key
from suitebench.run.toolchain import build, build_many, program_from_path

CPP = textwrap.dedent(
    """\
    #include <bits/stdc++.h>
    using namespace std;
    int main() { long long n; cin >> n; vector<long long> v(n); iota(v.begin(), v.end(), 1);
        cout << accumulate(v.begin(), v.end(), 0LL) + VARIANT << "\\n"; }
    """
)


def _said(run: Any) -> tuple[dict[str, tuple[str, str | None]], dict[str, str]]:
    """What a run says of each test (its status and message) and of each file that did not
    collect: the same with and without the rewrite cache (the seconds differ)."""
    tests = {t: (str(o.status), o.message) for t, o in run.outcomes.items()}
    return tests, dict(run.collect_messages)


def _rewrite_cache_figure(tmp: Path, runs: int) -> None:
    """Reference-run wall time with and without the host's rewritten test modules."""
    import statistics

    from realsize import generate
    from suitebench.suite.execute import rewritecache
    from suitebench.suite.execute.runner import run_batched, run_plain
    from suitebench.suite.execute.runspec import Target

    root = generate(tmp / "realsize", size=3000)  # light tests: the start-up is what is timed
    src = root / "src"
    target = Target(pythonpath=str(src), binds=(str(src),))
    walls: dict[tuple[str, bool], list[float]] = {}
    messages: dict[tuple[str, bool], object] = {}
    for _ in range(runs):
        for cache in (False, True):
            t = time.perf_counter()
            plain = run_plain(root / "tests", target, rewrite_cache=cache)
            walls.setdefault(("plain", cache), []).append(time.perf_counter() - t)
            t = time.perf_counter()
            batched = run_batched(root / "tests", [target], collect_once=False, rewrite_cache=cache)
            walls.setdefault(("batched", cache), []).append(time.perf_counter() - t)
            messages[("plain", cache)] = _said(plain)
            messages[("batched", cache)] = _said(batched[0])
    t = time.perf_counter()
    served = tmp / "served.txt"
    rewritecache.write_rewrite_cache(root / "tests", tmp, tmp / "work" / "tests", served)
    host = time.perf_counter() - t
    for engine in ("plain", "batched"):
        off = statistics.median(walls[(engine, False)])
        on = statistics.median(walls[(engine, True)])
        same = messages[(engine, False)] == messages[(engine, True)]
        print(
            f"reference run, {engine} engine, 240 tests in 6 modules (median of {runs}): "
            f"rewriting in the sandbox {off:.3f} s, host's rewritten modules {on:.3f} s "
            f"(x{off / on:.2f}); same outcomes and messages: {same}"
        )
    print(f"host side per launch, memo warm: {host * 1e3:.1f} ms")


def _trivial(n: int) -> dict[str, Any]:
    return {"n": n, "square": n * n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--builds", type=int, default=6)
    ap.add_argument("--rewrite-runs", type=int, default=5, help="0: skip that figure")
    args = ap.parse_args()
    print(f"sandbox backend: {detect_backend()}")
    with tempfile.TemporaryDirectory(prefix="suitebench-bench-") as tmpdir:
        tmp = Path(tmpdir)
        cache = tmp / "cache"

        srcs = []
        for i in range(args.builds):
            p = tmp / f"v{i}.cpp"
            p.write_text(CPP.replace("VARIANT", str(i)))
            srcs.append(p)

        t = time.perf_counter()
        first = build(program_from_path(srcs[0]), cache_dir=cache)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        for _ in range(100):
            build(program_from_path(srcs[0]), cache_dir=cache)
        hot = (time.perf_counter() - t) / 100
        print(f"C++ build: cold {cold:.2f} s, cached {hot * 1e3:.2f} ms ({first.status})")

        progs = [program_from_path(p) for p in srcs[1:]]
        t = time.perf_counter()
        with LocalExecutor(1) as ex:
            build_many(progs[: len(progs) // 2], cache_dir=tmp / "c1", executor=ex)
        one = (time.perf_counter() - t) / max(1, len(progs) // 2)
        t = time.perf_counter()
        with LocalExecutor(args.jobs) as ex:
            build_many(progs, cache_dir=tmp / "c2", executor=ex)
        many = (time.perf_counter() - t) / len(progs)
        print(
            f"build_many: {one:.2f} s/program with 1 worker, {many:.2f} s/program "
            f"with {args.jobs} (x{one / many:.2f})"
        )

        n = 5000
        jobs = [(job_key("trivial", i), i) for i in range(n)]
        with Store(tmp / "s.sqlite") as store, LocalExecutor(args.jobs) as ex:
            t = time.perf_counter()
            run_cached(_trivial, jobs, store=store, executor=ex)
            fresh = time.perf_counter() - t
            t = time.perf_counter()
            run_cached(_trivial, jobs, store=store, executor=ex)
            cached = time.perf_counter() - t
        print(
            f"run_cached, {n} trivial jobs: {n / fresh:,.0f} jobs/s computed and committed, "
            f"{n / cached:,.0f} jobs/s answered from the store"
        )

        payloads = [
            {
                "argv": list(first.argv),
                "stdin_b64": base64.b64encode(f"{i}\n".encode()).decode(),
                "limits": Limits(wall_time=5, memory_mb=256).to_dict(),
                "ro_binds": list(first.ro_binds),
            }
            for i in range(args.runs)
        ]
        t = time.perf_counter()
        with LocalExecutor(args.jobs) as ex:
            local = run_all(sandbox_job, payloads, executor=ex)
        local_s = time.perf_counter() - t
        t = time.perf_counter()
        with DaskExecutor("local", jobs=args.jobs) as ex:
            start = time.perf_counter() - t
            t = time.perf_counter()
            on_dask = run_all(sandbox_job, payloads, executor=ex)
            dask_s = time.perf_counter() - t
        same = [o["stdout_b64"] for o in local] == [o["stdout_b64"] for o in on_dask]
        print(
            f"{args.runs} sandboxed runs (one sandbox each): local pool {args.runs / local_s:.1f} "
            f"runs/s, Dask LocalCluster {args.runs / dask_s:.1f} runs/s "
            f"(+{start:.2f} s start-up); same outputs: {same}"
        )
        if args.rewrite_runs > 0:
            _rewrite_cache_figure(tmp, args.rewrite_runs)


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("engine_overhead", main))
