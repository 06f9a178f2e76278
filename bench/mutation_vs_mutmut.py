"""Operator mutants and their kill matrix against mutmut, on real PyPI projects, in one run.

    python bench/mutation_vs_mutmut.py [--project NAME==VERSION ...] [--workdir DIR]
        [--no-fast] [--no-full] [--max N] [--rounds 2] [--check-all-tests]

For each ``--project`` (repeatable; default python-slugify==9.2.0, webcolors==24.11.1 and
humanize==4.17.0), as it ships on PyPI: the sdist is unpacked and a venv is made for it with
pytest, the project's runtime and test dependencies, and mutmut (the setup of
``bench/plain_pytest_agreement.py``: ``detect_layout``, ``project_venv``, ``write_instance``).
Then, one right after the other on the same machine:

* **mutmut** (its defaults; it stops each mutant at its first killing test, fastest tests
  first), configured in ``setup.cfg`` (``source_paths``, the test directories, and what the
  tests read), timed over ``mutmut run``; a safety net ends a mutant's process still alive
  after ``HUNG_AFTER`` (60 s) of wall time, so that a run always ends, and the row counts them
  (``hung``; 0 in pykka's benched round, where mutmut's own wall-clock SIGXCPU ended them);
* **suitebench, full matrix**: ``build mutants`` (no caps, or ``--max N``) plus ``score`` with a
  fresh store -- every test's outcome on every mutant, by the default engine and selection;
* **suitebench, --fast**: the same with a fresh store and ``score --fast`` (first kill only, as
  mutmut).

With ``--check-all-tests``, each project is then scored once more with ``--all-tests`` (not
timed), and the last round's full matrix (statuses and cells) and ``--fast`` (statuses) are
compared with it: selection may cost no verdict.

Prints one row per project and tool (mutants, killed, M, seconds, mutants per second, ratio
to mutmut) and, per suitebench row (full matrix, ``--fast``), where its time went: generating
the mutants, the score by its stages (``results.json``'s ``phases``), the cells run, and the
mutants' runs summed over workers.  A tool that fails on a project is a row saying why, and
the other rows still print.  mutmut is told not to mutate tests shipped inside the package
(``do_not_mutate``): it breaks them.  The machine may be shared: the ratio from one run of
both is what counts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from plain_pytest_agreement import (
    SUITEBENCH,
    Layout,
    detect_layout,
    fetch_sdist,
    project_venv,
    run,
    write_instance,
)

DEFAULT_PROJECTS = ["python-slugify==9.2.0", "webcolors==24.11.1", "humanize==4.17.0"]
# A mutmut mutant's process alive this long (wall seconds) is ended (:func:`_end_hung_mutants`);
# suitebench's limit for a test that waits is its --per-test-timeout (10 s), confirmed alone.
HUNG_AFTER = 60.0
WORKERS = os.cpu_count() or 1  # suitebench's default pool, as mutmut's (one child a core)
# Source files neither tool mutates, per project, for mutmut to run at all.  (toolz 1.2.0 is not
# among the projects: mutmut's trampolines put ``MutantDict`` and ``_mutmut_mutated`` in every
# module they rewrite, ``from toolz.itertoolz import *`` carries them into ``toolz``, and its
# ``test_curried_namespace``, which compares ``toolz``'s namespace with ``toolz.curried``'s,
# fails mutmut's stats run whatever is left alone.)
LEFT_ALONE: dict[str, list[str]] = {}
# What a project's tests import that its PKG-INFO does not list, per project: installed in its
# venv beside its requirements, for both tools.
# Test files neither tool runs, per project: fasteners' eventlet tests monkey-patch the
# interpreter, which mutmut's stats run does not survive.
DROPPED_TESTS: dict[str, list[str]] = {"fasteners": ["tests/test_eventlet.py"]}
TEST_REQUIREMENTS: dict[str, list[str]] = {
    "fasteners": ["diskcache", "eventlet", "more-itertools"],
    "pykka": ["pytest-mock", "pydantic"],  # its poetry "tests" group
    "semver": ["pytest-cov"],  # its addopts name --cov: mutmut runs pytest with them
    "filelock": ["pytest-mock", "pytest-timeout"],  # its "testing" extra, without coverage
}


def bench_mutmut(root: Path, layout: Layout, python: Path, workdir: Path) -> dict[str, float]:
    """``mutmut run`` on a copy of the sdist root, in the project's venv."""
    bin_dir = python.parent
    if not (bin_dir / "mutmut").exists():
        run([str(python), "-m", "pip", "install", "-q", "mutmut"], workdir)
    tree = workdir / "mutmut-tree"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(root, tree, symlinks=True)
    package = f"{layout.source}/{layout.package}".lstrip("/")
    shipped = [t for t in layout.tests if not t.startswith(package + "/")]
    copied = sorted(
        {*layout.beside, *(p.name for p in root.iterdir() if p.is_dir() and p.name == "tools")}
    )
    with (tree / "setup.cfg").open("a") as cfg:
        cfg.write(f"\n[mutmut]\nsource_paths={package}/\n")
        if shipped:
            cfg.write(f"pytest_add_cli_args_test_selection={' '.join(shipped)}\n")
        inside = [f"{t}/*" for t in layout.tests if t.startswith(package + "/")]
        inside += LEFT_ALONE.get(layout.package, [])
        if inside:  # tests shipped in the package: not code to mutate (mutmut breaks them)
            cfg.write("do_not_mutate=\n" + "".join(f"    {t}\n" for t in inside))
        if copied:
            cfg.write("also_copy=\n" + "".join(f"    {c}\n" for c in copied))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    hung: list[int] = []
    done = threading.Event()
    watch = threading.Thread(target=_end_hung_mutants, args=(done, hung), daemon=True)
    started = time.perf_counter()
    watch.start()
    try:
        run([str(bin_dir / "mutmut"), "run"], tree, env=env)
    finally:
        done.set()
        watch.join()
    seconds = time.perf_counter() - started
    results = run([str(bin_dir / "mutmut"), "results", "--all", "true"], tree, env=env)
    statuses = re.findall(r":\s*(\w[\w ]*)$", results, re.M)
    killed = sum(s == "killed" for s in statuses)
    return {"mutants": len(statuses), "killed": killed, "seconds": seconds, "hung": len(hung)}


