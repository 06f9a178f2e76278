"""What one judged Java run costs: a cold JVM per run through suitebench's judge, against a
bare ``subprocess.run`` of the same compiled class with the same JVM flags, in one run.

One small Java program (reads numbers, prints their sum and maximum; public class
``Solution`` in a file named otherwise) is built once by the engine (``javac`` in the
sandbox). Then, on ``--runs`` different stdins:

* ``bare``: ``subprocess.run`` of the exact argv a judged run gets (the judge's JVM flags and
  the heap flags of the memory limit), no sandbox, no limits -- the floor a JVM sets;
* ``judge``: :func:`suitebench.audit.judge.judge_many` on a fresh store (the engine's sandboxed
  sessions, the store, the tokens checker), one worker;
* ``C judge``: the same program in C through the same judge, for scale: what a run costs when
  the program is not a JVM.

The modes take turns on ``--rounds`` chunks of the inputs, so a machine whose load drifts
treats them alike, and every mode's verdicts must be AC. Prints ms per run and the ratio to the
bare JVM. A warm JVM (one JVM judging many inputs) is not measured: it is not what suitebench
does (docs/audit.md, "Java and PyPy").

    python bench/jvm_cost.py [--runs 200] [--rounds 4] [--memory 256]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sandbox_overhead import PROGRAM as C  # the same program in C (a sibling bench script)
from sandbox_overhead import _inputs
from suitebench.audit.checkers import Checker
from suitebench.audit.judge import JudgeTask, judge_many
from suitebench.audit.records import Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import CheckerKind, CheckerSpec
from suitebench.run import jvm
from suitebench.run.executor import make_executor
from suitebench.run.outcome import Limits
from suitebench.run.store import Store
from suitebench.run.toolchain import Built, available

JAVA = """\
import java.io.*;
import java.util.*;

public class Solution {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(in.readLine().trim());
        StringTokenizer st = new StringTokenizer(in.readLine());
        long sum = 0, max = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            long x = Long.parseLong(st.nextToken());
            sum += x;
            max = Math.max(max, x);
        }
        System.out.println(sum + " " + max);
    }
}
"""


def _cases(count: int) -> list[tuple[bytes, bytes]]:
    """The sandbox bench's inputs (n, then n numbers) with their answers."""
    out = []
    for data in _inputs(count):
        xs = [int(t) for t in data.split()[1:]]
        out.append((data, f"{sum(xs)} {max(xs)}\n".encode()))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4, help="modes take turns on this many chunks")
    ap.add_argument("--memory", type=int, default=256, help="the memory limit (MiB)")
    args = ap.parse_args()
    ok, why = available("java")
    if not ok:
        print(f"needs a JDK: {why}", file=sys.stderr)
        return 2
    limits = Limits(wall_time=10.0, cpu_time=5.0, memory_mb=args.memory, extra_time=0.5)
    checker = Checker(CheckerSpec(kind=CheckerKind.TOKENS))
    with tempfile.TemporaryDirectory(prefix="jvm-bench-") as tmp:
        d = Path(tmp)
        (d / "sub-1.java").write_text(JAVA)
        (d / "sum.c").write_text(C)
        cache = d / "builds"
        with Store(d / "builds.sqlite") as store, make_executor(jobs=1) as ex:
            engine = AuditEngine(store, ex, cache)
            built = {"java": engine.build(d / "sub-1.java"), "c": engine.build(d / "sum.c")}
        for b in built.values():
            if not b.ok:
                print(f"build failed: {b.message}", file=sys.stderr)
                return 2
        java_argv = jvm.with_heap(built["java"].argv, limits.memory_mb)
        work = d / "work"
        work.mkdir()
        cases = _cases(args.runs)
        secs: dict[str, float] = {"bare": 0.0, "judge": 0.0, "C judge": 0.0}
        bad: dict[str, int] = dict.fromkeys(secs, 0)
        size = -(-args.runs // args.rounds)

        def judged(name: str, b: Built, chunk: list[tuple[bytes, bytes]], n: int) -> None:
            with Store(d / f"store-{name}-{n}.sqlite") as st, make_executor(jobs=1) as ex:
                engine = AuditEngine(st, ex, cache)
                tasks = [JudgeTask(b, x, gold) for x, gold in chunk]
                t0 = time.perf_counter()
                verdicts = judge_many(tasks, limits, checker, engine)
                secs[name] += time.perf_counter() - t0
            bad[name] += sum(v.verdict is not Verdict.AC for v in verdicts)

        for n, start in enumerate(range(0, args.runs, size)):
            chunk = cases[start : start + size]
            t0 = time.perf_counter()
            for x, gold in chunk:
                cp = subprocess.run(java_argv, input=x, capture_output=True, cwd=work, check=False)
                bad["bare"] += cp.stdout.split() != gold.split()
            secs["bare"] += time.perf_counter() - t0
            judged("judge", built["java"], chunk, n)
            judged("C judge", built["c"], chunk, n)

    floor = secs["bare"] / args.runs
    print(f"JVM: {' '.join(java_argv[:1] + java_argv[1:-3])}")
    print(f"{'mode':<28} {'runs':>6} {'ms/run':>8} {'x bare JVM':>11}  note")
    labels = {
        "bare": "bare subprocess.run (JVM)",
        "judge": "judge_many (JVM, sandboxed)",
        "C judge": "judge_many (C, sandboxed)",
    }
    for name, label in labels.items():
        per = secs[name] / args.runs
        note = "all AC" if not bad[name] else f"{bad[name]} NOT AC"
        print(f"{label:<28} {args.runs:>6} {per * 1000:8.1f} {per / floor:11.2f}  {note}")
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("jvm_cost", main))
