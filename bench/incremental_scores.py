"""``score --incremental`` against full runs over a series of real edits to a project in git.

The project and its edits are tests/suite/edit_series.py's (a comment, a new test, a changed
function, a changed helper, a helper only a mutant's path reaches, a data file the tests
read): each edit is committed, ``build mutants`` runs again (as a user would after an edit),
and the instance is scored twice -- a full run in a fresh store (nothing cached: what every
edit cost before) and an incremental run in a store kept across the series.  Printed per step:
the seconds and matrix cells each ran, the rows reused, whether the two kill matrices (every
test's outcome on every mutant) and statuses are equal, and the ratio of the times.

    .venv/bin/python bench/incremental_scores.py [--jobs 2] [--json out.json]

Exit 1 when a step's matrices differ.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "suite"))

import edit_series  # noqa: E402

from suitebench.construct.mutants import write_mutants  # noqa: E402
from suitebench.model.instance import load_instance  # noqa: E402
from suitebench.run.executor import LocalExecutor  # noqa: E402
from suitebench.run.store import Store  # noqa: E402
from suitebench.suite.result import SuiteResult  # noqa: E402
from suitebench.suite.score import score_suite  # noqa: E402


def matrix(result: SuiteResult) -> dict[str, Any]:
    """Every mutant's status and row, by its id."""
    return {
        m.id: (str(m.status), {t: str(s) for t, s in m.outcomes.items()}) for m in result.mutants
    }


def score(
    project: Path, store_path: Path, jobs: int, incremental: bool
) -> tuple[SuiteResult, float]:
    instance = load_instance(project)
    with Store(store_path) as store:
        executor = LocalExecutor(jobs=jobs)
        started = time.monotonic()
        try:
            result = score_suite(instance, store=store, executor=executor, incremental=incremental)
        finally:
            executor.close()
        return result, time.monotonic() - started


def cells(result: SuiteResult) -> int:
    """The matrix cells this run ran (a reused row's ran in an earlier one)."""
    return sum(m.tests_run for m in result.mutants if m.reused_from is None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="Write the figures here.")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="incremental-bench-") as tmp:
        work = Path(tmp)
        project = edit_series.make_project(work / "shop")
        steps = [("first run", None), *edit_series.EDITS]
        for step, (name, edit) in enumerate(steps):
            if edit is not None:
                edit(project)
                edit_series.commit(project, name)
            write_mutants(load_instance(project), cache_dir=work / "mutant-builds")
            full, full_s = score(project, work / f"full-{step}" / "store.sqlite", args.jobs, False)
            inc, inc_s = score(project, work / "incremental" / "store.sqlite", args.jobs, True)
            assert inc.incremental is not None
            rows.append(
                {
                    "step": name,
                    "mutants": len(full.mutants),
                    "full_seconds": round(full_s, 2),
                    "full_cells": cells(full),
                    "incremental_seconds": round(inc_s, 2),
                    "incremental_cells": cells(inc),
                    "reused": inc.incremental["reused"],
                    "rerun": inc.incremental["rerun"],
                    "why": inc.incremental["everything_reruns"] or inc.incremental["rerun_reasons"],
                    "equal": matrix(full) == matrix(inc)
                    and full.mutation_score == inc.mutation_score,
                    "ratio": round(inc_s / full_s, 3),
                }
            )
            r = rows[-1]
            print(
                f"{name:<20} {r['mutants']:>3} mutants  full {r['full_seconds']:>6.2f} s "
                f"{r['full_cells']:>4} cells  incremental {r['incremental_seconds']:>6.2f} s "
                f"{r['incremental_cells']:>4} cells, {r['reused']:>3} reused  "
                f"matrices {'equal' if r['equal'] else 'DIFFER'}  ratio {r['ratio']:.3f}",
                flush=True,
            )
    edits = rows[1:]
    full_total = sum(r["full_seconds"] for r in edits)
    inc_total = sum(r["incremental_seconds"] for r in edits)
    print(
        f"over the {len(edits)} edits: full {full_total:.2f} s, "
        f"{sum(r['full_cells'] for r in edits)} cells; incremental {inc_total:.2f} s, "
        f"{sum(r['incremental_cells'] for r in edits)} cells; ratio {inc_total / full_total:.3f}"
    )
    for r in rows:
        print(f"  {r['step']}: {r['why']}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