def _end_hung_mutants(done: threading.Event, hung: list[int]) -> None:
    """End each of mutmut's mutant processes (titled ``mutmut: <mutant>``) still alive after
    ``HUNG_AFTER`` seconds of wall time: a safety net beside mutmut's own limit (a SIGXCPU
    after half its CPU limit in wall time, which a process handling that signal outlives), so
    that the bench always ends.  mutmut then counts that mutant as a segfault, not a kill."""
    seen: dict[int, float] = {}
    while not done.wait(1.0):
        now = time.monotonic()
        alive = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                title = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if not title.startswith(b"mutmut: "):
                continue
            pid = int(entry.name)
            alive.add(pid)
            if now - seen.setdefault(pid, now) > HUNG_AFTER:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                hung.append(pid)
                seen.pop(pid)
        seen = {pid: t for pid, t in seen.items() if pid in alive}


def bench_suitebench(
    inst: Path, layout: Layout, workdir: Path, max_mutants: int | None, fast: bool
) -> dict[str, object]:
    """``build mutants`` + ``score`` (or ``score --fast``) with a fresh store and build cache."""
    name = "suitebench-fast" if fast else "suitebench-full"
    store = workdir / name / "store.sqlite"
    shutil.rmtree(store.parent, ignore_errors=True)
    shutil.rmtree(inst / "mutants", ignore_errors=True)
    toml = inst / "instance.toml"
    toml.write_text(toml.read_text().split("\n[[mutants]]")[0])
    cap = ["--max", str(max_mutants)] if max_mutants else []
    excludes = [f"--exclude={t}" for t in layout.tests if t.startswith(layout.package + "/")]
    excludes += [f"--exclude={f}" for f in LEFT_ALONE.get(layout.package, [])]
    started = time.perf_counter()
    run([str(SUITEBENCH), "--store", str(store), "build", "mutants", str(inst),
         f"--include={layout.package}", *excludes, "--max-per-file", "100000",
         "--max-per-function", "100000", *cap], workdir)  # fmt: skip
    generated = time.perf_counter() - started
    out = workdir / name / "out"
    mode = ["--fast"] if fast else []
    run([str(SUITEBENCH), "--store", str(store), "--json", "score", str(inst), *mode,
         "--keep-going", "--out", str(out)], workdir)  # fmt: skip
    seconds = time.perf_counter() - started
    result = json.loads((out / "results.json").read_text())
    # One reference run of the suite: each test's quickest reference time.
    took = {t["id"]: min((s for s in t["seconds"] if s is not None), default=0.0)
            for t in result["tests"]}  # fmt: skip
    return {
        "mutants": result["counts"]["mutants"],
        "killed": result["counts"]["killed"],
        "seconds": seconds,
        "generate_seconds": generated,
        "score_seconds": seconds - generated,
        "cells": sum(m.get("tests_run", 0) for m in result["mutants"]),
        "matrix": result["counts"]["tests"] * result["counts"]["mutants"],
        "mutant_wall": sum(m["wall_time"] for m in result["mutants"]),
        # of that, the tests' own time: what the matrix pays whatever the harness does
        "tests_own": sum(m.get("tests_seconds", 0.0) for m in result["mutants"]),
        "reference_seconds": sum(took.values()),
        # the cells run, each at its test's reference time: the tests' own share of the runs
        "cells_at_reference": sum(
            took.get(t, 0.0) for m in result["mutants"] for t in (m["covered_by"] or took)
        ),
        "phases": result.get("phases", {}),
        # the least the score's runs could take (results.json's floor: the cells' own time
        # at reference speed over the workers plus the waits that cannot overlap)
        "floor": float(result.get("floor", {}).get("runs", 0.0)),
    }


