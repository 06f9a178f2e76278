"""Throughput of suite scoring: coverage-guided selection against the naive per-mutant loop.

Scores the same suite against the same mutants, one after the other in one run, each with a
fresh store and *the same number of workers*:

* the naive loop: per mutant, copy the source, apply the patch, run one sandboxed
  ``pytest --junitxml`` on it (``--jobs`` at a time, a thread pool) -- what a user writes first;
* the batched engine running every test on every mutant (``--all-tests``);
* the batched engine with coverage-guided test selection (the default);
* the same with ``--fast`` (stop each mutant at its first kill).

Builds of the engine are done once beforehand into a shared build cache (the naive loop pays
its copy and patch in its timing).  Prints the times, the ratios at equal workers, and whether
the kill matrices agree cell by cell (naive loop, all tests, selection) and the mutant statuses
of ``--fast``.

    python bench/score_throughput.py [INSTANCE] [--jobs N] [--batch-size B] [--repeat R]

Without INSTANCE it scores a generated real-size ``kind = "python"`` instance
(``bench/realsize.py``: 240 tests whose own work dominates a run, 60 mutants over 6 modules;
``--size`` sets how many values each test feeds its routine), and prints first how much of a
plain run of the reference's suite is its tests.
``--generate N`` scores a copy of INSTANCE (a C instance) whose mutants are replaced by up to N
relational-operator mutants of its C source.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realsize import DEFAULT_SIZE, generate
from suitebench.model.instance import Instance, InstanceKind, load_instance
from suitebench.run import sandbox
from suitebench.run.executor import LocalExecutor
from suitebench.run.layout import sandbox_path
from suitebench.run.outcome import Limits
from suitebench.run.store import Store
from suitebench.suite.execute.interpreter import own_binds
from suitebench.suite.execute.patching import apply_patch
from suitebench.suite.execute.programs import Builder, build_all
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.result import SuiteResult
from suitebench.suite.score import DEFAULT_BATCH, score_suite

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
    instance: Instance,
    work: Path,
    builds: Path,
    jobs: int,
    batch: int,
    *,
    all_tests: bool,
    fast: bool = False,
) -> tuple[float, SuiteResult]:
    store = Store(work / f"store-{time.monotonic_ns()}.sqlite")  # fresh each time
    with LocalExecutor(jobs) as executor:
        started = time.perf_counter()
        result = score_suite(
            instance,
            store=store,
            cache_dir=builds,
            executor=executor,
            engine=Engine.BATCHED,
            batch_size=batch,
            all_tests=all_tests,
            fast=fast,
        )
        elapsed = time.perf_counter() - started
    store.close()
    return elapsed, result


def _naive_one(
    instance: Instance, patch: Path | None, work: Path, extra: tuple[str, ...] = ()
) -> dict[str, str]:
    """Copy, patch, ``pytest --junitxml``: one mutant's outcomes by test id (the reference's
    without a patch; ``extra`` pytest arguments)."""
    base = Path(tempfile.mkdtemp(prefix="naive-", dir=work))
    tree = base / "tree"
    shutil.copytree(instance.source, tree)
    applied = patch is None or apply_patch(tree, patch)[0]
    if not applied:
        return {}
    if instance.kind is not InstanceKind.PYTHON:
        raise SystemExit("the naive loop here patches Python packages only")
    shutil.copytree(instance.tests, base / "tests")
    os.chmod(base, 0o777)
    for d, _dirs, _files in os.walk(base):
        os.chmod(d, 0o777)
    outcome = sandbox.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            ".",
            "-o",
            "junit_family=xunit1",
            f"--junitxml={base / 'out.xml'}",
            *extra,
            "tests",
        ],
        cwd=base,
        env={
            "PATH": sandbox_path(),
            "PYTHONPATH": str(tree),
            "HOME": str(base),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
        limits=Limits(wall_time=600.0, cpu_time=600.0, memory_mb=2048, processes=64),
        ro_binds=own_binds(),
    )
    outcomes: dict[str, str] = {}
    xml = base / "out.xml"
    if xml.is_file():
        for case in ET.parse(xml).getroot().iter("testcase"):
            module = (case.get("classname") or "").replace(".", "/") + ".py"
            tags = {child.tag for child in case}
            status = (
                "failed"
                if "failure" in tags
                else "error"
                if "error" in tags
                else ("skipped" if "skipped" in tags else "passed")
            )
            outcomes[f"{module}::{case.get('name')}"] = status
    shutil.rmtree(base, ignore_errors=True)
    del outcome
    return outcomes


def _naive(instance: Instance, work: Path, jobs: int) -> tuple[float, dict[tuple[str, str], str]]:
    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        rows = list(
            pool.map(lambda m: (m.id, _naive_one(instance, m.patch, work)), instance.mutants)
        )
    elapsed = time.perf_counter() - started
    return elapsed, {(t, mid): s for mid, row in rows for t, s in row.items()}


def _own_work(instance: Instance, work: Path) -> tuple[float, float]:
    """A plain sandboxed run of the reference's suite, and the same collecting only: how much
    of a run is the tests' own work (the best of three each)."""
    timings = []
    for extra in ((), ("--collect-only",)):
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            _naive_one(instance, None, work, extra)
            best = min(best, time.perf_counter() - started)
        timings.append(best)
    return timings[0], timings[1]


