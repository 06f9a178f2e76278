"""Judge throughput: the audit against a bare ``multiprocessing.Pool`` of ``subprocess.run``,
always at equal workers, both timed in this one run.

Two cases, over problems generated in a temporary directory (C submissions whose bugs are
missed special cases; the ``many`` case also has submissions that time out, crash or print
forever):

``judge``
    The judging code path alone (``judge_many`` over the kill matrix of a few problems, fresh
    store) against a bare pool running the same matrix. Both must give the same kill matrix.
``many``
    The full ``audit`` of >= 20 problems (10-90 inputs, ~15 submissions each), cold store,
    against a bare pool running exactly the runs the audit executed (recorded as they run:
    validator, references, kill matrix, re-judges, brute force), with a judge's minimum
    of limits: a wall-clock timeout, and output to a file under ``RLIMIT_FSIZE`` at the output
    limit (set once per pool worker: a ``preexec_fn`` would triple the cost of a run).
    Then the audit again, cold store, on 1 worker, for the scaling from 1 to ``--jobs``, and
    once more on ``--jobs`` workers, so that the scaling can also be read against the mean of
    the runs before and after the one on 1 worker (the load of a shared machine drifts).
    Also prints the store's size per 10,000 runs, this process's peak resident size, and
    for each audit the CPU seconds of this process (the coordinator and the worker threads
    that drive the sandboxes) beside those of its children.

Builds are done once beforehand (a warm build cache, as in real use where builds are cached by
content hash); stores are always cold. Targets: audit >= 0.8 x the bare pool, >= 1.8 x from 1
to 2 workers. The machine may be shared: read the ratios, which compare runs of both sides
made minutes apart in one process, not the absolute figures.

    python bench/judge_throughput.py [--case all|judge|many] [--jobs 2] [--problems 20]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import suitebench.audit.runs as runs_mod
from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig
from suitebench.audit.checkers import Checker
from suitebench.audit.judge import JudgeTask, judge_limits, judge_many
from suitebench.audit.pipeline import run_audit
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import load_problem
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Limits
from suitebench.run.store import Store

REF = r"""
#include <stdio.h>
int main(void) {
    int n; long long s = 0, x;
    if (scanf("%d", &n) != 1) return 1;
    for (int i = 0; i < n; i++) { scanf("%lld", &x); s += x * @MUL@; }
    printf("%lld\n", s);
    return 0;
}
"""

# @BUG@ runs when the first value hits the submission's special case.
SUB = r"""
#include <stdio.h>
int main(void) {
    int n; long long s = 0, x, first = 0;
    if (scanf("%d", &n) != 1) return 1;
    for (int i = 0; i < n; i++) { scanf("%lld", &x); if (i == 0) first = x; s += x * @MUL@; }
    if (@WHEN@) { @BUG@ }
    printf("%lld\n", s);
    return 0;
}
"""

BUGS = {
    "wa": ("first == @K@", "s += 1;"),  # missed special case: a wrong answer
    "crash": ("first % 16 == @K@ % 16", "int *p = 0; *p = (int)s;"),  # null write: RE
    "tle": ("first % 16 == @K@ % 16", "for (volatile unsigned long i = 0;; i++) {}"),
    "forever": ("first % 32 == @K@ % 32", 'for (;;) fputs("YES\\n", stdout);'),  # OLE
    "ok": ("0", ""),
}

VALIDATOR = """import sys
data = sys.stdin.read().split()
n = int(data[0])
assert 1 <= n <= 100 and len(data) == n + 1
"""


def make_problem(
    root: Path, pid: str, mul: int, kinds: list[str], inputs: int, rng: random.Random
) -> Path:
    d = root / pid
    for sub in ("refs", "subs", "tests", "arm", "brute"):
        (d / sub).mkdir(parents=True)
    (d / "refs" / "ref.c").write_text(REF.replace("@MUL@", str(mul)))
    (d / "refs" / "ref2.c").write_text(REF.replace("@MUL@", str(mul)) + "/* second */\n")
    (d / "brute" / "brute.py").write_text(
        f"d = list(map(int, open(0).read().split()))\nprint(sum(d[1:]) * {mul})\n"
    )
    (d / "validator.py").write_text(VALIDATOR)
    for k, kind in enumerate(kinds):
        when, bug = BUGS[kind]
        src = SUB.replace("@WHEN@", when).replace("@BUG@", bug)
        src = src.replace("@MUL@", str(mul)).replace("@K@", str(rng.randint(0, 60)))
        (d / "subs" / f"s{k:02d}-{kind}.c").write_text(src)
    (d / "tests" / "01.in").write_text("2\n61 62\n")
    for i in range(inputs):
        n = rng.randint(1, 20)
        vals = [rng.randint(0, 60) for _ in range(n)]
        (d / "arm" / f"{i:03d}.in").write_text(f"{n}\n{' '.join(map(str, vals))}\n")
    (d / "problem.toml").write_text(
        f'id = "{pid}"\ntime_limit = 1.0\nmemory_limit = 256\nchecker = "tokens"\n'
        'validator = "validator.py"\nreferences = ["refs/*.c"]\nbrute = "brute/*.py"\n'
        '[pools]\nbuggy = "subs/*.c"\n[tests]\nofficial = "tests/*.in"\n'
    )
    return d


# -- the bare side: a judge's minimum, one subprocess.run per run --------------------------------


_OUT: Any = None  # each pool worker's output file, reused run after run


def _bare_init(output_bytes: int) -> None:
    """A pool worker: output over the limit is SIGXFSZ for every child (rlimits inherit)."""
    global _OUT
    resource.setrlimit(resource.RLIMIT_FSIZE, (output_bytes, output_bytes))
    _OUT = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the worker


def _bare_run(job: tuple[list[str], bytes, dict[str, Any]]) -> tuple[int, bytes]:
    argv, stdin, lim = job
    limits = Limits.from_dict(lim)
    _OUT.seek(0)
    _OUT.truncate()
    try:
        p = subprocess.run(
            argv,
            input=stdin,
            stdout=_OUT,
            stderr=subprocess.DEVNULL,
            timeout=limits.effective_wall,
        )
        code = p.returncode
    except subprocess.TimeoutExpired:
        code = -9
    _OUT.seek(0)
    return code, _OUT.read(1 << 16)


def bare_pool(jobs: int, work: list[tuple[list[str], bytes, dict[str, Any]]]) -> list[int]:
    with multiprocessing.Pool(jobs, _bare_init, (64 << 20,)) as pool:
        return [code for code, _ in pool.imap(_bare_run, work, chunksize=8)]


# -- the audit side ---------------------------------------------------------------------------


class Recorder:
    """Wraps the audit's chunk job to record every run it executes (argv, stdin, limits)."""

    def __init__(self) -> None:
        self.runs: list[tuple[list[str], bytes, dict[str, Any]]] = []
        self.original: Callable[[dict[str, Any]], dict[str, Any]] = runs_mod.chunk_job

    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        res = self.original(payload)
        if payload["mode"] == "stdin":
            n = len(res["outcomes"])
            argv, lim = list(payload["argv"]), payload["limits"]
            self.runs += [(argv, s, lim) for s in payload["stdins"][:n]]
        return res


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its reaped children so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def cpu_line(cpu: tuple[float, float], wall: float) -> str:
    """The audit's own CPU (coordinator and the threads driving the sandboxes) and what its
    reaped children reported (the sandboxed programs' time mostly stays inside the sandbox's
    process tree, so that figure is a floor)."""
    return (
        f"  CPU of this process: {cpu[0]:.2f} s ({cpu[0] / wall:.0%} of one core); "
        f"reaped children: {cpu[1]:.2f} s"
    )


