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
import sqlite3
import subprocess
import tomllib
from pathlib import Path

from suitebench.data import INSTANCES_DIR

from ...cli_helpers import interrupt_when, stored_rows, suitebench_argv
from ..execute.test_batch_children_stored import write_queue

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


def _mutants_runs_stored(store: Path) -> int:
    """How many runs in the store have a failing test: mutants' runs (every reference run of
    the queue passes)."""
    try:
        with sqlite3.connect(store, timeout=1) as conn:
            rows = conn.execute("SELECT value FROM outcomes WHERE kind = 'suite-run'")
            return sum('"failed"' in value for (value,) in rows)
    except sqlite3.Error:
        return 0


def test_ctrl_c_in_the_middle_of_a_batch_keeps_the_mutants_runs_that_ended(
    tmp_path: Path,
) -> None:
    """One worker, one batch of the queue's three mutants: ``off_by_one`` and ``wrong_end``
    fail fast, ``slow_poll`` passes after 4 s of backing off.  Ctrl-C while it sleeps: the two
    runs that ended are in the store (before, a batch's runs were stored only with the whole
    batch, and all three ran again), and the same command takes them from there."""
    toml = write_queue(tmp_path / "queue")
    store, out = tmp_path / "s.db", tmp_path / "out"
    argv = suitebench_argv("-j", "1", "score", toml, "--out", out, store=store)
    first, _took = interrupt_when(argv, lambda: _mutants_runs_stored(store) >= 2)
    assert first.returncode == 130, first.stderr
    assert _mutants_runs_stored(store) == 2  # slow_poll's run, cut short, is not stored
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    m = re.search(r"results: (\d+) stored now, (\d+) taken from the store", again.stderr)
    assert m is not None, again.stderr
    results = json.loads((out / "results.json").read_text())
    status = {row["id"]: row["status"] for row in results["mutants"]}
    assert status == {"off_by_one": "killed", "wrong_end": "killed", "slow_poll": "survived"}
    assert results["mutation_score"] == 2 / 3
    # Only slow_poll ran again: no batch of the three mutants was ever run to its end.
    assert max(_batch_sizes(store)) < 3, _batch_sizes(store)


def _batch_sizes(store: Path) -> list[int]:
    """How many programs each stored batch ran."""
    with sqlite3.connect(store, timeout=1) as conn:
        rows = conn.execute("SELECT value FROM outcomes WHERE kind = 'suite-batch'")
        return [len(json.loads(value)["runs"]) for (value,) in rows]
