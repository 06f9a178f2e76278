"""Reading datasets from disk: parquet needs the datasets extra and says so; JSON lines and
JSON arrays need nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import write_jsonl, write_parquet
from .test_codecontests import ROWS, SCHEMA

# The command line in a Python where pyarrow cannot be imported.
NO_PYARROW = (
    "import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.parquet'] = None; "
    "from suitebench.cli.main import main; main()"
)


def _without_pyarrow(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_PYARROW, *args], capture_output=True, text=True, timeout=120
    )


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path) -> None:
    src = write_parquet(tmp_path / "cc.parquet", ROWS[:1], SCHEMA)
    proc = _without_pyarrow("import", "codecontests", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "pip install 'suitebench[datasets]'" in proc.stderr


def test_json_lines_and_json_arrays_need_no_pyarrow(tmp_path: Path) -> None:
    lines = write_jsonl(tmp_path / "cc.jsonl", ROWS[:1])
    array = tmp_path / "cc.json"
    array.write_text(json.dumps(ROWS[:1]))
    for src, out in ((lines, tmp_path / "a"), (array, tmp_path / "b")):
        proc = _without_pyarrow("import", "codecontests", str(src), "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        assert (out / "1_a-sum/problem.toml").is_file()


def test_a_line_that_is_not_json_stops_the_import_naming_it(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps(ROWS[0]) + "\n{oops\n")
    proc = _without_pyarrow("import", "codecontests", str(src), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "bad.jsonl:2: not a JSON object" in proc.stderr