def timed_audit(
    dirs: list[Path], jobs: int, cache: Path, store_path: Path, record: bool = False
) -> tuple[
    float, AuditEngine, list[tuple[list[str], bytes, dict[str, Any]]], int, tuple[float, float]
]:
    rec = Recorder()
    if record:
        runs_mod.chunk_job = rec  # type: ignore[assignment]
    ex = make_executor(jobs=jobs)
    store = Store(store_path)
    engine = AuditEngine(store, ex, cache)
    try:
        c0 = cpu_seconds()
        t0 = time.perf_counter()
        res = run_audit(
            [load_problem(d) for d in dirs],
            [parse_arm("arm=arm")],
            engine,
            config=AuditConfig(pool="buggy"),
        )
        elapsed = time.perf_counter() - t0
        c1 = cpu_seconds()
    finally:
        runs_mod.chunk_job = rec.original
        ex.close()
        store.close()
    cpu = (c1[0] - c0[0], c1[1] - c0[1])
    return elapsed, engine, rec.runs, int(res.results["certified"]), cpu


def warm_builds(dirs: list[Path], cache: Path, jobs: int, tmp: Path) -> None:
    ex = make_executor(jobs=jobs)
    engine = AuditEngine(Store(tmp / "warm.sqlite"), ex, cache)
    paths: list[Path] = []
    for d in dirs:
        p = load_problem(d)
        paths += [*p.references, *p.pools["buggy"], *p.brute]
        paths += [x for x in (p.validator,) if x is not None]
    engine.build_all(paths)
    ex.close()
    engine.store.close()


