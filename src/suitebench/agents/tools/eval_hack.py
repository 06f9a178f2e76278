"""Check ONE candidate input: is it LEGAL, does the reference run OK, which wrongs it kills.

Usage: python3 scripts/eval_hack.py INPUT_FILE

No validator ships with this task: an input counts as legal here when docs/ref.* runs OK on it
within the time limit; honour the statement's constraints yourself. A wrong solution in
workspace/wrongs/ is killed when its output differs from the reference's, or it crashes or
runs out of time.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import build, reference, run, same, wrongs


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2])
        return 2
    data = Path(sys.argv[1]).read_bytes()
    ref_argv, why = build(reference())
    if ref_argv is None:
        print(f"reference does not build: {why}")
        return 1
    status, expected = run(ref_argv, data)
    if status != "ok":
        print(f"ILLEGAL? the reference ended {status} on this input")
        return 1
    print("LEGAL (the reference runs OK)")
    killed = 0
    for w in wrongs():
        argv, why = build(w)
        if argv is None:
            print(f"  {w.name}: does not build ({why.strip()[:200]})")
            continue
        st, out = run(argv, data)
        if st != "ok":
            verdict = f"KILLED ({st})"
        elif not same(expected, out):
            verdict = "KILLED (WA)"
        else:
            verdict = "survives"
        killed += verdict.startswith("KILLED")
        print(f"  {w.name}: {verdict}")
    print(f"kills {killed} of {len(wrongs())} drafted wrong solutions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
