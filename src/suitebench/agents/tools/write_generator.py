"""Compile a generator and run it across seeds; every output is checked against the reference.

Usage: python3 scripts/write_generator.py GENERATOR --seeds N [--out DIR]

The generator (C, C++ or Python) reads ONE integer seed from stdin and prints ONE input. Each
output is written to DIR (default workspace/hacks/<generator name>/) as seed-NNN.txt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, build, reference, run


def main() -> int:
    ap = argparse.ArgumentParser(description="compile and sweep a generator")
    ap.add_argument("generator", type=Path)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    gen_argv, why = build(args.generator)
    if gen_argv is None:
        print(f"generator does not build:\n{why}")
        return 1
    ref_argv, why = build(reference())
    if ref_argv is None:
        print(f"reference does not build: {why}")
        return 1
    out = args.out or ROOT / "workspace" / "hacks" / args.generator.stem
    out.mkdir(parents=True, exist_ok=True)
    legal = 0
    for seed in range(args.seeds):
        st, data = run(gen_argv, f"{seed}\n".encode(), time_limit=10.0)
        if st != "ok":
            print(f"seed {seed}: generator ended {st}")
            continue
        path = out / f"seed-{seed:03d}.txt"
        path.write_bytes(data)
        ref_status, _ = run(ref_argv, data)
        legal += ref_status == "ok"
        print(f"seed {seed}: {path.relative_to(ROOT)} ({len(data)} bytes, reference {ref_status})")
    print(f"{legal}/{args.seeds} outputs run OK on the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