def case_many(args: argparse.Namespace, tmp: Path) -> None:
    rng = random.Random(20261130)
    dirs = []
    counts = {k: 0 for k in BUGS}
    for i in range(args.problems):
        kinds = ["ok"] + ["wa"] * (args.subs - 2) + ["crash"]
        if i % 2 == 0:
            kinds[-2] = "tle"
        if i % 4 == 1:
            kinds[-3] = "forever"
        for k in kinds:
            counts[k] += 1
        inputs = rng.randint(10, 90)
        dirs.append(make_problem(tmp / "many", f"m{i:02d}", i + 1, kinds, inputs, rng))
    cache = tmp / "builds"
    warm_builds(dirs, cache, args.jobs, tmp)
    print(
        f"many: {args.problems} problems, 10-90 inputs, {args.subs} submissions each "
        f"({', '.join(f'{v} {k}' for k, v in counts.items())}); jobs {args.jobs}"
    )

    t_audit, engine, work, certified, cpu2 = timed_audit(
        dirs, args.jobs, cache, tmp / "many-audit.sqlite", record=True
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(f.stat().st_size for f in tmp.glob("many-audit.sqlite*"))
    n = engine.executed_runs
    print(
        f"  audit, cold store, {args.jobs} workers: {n} runs in {t_audit:.2f} s "
        f"({n / t_audit:.1f} runs/s), {certified} certified; backend {engine.backend}"
    )
    print(cpu_line(cpu2, t_audit))
    print(f"  store: {size / 2**20:.2f} MiB, {size / n * 10_000 / 2**20:.2f} MiB per 10,000 runs")
    print(f"  peak RSS of this process so far: {peak:.0f} MiB")

    t0 = time.perf_counter()
    bare_pool(args.jobs, work)
    t_bare = time.perf_counter() - t0
    print(
        f"  bare Pool({args.jobs}) of subprocess.run, the same {len(work)} runs: "
        f"{t_bare:.2f} s ({len(work) / t_bare:.1f} runs/s)"
    )
    print(f"  ratio audit / bare pool at {args.jobs} workers: {t_bare / t_audit:.2f}  (target 0.8)")

    if args.jobs > 1:
        t_one, one, _, _, cpu1 = timed_audit(dirs, 1, cache, tmp / "many-one.sqlite")
        print(
            f"  audit, cold store, 1 worker: {one.executed_runs} runs in {t_one:.2f} s "
            f"({one.executed_runs / t_one:.1f} runs/s)"
        )
        print(cpu_line(cpu1, t_one))
        print(f"  scaling 1 -> {args.jobs} workers: {t_one / t_audit:.2f}x  (target 1.8x)")
        # the load of a shared machine drifts over minutes: time the audit on --jobs workers
        # again after the one on 1 worker, and compare 1 worker with the mean of the two
        t_again, again, _, _, cpu3 = timed_audit(dirs, args.jobs, cache, tmp / "many-again.sqlite")
        print(
            f"  audit, cold store, {args.jobs} workers again: {again.executed_runs} runs in "
            f"{t_again:.2f} s ({again.executed_runs / t_again:.1f} runs/s)"
        )
        print(cpu_line(cpu3, t_again))
        mean = (t_audit + t_again) / 2
        print(
            f"  scaling 1 -> {args.jobs} workers against the mean of the runs before and after: "
            f"{t_one / mean:.2f}x  (target 1.8x)"
        )
        # what this machine gives right now: the bare pool's own scaling on a sample of the runs
        sample = random.Random(1).sample(work, min(len(work), args.scaling_sample))
        t0 = time.perf_counter()
        bare_pool(1, sample)
        b1 = time.perf_counter() - t0
        t0 = time.perf_counter()
        bare_pool(args.jobs, sample)
        b2 = time.perf_counter() - t0
        print(
            f"  bare pool scaling 1 -> {args.jobs} on {len(sample)} of those runs: "
            f"{b1 / b2:.2f}x (the machine's own ceiling at the moment)"
        )


def case_judge(args: argparse.Namespace, tmp: Path) -> None:
    rng = random.Random(20261129)
    dirs = [make_problem(tmp / "judge", f"p{i}", i + 1, ["wa"] * 20, 50, rng) for i in range(3)]
    cache = tmp / "builds"
    warm_builds(dirs, cache, args.jobs, tmp)
    ex = make_executor(jobs=args.jobs)
    setup = AuditEngine(Store(tmp / "setup.sqlite"), ex, cache)
    tasks_of = []
    for d in dirs:
        p = load_problem(d)
        ref = setup.build(p.references[0])
        subs = [setup.build(s) for s in p.pools["buggy"]]
        cases = []
        for f in sorted((p.root / "arm").iterdir()):
            data = f.read_bytes()
            gold = subprocess.run(list(ref.argv), input=data, capture_output=True).stdout
            cases.append((data, gold))
        tasks_of.append((p, [JudgeTask(b, dt, g) for b in subs for dt, g in cases]))
    total = sum(len(t) for _, t in tasks_of)

    engine = AuditEngine(Store(tmp / "judge.sqlite"), ex, cache)
    t0 = time.perf_counter()
    audit_matrix: list[bool] = []
    for p, tasks in tasks_of:
        judged = judge_many(tasks, judge_limits(p), Checker(p.checker), engine)
        audit_matrix += [j.verdict.is_kill for j in judged]
    t_audit = time.perf_counter() - t0
    ex.close()

    work = [
        (list(t.built.argv), t.input, judge_limits(p).to_dict()) for p, ts in tasks_of for t in ts
    ]
    golds = [t.gold for _, ts in tasks_of for t in ts]
    t0 = time.perf_counter()
    with multiprocessing.Pool(args.jobs, _bare_init, (64 << 20,)) as pool:
        outs = pool.map(_bare_run, work, chunksize=8)
    t_bare = time.perf_counter() - t0
    bare_matrix = [c != 0 or o.split() != g.split() for (c, o), g in zip(outs, golds, strict=True)]
    print(f"judge: 3 problems x 20 C submissions x 50 inputs = {total} runs; jobs {args.jobs}")
    print(f"  judge_many, fresh store: {total / t_audit:8.1f} runs/s ({t_audit:.2f} s)")
    print(f"  bare Pool({args.jobs}):           {total / t_bare:8.1f} runs/s ({t_bare:.2f} s)")
    print(f"  ratio audit / bare at {args.jobs} workers: {t_bare / t_audit:.2f}")
    same = audit_matrix == bare_matrix
    print(f"  kill matrices equal: {same} ({sum(audit_matrix)} kills)")
    if not same:
        raise SystemExit("kill matrices differ")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--case", choices=("all", "judge", "many"), default="all")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--problems", type=int, default=20)
    ap.add_argument("--subs", type=int, default=15)
    ap.add_argument("--scaling-sample", type=int, default=4000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp_s:
        tmp = Path(tmp_s)
        if args.case in ("all", "judge"):
            case_judge(args, tmp)
        if args.case in ("all", "many"):
            case_many(args, tmp)


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("judge_throughput", main))
