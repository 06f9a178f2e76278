"""Helpers for the import tests: the command line, tables written with pyarrow in each
dataset's published schema, and reading an audit's ledger and retractions."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

from ..cli_helpers import run_suitebench

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as exc:  # the tests never install anything: they name the step instead
    raise ImportError(
        "tests/datasets write parquet with pyarrow: install the datasets extra "
        "(scripts/bootstrap.sh does; pip install -e '.[datasets]')"
    ) from exc


def suitebench(*args: str, store: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_suitebench(*args, store=store, timeout=600)


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def audit(
    problems: list[Path], out: Path, build_cache: Path, *extra: str
) -> tuple[list[dict[str, str]], list[dict[str, str]], dict[str, Any]]:
    """Audit imported problems as they are; the ledger rows, retractions and results."""
    proc = suitebench(
        "audit",
        *map(str, problems),
        "--build-cache",
        str(build_cache),
        "--out",
        str(out),
        *extra,
        store=out.parent / f"{out.name}.sqlite",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with (out / "ledger.csv").open() as fh:
        ledger = list(csv.DictReader(fh))
    with (out / "retractions.csv").open() as fh:
        retractions = list(csv.DictReader(fh))
    results = json.loads((out / "results.json").read_text())
    return ledger, retractions, results


def kills(ledger: list[dict[str, str]]) -> set[tuple[str, str, str, str]]:
    """(arm, submission, killing input, verdict) of every certified ledger row."""
    return {(r["arm"], r["submission_id"], r["input_id"], r["verdict"]) for r in ledger}
