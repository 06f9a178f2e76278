"""Clean vs incremental mutant builds of a real program, side by side.

    python bench/incremental_builds.py [--program lua|lua-cc|gojq|hexyl] [--mutants 12] [--seed 0]
        [--lua DIR] [--no-trimpath] [--record]

The programs, none written here, none in the repository:

* ``lua`` (C, ``make``): Lua 5.4 (~30k lines, its own makefile) as vendored in the PyPI sdist
  of ``lupa``, fetched as ``bench/programbench_scale.py`` fetches it unless ``--lua DIR`` names
  an unpacked copy of ``third-party/lua54``; ``build.sh`` runs ``make`` and copies ``lua``.
  Incremental: a copy of the reference's objects, the units reading the changed file removed.
* ``lua-cc`` (C, one ``gcc`` command): the same tree, built by ``build.sh`` compiling and
  linking every unit in one ``gcc`` command with the makefile's flags, as small projects' build
  scripts do (no object left behind). Incremental: each unit compiled alone once from the
  recorded command; a mutant's build hands ``gcc`` the kept objects of the units its change
  does not reach (``suite/execute/incremental_units.py``).
* ``gojq`` (Go): gojq 0.12.11 with its dependencies vendored, from Debian's Go packages, as
  ``bench/programbench_scale.py`` lays it out; ``go build -trimpath`` (``--no-trimpath``: as
  ``programbench_scale.py``'s task builds it). Incremental: the reference's ``GOCACHE``.
* ``hexyl`` (Rust): the hex viewer hexyl 0.8.0, from Debian's ``librust-hexyl-dev``, its
  dependencies (clap 2 and the rest) from Debian's crate registry
  (``/usr/share/cargo/registry``, a directory source: offline); ``cargo build --release``
  with hexyl's own release profile (LTO, one codegen unit). Incremental: the reference's
  ``target/``.

The bench makes an instance (``build.sh`` leaves ``./executable``), picks ``--mutants`` operator
mutants of the sites the build compiles (seeded), and builds each twice, in two fresh caches:
from scratch, and incrementally from the reference's recorded build. It prints per mutant both
times and whether the two executables are the same bytes, then the medians and their ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from programbench_scale import fetch_gojq, fetch_lua

LUA_BUILD = """#!/bin/sh
set -eu
make -s MYCFLAGS="-std=c99 -DLUA_USE_LINUX" MYLIBS="-ldl" >/dev/null
cp lua executable
"""
# The makefile's units and flags (lupa's copy: -march=native, ltests.c among the core's).
LUA_UNITS = (
    "lapi.c lcode.c lctype.c ldebug.c ldo.c ldump.c lfunc.c lgc.c llex.c lmem.c lobject.c "
    "lopcodes.c lparser.c lstate.c lstring.c ltable.c ltm.c lundump.c lvm.c lzio.c ltests.c "
    "lua.c lauxlib.c lbaselib.c ldblib.c liolib.c lmathlib.c loslib.c ltablib.c lstrlib.c "
    "lutf8lib.c loadlib.c lcorolib.c linit.c"
)
LUA_CC_BUILD = f"""#!/bin/sh
set -eu
gcc -std=c99 -DLUA_USE_LINUX -Wall -O2 -fno-stack-protector -fno-common -march=native \\
  -o executable {LUA_UNITS} -Wl,-E -lm -ldl
