"""A ProgramBench task at the paper's scale, scored end to end, against a naive loop.

    python bench/programbench_scale.py [--mutants 60] [--tests 300] [--seed 0] [--jobs 2]
        [--naive-jobs 2] [--workdir DIR] [--sdist lupa-2.8.tar.gz] [--exclude GLOB ...]
        [--out scale.json] [--record]

TestSuiteBench's instances are ProgramBench tasks: compiled command-line programs (median 7k
lines), a median of 679 reference tests and 67 mutants each. This bench makes one of that size
from a real C program nobody here wrote and times suitebench on it:

1. **The program**: Lua 5.4 (about 30k lines of C with its developers' ``makefile``), as the
   PyPI sdist of ``lupa`` 2.8 vendors it (``third-party/lua54``). The sdist is fetched from
   PyPI's simple index and checked against its published sha256 (``pip download`` would run
   lupa's build to read its metadata, minutes for nothing), or given with ``--sdist``. Nothing
   of it is committed.
2. **The task**, in ProgramBench's published layout under ``WORKDIR/task``: the Lua tree,
   ``build.sh`` (``make``, then ``./executable``), ``tests.json`` and two branches,
   ``tests/<branch>/eval/{run.sh,tests/*.py,fixtures/*.lua}``; each test runs
   ``./executable eval/fixtures/<case>.lua`` and compares what it prints (``_lua_cases.py``:
   ``--tests`` cases from a table of snippets, expected outputs worked out from the manual's
   rules), plus one test ``tests.json`` marks ignored (``dummy_pass``).
3. **suitebench**: ``build mutants --max N`` (each mutant is built there, in the sandbox, into
   the store ``score`` reads), then ``score --all-tests`` with a fresh store: the full matrix,
   with the time of each of score's phases (``results.json``'s ``phases``).
4. **The naive loop**, ProgramBench's way, the same matrix: for the reference and each mutant a
   clean copy of the task's program, the diff applied, ``bash build.sh`` from scratch, and per
   branch its whole ``eval/`` beside ``./executable`` and ``python -m pytest eval/tests/``
   (``--continue-on-collection-errors``, as suitebench runs a file that does not collect),
   outcomes read from the JUnit XML. ``--naive-jobs`` programs at a time (suitebench has
   ``--jobs`` workers: the same cores for both).
``--program gojq`` (Go, from Debian's packages, ``_jq_cases.py``) and ``--program hexyl`` (Rust,
Debian's crate registry, ``_hexyl_cases.py``) make the same kind of task of another program.

5. The two matrices are compared cell by cell (the reference's and every mutant's row, on
   every scored test: failing or not); every disagreement is printed.

Prints the time per phase on each side, the ratio naive / suitebench, V and M both ways, the
mean clean build per mutant, and writes everything to ``--out`` as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _hexyl_cases import cases as hexyl_cases
from _jq_cases import cases as jq_cases
from _lua_cases import Case
from _lua_cases import cases as lua_cases
from suitebench.model.programbench import load_programbench_task, programbench_id_to_node_id

SUITEBENCH = [sys.executable, "-m", "suitebench"]
SDIST = "lupa-2.8.tar.gz"
SDIST_SHA256 = "d8022641b9ec8ecf2c5ecbe9f47e5a70e0b87c4b5ae921b92cb02a638e0acd08"
LUA_DIR = "lupa-2.8/third-party/lua54/"
NOT_THE_PROGRAM = ("tests", "tests.json", "mutants", "spec.md", ".git")
GOCODE = Path("/usr/share/gocode/src")
# gojq's dependencies, as Debian ships their sources (the versions its go.mod names; the
# "go 1.18" lets the newer sources Debian has use generics), and the packages the build imports
GOJQ_VENDOR = {
    "github.com/google/go-cmp v0.5.4": [],  # its tests' only
    "github.com/itchyny/timefmt-go v0.1.5": ["github.com/itchyny/timefmt-go"],
    "github.com/mattn/go-isatty v0.0.16": ["github.com/mattn/go-isatty"],
    "github.com/mattn/go-runewidth v0.0.14": ["github.com/mattn/go-runewidth"],
    "gopkg.in/yaml.v3 v3.0.1": ["gopkg.in/yaml.v3"],
    "github.com/rivo/uniseg v0.2.0": ["github.com/rivo/uniseg"],
    "golang.org/x/sys v0.2.0": ["golang.org/x/sys/unix"],
}


@dataclass(frozen=True)
class Program:
    """A program nobody here wrote, as a task: where its tree comes from, how it builds, the
    suite's branches, and the files ``build mutants`` leaves out (what the build does not
    compile, generated code, vendored code)."""

    title: str
    fetch: Callable[[Path, argparse.Namespace], Path]
    build_sh: str
    branches: dict[str, list[str]]
    cases: Callable[[int, int], list[Case]]
    excludes: list[str]
    source_glob: str


RUN_SH = """#!/bin/bash
cd "$(dirname "$0")/.."
python3 -m pytest eval/tests/ --junitxml=eval/results.xml
"""
HELPERS = '''"""Runs the program under test on fixtures, as every test here does."""

import subprocess


def check(args, stdout, returncode=0, stderr_has=""):
    proc = subprocess.run(["./executable", *args], capture_output=True, text=True, timeout=10)
    assert proc.stdout == stdout
    assert proc.returncode == returncode
    assert stderr_has in proc.stderr
'''
IGNORED_TEST = """

