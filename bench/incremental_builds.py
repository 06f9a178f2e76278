"""Clean vs incremental mutant builds of a real C program built by ``make``, side by side.

Lua 5.4 (~30k lines, its own makefile) as vendored in the PyPI sdist of ``lupa``: fetched at run
time as ``bench/programbench_scale.py`` fetches it (nothing of it is in the repository) unless
``--lua DIR`` names an unpacked copy of ``third-party/lua54``.  The bench makes an instance of
it (``build.sh`` runs ``make`` and copies ``lua`` to ``./executable``), picks ``--mutants``
operator mutants of the sites the build compiles (seeded), and builds each twice, in two fresh
caches: from scratch, and incrementally from the reference's recorded build.  It prints per
mutant both times and whether the two executables are the same bytes, then the medians and
their ratio.

    python bench/incremental_builds.py [--lua DIR] [--mutants 12] [--seed 0]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from programbench_scale import fetch_lua

BUILD_SH = """#!/bin/sh
set -eu
make -s MYCFLAGS="-std=c99 -DLUA_USE_LINUX" MYLIBS="-ldl" >/dev/null
cp lua executable
"""


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_instance(lua: Path, root: Path) -> Path:
    shutil.copytree(lua, root / "src", ignore=shutil.ignore_patterns("*.o", "lua", "liblua.a"))
    (root / "src" / "build.sh").write_text(BUILD_SH)
    (root / "tests").mkdir()
    (root / "tests" / "test_lua.py").write_text(
        "import subprocess\n\n\ndef test_adds():\n"
        "    out = subprocess.run(['./executable', '-e', 'print(1+2)'], capture_output=True)\n"
        "    assert out.stdout == b'3\\n'\n"
    )
    (root / "instance.toml").write_text(
        'name = "lua"\nsource = "src/"\nbuild = "build.sh"\ntests = "tests/"\n'
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lua", type=Path, help="an unpacked third-party/lua54")
    parser.add_argument("--mutants", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from suitebench.construct.mutants import build_scope_of, generate_operator_mutants
    from suitebench.model.instance import MutantSpec, load_instance
    from suitebench.suite.programs import Builder

    with tempfile.TemporaryDirectory(prefix="suitebench-incremental-") as tmp:
        work = Path(tmp)
        lua = args.lua or fetch_lua(_mkdir(work / "download"), argparse.Namespace(sdist=None))
        instance = load_instance(make_instance(lua, work / "lua"))
        clean = Builder(instance, work / "clean-cache", incremental=False)
        incremental = Builder(instance, work / "incremental-cache")
        t0 = time.perf_counter()
        reference = clean.reference()
        reference_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        scope = build_scope_of(incremental)
        recorded_seconds = time.perf_counter() - t0
        candidates, report = generate_operator_mutants(
            instance, seed=args.seed, max_total=args.mutants, build_scope=scope
        )
        kept = report.sites - sum(report.left_out.values())
        print(f"lua: {report.sites} sites, {kept} kept, left out {report.left_out}")
        print(f"files left out: {report.left_out_files}")
        print(f"reference: clean build {reference_seconds:.1f}s ({reference.status}), "
              f"recorded build + preprocessing {recorded_seconds:.1f}s")  # fmt: skip
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

    sys.exit(run_recorded("incremental_builds", main))