def check_all_tests(inst: Path, workdir: Path) -> str:
    """The last rounds' results against ``score --all-tests`` on the same mutants (fresh store,
    not timed): how many mutants' statuses and cells the selected full matrix, and statuses
    ``--fast``, share with every test run on every mutant -- selection's fidelity, which no
    speed may cost."""
    out = workdir / "suitebench-all-tests" / "out"
    shutil.rmtree(out.parent, ignore_errors=True)
    store = out.parent / "store.sqlite"
    run([str(SUITEBENCH), "--store", str(store), "--json", "score", str(inst), "--all-tests",
         "--keep-going", "--out", str(out)], workdir)  # fmt: skip
    truth = {m["id"]: m for m in json.loads((out / "results.json").read_text())["mutants"]}
    said = []
    for name in ("suitebench-full", "suitebench-fast"):
        found = workdir / name / "out" / "results.json"
        if not found.is_file():
            continue
        mine = {m["id"]: m for m in json.loads(found.read_text())["mutants"]}
        same = sum(1 for k, m in truth.items() if k in mine and mine[k]["status"] == m["status"])
        apart = sorted(
            k for k, m in truth.items() if k in mine and mine[k]["status"] != m["status"]
        )
        text = f"{name}: {same} of {len(truth)} statuses as --all-tests'"
        if name == "suitebench-full":
            cells = [(k, t) for k, m in truth.items() for t in m["outcomes"]]
            equal = sum(
                1
                for k, t in cells
                if k in mine and mine[k]["outcomes"].get(t) == truth[k]["outcomes"][t]
            )
            text += f", {equal} of {len(cells)} cells"
        said.append(text + (f" (differ: {', '.join(apart[:8])})" if apart else ""))
    return "; ".join(said)


