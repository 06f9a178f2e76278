"""Judge throughput: the audit's judging code path against a bare ``subprocess`` loop.

Generates, in a temporary directory, several small problems with 20 C submissions and 50
inputs each (every submission carries a "missed special case" bug that some inputs hit), builds
them, computes the gold with the reference, and then judges the full kill matrix twice, one after
the other in this one process:

* audit: ``suitebench.audit.judge.judge_many`` on a fresh store -- sandboxed (the best backend
  here), every run a content-addressed job, runs of one program chunked into one ``run_batch``,
  the executor's workers in parallel, results committed to SQLite;
* bare: a plain loop of ``subprocess.run`` with pipes, no sandbox, no store, one at a time,
  comparing tokens.

Both must give the same kill matrix. Prints runs/s of each and the ratio (target: audit >= 0.5
of the bare floor). ``--full`` also times the whole certification chain (legality, oracle,
judge, determinism, brute force) on the same problems.

    python bench/judge_throughput.py [--problems 3] [--subs 20] [--inputs 50] [--jobs N] [--full]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
import time
from pathlib import Path

from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig
from suitebench.audit.checkers import Checker
from suitebench.audit.judge import JudgeTask, judge_limits, judge_many
from suitebench.audit.run import run_audit
from suitebench.audit.runs import Engine
from suitebench.model.problem import Problem, load_problem
from suitebench.run.executor import make_executor
from suitebench.run.store import Store
from suitebench.run.toolchain import Built

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

SUB = r"""
#include <stdio.h>
/* missed special case: wrong when the first value is @K@ */
int main(void) {
    int n; long long s = 0, x, first = 0;
    if (scanf("%d", &n) != 1) return 1;
    for (int i = 0; i < n; i++) { scanf("%lld", &x); if (i == 0) first = x; s += x * @MUL@; }
    if (first == @K@) s += 1;
    printf("%lld\n", s);
    return 0;
}
"""

VALIDATOR = """import sys
data = sys.stdin.read().split()
n = int(data[0])
assert 1 <= n <= 100 and len(data) == n + 1
"""


def make_problem(
    root: Path, pid: str, mul: int, subs: int, inputs: int, rng: random.Random
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
    for k in range(subs):
        sub = SUB.replace("@MUL@", str(mul)).replace("@K@", str(rng.randint(0, 60)))
        (d / "subs" / f"s{k:02d}.c").write_text(sub)
    (d / "tests" / "01.in").write_text("2\n61 62\n")
    for i in range(inputs):
        n = rng.randint(1, 20)
        vals = [rng.randint(0, 100) for _ in range(n)]
        (d / "arm" / f"{i:03d}.in").write_text(f"{n}\n{' '.join(map(str, vals))}\n")
    (d / "problem.toml").write_text(
        f'id = "{pid}"\ntime_limit = 1.0\nmemory_limit = 256\nchecker = "tokens"\n'
        'validator = "validator.py"\nreferences = ["refs/*.c"]\nbrute = "brute/*.py"\n'
        '[pools]\nbuggy = "subs/*.c"\n[tests]\nofficial = "tests/*.in"\n'
    )
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=3)
    ap.add_argument("--subs", type=int, default=20)
    ap.add_argument("--inputs", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--full", action="store_true", help="also time the whole chain")
    args = ap.parse_args()
    rng = random.Random(20261129)

    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp_s:
        tmp = Path(tmp_s)
        dirs = [
            make_problem(tmp / "problems", f"p{i}", i + 1, args.subs, args.inputs, rng)
            for i in range(args.problems)
        ]
        problems = [load_problem(d) for d in dirs]
        cache = tmp / "builds"

        # Build (not timed: builds are cached by content hash in real use) and compute golds.
        ex = make_executor(jobs=args.jobs)
        setup = Engine(Store(tmp / "setup.sqlite"), ex, cache)
        work: list[tuple[Problem, list[tuple[Built, bytes, bytes]]]] = []
        for p in problems:
            ref = setup.build(p.references[0])
            subs = [setup.build(s) for s in p.pools["buggy"]]
            cases = []
            for f in sorted((p.root / "arm").iterdir()):
                data = f.read_bytes()
                gold = subprocess.run(list(ref.argv), input=data, capture_output=True).stdout
                cases.append((data, gold))
            work.append((p, [(b, d, g) for b in subs for d, g in cases]))
        total = sum(len(w) for _, w in work)
        print(
            f"{args.problems} problems x {args.subs} C submissions x {args.inputs} inputs "
            f"= {total} runs; backend {setup.backend}; jobs {args.jobs}"
        )

        # audit code path, fresh store
        engine = Engine(Store(tmp / "audit.sqlite"), ex, cache)
        t0 = time.perf_counter()
        audit_matrix = []
        for p, runs in work:
            tasks = [JudgeTask(b, d, g) for b, d, g in runs]
            judged = judge_many(tasks, judge_limits(p), Checker(p.checker), engine)
            audit_matrix += [j.verdict.is_kill for j in judged]
        t_audit = time.perf_counter() - t0

        # bare subprocess loop, no sandbox, no store
        t0 = time.perf_counter()
        bare_matrix = []
        for _, runs in work:
            for b, d, g in runs:
                out = subprocess.run(list(b.argv), input=d, capture_output=True)
                bare_matrix.append(out.returncode != 0 or out.stdout.split() != g.split())
        t_bare = time.perf_counter() - t0

        same = audit_matrix == bare_matrix
        kills = sum(audit_matrix)
        print(f"audit (sandboxed, stored): {total / t_audit:8.1f} runs/s  ({t_audit:.2f} s)")
        print(f"bare subprocess loop:      {total / t_bare:8.1f} runs/s  ({t_bare:.2f} s)")
        print(f"ratio audit/bare:          {t_bare / t_audit:8.2f}")
        print(f"kill matrices equal: {same} ({kills} kills of {total} cells)")

        if args.full:
            full = Engine(Store(tmp / "full.sqlite"), ex, cache)
            t0 = time.perf_counter()
            res = run_audit(
                problems, [parse_arm("arm=arm")], full, config=AuditConfig(pool="buggy")
            )
            t_full = time.perf_counter() - t0
            print(
                f"full chain: {full.executed_runs} runs in {t_full:.2f} s "
                f"({full.executed_runs / t_full:.1f} runs/s), "
                f"{res.results['certified']} certified findings"
            )
        ex.close()
        if not same:
            raise SystemExit("kill matrices differ")


if __name__ == "__main__":
    main()
