"""Throughput of suite scoring: the fast path against the naive per-mutant pytest loop.

Scores the same suite against the same mutants three ways, one after the other in one run, each
with a fresh store:

* the naive loop: one sandboxed ``pytest --junitxml`` process per program under test, one after
  another (the plain engine on one worker);
* the plain engine on ``--jobs`` workers: the same processes, several at a time;
* the fast path: the batched engine on ``--jobs`` workers (one sandboxed pytest start-up per
  batch, a fork per program).

Builds are done once beforehand into a shared build cache, so every timing is of running the
suite only.  Prints the three times, the fast path's speed-up over the naive loop and over the
plain engine at equal workers, and whether all kill matrices are equal.

    python bench/score_throughput.py [INSTANCE] [--jobs N] [--batch-size B] [--repeat R]

INSTANCE defaults to the C fixture ``src/suitebench/data/instances/rpn-c``.  ``--generate N`` scores
a copy of the instance whose mutants are replaced by up to N relational-operator mutants of its
C source (``<`` to ``<=``, ``==`` to ``!=``, ...), to see how the ratio grows with the number of
mutants (pytest's start-up is amortised over more programs; the tests' own work is not).
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from suitebench.data import INSTANCES_DIR
from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.build import Builder, build_all
from suitebench.suite.result import SuiteResult
from suitebench.suite.runner import Engine
from suitebench.suite.score import DEFAULT_BATCH, score_suite

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_INSTANCE = INSTANCES_DIR / "rpn-c"


_SWAPS = {"<=": "<", ">=": ">", "==": "!=", "!=": "==", "<": "<=", ">": ">="}
_OPERATOR = re.compile(r"(?<=[ \w)])(<=|>=|==|!=|<|>)(?=[ \w(-])")


def generate_instance(source_instance: Path, work: Path, count: int) -> Path:
    """A copy of a C instance with up to ``count`` relational-operator mutants of its source."""
    original = load_instance(source_instance)
    root = work / "generated"
    shutil.copytree(original.root, root, ignore=shutil.ignore_patterns("mutants"))
    (root / "mutants").mkdir()
    c_file = next(original.source.glob("*.c"))
    rel = c_file.relative_to(original.source).as_posix()
    lines = c_file.read_text().splitlines(keepends=True)
    text = (root / "instance.toml").read_text()
    toml = text[: text.index("[[mutants]]")] if "[[mutants]]" in text else text
    made = 0
    for number, line in enumerate(lines):
        if made >= count or line.lstrip().startswith(("#", "//", "/*", "*")):
            continue
        for match in _OPERATOR.finditer(line):
            if made >= count:
                break
            op = match.group(1)
            mutated = line[: match.start()] + _SWAPS[op] + line[match.end() :]
            after = [*lines[:number], mutated, *lines[number + 1 :]]
            diff = "".join(
                difflib.unified_diff(lines, after, fromfile=f"a/{rel}", tofile=f"b/{rel}")
            )
            made += 1
            (root / "mutants" / f"g{made:03d}.diff").write_text(diff)
            toml += f'\n[[mutants]]\nid = "g{made:03d}"\npatch = "mutants/g{made:03d}.diff"\n'
    (root / "instance.toml").write_text(toml)
    return root


def _score(
    instance_path: Path, engine: Engine, work: Path, builds: Path, jobs: int, batch: int
) -> tuple[float, SuiteResult]:
    instance = load_instance(instance_path)
    store = Store(work / f"store-{engine}-{time.monotonic_ns()}.sqlite")  # fresh each time
    with LocalExecutor(jobs) as executor:
        started = time.perf_counter()
        result = score_suite(
            instance,
            store=store,
            cache_dir=builds,
            executor=executor,
            engine=engine,
            batch_size=batch,
        )
        elapsed = time.perf_counter() - started
    store.close()
    return elapsed, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance", nargs="?", type=Path, default=DEFAULT_INSTANCE)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--generate", type=int, default=0, metavar="N")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="suitebench-bench-") as tmp:
        work = Path(tmp)
        if args.generate:
            args.instance = generate_instance(args.instance, work, args.generate)
        instance = load_instance(args.instance)
        builds = work / "builds"
        _reference, mutants = build_all(Builder(instance, builds), list(instance.mutants))
        built = sum(b.ok for b in mutants.values())
        print(
            f"instance {instance.name}: {len(instance.mutants)} mutants ({built} build), "
            f"reference runs 3, jobs {args.jobs}, batch size {args.batch_size}"
        )
        ways = {
            "naive": (Engine.PLAIN, 1, 1),
            "plain": (Engine.PLAIN, args.jobs, 1),
            "fast": (Engine.BATCHED, args.jobs, args.batch_size),
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        results: dict[str, SuiteResult] = {}
        equal = True
        for _ in range(args.repeat):
            for name, (engine, jobs, batch) in ways.items():
                elapsed, result = _score(args.instance, engine, work, builds, jobs, batch)
                times[name].append(elapsed)
                results[name] = result
            reference = results["naive"]
            for result in results.values():
                equal = equal and result.kill_matrix() == reference.kill_matrix()
                equal = equal and [t.reference for t in result.tests] == [
                    t.reference for t in reference.tests
                ]
        best = {name: min(values) for name, values in times.items()}
        runs = 3 + built
        naive = results["naive"]
        print(
            f"tests {len(naive.tests)}, suite runs {runs}, matrix cells {len(naive.tests) * built}"
        )
        print(f"M = {naive.mutation_score}  V = {naive.validity}")
        labels = {
            "naive": "naive loop (pytest --junitxml per program, one at a time)",
            "plain": f"plain engine (the same, {args.jobs} at a time)",
            "fast": f"fast path (batched engine, {args.jobs} workers)",
        }
        for name, label in labels.items():
            print(f"{label:<58} {best[name]:7.2f} s  ({runs / best[name]:5.1f} runs/s)")
        print(
            f"speed-up over the naive loop {best['naive'] / best['fast']:.1f}x   "
            f"over the plain engine at {args.jobs} workers {best['plain'] / best['fast']:.1f}x   "
            f"matrices equal: {equal}"
        )
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
