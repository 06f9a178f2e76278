"""A broken harness stops ``suitebench score`` loudly (exit 4), unless ``--keep-going``.

A reference that does not build and reference runs that do not finish (a conftest that kills
pytest before any test, in every fresh run too) are not findings about the suite: nothing can
be scored on them.  Before, the first ended with exit 1 and the second with exit 0 and a
warning; now each is named on stderr, listed under ``harness_errors`` in results.json, and the
command exits 4.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ENTRY = "import sys; from suitebench.cli.main import main; sys.argv[0] = 'suitebench'; main()"


def suitebench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "--store", str(tmp_path / "s.sqlite"), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_reference_that_does_not_build_is_a_harness_error(
    stats_instance: Path, tmp_path: Path
) -> None:
    source = stats_instance.parent / "src" / "stats.c"
    source.write_text(source.read_text().replace("return 0;\n}", "return 0\n}", 1))
    proc = suitebench(tmp_path, "score", str(stats_instance), "--mutant", "max_empty")
    assert proc.returncode == 4, proc.stderr
    assert "harness error:" in proc.stderr and "does not build" in proc.stderr
    kept = suitebench(
        tmp_path, "score", str(stats_instance), "--mutant", "max_empty", "--keep-going"
    )
    assert kept.returncode == 0 and "harness error:" in kept.stderr


def test_reference_runs_that_never_finish_are_a_harness_error(
    stats_instance: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "broken_conftest"
    suite.mkdir()
    (suite / "conftest.py").write_text("import os\nos._exit(7)\n")
    (suite / "test_x.py").write_text("def test_x():\n    pass\n")
    out = tmp_path / "out"
    args = ["score", str(stats_instance), "--suite", str(suite), "--mutant", "max_empty"]
    proc = suitebench(tmp_path, *args, "--reference-runs", "1", "--out", str(out))
    assert proc.returncode == 4, proc.stderr
    assert "harness error: reference reference (1 run(s)): pytest did not finish" in proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert [e["stage"] for e in results["harness_errors"]] == ["reference"]
    assert results["mutation_score"] is None  # nothing measured is not zero
    kept = suitebench(tmp_path, *args, "--reference-runs", "1", "--keep-going")
    assert kept.returncode == 0, kept.stderr


def test_a_sound_score_has_no_harness_errors(stats_instance: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = suitebench(
        tmp_path, "score", str(stats_instance), "--mutant", "max_empty", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert "harness error" not in proc.stderr
    assert json.loads((out / "results.json").read_text())["harness_errors"] == []