"""
GOJQ_BUILD = """#!/bin/sh
set -e
export GOFLAGS=-mod=vendor GOPROXY=off CGO_ENABLED=0
go build {flags}-o executable ./cmd/gojq
"""
HEXYL_BUILD = """#!/bin/sh
set -e
cargo build --release --offline --quiet
cp target/release/hexyl executable
"""
# Debian's crates as cargo's registry, offline (a directory source outside the tree).
CARGO_CONFIG = """[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"
"""
HEXYL = Path("/usr/share/cargo/registry/hexyl-0.8.0")
TESTS = {
    "lua": ("['./executable', '-e', 'print(1+2)']", b"", "3\n"),
    "lua-cc": ("['./executable', '-e', 'print(1+2)']", b"", "3\n"),
    "gojq": ("['./executable', '-c', '.a+1']", b'{"a": 2}', "3\n"),
    "hexyl": ("['./executable', '-n', '2']", b"hi", "68 69"),
}


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _lua(work: Path, args: argparse.Namespace) -> tuple[Path, str]:
    lua = args.lua or fetch_lua(_mkdir(work / "download"), argparse.Namespace(sdist=None))
    tree = work / "lua-src"
    shutil.copytree(lua, tree, ignore=shutil.ignore_patterns("*.o", "lua", "liblua.a"))
    return tree, LUA_BUILD


def _lua_cc(work: Path, args: argparse.Namespace) -> tuple[Path, str]:
    tree, _ = _lua(work, args)
    return tree, LUA_CC_BUILD


def _gojq(work: Path, args: argparse.Namespace) -> tuple[Path, str]:
    tree = fetch_gojq(_mkdir(work / "download"), args)
    return tree, GOJQ_BUILD.format(flags="" if args.no_trimpath else "-trimpath ")


def _hexyl(work: Path, args: argparse.Namespace) -> tuple[Path, str]:
    if not (HEXYL / "Cargo.toml").is_file() or not shutil.which("cargo"):
        raise SystemExit("hexyl: needs cargo and Debian's librust-hexyl-dev (apt-get install)")
    tree = work / "hexyl"
    shutil.copytree(HEXYL, tree)
    _mkdir(tree / ".cargo")
    (tree / ".cargo" / "config.toml").write_text(CARGO_CONFIG)
    return tree, HEXYL_BUILD


PROGRAMS: dict[str, Callable[[Path, argparse.Namespace], tuple[Path, str]]] = {
    "lua": _lua,
    "lua-cc": _lua_cc,
    "gojq": _gojq,
    "hexyl": _hexyl,
}


def make_instance(program: str, tree: Path, build: str, root: Path) -> Path:
    shutil.copytree(tree, root / "src")
    (root / "src" / "build.sh").write_text(build)
    (root / "tests").mkdir()
    argv, stdin, stdout = TESTS[program]
    (root / "tests" / "test_program.py").write_text(
        "import subprocess\n\n\ndef test_runs():\n"
        f"    out = subprocess.run({argv}, input={stdin!r}, capture_output=True)\n"
        f"    assert {stdout!r} in out.stdout.decode()\n"
    )
    (root / "instance.toml").write_text(
        f'name = "{program}"\nsource = "src/"\nbuild = "build.sh"\ntests = "tests/"\n'
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="lua")
    parser.add_argument("--lua", type=Path, help="an unpacked third-party/lua54")
    parser.add_argument("--mutants", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-trimpath", action="store_true", help="gojq without -trimpath")
    args = parser.parse_args()

    from suitebench.construct.mutants import build_scope_of, generate_operator_mutants
    from suitebench.model.instance import MutantSpec, load_instance
    from suitebench.suite.execute.programs import Builder

    with tempfile.TemporaryDirectory(prefix="suitebench-incremental-") as tmp:
        work = Path(tmp)
        tree, build = PROGRAMS[args.program](work, args)
        root = make_instance(args.program, tree, build, work / "instance")
        instance = load_instance(root)
        clean = Builder(instance, work / "clean-cache", incremental=False)
        incremental = Builder(instance, work / "incremental-cache")
        t0 = time.perf_counter()
        reference = clean.reference()
        reference_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        scope = build_scope_of(incremental)
        base = incremental.incremental_base()
        recorded_seconds = time.perf_counter() - t0
        candidates, report = generate_operator_mutants(
            instance, seed=args.seed, max_total=args.mutants, build_scope=scope
        )
        kept = report.sites - sum(report.left_out.values())
        print(f"{args.program}: {report.sites} sites, {kept} kept, left out {report.left_out}")
        print(f"files left out: {report.left_out_files}")
        print(f"reference: clean build {reference_seconds:.1f}s ({reference.status}), "
              f"recorded build {recorded_seconds:.1f}s ({type(base).__name__})")  # fmt: skip
        rows: list[tuple[float, float]] = []
        for index, (site, diff) in enumerate(candidates):
            patch = work / f"m{index:03d}.diff"
            patch.write_bytes(diff)
            spec = MutantSpec(id=f"m{index:03d}", patch=patch)
            t0 = time.perf_counter()
            a = clean.mutant(spec)
            t_clean = time.perf_counter() - t0
            t0 = time.perf_counter()
            b = incremental.mutant(spec)
            t_inc = time.perf_counter() - t0
            same = (
                a.ok and b.ok and Path(a.executable or "").read_bytes()
                == Path(b.executable or "").read_bytes()
            )  # fmt: skip
            status = (
                "same bytes"
                if same
                else f"{a.status}/{b.status}" + (" DIFFERENT BYTES" if a.ok and b.ok else "")
            )
            equivalent = base is not None and b.ok and base.same_objects(Path(b.directory), diff)
            status += " (equivalent: the reference's program)" if equivalent else ""
            print(f"  {site.description[:60]:<60} clean {t_clean:5.1f}s  "
                  f"incremental {t_inc:5.1f}s  {status}")  # fmt: skip
            rows.append((t_clean, t_inc))
        med_clean = statistics.median(r[0] for r in rows)
        med_inc = statistics.median(r[1] for r in rows)
        total_clean, total_inc = sum(r[0] for r in rows), sum(r[1] for r in rows)
        print(f"median per mutant: clean {med_clean:.2f}s, incremental {med_inc:.2f}s, "
              f"ratio {med_inc / med_clean:.3f}")  # fmt: skip
        print(f"total: clean {total_clean:.1f}s, incremental {total_inc:.1f}s, "
              f"ratio {total_inc / total_clean:.3f}")  # fmt: skip


if __name__ == "__main__":
    from figures import run_recorded

    # one record per program: Lua's is incremental_builds.md, another's incremental_builds_NAME.md
    argv = " ".join(sys.argv[1:]).replace("--program=", "--program ").split()
    chosen = argv[argv.index("--program") + 1] if "--program" in argv[:-1] else "lua"
    sys.exit(run_recorded("incremental_builds" + ("" if chosen == "lua" else f"_{chosen}"), main))