def _matrix(result: SuiteResult) -> dict[tuple[str, str], str]:
    return {k: str(v) for k, v in result.kill_matrix().items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance", nargs="?", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--generate", type=int, default=0, metavar="N")
    parser.add_argument("--mutants", type=int, default=60, help="generated instance: mutants")
    parser.add_argument(
        "--size", type=int, default=DEFAULT_SIZE, help="generated instance: values a test feeds"
    )
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="suitebench-bench-") as tmp:
        work = Path(tmp)
        if args.instance is None:
            args.instance = generate(work / "ledgerlib", mutants=args.mutants, size=args.size)
        elif args.generate:
            args.instance = generate_instance(args.instance, work, args.generate)
        instance = load_instance(args.instance)
        builds = work / "builds"
        _reference, mutants = build_all(Builder(instance, builds), list(instance.mutants))
        built = sum(b.ok for b in mutants.values())
        print(
            f"instance {instance.name}: {len(instance.mutants)} mutants ({built} build), "
            f"reference runs 3, jobs {args.jobs} for every way, batch size {args.batch_size}"
        )
        naive_ok = instance.kind is InstanceKind.PYTHON
        if naive_ok:
            whole, collect = _own_work(instance, work)
            print(
                f"a plain run of the reference's suite: {whole:.2f} s, collecting only "
                f"{collect:.2f} s: the tests' own work and pytest's per-test protocol "
                f"{(whole - collect) / whole:.0%} of it"
            )
        times: dict[str, list[float]] = {"naive": [], "all": [], "selected": [], "fast": []}
        results: dict[str, SuiteResult] = {}
        naive_matrix: dict[tuple[str, str], str] = {}
        for _ in range(args.repeat):
            if naive_ok:
                elapsed, naive_matrix = _naive(instance, work, args.jobs)
                times["naive"].append(elapsed)
            for name, all_tests, fast in (
                ("all", True, False),
                ("selected", False, False),
                ("fast", False, True),
            ):
                elapsed, result = _score(
                    instance,
                    work,
                    builds,
                    args.jobs,
                    args.batch_size,
                    all_tests=all_tests,
                    fast=fast,
                )
                times[name].append(elapsed)
                results[name] = result
        full, selected, fast = results["all"], results["selected"], results["fast"]
        equal = _matrix(full) == _matrix(selected)
        naive_equal = not naive_ok or naive_matrix == _matrix(full)
        fast_equal = [m.status for m in fast.mutants] == [m.status for m in full.mutants]
        best = {name: min(v) for name, v in times.items() if v}
        ran = sum(m.tests_run for m in selected.mutants)
        cells = len(full.tests) * built
        print(
            f"tests {len(full.tests)}, matrix cells {cells}; selection ran {ran} of them "
            f"({selected.test_selection}: {selected.coverage.reason})"
        )
        print(f"M = {full.mutation_score}  V = {full.validity}")
        labels = {
            "naive": f"naive loop (copy, patch, pytest --junitxml; {args.jobs} at a time)",
            "all": f"batched engine, every test on every mutant ({args.jobs} workers)",
            "selected": f"batched engine, coverage-guided selection ({args.jobs} workers)",
            "fast": f"the same with --fast ({args.jobs} workers)",
        }
        for name, label in labels.items():
            if name in best:
                print(f"{label:<70} {best[name]:7.2f} s")
        base = best.get("naive", best["all"])
        print(
            f"selection vs naive loop {base / best['selected']:.1f}x   "
            f"vs all tests {best['all'] / best['selected']:.1f}x   "
            f"--fast vs naive loop {base / best['fast']:.1f}x"
        )
        print(
            f"matrices equal: naive = all tests {naive_equal}, all tests = selection {equal}; "
            f"--fast statuses equal {fast_equal}"
        )
        if args.json:
            print(
                json.dumps(
                    {
                        "best": best,
                        "equal": equal,
                        "naive_equal": naive_equal,
                        "fast_equal": fast_equal,
                        "cells": cells,
                        "ran": ran,
                    }
                )
            )
    return 0 if equal and naive_equal and fast_equal else 1


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("score_throughput", main))
