"""Bad input to ``score --suite`` is a one-line error (exit 2), never a traceback, and a figure
that rests on a harness error is written as null with the reason.

Before: a test file whose name is not UTF-8 ended the command with ``UnicodeEncodeError`` in the
tree's hash (exit 1); a suite that collects no test gave exit 0 with "V = n/a, M = 0/6"; and a
reference whose runs did not finish still had V and M written as numbers (M = 1.0: the one
mutant a valid test killed, over the one not left out as crashed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..conftest import suitebench

VALID = (
    "import subprocess\n\n"
    "def test_max_last():\n"
    "    out = subprocess.run(['./executable', 'max', '1', '5'], capture_output=True, text=True)\n"
    "    assert out.stdout == '5\\n'\n"
)


def _suite(root: Path, files: dict[bytes, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        path = os.path.join(os.fsencode(root), name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return root


def test_a_test_file_not_named_in_utf8_is_refused_naming_it(
    stats_instance: Path, tmp_path: Path
) -> None:
    suite = _suite(tmp_path / "s", {b"test_valid.py": VALID, b"test_caf\xe9.py": VALID})
    proc = suitebench(tmp_path, "score", str(stats_instance), "--suite", str(suite))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "test_caf\\xe9.py" in lines[0] and "not UTF-8" in lines[0], lines


def test_a_data_file_not_named_in_utf8_is_hashed_by_its_bytes(
    stats_instance: Path, tmp_path: Path
) -> None:
    # Only max_off_by_one's "max 1 5" prints 1, so the one valid test kills it: M = 1/1.
    files = {b"test_valid.py": VALID, b"caf\xe9.txt": "data\n"}
    suite = _suite(tmp_path / "s", files)
    out = tmp_path / "out"
    args = ["score", str(stats_instance), "--suite", str(suite), "--mutant", "max_off_by_one"]
    proc = suitebench(tmp_path, *args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["validity"] == 1.0 and results["mutation_score"] == 1.0
    # The same name in other bytes is another suite: another hash.
    other = _suite(tmp_path / "t", {b"test_valid.py": VALID, b"caf\xe8.txt": "data\n"})
    again = suitebench(tmp_path, "--json", *args[:3], str(other), *args[4:])
    assert json.loads(again.stdout)["suite_hash"] != results["suite_hash"]


def test_a_suite_that_collects_no_test_is_bad_input(stats_instance: Path, tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s", {b"helpers.py": "def run():\n    pass\n"})
    args = ["score", str(stats_instance), "--suite", str(suite), "--mutant", "max_empty"]
    proc = suitebench(tmp_path, *args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "collects no test" in proc.stderr and str(suite) in proc.stderr.replace("\n", "")


def test_figures_resting_on_a_harness_error_are_null_with_the_reason(
    stats_instance: Path, tmp_path: Path
) -> None:
    # Every test finishes, then the session dies at its end: the reference's runs never finish
    # (a harness error), though the one test passed them and fails on max_off_by_one.
    conftest = "import os\n\ndef pytest_sessionfinish(session):\n    os._exit(3)\n"
    suite = _suite(tmp_path / "s", {b"test_valid.py": VALID, b"conftest.py": conftest})
    out = tmp_path / "out"
    args = ["score", str(stats_instance), "--suite", str(suite), "--reference-runs", "1"]
    args += ["--mutant", "max_off_by_one", "--mutant", "max_empty", "--keep-going"]
    proc = suitebench(tmp_path, *args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr  # --keep-going: the figures are null all the same
    results = json.loads((out / "results.json").read_text())
    assert [e["stage"] for e in results["harness_errors"]] == ["reference"]
    assert results["validity"] is None and results["mutation_score"] is None
    assert set(results["withheld"]) == {"validity", "mutation_score"}
    assert "the reference's runs did not finish" in results["withheld"]["mutation_score"]
    assert all(v is None for v in results["per_section"].values())
    assert "M is not given (null in results.json)" in proc.stdout
