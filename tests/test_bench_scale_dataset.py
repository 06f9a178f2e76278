"""The generated dataset of ``bench/audit_at_scale.py``: rows in the CodeContests schema whose
correct Python submissions give the model answers, and whose wrong ones do not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from suitebench.datasets.codecontests import CodeContestsRow

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import _scale_dataset as ds


def _python_outputs(src: str, inputs: list[str], tmp: Path) -> list[bytes | None]:
    prog = tmp / "prog.py"
    prog.write_text(src)
    outs: list[bytes | None] = []
    for text in inputs:
        try:
            p = subprocess.run(
                [sys.executable, str(prog)], input=text.encode(), capture_output=True, timeout=5
            )
        except subprocess.TimeoutExpired:
            outs.append(None)
            continue
        outs.append(p.stdout if p.returncode == 0 else None)
    return outs


@pytest.mark.parametrize("index", range(len(ds.TEMPLATES)))
def test_rows_fit_the_schema_and_python_submissions_behave(index: int, tmp_path: Path) -> None:
    row = ds.make_row(index, seed=3, submissions=12, tests_range=(20, 24))
    CodeContestsRow.model_validate(row)  # the importer's own schema: no unknown field
    tests = [
        (i, o)
        for k in ("public_tests", "private_tests", "generated_tests")
        for i, o in zip(row[k]["input"], row[k]["output"], strict=True)
    ]
    assert 20 <= len(tests) <= 24
    inputs = [i for i, _ in tests]
    expected = [o.encode().split() for _, o in tests]
    for field, right in (("solutions", True), ("incorrect_solutions", False)):
        sols = row[field]
        for lang, src in zip(sols["language"], sols["solution"], strict=True):
            assert lang in ds.LANGS
            if lang != ds.PYTHON3:
                continue
            got = _python_outputs(src, inputs, tmp_path)
            passed = [g is not None and g.split() == e for g, e in zip(got, expected, strict=True)]
            if right:
                assert all(passed), src.splitlines()[0]
            elif "(uninit)" not in src and "(loop)" not in src and "(forever)" not in src:
                # a fault that triggers on n mod P may miss every test; a logic bug on the
                # large tests always shows, and the others where their case appears
                assert not all(passed) or "(slow)" in src, src.splitlines()[0]
