"""Ctrl-C (SIGINT) in ``generate``: a real subprocess, a real signal, on a copy of the bundled
``maxsum`` problem with one more reference that first sleeps half a second (every candidate
input is run on every reference, so the arm takes seconds and is interrupted midway).

The command stops at once (exit 130), writes no input file and no ``generate.json`` -- nothing
half-done --, keeps the runs it finished in the store; the same command again takes them from
the store, says so, and writes the inputs an uninterrupted generate writes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from suitebench.data import PROBLEMS_DIR

from ..cli_helpers import interrupt_when, stored_rows, suitebench_argv

# maxsum's answer (the sum, then the 1-based index of the first maximum), half a second late.
SLOW_REF = """\
import time

time.sleep(0.5)
n = int(input())
a = list(map(int, input().split()))
print(sum(a), a.index(max(a)) + 1)
"""


def _problem(tmp_path: Path) -> Path:
    dst = tmp_path / "maxsum"
    shutil.copytree(PROBLEMS_DIR / "maxsum", dst)
    (dst / "refs" / "slow.py").write_text(SLOW_REF)  # references = ["refs/*"]
    return dst


def _generate(problem: Path, out: Path, store: Path, *more: str) -> list[str]:
    return suitebench_argv(
        "-j",
        "2",
        "generate",
        "random",
        problem,
        "--budget",
        "8",
        "--seed",
        "3",
        "--out",
        out,
        *more,
        store=store,
    )


def _written(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def test_ctrl_c_stops_generate_writes_nothing_and_the_rerun_completes(tmp_path: Path) -> None:
    problem, store, out = _problem(tmp_path), tmp_path / "s.db", tmp_path / "out"
    argv = _generate(problem, out, store)
    held = 0

    def some_runs_stored() -> bool:
        nonlocal held
        held = stored_rows(store, "audit-run")
        return held >= 10

    first, took = interrupt_when(argv, some_runs_stored)
    assert first.returncode == 130, first.stderr
    assert took < 10, took  # measured well under a second; a loaded machine is given room
    assert "interrupted: nothing written" in first.stderr
    assert not out.exists() or _written(out) == [], _written(out)
    kept = stored_rows(store, "audit-run")
    assert kept >= held >= 10

    again = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    m = re.search(r"results: (\d+) stored now, (\d+) taken from the store", again.stderr)
    assert m is not None, again.stderr
    assert int(m[2]) >= kept, (kept, again.stderr)
    assert "random on maxsum: 8/8 legal inputs kept" in again.stdout, again.stdout

    # the inputs of a generate never interrupted, on a fresh store
    clean_out = tmp_path / "clean"
    clean = subprocess.run(
        _generate(problem, clean_out, tmp_path / "fresh.db"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert clean.returncode == 0, clean.stderr
    inputs = [f"{n:03d}.in" for n in range(1, 9)]
    assert _written(out) == _written(clean_out) == [*inputs, "generate.json"]
    for name in inputs:
        assert (out / name).read_bytes() == (clean_out / name).read_bytes(), name


def test_ctrl_c_between_repetitions_leaves_no_finished_repetition_behind(
    tmp_path: Path,
) -> None:
    """``--reps 2`` interrupted once the first repetition is written (its ``generate.json``
    is there, so the second is under way): the output directory holds no repetition after the
    interrupt (a finished ``rep-1`` beside no ``rep-2`` and no summary would pass for a
    result); the rerun writes both and the summary."""
    problem, store, out = _problem(tmp_path), tmp_path / "s.db", tmp_path / "out"
    argv = _generate(problem, out, store, "--reps", "2")
    first, took = interrupt_when(argv, (out / "rep-1" / "generate.json").is_file)
    assert first.returncode == 130, first.stderr
    assert took < 10, took
    assert "interrupted: nothing written" in first.stderr
    assert _written(out) == [], _written(out)
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert re.search(r"results: \d+ stored now, [1-9]\d* taken from the store", again.stderr)
    inputs = [f"{n:03d}.in" for n in range(1, 9)]
    reps = [f"rep-{r}/{f}" for r in (1, 2) for f in (*inputs, "generate.json")]
    assert _written(out) == sorted(["generate.json", *reps])
