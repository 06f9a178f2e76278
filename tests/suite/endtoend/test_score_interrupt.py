"""Ctrl-C (SIGINT) in ``score``: a real subprocess, a real signal, on the bundled ``wordfreq``
instance (16 mutants of a word counter, its own 24 tests).

The score stops at once (exit 130, 128 + SIGINT), writes no output file, keeps the suite runs
it finished in the store; the same command again takes them from the store, says so, and ends
with the figures an uninterrupted score gives: those of the instance's ``expected.toml``,
worked out by hand from the mutants and checked against plain pytest runs by
``test_fixtures_instances.py`` (12 of 16 mutants killed, M = 0.75, and which tests kill each).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import tomllib
from pathlib import Path

from suitebench.data import INSTANCES_DIR

from ...cli_helpers import interrupt_when, stored_rows, suitebench_argv

WORDFREQ = INSTANCES_DIR / "wordfreq-py"


def _kills(out: Path) -> dict[str, list[str]]:
    """mutant -> the tests that kill it, from the score's kills.csv."""
    kills: dict[str, list[str]] = {}
    with (out / "kills.csv").open() as f:
        for row in csv.DictReader(f):
            tests = kills.setdefault(row["mutant"], [])
            if row["kills"] == "1":
                tests.append(row["test"])
    return {m: sorted(t) for m, t in kills.items()}


def test_ctrl_c_stops_score_keeps_the_store_and_the_rerun_says_so(tmp_path: Path) -> None:
    store, out = tmp_path / "s.db", tmp_path / "out"
    # --batch-size 1: the suite's runs reach the store one batch (a `suite-batch` row) at a
    # time as they finish, so some are stored long before the score ends; the runs one by one
    # (`suite-run` rows) only at the end of a phase
    argv = suitebench_argv(
        "-j", "2", "score", WORDFREQ, "--batch-size", "1", "--out", out, store=store
    )
    held = 0

    def some_runs_stored() -> bool:
        nonlocal held
        held = stored_rows(store, "suite-batch")
        return held >= 2

    first, took = interrupt_when(argv, some_runs_stored)
    assert first.returncode == 130, first.stderr
    # Measured 0.2-0.5 s here; a loaded machine is given room.
    assert took < 10, took
    assert "interrupted: nothing written" in first.stderr
    assert not out.exists() or not any(out.iterdir()), sorted(out.iterdir())
    kept = stored_rows(store, "suite-batch")
    assert kept >= held >= 2  # what was stored stays stored

    again = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    m = re.search(r"results: (\d+) stored now, (\d+) taken from the store", again.stderr)
    assert m is not None, again.stderr
    assert int(m[2]) >= kept, (kept, again.stderr)  # every stored run is taken, none redone

    expected = tomllib.loads((WORDFREQ / "expected.toml").read_text())
    results = json.loads((out / "results.json").read_text())
    assert results["mutation_score"] == expected["mutation_score"] == 0.75
    assert _kills(out) == {m: sorted(t) for m, t in expected["kills"].items()}

    third = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0, third.stderr
    assert re.search(r"results: 0 stored now, \d+ taken from the store", third.stderr)