def test_version_flag_exits():
    # listed as dummy_pass: it passes on a program that does nothing
    subprocess.run(["./executable", "--version"], capture_output=True, timeout=10)
"""

# -- the program and the task ----------------------------------------------------------------


def _simple_index(project: str) -> str:
    """The project's page on the index pip is set to use (``PIP_INDEX_URL``, pip's
    configuration, else pip's own default): the sdist is fetched the way pip would find it, but
    without preparing its metadata (lupa's builds LuaJIT, minutes)."""
    index = (
        os.environ.get("PIP_INDEX_URL")
        or subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    )
    if not index:
        from pip._internal.models.index import PyPI  # pip's default index, named by pip

        index = PyPI.simple_url
    return f"{index.rstrip('/')}/{project}/"


def fetch_lua(workdir: Path, args: argparse.Namespace) -> Path:
    """Lua 5.4's tree from lupa's sdist, unpacked under ``workdir``."""
    lua = workdir / "lua54"
    if (lua / "lvm.c").is_file():
        return lua
    archive = args.sdist or workdir / SDIST
    if not archive.is_file():
        with urllib.request.urlopen(_simple_index("lupa"), timeout=120) as page:
            html = page.read().decode()
        at = html.index(f"/{SDIST}#")
        url = html[html.rindex('"', 0, at) + 1 : html.index('"', at)].split("#")[0]
        with urllib.request.urlopen(url, timeout=300) as got:
            archive.write_bytes(got.read())
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{archive}: sha256 {digest}, expected {SDIST_SHA256}")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(LUA_DIR)]
        tar.extractall(workdir / "unpacked", members=members, filter="data")
    shutil.move(workdir / "unpacked" / LUA_DIR, lua)
    shutil.rmtree(workdir / "unpacked")
    return lua


def fetch_gojq(workdir: Path, args: argparse.Namespace) -> Path:
    """gojq's tree as Debian ships it (``golang-github-itchyny-gojq-dev``), its dependencies
    vendored from their Debian packages: a module that builds with ``-mod=vendor``, offline."""
    tree = workdir / "gojq"
    if (tree / "vendor" / "modules.txt").is_file():
        return tree
    if not (GOCODE / "github.com/itchyny/gojq/go.mod").is_file() or not shutil.which("go"):
        raise SystemExit(
            "gojq: needs Debian's golang-go and golang-github-itchyny-gojq-dev "
            "(apt-get install golang-go golang-github-itchyny-gojq-dev)"
        )
    shutil.copytree(GOCODE / "github.com/itchyny/gojq", tree)
    shutil.rmtree(tree / "_tools")  # the generators of builtin.go, not built
    skip = shutil.ignore_patterns("*_test.go", "testdata", "cpu", "execabs")
    modules = []
    for module, packages in GOJQ_VENDOR.items():
        path = module.split()[0]
        if packages:
            shutil.copytree(GOCODE / path, tree / "vendor" / path, ignore=skip)
        modules += [f"# {module}", "## explicit; go 1.18", *packages]
    (tree / "vendor" / "modules.txt").write_text("\n".join(modules) + "\n")
    return tree


HEXYL = Path("/usr/share/cargo/registry/hexyl-0.8.0")
# Debian's crates as cargo's registry, offline (a directory source outside the tree).
CARGO_CONFIG = """[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"
"""


def fetch_hexyl(workdir: Path, args: argparse.Namespace) -> Path:
    """hexyl 0.8.0's crate as Debian ships it (``librust-hexyl-dev``), built offline against
    Debian's crate registry (clap 2 and the rest)."""
    tree = workdir / "hexyl"
    if (tree / ".cargo" / "config.toml").is_file():
        return tree
    if not (HEXYL / "Cargo.toml").is_file() or not shutil.which("cargo"):
        raise SystemExit("hexyl: needs cargo and Debian's librust-hexyl-dev (apt-get install)")
    shutil.copytree(HEXYL, tree)
    (tree / ".cargo").mkdir()
    (tree / ".cargo" / "config.toml").write_text(CARGO_CONFIG)
    return tree


def test_module(category: str, chosen: list[Case], ignored: bool) -> str:
    lines = ["import subprocess", "", "from helpers import check", ""]
    for case in chosen:
        extra = ""
        if case.returncode:
            extra = f", returncode={case.returncode}, stderr_has={case.stderr_has!r}"
        call = f"    check({list(case.argv())!r}, {case.stdout!r}{extra})"
        lines += ["", f"def test_{case.name}():", call]
    return "\n".join(lines) + "\n" + (IGNORED_TEST if ignored else "")


LUA = Program(
    title="Lua 5.4 from lupa 2.8's sdist",
    fetch=fetch_lua,
    # Lua's own makefile; readline off (the tests never use the interactive prompt)
    build_sh="""#!/bin/sh
set -e
make -s MYCFLAGS="-std=c99 -DLUA_USE_LINUX" MYLIBS="-ldl"
cp lua executable
""",
    # two branches, as a harvested ProgramBench suite has several
    branches={
        "5a1e0c3d": ["arith", "floats", "tables", "sort", "closures", "errors"],
        "9b7f2e41": ["strings", "format"],
    },
    cases=lua_cases,
    # none: build mutants learns from the build that ltests.c is `#if defined(LUA_DEBUG)` only,
    # that testes/libs/*.c (the developers' own suite's C modules) and onelua.c (the
    # amalgamation) are not compiled
    excludes=[],
    source_glob="*.[ch]",
)
GOJQ = Program(
    title="gojq 0.12.11 (jq in Go) from Debian's golang-github-itchyny-gojq-dev",
    fetch=fetch_gojq,
    build_sh="""#!/bin/sh
set -e
export GOFLAGS=-mod=vendor GOPROXY=off CGO_ENABLED=0
export GOCACHE="${GOCACHE:-$PWD/.gocache}"  # a clean build: no cache of an earlier one
go build -o executable ./cmd/gojq
""",
    branches={
        "c4d2a9e1": ["paths", "arith", "arrays"],
        "e8f1b370": ["strings", "objects", "errors"],
    },
    cases=jq_cases,
    # none: build mutants learns from `go list` that the *_test.go files (and cli/testdata)
    # are not compiled into the program, and parser.go (goyacc's output) and builtin.go
    # (_tools/gen_builtin.go's) say in their first line that they are generated
    excludes=[],
    source_glob="**/*.go",
)
HEXYL_TASK = Program(
    title="hexyl 0.8.0 (a hex viewer in Rust) from Debian's librust-hexyl-dev",
    fetch=fetch_hexyl,
    # hexyl's own release profile (LTO, one codegen unit)
    build_sh="""#!/bin/sh
set -e
cargo build --release --offline --quiet
cp target/release/hexyl executable
""",
    branches={
        "3f6a9c21": ["plain", "borders", "length"],
        "b84e07d5": ["skip", "offset", "colors"],
    },
    cases=hexyl_cases,
    # none: cargo's dependency files say examples/ is not compiled, ci/ holds a bash script,
    # and the #[cfg(test)] modules are compiled out
    excludes=[],
    source_glob="src/**/*.rs",
)
PROGRAMS = {"lua": LUA, "gojq": GOJQ, "hexyl": HEXYL_TASK}


def write_task(program: Program, tree: Path, task: Path, count: int, seed: int) -> dict[str, int]:
    """The task in ProgramBench's layout; the number of listed tests per branch."""
    shutil.rmtree(task, ignore_errors=True)
    shutil.copytree(tree, task, ignore=shutil.ignore_patterns(".git"))
    (task / "build.sh").write_text(program.build_sh)
    (task / "build.sh").chmod(0o755)
    chosen = program.cases(count, seed)
    branches: dict[str, Any] = {}
    for branch, categories in program.branches.items():
        eval_dir = task / "tests" / branch / "eval"
        (eval_dir / "tests").mkdir(parents=True)
        (eval_dir / "fixtures").mkdir()
        (eval_dir / "run.sh").write_text(RUN_SH)
        (eval_dir / "tests" / "helpers.py").write_text(HELPERS)
        listed, ignored = [], []
        for category in categories:
            mine = [c for c in chosen if c.category == category]
            if not mine:
                continue
            first = category == categories[0]
            module = eval_dir / "tests" / f"test_{category}.py"
            module.write_text(test_module(category, mine, first))
            for case in mine:
                for name, text in case.fixtures():
                    (eval_dir / "fixtures" / name).write_text(text)
                listed.append(f"eval.tests.test_{category}.test_{case.name}")
            if first:
                name = f"eval.tests.test_{category}.test_version_flag_exits"
                listed.append(name)
                ignored.append({"name": name, "reasons": [{"id": "dummy_pass"}]})
        branches[branch] = {
            "ignored": False,
            "ignore_reason": "",
            "tests": listed,
            "ignored_tests": ignored,
        }
    (task / "tests.json").write_text(json.dumps({"branches": branches}, indent=1) + "\n")
    return {b: len(v["tests"]) for b, v in branches.items()}


# -- suitebench's side ---------------------------------------------------------------------


def suitebench(argv: list[str], log: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    proc = subprocess.run([*SUITEBENCH, *argv], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    log.write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
    return seconds, proc


# -- the naive loop ----------------------------------------------------------------------------


def junit(xml: Path, suite: Path, branch: str) -> dict[str, str]:
    """Node id -> passed, failed, error or skipped, from one branch's JUnit XML."""
    out: dict[str, str] = {}
    if not xml.is_file():
        return out
    for case in ET.parse(xml).iter("testcase"):
        outcome = "passed"
        for kind, name in (("skipped", "skipped"), ("failure", "failed"), ("error", "error")):
            if case.find(kind) is not None:
                outcome = name
        try:
            node = programbench_id_to_node_id(f"{case.get('classname')}.{case.get('name')}",
                                              suite, branch)  # fmt: skip
        except ValueError:  # a module that did not collect: reported under its own name
            node = f"tests/{branch}/eval/tests/{str(case.get('name')).split('.')[-1]}.py"
        out[node] = outcome
    return out


def naive_one(task: Path, patch: Path | None, where: Path, branches: list[str]) -> dict[str, Any]:
    """One program ProgramBench's way: a clean build, then each branch's eval/ run by pytest."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(task, where, ignore=shutil.ignore_patterns(*NOT_THE_PROGRAM))
    if patch is not None:
        subprocess.run(["patch", "-p1", "--fuzz=0", "--quiet", "-i", str(patch)], cwd=where,
                       check=True)  # fmt: skip
    started = time.perf_counter()
    build = subprocess.run(["bash", "build.sh"], cwd=where, capture_output=True, text=True)
    row: dict[str, Any] = {"build_seconds": time.perf_counter() - started, "outcomes": {}}
    if build.returncode != 0 or not (where / "executable").is_file():
        row["build_error"] = (build.stderr or build.stdout).strip()[-300:]
        shutil.rmtree(where, ignore_errors=True)
        return row
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    started = time.perf_counter()
    for branch in branches:
        shutil.rmtree(where / "eval", ignore_errors=True)
        shutil.copytree(task / "tests" / branch / "eval", where / "eval")
        xml = where / "eval" / "results.xml"
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "--continue-on-collection-errors", "eval/tests/", f"--junitxml={xml}"]  # fmt: skip
        subprocess.run(argv, cwd=where, env=env, capture_output=True, timeout=3600)
        row["outcomes"].update(junit(xml, task / "tests" / branch / "eval" / "tests", branch))
    row["pytest_seconds"] = time.perf_counter() - started
    shutil.rmtree(where, ignore_errors=True)
    return row


def naive_loop(
    task: Path, mutants: dict[str, Path], workdir: Path, jobs: int, branches: list[str]
) -> dict[str, Any]:
    programs: dict[str, Path | None] = {"reference": None, **mutants}
    done = 0
    rows: dict[str, Any] = {}
    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        futures = {
            name: pool.submit(naive_one, task, patch, workdir / "naive" / name, branches)
            for name, patch in programs.items()
        }
        for name, future in futures.items():
            rows[name] = future.result()
            done += 1
            if done % 10 == 0 or done == len(programs):
                print(f"  naive: {done}/{len(programs)} programs, "
                      f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    return rows


# -- the comparison --------------------------------------------------------------------------


def fails(outcome: str | None) -> bool:
    return outcome in ("failed", "error", "timeout")


def compare(result: dict[str, Any], naive: dict[str, Any]) -> dict[str, Any]:
    scored = [t["id"] for t in result["tests"]]
    sb_reference = {t["id"]: t["reference"][0] for t in result["tests"]}
    rows = {"reference": sb_reference}
    statuses = {m["id"]: m["status"] for m in result["mutants"]}
    rows.update({m["id"]: m["outcomes"] for m in result["mutants"]})
    cells = agree = 0
    disagreements: list[str] = []
    for program, sb_row in rows.items():
        plain = naive[program]
        if statuses.get(program) == "build_error" or "build_error" in plain:
            same = statuses.get(program) == "build_error" and "build_error" in plain
            cells, agree = cells + 1, agree + same
            if not same:
                disagreements.append(f"{program}: suitebench {statuses.get(program)}, naive "
                                     f"{plain.get('build_error', 'built')}")  # fmt: skip
            continue
        for test in scored:
            ours = sb_row.get(test, sb_reference.get(test))
            theirs = plain["outcomes"].get(test) or plain["outcomes"].get(test.split("::")[0])
            cells += 1
            if fails(ours) == fails(theirs):
                agree += 1
            else:
                disagreements.append(f"{program} {test}: suitebench {ours}, naive {theirs}")
    valid = [t for t in scored if naive["reference"]["outcomes"].get(t) == "passed"]
    built = [m for m in statuses if "build_error" not in naive[m]]
    killed = [m for m in built if any(fails(naive[m]["outcomes"].get(t)) for t in valid)]
    # suitebench's equivalent mutants are out of its M; the naive loop runs them all the same:
    # out of its M too, and any it kills counted apart (TCE wrong: a disagreement above too)
    equivalent = {m for m, status in statuses.items() if status == "equivalent"}
    return {
        "naive_equivalent": len(equivalent & set(built)),
        "naive_killed_equivalent": len(equivalent & set(killed)),
        "cells": cells,
        "agreeing": agree,
        "disagreements": disagreements,
        "naive_valid": len(valid),
        "naive_built": len(set(built) - equivalent),
        "naive_killed": len(set(killed) - equivalent),
        "scored_tests": len(scored),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", choices=sorted(PROGRAMS), default="lua")
    ap.add_argument("--mutants", type=int, default=60, help="build mutants --max")
    ap.add_argument("--tests", type=int, default=300, help="cases in the suite")
    ap.add_argument("--seed", type=int, default=0, help="of the cases and of the mutants")
    ap.add_argument("--jobs", type=int, default=2, help="suitebench's workers")
    ap.add_argument(
        "--naive-jobs", type=int, default=2, help="programs the naive loop runs at once"
    )
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/suitebench-bench-pbscale"))
    ap.add_argument("--sdist", type=Path, help=f"lua: {SDIST}, already downloaded")
    ap.add_argument("--exclude", action="append", help="build mutants --exclude (default: the "
                    "program's own list; --exclude '' for none)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=Path("programbench_scale.json"))
    args = ap.parse_args()
    program = PROGRAMS[args.program]
    workdir = args.workdir.resolve() / args.program
    workdir.mkdir(parents=True, exist_ok=True)
    excludes = [e for e in (args.exclude or program.excludes) if e]

    tree = program.fetch(workdir, args)
    lines = sum(
        len(p.read_bytes().splitlines())
        for p in tree.glob(program.source_glob)
        if "vendor" not in p.parts and not p.name.endswith("_test.go")
    )
    task = workdir / "task"
    listed = write_task(program, tree, task, args.tests, args.seed)
    print(
        f"task: {program.title}, {lines} lines ({program.source_glob}, without tests and "
        f"vendor/); {args.tests} cases, listed per branch {listed} (one dummy_pass each ignored)"
    )

    store, out = workdir / "store.sqlite", workdir / "score"
    store.unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    common = ["--store", str(store), "--jobs", str(args.jobs)]
    print(f"suitebench build mutants --max {args.mutants} --exclude {excludes} ...", flush=True)
    mutate_s, proc = suitebench(
        [*common, "build", "mutants", str(task), "--max", str(args.mutants), "--seed",
         str(args.seed), *[f"--exclude={e}" for e in excludes]],
        workdir / "build-mutants.log",
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"build mutants failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    for line in proc.stdout.splitlines():  # the summary, sites kept and left out, equivalents
        if line.strip() and not any(c in line for c in "┃━│"):
            print(f"  {line.strip()}", flush=True)
    mutants = {m.id: m.patch for m in load_programbench_task(task).mutants}

    print(f"suitebench score --all-tests ({len(mutants)} mutants) ...", flush=True)
    score_s, proc = suitebench(
        [*common, "score", str(task), "--all-tests", "--keep-going", "--out", str(out)],
        workdir / "score.log",
    )
    if not (out / "results.json").is_file():
        raise SystemExit(f"score wrote no results ({proc.returncode}):\n{proc.stderr[-2000:]}")
    result = json.loads((out / "results.json").read_text())
    print("  " + proc.stdout.strip().splitlines()[0], flush=True)

    print(f"naive loop: {len(mutants) + 1} clean builds and plain pytest, "
          f"{args.naive_jobs} at a time ...", flush=True)  # fmt: skip
    started = time.perf_counter()
    naive = naive_loop(task, mutants, workdir, args.naive_jobs, list(program.branches))
    naive_s = time.perf_counter() - started
    verdict = compare(result, naive)

    counts = result["counts"]
    builds = [r["build_seconds"] for r in naive.values()]
    pytests = [r.get("pytest_seconds", 0.0) for r in naive.values()]
    ours = mutate_s + score_s
    print("\nsuitebench, seconds by phase:")
    print(f"  build mutants (sites, and each mutant built into the store)  {mutate_s:8.1f}")
    for phase, seconds in result.get("phases", {}).items():
        print(f"  score: {phase:54} {seconds:8.1f}")
    print(f"  score, wall                                                  {score_s:8.1f}")
    print(f"  total                                                        {ours:8.1f}")
    print(f"naive loop ({args.naive_jobs} programs at a time), seconds:")
    print(f"  clean builds, summed over {len(builds)} programs               {sum(builds):8.1f}")
    print(f"  plain pytest runs, summed                                    {sum(pytests):8.1f}")
    print(f"  wall                                                         {naive_s:8.1f}")
    print(f"  mean clean build per program                                 "
          f"{sum(builds) / len(builds):8.1f}")  # fmt: skip
    print(f"ratio naive / suitebench (wall): {naive_s / ours:.2f}x "
          f"(score alone: {naive_s / score_s:.2f}x)")  # fmt: skip
    valid_sb = sum(t["valid"] for t in result["tests"])
    print(f"\nV suitebench {valid_sb}/{len(result['tests'])}, naive "
          f"{verdict['naive_valid']}/{verdict['scored_tests']}")  # fmt: skip
    print(f"M suitebench {result['mutation_score']} ({counts}), naive "
          f"{verdict['naive_killed']}/{verdict['naive_built']} (suitebench's "
          f"{verdict['naive_equivalent']} equivalent mutants left out; the naive loop killed "
          f"{verdict['naive_killed_equivalent']} of them)")  # fmt: skip
    print(f"cells compared {verdict['cells']}, agreeing {verdict['agreeing']}, "
          f"disagreeing {len(verdict['disagreements'])}")  # fmt: skip
    for line in verdict["disagreements"][:50]:
        print(f"  {line}")
    invalid = [t for t in result["tests"] if not t["valid"]]
    for t in invalid[:20]:
        print(f"  invalid in suitebench: {t['id']} {t['reference']} {t.get('message', '')[:120]}")
    survivors = [m["id"] for m in result["mutants"] if m["status"] == "survived"]
    print(f"survived: {len(survivors)} {' '.join(survivors)}")
    args.out.write_text(json.dumps({
        "program": args.program, "lines": lines, "listed": listed, "mutants": len(mutants),
        "build_mutants_s": mutate_s,
        "score_s": score_s, "phases": result.get("phases"), "naive_s": naive_s,
        "naive_build_s": builds, "naive_pytest_s": pytests, "counts": counts,
        "validity": result["validity"], "mutation_score": result["mutation_score"],
        **verdict,
    }, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    from figures import run_recorded

    # one record per program: Lua's is programbench_scale.md, another's programbench_scale_NAME.md
    argv = " ".join(sys.argv[1:]).replace("--program=", "--program ").split()
    chosen = argv[argv.index("--program") + 1] if "--program" in argv[:-1] else "lua"
    sys.exit(run_recorded("programbench_scale" + ("" if chosen == "lua" else f"_{chosen}"), main))
