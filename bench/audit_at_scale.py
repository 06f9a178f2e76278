"""An audit at the papers' scale: a generated CodeContests dataset imported and audited end to
end by the ``suitebench`` command, on the local pool and on a Dask cluster, killed halfway and
resumed, against a bare subprocess pool running the same runs, all in one run.

The Auditors paper audits 20,375 accepted submissions. Here ``--problems`` problems (default 12,
for CI; 300 and more by hand) with ``--submissions`` submissions each (C++, Python 3 and Java:
CodeContests' labels 2, 3 and 4) and 20-60 tests each are generated from five templates
parametrised by seed (``_scale_dataset.py``: sums of big values, maximum subarray, pairs with a
sum divisible by K, k-th smallest with its index, gcd of a list; constants and I/O shape vary).
About 30% of the submissions are correct (the ``accepted`` pool, the references' source); the
others (the ``rejected`` pool, the one audited) overflow, are off by one, break a tie the
wrong way, miss a special case, are too slow on the large tests, crash, loop forever, print
forever, or (C++) read uninitialised memory. Then, in order:

1. the rows are written as parquet shards (pyarrow) in the dataset card's schema and
   ``suitebench import codecontests`` turns them into problem directories;
2. every program is built once through the engine (a warm build cache, as in real use: builds
   are cached by content hash), so the audits below time judging, not compiling;
3. ``suitebench audit`` on the local pool (``--jobs``), cold store, every run it executes
   recorded (``_audit_recorded.py``); then a bare ``multiprocessing.Pool`` of
   ``subprocess.run`` (``judge_throughput.py``'s: output to a file under ``RLIMIT_FSIZE``, a
   wall-clock timeout, no sandbox, no store) runs the same (program, input) pairs at equal
   workers, and the ratio of the two rates is printed;
4. ``suitebench audit --dask tcp://127.0.0.1:PORT``, cold store, on a Dask LocalCluster this
   bench starts (``--jobs`` single-threaded worker processes), against the same bare figure;
5. ``suitebench audit`` again, cold store, sent SIGKILL (its whole process group) once half as
   many runs as the first audit executed are stored -- counted in the store's SQLite file,
   opened read-only -- then resumed on that store: the resume must execute exactly its total
   minus what was stored (``results.json``'s ``runs``: executed, cached).

While an audit runs, a line every ``--progress-every`` seconds gives the runs stored so far
(the audit's runs over all problems: they share one queue) and the resident size. The peak
resident size of the ``suitebench`` process is sampled with psutil (and the largest process of
its tree, compilers and sandboxed programs included, comes from ``wait4``'s rusage). The
store's size is the SQLite file with its WAL, per run stored. A table of the figures is
printed and they are written as JSON to ``--out``. The machine may be shared: the ratios
compare runs of both sides made minutes apart in one process; run it under ``nice``.

    python bench/audit_at_scale.py [--problems 12] [--submissions 40] [--tests 20-60]
        [--jobs 2] [--seed 0] [--out audit-at-scale.json] [--keep DIR] [--skip dask,kill]
        [--build-cache DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from _scale_dataset import LANGS, make_row, write_parquet
from judge_throughput import bare_pool
from suitebench.audit.runs import KIND_RUN, AuditEngine
from suitebench.model.problem import load_problem
from suitebench.run.executor import make_executor
from suitebench.run.jvm import is_jvm_run, with_heap
from suitebench.run.outcome import Limits
from suitebench.run.store import Store

HERE = Path(__file__).resolve().parent
SUITEBENCH = [sys.executable, "-m", "suitebench"]
SHARD_ROWS = 50  # rows per parquet shard, as the published dataset splits its tables
MiB = 2**20


def stored_runs(store: Path) -> int:
    """Run records in the store, read-only (the audit may be writing it: WAL)."""
    if not store.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            row = con.execute("SELECT COUNT(*) FROM outcomes WHERE kind = ?", (KIND_RUN,))
            return int(row.fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:  # not created yet, or its schema not written yet
        return 0


def store_bytes(store: Path) -> int:
    return sum(p.stat().st_size for p in store.parent.glob(store.name + "*") if p.is_file())


@dataclass
class Watched:
    """One ``suitebench`` command as it ran: time, exit, resident sizes, what it left."""

    label: str
    seconds: float = 0.0
    returncode: int | None = None
    peak_rss: int = 0  # the suitebench process, sampled
    peak_tree_rss: int = 0  # the sum over its process tree, sampled
    max_rss_tree: int = 0  # the largest process of its tree (wait4's rusage)
    peak_others_rss: int = 0  # other processes this bench watches (the Dask workers)
    load: tuple[float, float] = (0.0, 0.0)  # the machine's load average at start and end
    killed_at: int | None = None  # runs stored when SIGKILL was sent
    left_running: list[str] = field(default_factory=list)


def watch(
    label: str,
    argv: list[str],
    store: Path,
    log: Path,
    *,
    expect: int | None,
    every: float,
    kill_at: int | None = None,
    others: list[psutil.Process] | None = None,
) -> Watched:
    """Run ``argv`` in its own process group, print progress, sample RSS; with ``kill_at``,
    send SIGKILL to the group once that many runs are stored."""
    w = Watched(label)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    me = psutil.Process(proc.pid)
    stop = threading.Event()
    tree: dict[int, str] = {}

    def sample() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            try:
                kids = me.children(recursive=True)
                rss = me.memory_info().rss
                tree_rss = rss
                for k in kids:
                    try:
                        tree_rss += k.memory_info().rss
                        tree.setdefault(k.pid, " ".join(k.cmdline()[:3]))
                    except psutil.Error:
                        pass
                w.peak_rss = max(w.peak_rss, rss)
                w.peak_tree_rss = max(w.peak_tree_rss, tree_rss)
            except psutil.Error:
                pass
            others_rss = 0
            for o in others or []:
                try:
                    others_rss += o.memory_info().rss
                except psutil.Error:
                    pass
            w.peak_others_rss = max(w.peak_others_rss, others_rss)
            n = (
                stored_runs(store)
                if (kill_at is not None or time.perf_counter() - last > every)
                else 0
            )
            if kill_at is not None and w.killed_at is None and n >= kill_at:
                os.killpg(proc.pid, signal.SIGKILL)
                w.killed_at = n
                print(f"  [{label}] SIGKILL to the process group at {n:,} runs stored", flush=True)
            now = time.perf_counter()
            if now - last > every:
                last = now
                share = f" ({n / expect:.0%} of {expect:,})" if expect else ""
                print(
                    f"  [{label}] {now - t0:6.0f} s  {n:,} runs stored{share}, "
                    f"{n / (now - t0):.0f} runs/s; rss {w.peak_rss / MiB:.0f} MiB",
                    flush=True,
                )
            stop.wait(0.05 if kill_at is not None else 0.25)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, status, usage = os.wait4(proc.pid, 0)
    w.seconds = time.perf_counter() - t0
    proc.returncode = w.returncode = os.waitstatus_to_exitcode(status)
    stop.set()
    thread.join()
    w.max_rss_tree = usage.ru_maxrss * 1024
    w.load = (load0, os.getloadavg()[0])
    if w.killed_at is not None:
        time.sleep(2.0)  # what the kill left: every process the group ran that still runs
        for pid, cmd in tree.items():
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    w.left_running.append(f"{pid} {cmd}")
            except psutil.Error:
                pass
    elif w.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"{label}: exit {w.returncode}\n{tail}")
    return w


def results_runs(out: Path) -> dict[str, int]:
    data = json.loads((out / "results.json").read_text())
    return {
        "executed": int(data["runs"]["executed"]),
        "cached": int(data["runs"]["cached"]),
        "certified": int(data["certified"]),
        "problems": len(data["problems"]),
    }


def audit_argv(
    globals_: list[str], problems: list[Path], out: Path, cache: Path, jobs: int
) -> list[str]:
    return [
        *globals_,
        "--jobs",
        str(jobs),
        "audit",
        *map(str, problems),
        "--pool",
        "rejected",
        "--arm",
        "generated=arms/generated",
        "--out",
        str(out),
        "--build-cache",
        str(cache),
        "--keep-going",
    ]


def bare_work(runs_file: Path) -> list[tuple[list[str], bytes, dict[str, Any]]]:
    """The recorded runs as the bare pool runs them: a JVM gets the heap flags of its limit,
    as the sandbox session adds them."""
    with runs_file.open("rb") as f:
        runs: list[tuple[list[str], bytes, dict[str, Any]]] = pickle.load(f)
    work = []
    for argv, stdin, lim in runs:
        if is_jvm_run(argv):
            argv = with_heap(argv, Limits.from_dict(lim).memory_mb)
        work.append((argv, stdin, lim))
    return work


def dataset(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    lo, hi = (int(x) for x in args.tests.split("-"))
    t0 = time.perf_counter()
    rows = [make_row(i, args.seed, args.submissions, (lo, hi)) for i in range(args.problems)]
    data = root / "code_contests" / "data"
    data.mkdir(parents=True)
    shards = max(1, -(-len(rows) // SHARD_ROWS))
    for s in range(shards):
        name = f"train-{s:05d}-of-{shards:05d}.parquet"
        write_parquet(rows[s * SHARD_ROWS : (s + 1) * SHARD_ROWS], data / name)
    langs: collections.Counter[str] = collections.Counter()
    for r in rows:
        for field_ in ("solutions", "incorrect_solutions"):
            langs.update(LANGS[x] for x in r[field_]["language"])
    tests = [
        sum(len(r[k]["input"]) for k in ("public_tests", "private_tests", "generated_tests"))
        for r in rows
    ]
    return {
        "problems": len(rows),
        "submissions": sum(langs.values()),
        "correct": sum(len(r["solutions"]["language"]) for r in rows),
        "by_language": dict(sorted(langs.items())),
        "tests": sum(tests),
        "tests_per_problem": [min(tests), max(tests)],
        "shards": shards,
        "parquet_bytes": sum(p.stat().st_size for p in data.iterdir()),
        "seconds": time.perf_counter() - t0,
    }


def warm_builds(dirs: list[Path], cache: Path, jobs: int, tmp: Path) -> tuple[int, float, int]:
    """Build every program the audits run (references, the rejected pool) once."""
    ex = make_executor(jobs=jobs)
    engine = AuditEngine(Store(tmp / "warm.sqlite"), ex, cache)
    paths: list[Path] = []
    for d in dirs:
        p = load_problem(d)
        paths += [*p.references, *p.pools["rejected"]]
    t0 = time.perf_counter()
    try:
        engine.build_all(paths)
        failed = sum(not engine.build(p).ok for p in paths)
    finally:
        ex.close()
        engine.store.close()
    return len(paths), time.perf_counter() - t0, failed


def rate(runs: int, seconds: float) -> float:
    return runs / seconds if seconds > 0 else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--problems", type=int, default=12)
    ap.add_argument("--submissions", type=int, default=40)
    ap.add_argument("--tests", default="20-60", help="tests per problem, MIN-MAX")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("audit-at-scale.json"))
    ap.add_argument("--keep", type=Path, default=None, help="work here and keep it")
    ap.add_argument(
        "--build-cache", type=Path, default=None, help="a build cache to reuse (default: fresh)"
    )
    ap.add_argument("--skip", default="", help="phases to leave out: dask, kill")
    ap.add_argument("--progress-every", type=float, default=30.0)
    args = ap.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)
        root = args.keep.resolve()
        return run(args, root, skip)
    with tempfile.TemporaryDirectory(prefix="audit-scale-") as tmp:
        return run(args, Path(tmp), skip)


def run(args: argparse.Namespace, root: Path, skip: set[str]) -> int:
    fig: dict[str, Any] = {
        "config": {
            "problems": args.problems,
            "submissions": args.submissions,
            "tests": args.tests,
            "jobs": args.jobs,
            "seed": args.seed,
            "cores": os.cpu_count(),
            "load_at_start": os.getloadavg()[0],
            "rss_by": "psutil (sampled every 0.25 s); largest process of the tree by wait4",
        }
    }
    print(
        f"audit at scale: {args.problems} problems x {args.submissions} submissions, "
        f"{args.tests} tests each; jobs {args.jobs}; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    fig["dataset"] = ds = dataset(args, root)
    print(
        f"dataset: {ds['submissions']:,} submissions ({ds['correct']:,} correct; "
        f"{', '.join(f'{k} {v:,}' for k, v in ds['by_language'].items())}), {ds['tests']:,} "
        f"tests, {ds['shards']} shard(s), {ds['parquet_bytes'] / MiB:.1f} MiB of parquet "
        f"({ds['seconds']:.1f} s)",
        flush=True,
    )

    problems_dir = root / "problems"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            *SUITEBENCH,
            "import",
            "codecontests",
            str(root / "code_contests"),
            "--out",
            str(problems_dir),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"import failed: {proc.stderr}")
    summary = json.loads((problems_dir / "import-summary.json").read_text())
    dirs = sorted(p.parent for p in problems_dir.glob("*/problem.toml"))
    fig["import"] = {
        "seconds": time.perf_counter() - t0,
        "problems_written": summary["problems_written"],
        "skipped": len(summary.get("skipped", [])),
    }
    print(
        f"import codecontests: {len(dirs)} problems in {fig['import']['seconds']:.1f} s "
        f"({fig['import']['skipped']} skipped)",
        flush=True,
    )

    cache = args.build_cache.resolve() if args.build_cache else root / "builds"
    n_built, t_build, failed = warm_builds(dirs, cache, args.jobs, root)
    fig["builds"] = {"programs": n_built, "seconds": t_build, "failed": failed}
    print(f"builds: {n_built:,} programs in {t_build:.0f} s ({failed} failed)", flush=True)

    every = args.progress_every
    # (a) the local pool, every executed run recorded for the bare pool
    store_a, out_a, runs_file = root / "a" / "store.sqlite", root / "a" / "out", root / "runs.pkl"
    store_a.parent.mkdir()
    argv = [sys.executable, str(HERE / "_audit_recorded.py"), str(runs_file)]
    argv += audit_argv(["--store", str(store_a)], dirs, out_a, cache, args.jobs)
    print("(a) suitebench audit, local pool, cold store", flush=True)
    wa = watch("local", argv, store_a, root / "a" / "log.txt", expect=None, every=every)
    ra = results_runs(out_a)
    rows_a, size_a = stored_runs(store_a), store_bytes(store_a)
    fig["local"] = {
        **ra,
        "seconds": wa.seconds,
        "runs_per_s": rate(ra["executed"], wa.seconds),
        "peak_rss_bytes": wa.peak_rss,
        "peak_tree_rss_bytes": wa.peak_tree_rss,
        "largest_process_rss_bytes": wa.max_rss_tree,
        "load": wa.load,
    }
    fig["store"] = {
        "bytes": size_a,
        "runs_stored": rows_a,
        "bytes_per_run": size_a / max(1, rows_a),
    }
    print(
        f"  {ra['executed']:,} runs in {wa.seconds:.1f} s ({fig['local']['runs_per_s']:.1f} "
        f"runs/s), {ra['certified']} certified over {ra['problems']} problems; peak RSS "
        f"{wa.peak_rss / MiB:.0f} MiB (tree {wa.peak_tree_rss / MiB:.0f} MiB, largest process "
        f"{wa.max_rss_tree / MiB:.0f} MiB); load {wa.load[0]:.1f} -> {wa.load[1]:.1f}",
        flush=True,
    )
    print(
        f"  store: {size_a / MiB:.2f} MiB, {rows_a:,} runs stored, "
        f"{fig['store']['bytes_per_run']:.0f} bytes per stored run",
        flush=True,
    )

    work = bare_work(runs_file)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    codes = bare_pool(args.jobs, work)
    t_bare = time.perf_counter() - t0
    bare_rate = rate(len(work), t_bare)
    fig["bare"] = {
        "runs": len(work),
        "seconds": t_bare,
        "runs_per_s": bare_rate,
        "nonzero_exits": sum(c != 0 for c in codes),
        "timeouts": sum(c == -9 for c in codes),
        "load": (load0, os.getloadavg()[0]),
    }
    fig["local"]["ratio_to_bare"] = fig["local"]["runs_per_s"] / bare_rate
    print(
        f"  bare Pool({args.jobs}) of subprocess.run, the same {len(work):,} runs: "
        f"{t_bare:.1f} s ({bare_rate:.1f} runs/s; {fig['bare']['nonzero_exits']} non-zero "
        f"exits, {fig['bare']['timeouts']} time-outs); load {load0:.1f} -> "
        f"{fig['bare']['load'][1]:.1f}",
        flush=True,
    )
    print(f"  ratio audit / bare pool at {args.jobs} workers: {fig['local']['ratio_to_bare']:.2f}")

    if "dask" not in skip:
        fig["dask"] = dask_phase(args, root, dirs, cache, bare_rate, every)

    if "kill" not in skip:
        fig["kill"] = kill_phase(args, root, dirs, cache, ra["executed"], every)

    table(fig, args.jobs)
    args.out.write_text(json.dumps(fig, indent=1) + "\n")
    print(f"figures: {args.out}")
    kill = fig.get("kill")
    return 1 if kill is not None and not kill["resume_redoes_nothing"] else 0


def dask_phase(
    args: argparse.Namespace,
    root: Path,
    dirs: list[Path],
    cache: Path,
    bare_rate: float,
    every: float,
) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    print(f"(b) suitebench audit --dask, a LocalCluster of {args.jobs} workers, cold store")
    cluster = LocalCluster(
        n_workers=args.jobs,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
        silence_logs=40,
    )
    try:
        address = cluster.scheduler_address
        with Client(address) as client:
            pids = list(client.run(os.getpid).values())
        workers = [psutil.Process(p) for p in pids]
        store, out = root / "b" / "store.sqlite", root / "b" / "out"
        store.parent.mkdir()
        argv = [
            *SUITEBENCH,
            *audit_argv(["--store", str(store), "--dask", address], dirs, out, cache, args.jobs),
        ]
        print(f"  scheduler {address}", flush=True)
        w = watch(
            "dask", argv, store, root / "b" / "log.txt", expect=None, every=every, others=workers
        )
    finally:
        cluster.close()
    r = results_runs(out)
    res: dict[str, Any] = {
        **r,
        "address": "tcp://127.0.0.1:PORT",
        "seconds": w.seconds,
        "runs_per_s": rate(r["executed"], w.seconds),
        "peak_rss_bytes": w.peak_rss,
        "workers_peak_rss_bytes": w.peak_others_rss,
        "load": w.load,
    }
    res["ratio_to_bare"] = res["runs_per_s"] / bare_rate
    print(
        f"  {r['executed']:,} runs in {w.seconds:.1f} s ({res['runs_per_s']:.1f} runs/s), "
        f"{r['certified']} certified; ratio to the bare pool at {args.jobs} workers "
        f"{res['ratio_to_bare']:.2f}; peak RSS {w.peak_rss / MiB:.0f} MiB, the workers "
        f"{w.peak_others_rss / MiB:.0f} MiB; load {w.load[0]:.1f} -> {w.load[1]:.1f}",
        flush=True,
    )
    return res


def kill_phase(
    args: argparse.Namespace, root: Path, dirs: list[Path], cache: Path, total: int, every: float
) -> dict[str, Any]:
    print("(c) suitebench audit, local pool, cold store, SIGKILL halfway, then resumed")
    store = root / "c" / "store.sqlite"
    store.parent.mkdir()
    target = total // 2
    argv = [
        *SUITEBENCH,
        *audit_argv(["--store", str(store)], dirs, root / "c" / "killed", cache, args.jobs),
    ]
    wk = watch(
        "killed",
        argv,
        store,
        root / "c" / "log-killed.txt",
        expect=total,
        every=every,
        kill_at=target,
    )
    stored = stored_runs(store)
    print(
        f"  killed after {wk.seconds:.1f} s (exit {wk.returncode}); {stored:,} runs stored; "
        f"processes left running: {len(wk.left_running)}",
        flush=True,
    )
    for p in wk.left_running[:10]:
        print(f"    left running: {p}")
    out = root / "c" / "resumed"
    argv = [*SUITEBENCH, *audit_argv(["--store", str(store)], dirs, out, cache, args.jobs)]
    wr = watch("resume", argv, store, root / "c" / "log-resumed.txt", expect=total, every=every)
    r = results_runs(out)
    total_resumed = r["executed"] + r["cached"]
    res = {
        "target": target,
        "stored_at_kill": stored,
        "killed_after_seconds": wk.seconds,
        "exit_status": wk.returncode,
        "left_running": wk.left_running,
        "resume_seconds": wr.seconds,
        "resume_executed": r["executed"],
        "resume_cached": r["cached"],
        "resume_total": total_resumed,
        "first_audit_total": total,
        "resume_redoes_nothing": r["executed"] == total_resumed - stored,
        "certified": r["certified"],
    }
    print(
        f"  resumed in {wr.seconds:.1f} s: {r['executed']:,} runs executed, {r['cached']:,} "
        f"from the store; total {total_resumed:,} (the uninterrupted audit: {total:,}); "
        f"executed = total - stored: {r['executed']:,} = {total_resumed:,} - {stored:,} "
        f"{'holds' if res['resume_redoes_nothing'] else 'DOES NOT HOLD'}",
        flush=True,
    )
    return res


def table(fig: dict[str, Any], jobs: int) -> None:
    loc, bare, st = fig["local"], fig["bare"], fig["store"]
    rows = [
        (
            "problems / submissions / tests",
            f"{fig['dataset']['problems']} / "
            f"{fig['dataset']['submissions']:,} / {fig['dataset']['tests']:,}",
        ),
        ("import codecontests", f"{fig['import']['seconds']:.1f} s"),
        (
            "builds (warm cache for the audits)",
            f"{fig['builds']['programs']:,} in {fig['builds']['seconds']:.0f} s",
        ),
        ("runs executed by the audit", f"{loc['executed']:,}"),
        (
            f"audit, local pool ({jobs} workers)",
            f"{loc['runs_per_s']:.1f} runs/s ({loc['seconds']:.0f} s)",
        ),
        (
            f"bare pool ({jobs} workers), same runs",
            f"{bare['runs_per_s']:.1f} runs/s ({bare['seconds']:.0f} s)",
        ),
        ("ratio audit / bare", f"{loc['ratio_to_bare']:.2f}"),
    ]
    if "dask" in fig:
        d = fig["dask"]
        rows += [
            (
                f"audit, Dask LocalCluster ({jobs} workers)",
                f"{d['runs_per_s']:.1f} runs/s ({d['seconds']:.0f} s)",
            ),
            ("ratio Dask audit / bare", f"{d['ratio_to_bare']:.2f}"),
            ("peak RSS, Dask workers (sum)", f"{d['workers_peak_rss_bytes'] / MiB:.0f} MiB"),
        ]
    rows += [
        ("peak RSS of suitebench (psutil)", f"{loc['peak_rss_bytes'] / MiB:.0f} MiB"),
        (
            "largest process of its tree (wait4)",
            f"{loc['largest_process_rss_bytes'] / MiB:.0f} MiB",
        ),
        ("store", f"{st['bytes'] / MiB:.2f} MiB, {st['bytes_per_run']:.0f} bytes/run"),
    ]
    if "kill" in fig:
        k = fig["kill"]
        rows += [
            ("SIGKILL at (runs stored)", f"{k['stored_at_kill']:,} of {k['first_audit_total']:,}"),
            ("processes left running after it", str(len(k["left_running"]))),
            (
                "resume",
                f"{k['resume_seconds']:.0f} s, {k['resume_executed']:,} executed, "
                f"{k['resume_cached']:,} from the store",
            ),
            ("resume executes total - stored", "yes" if k["resume_redoes_nothing"] else "NO"),
        ]
    width = max(len(a) for a, _ in rows)
    print()
    for a, b in rows:
        print(f"  {a:<{width}}  {b}")


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("audit_at_scale", main))
