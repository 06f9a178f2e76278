"""Operator mutants and their kill matrix against mutmut, on a real PyPI project, in one run.

    python bench/mutation_vs_mutmut.py [--project inflection==0.5.1] [--package inflection]
        [--tests test_inflection.py] [--max N] [--workdir DIR]

Downloads the project's sdist from PyPI (it ships its tests), then, side by side:

* **mutmut**: installed with pytest in the bench's own virtual environment (kept under
  ``--workdir`` for the next run), configured in ``setup.cfg`` and timed over ``mutmut run``
  (mutant generation, its coverage run and the mutation run; it stops each mutant at its first
  killing test);
* **suitebench**: the same package as a ``kind = "python"`` instance, timed over ``suitebench
  build mutants`` (no caps, or ``--max N``) plus ``suitebench score`` with a fresh store: the
  full per-test x per-mutant kill matrix, by whichever engine ``score`` uses by default;
  then again (fresh store and build cache) with ``score --fast``, which like mutmut stops each
  mutant at its first kill (``--no-fast`` skips those rows).  Both for every mutant suitebench
  makes and for ``build mutants --scope functions``, the function bodies mutmut limits itself
  to (``--scopes``); for the function bodies also with ``score --protocol pytest``, every test
  through pytest's hooks (``--no-protocol`` skips it), beside the default direct protocol.

Prints mutants, killed, mutation score, seconds and mutants per second for both, the ratio, and
the kill-matrix cells suitebench filled.  The machine is shared: timings are rough, the ratio
from one run of both is what counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SUITEBENCH = Path(sys.executable).parent / "suitebench"


def run(argv: list[str], cwd: Path, *, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def fetch_sdist(project: str, into: Path) -> Path:
    """The sdist of ``project`` (name==version) from PyPI, unpacked; its root directory."""
    into.mkdir(parents=True, exist_ok=True)
    run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "-d", str(into), project], into)  # fmt: skip
    archive = next(p for p in into.iterdir() if p.name.endswith((".tar.gz", ".zip")))
    with tarfile.open(archive) as tar:
        tar.extractall(into / "unpacked", filter="data")
    return next((into / "unpacked").iterdir())


def mutmut_venv(workdir: Path) -> Path:
    venv = workdir / "mutmut-venv"
    if not (venv / "bin" / "mutmut").exists():
        run([sys.executable, "-m", "venv", str(venv)], workdir)
        run([str(venv / "bin" / "pip"), "install", "-q", "mutmut", "pytest"], workdir)
    return venv


def bench_mutmut(sdist: Path, package: str, tests: str, workdir: Path) -> dict[str, float]:
    venv = mutmut_venv(workdir)
    tree = workdir / "mutmut-tree"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(sdist, tree)
    with (tree / "setup.cfg").open("a") as cfg:
        cfg.write(
            f"\n[mutmut]\nsource_paths={package}/\npytest_add_cli_args_test_selection={tests}\n"
        )
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    started = time.perf_counter()
    run([str(venv / "bin" / "mutmut"), "run"], tree, env=env)
    seconds = time.perf_counter() - started
    results = run([str(venv / "bin" / "mutmut"), "results", "--all", "true"], tree, env=env)
    statuses = re.findall(r":\s*(\w[\w ]*)$", results, re.M)
    killed = sum(s == "killed" for s in statuses)
    return {"mutants": len(statuses), "killed": killed, "seconds": seconds}


def bench_suitebench(
    sdist: Path,
    package: str,
    tests: str,
    workdir: Path,
    max_mutants: int | None,
    fast: bool,
    scope: str = "all",
    protocol: str = "direct",
) -> dict[str, object]:
    inst = workdir / "instance"
    shutil.rmtree(inst, ignore_errors=True)
    (inst / "tests").mkdir(parents=True)
    shutil.copytree(sdist / package, inst / "src" / package)
    for test in sdist.glob(tests):
        shutil.copy2(test, inst / "tests" / test.name)
    (inst / "instance.toml").write_text(
        f'name = "{package}"\nkind = "python"\npackage = "{package}"\n'
        'source = "src/"\ntests = "tests/"\n'
    )
    name = f"suitebench-store-{scope}{'-fast' if fast else ''}-{protocol}"
    store = workdir / name / "store.sqlite"
    shutil.rmtree(store.parent, ignore_errors=True)
    cap = ["--max", str(max_mutants)] if max_mutants else []
    started = time.perf_counter()
    made_out = run([str(SUITEBENCH), "--store", str(store), "--json", "build", "mutants",
                    str(inst), "--max-per-file", "100000", "--max-per-function", "100000",
                    "--scope", scope, *cap], workdir)  # fmt: skip
    generated = time.perf_counter() - started
    mode = (["--fast"] if fast else []) + ["--protocol", protocol]
    score_out = run([str(SUITEBENCH), "--store", str(store), "--json", "score", str(inst), *mode],
                    workdir)  # fmt: skip
    seconds = time.perf_counter() - started  # the commands' time, not this script's parsing
    made, scored = json.loads(made_out), json.loads(score_out)
    counts = scored["counts"]
    cells = sum(m.get("tests_run", 0) for m in scored["mutants"])
    return {
        "mutants": counts["mutants"],
        "killed": counts["killed"],
        "seconds": seconds,
        "generate_seconds": generated,
        "tests": counts["tests"],
        "cells": cells,
        "engine": scored.get("engine"),
        "selection": scored.get("test_selection", "all"),
        "written": len(made["mutants"]),
        "matrix": sorted(
            (m["id"], m["status"], sorted(m.get("outcomes", {}).items())) for m in scored["mutants"]
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", default="inflection==0.5.1")
    ap.add_argument("--package", default="inflection")
    ap.add_argument("--tests", default="test_inflection.py", help="glob of test files in the sdist")
    ap.add_argument("--max", type=int, default=None, help="suitebench: at most N mutants")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--no-fast", action="store_true", help="skip the score --fast rows")
    ap.add_argument(
        "--no-protocol", action="store_true", help="skip the score --protocol pytest row"
    )
    ap.add_argument(
        "--scopes",
        default="all,functions",
        help="build mutants --scope values to run (all: every site; functions: function "
        "bodies only, what mutmut mutates)",
    )
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.gettempdir()) / "suitebench-bench-mutmut"
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    sdist = fetch_sdist(args.project, workdir / "sdist")
    print(f"project {args.project}: package {args.package}, tests {args.tests}")

    mm = bench_mutmut(sdist, args.package, args.tests, workdir)
    rows: list[tuple[str, str, dict[str, object]]] = [("mutmut run", "", dict(mm))]
    for scope in args.scopes.split(","):
        label = "all mutants" if scope == "all" else "function bodies"
        for fast in (False,) if args.no_fast else (False, True):
            result = bench_suitebench(
                sdist, args.package, args.tests, workdir, args.max, fast=fast, scope=scope
            )
            rows.append((f"suitebench, {label}" + (", --fast" if fast else ""), scope, result))
        if scope == "functions" and not args.no_protocol:
            # the same full matrix with every test through pytest's hooks: what the direct
            # protocol brings
            result = bench_suitebench(
                sdist, args.package, args.tests, workdir, args.max, fast=False, scope=scope,
                protocol="pytest",
            )  # fmt: skip
            rows.append((f"suitebench, {label}, --protocol pytest", scope, result))
    print(f"{'':36} {'mutants':>8} {'killed':>7} {'M':>7} {'seconds':>8} {'mutants/s':>10}")
    rates = []
    for name, _scope, r in rows:
        rate = float(r["mutants"]) / float(r["seconds"])  # type: ignore[arg-type]
        rates.append(rate)
        score = float(r["killed"]) / max(1.0, float(r["mutants"]))  # type: ignore[arg-type]
        print(f"{name:36} {r['mutants']:>8} {r['killed']:>7} {score:>7.1%} "
              f"{float(r['seconds']):>8.1f} {rate:>10.2f}")  # type: ignore[arg-type]  # fmt: skip
    by_name = dict(zip([name for name, _, _ in rows], rates, strict=True))
    for (name, _scope, r), rate in zip(rows[1:], rates[1:], strict=True):
        if name.endswith("--protocol pytest"):
            base = name.removesuffix(", --protocol pytest")
            same = r["matrix"] == next(x for n, _, x in rows if n == base)["matrix"]
            print(f"ratio {name} / mutmut: {rate / rates[0]:.2f} (the direct protocol: "
                  f"{by_name[base] / rate:.2f}x this rate; "
                  f"{'the same matrix' if same else 'THE MATRICES DIFFER'})")  # fmt: skip
            continue
        if name.endswith("--fast"):
            print(f"ratio {name} / mutmut: {rate / rates[0]:.2f} (first kill only, as mutmut)")
            continue
        print(f"ratio {name} / mutmut: {rate / rates[0]:.2f} (full matrix: {r['tests']} tests x "
              f"{r['mutants']} mutants, {r['cells']} test runs on mutants; engine {r['engine']}, "
              f"selection {r['selection']}; generating the mutants took "
              f"{float(r['generate_seconds']):.1f} s)")  # type: ignore[arg-type]  # fmt: skip
    print("(mutmut mutates function bodies only and keeps one verdict per mutant)")


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("mutation_vs_mutmut", main))