def bench_project(
    project: str, args: argparse.Namespace, reverse: bool = False
) -> list[tuple[str, dict[str, object]]]:
    """One round on ``project``: mutmut, the full matrix and ``--fast``, one after the other
    (``reverse``: in the opposite order, so that two rounds meet the load alike)."""
    name = project.split("==")[0]
    workdir = (args.workdir / project.replace("==", "-")).resolve()
    root = fetch_sdist(project, workdir / "sdist")
    for dropped in DROPPED_TESTS.get(name, []):
        (root / dropped).unlink(missing_ok=True)
    layout = detect_layout(root, name)
    python = project_venv(workdir, layout)
    extra = TEST_REQUIREMENTS.get(name, [])
    if extra and not (workdir / "venv" / ".test-requirements").exists():
        run([str(python), "-m", "pip", "install", "-q", *extra], workdir)
        (workdir / "venv" / ".test-requirements").write_text("\n".join(extra))
    inst = workdir / "instance"
    write_instance(root, layout, python, inst)
    print(f"{project}: package {layout.package}, tests {', '.join(layout.tests)}", flush=True)
    rows: list[tuple[str, dict[str, object]]] = []
    tools: list[tuple[str, Callable[[], dict[str, object]]]] = [
        ("mutmut run", lambda: dict(bench_mutmut(root, layout, python, workdir))),
    ]
    if not args.no_full:
        tools.append(
            ("suitebench, full matrix",
             lambda: bench_suitebench(inst, layout, workdir, args.max, False))
        )  # fmt: skip
    if not args.no_fast:
        tools.append(
            ("suitebench --fast", lambda: bench_suitebench(inst, layout, workdir, args.max, True))
        )
    for tool, measure in reversed(tools) if reverse else tools:
        load = os.getloadavg()[0]
        try:
            rows.append((tool, {**measure(), "load": load}))
        except SystemExit as exc:  # one tool failing on one project is a row, not the end
            print(f"{project}: {tool} failed: {exc}", flush=True)
            said = [line for line in str(exc).splitlines() if line.strip()]
            gist = said[0][:120] + (f" ... {said[-1][-160:]}" if len(said) > 1 else "")
            rows.append((tool, {"failed": gist, "load": load}))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", action="append", default=None, help="NAME==VERSION (repeat)")
    ap.add_argument("--max", type=int, default=None, help="suitebench: at most N mutants")
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "suitebench-bench-mutmut"
    )
    ap.add_argument("--no-fast", action="store_true", help="skip the score --fast rows")
    ap.add_argument("--no-full", action="store_true", help="skip the full-matrix rows")
    ap.add_argument(
        "--rounds", type=int, default=2, help="rounds per project, each in the other order"
    )
    ap.add_argument(
        "--check-all-tests",
        action="store_true",
        help="after a project's rounds, score it with --all-tests (not timed) and print how "
        "many statuses and cells the last rounds share with it",
    )
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    table: list[tuple[str, str, dict[str, object]]] = []
    fidelity: list[tuple[str, str]] = []
    for project in args.project or DEFAULT_PROJECTS:
        for round_ in range(max(1, args.rounds)):
            try:
                rows = bench_project(project, args, reverse=round_ % 2 == 1)
            except SystemExit as exc:  # a project that cannot be set up is a row, not the end
                print(f"{project}: not benched: {exc}", flush=True)
                rows = [("setup", {"failed": str(exc)[:200], "load": os.getloadavg()[0]})]
            table += [(project, f"{tool} #{round_ + 1}", r) for tool, r in rows]
            for tool, r in rows:  # each row as it comes, so that a run cut short keeps them
                print(f"row: {project} {tool} #{round_ + 1}: {json.dumps(r, default=str)}",
                      flush=True)  # fmt: skip
            if rows and rows[0][0] == "setup":
                break
        if args.check_all_tests and table and table[-1][2].get("failed") is None:
            workdir = (args.workdir / project.replace("==", "-")).resolve()
            fidelity.append((project, check_all_tests(workdir / "instance", workdir)))
            print(f"fidelity: {project}: {fidelity[-1][1]}", flush=True)
    heads = f"{'seconds':>8} {'mutants/s':>10} {'vs mutmut':>9} {'floor':>7} {'vs floor':>8}"
    print(f"\n{'project':24} {'tool':28} {'load':>5} {'mutants':>8} {'killed':>7} {'M':>7} {heads}")
    base = {  # mutmut's rate in each round (it runs last in even rounds)
        (project, tool.rpartition("#")[2]): float(r["mutants"]) / float(r["seconds"])  # type: ignore[arg-type]
        for project, tool, r in table
        if tool.startswith("mutmut run") and "failed" not in r
    }
    for project, tool, r in table:
        if "failed" in r:
            print(f"{project:24} {tool:28} {float(r['load']):>5.2f} failed: {r['failed']}")  # type: ignore[arg-type]
            continue
        rate = float(r["mutants"]) / float(r["seconds"])  # type: ignore[arg-type]
        round_ = tool.rpartition("#")[2]
        score = float(r["killed"]) / max(1.0, float(r["mutants"]))  # type: ignore[arg-type]
        mutmut = base.get((project, round_))
        floor = float(r.get("floor") or 0.0)  # type: ignore[arg-type]
        score_seconds = float(r.get("score_seconds") or 0.0)  # type: ignore[arg-type]
        print(f"{project:24} {tool:28} {float(r['load']):>5.2f} {r['mutants']:>8} "  # type: ignore[arg-type]
              f"{r['killed']:>7} {score:>7.1%} {float(r['seconds']):>8.1f} {rate:>10.2f} "  # type: ignore[arg-type]
              + (f"{rate / mutmut:>8.2f}x" if mutmut else f"{'n/a':>9}")
              + (f" {floor:>7.1f} {score_seconds / floor:>7.2f}x" if floor else ""))  # fmt: skip
    print("\nwhere suitebench's time went (seconds; mutant runs summed over workers):")
    for project, tool, r in table:
        if not tool.startswith("suitebench") or "failed" in r:
            continue
        phases = ", ".join(f"{k} {v:.1f}" for k, v in r["phases"].items())  # type: ignore[attr-defined]
        label = tool.removeprefix("suitebench").strip(", ")
        print(f"{project} {label}: build mutants {float(r['generate_seconds']):.1f}; score "  # type: ignore[arg-type]
              f"{float(r['score_seconds']):.1f} ({phases}); {r['cells']} of {r['matrix']} "  # type: ignore[arg-type]
              f"cells run; the mutants' runs {float(r['mutant_wall']):.1f} summed over workers, "  # type: ignore[arg-type]
              f"of which the tests' own time {float(r['tests_own']):.1f} (/ {WORKERS} workers: "  # type: ignore[arg-type]
              f"{float(r['tests_own']) / WORKERS:.1f} s of wall the cells run cost, whatever "  # type: ignore[arg-type]
              "the harness), "
              f"their cells at the tests' reference times {float(r['cells_at_reference']):.1f}; "  # type: ignore[arg-type]
              f"one reference run of the suite {float(r['reference_seconds']):.2f}")  # type: ignore[arg-type]  # fmt: skip
    for project, text in fidelity:
        print(f"against --all-tests, {project}: {text}")
    print(
        "(mutmut keeps one verdict per mutant; suitebench's full matrix every cell; 'vs mutmut' "
        "compares with mutmut's run of the same round, mutmut first in odd rounds and last in "
        "even ones; 'vs floor' is score's own time, without build mutants, over its floor)"
    )


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("mutation_vs_mutmut", main))
