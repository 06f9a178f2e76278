"""``score --incremental`` against full runs over a series of real edits to a project in git.

Two series.  ``shop``, tests/suite/edit_series.py's project and edits (a comment, a new test, a
changed function, a changed helper, a helper only a mutant's path reaches, a data file the
tests read); and, with ``--webcolors DIR`` (the unpacked sdist of webcolors 24.11.1, from PyPI:
``pip download --no-deps --no-binary :all: webcolors==24.11.1``), that project made a git
repository with an instance.toml at its root and four edits of the same kinds (comments in
``rgb_to_hex``, a new test, ``rgb_to_hex`` rewritten, its helper ``_normalize_integer_rgb``
rewritten), mutated inside function bodies (``--scope functions``, as mutmut does).  Each edit
is committed, ``build mutants`` runs again (as a user would after an edit), and the instance
is scored twice -- a full run in a fresh store (nothing cached: what every
edit cost before) and an incremental run in a store kept across the series.  Printed per step:
the seconds and matrix cells each ran, the rows reused, whether the two kill matrices (every
test's outcome on every mutant) and statuses are equal, and the ratio of the times.

    .venv/bin/python bench/incremental_scores.py [--jobs 2] [--webcolors DIR] [--json out.json]
        [--record]   (writes docs/figures/incremental_scores.md)

Exit 1 when a step's matrices differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
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


WEBCOLORS_INSTANCE = """\
name = "webcolors"
kind = "python"
source = "src/"
package = "webcolors"
tests = "tests/"
"""


def _swap(root: Path, rel: str, old: str, new: str) -> None:
    text = (root / rel).read_text()
    if old not in text:
        raise SystemExit(f"{rel}: the text to edit is not there (not webcolors 24.11.1?)")
    (root / rel).write_text(text.replace(old, new, 1))


def make_webcolors(sdist: Path, root: Path) -> Path:
    shutil.copytree(sdist, root)
    (root / "instance.toml").write_text(WEBCOLORS_INSTANCE)
    (root / ".gitignore").write_text("mutants/\n__pycache__/\n")
    edit_series._git(root, "init", "-q", "-b", "main")
    edit_series.commit(root, "webcolors 24.11.1")
    return root


HEX = '    return f"#{red:02x}{green:02x}{blue:02x}"\n'
WEBCOLORS_EDITS: list[tuple[str, Callable[[Path], None]]] = [
    (
        "comment",
        lambda r: _swap(
            r,
            "src/webcolors/_conversion.py",
            "    red, green, blue = normalize_integer_triplet(rgb_triplet)\n" + HEX,
            "    # Normalize first: out-of-range values are clipped, not wrapped.\n"
            "    red, green, blue = normalize_integer_triplet(rgb_triplet)\n" + HEX,
        ),
    ),
    (
        "new_test",
        lambda r: (r / "tests/test_normalization.py").write_text(
            (r / "tests/test_normalization.py").read_text()
            + "\n    def test_normalize_hex_keeps_lowercase(self):\n"
            + '        assert webcolors.normalize_hex("#0099cc") == "#0099cc"\n'
        ),
    ),
    (
        "changed_function",
        lambda r: _swap(
            r,
            "src/webcolors/_conversion.py",
            HEX,
            '    return "#" + "".join(f"{v:02x}" for v in (red, green, blue))\n',
        ),
    ),
    (
        "changed_helper",
        lambda r: _swap(
            r,
            "src/webcolors/_normalization.py",
            "    return 0 if value < 0 else 255 if value > 255 else value\n",
            "    return max(0, min(255, value))\n",
        ),
    ),
]


def cells(result: SuiteResult) -> int:
    """The matrix cells this run ran (a reused row's ran in an earlier one)."""
    return sum(m.tests_run for m in result.mutants if m.reused_from is None)


def series(
    name: str,
    project: Path,
    edits: list[tuple[str, Callable[[Path], None]]],
    work: Path,
    jobs: int,
    scope: str,
) -> list[dict[str, Any]]:
    """One project through its edits: a row of figures per step."""
    rows: list[dict[str, Any]] = []
    print(f"== {name}", flush=True)
    steps: list[tuple[str, Callable[[Path], None] | None]] = [("first run", None), *edits]
    for step, (label, edit) in enumerate(steps):
        if edit is not None:
            edit(project)
            edit_series.commit(project, label)
        write_mutants(load_instance(project), scope=scope, cache_dir=work / "mutant-builds")
        full, full_s = score(project, work / f"full-{step}" / "store.sqlite", jobs, False)
        inc, inc_s = score(project, work / "incremental" / "store.sqlite", jobs, True)
        assert inc.incremental is not None
        r = {
            "project": name,
            "step": label,
            "mutants": len(full.mutants),
            "full_seconds": round(full_s, 2),
            "full_cells": cells(full),
            "incremental_seconds": round(inc_s, 2),
            "incremental_cells": cells(inc),
            "reused": inc.incremental["reused"],
            "rerun": inc.incremental["rerun"],
            "reference_runs_reused": inc.incremental["reference_runs_reused"],
            "why": inc.incremental["everything_reruns"] or inc.incremental["rerun_reasons"],
            "equal": matrix(full) == matrix(inc) and full.mutation_score == inc.mutation_score,
            "ratio": round(inc_s / full_s, 3),
            "full_phases": full.phases,
            "incremental_phases": inc.phases,
        }
        rows.append(r)
        print(
            f"{label:<20} {r['mutants']:>3} mutants  full {r['full_seconds']:>6.2f} s "
            f"{r['full_cells']:>4} cells  incremental {r['incremental_seconds']:>6.2f} s "
            f"{r['incremental_cells']:>4} cells, {r['reused']:>3} reused  "
            f"matrices {'equal' if r['equal'] else 'DIFFER'}  ratio {r['ratio']:.3f}",
            flush=True,
        )
    edited = rows[1:]
    full_total = sum(r["full_seconds"] for r in edited)
    inc_total = sum(r["incremental_seconds"] for r in edited)
    print(
        f"over the {len(edited)} edits: full {full_total:.2f} s, "
        f"{sum(r['full_cells'] for r in edited)} cells; incremental {inc_total:.2f} s, "
        f"{sum(r['incremental_cells'] for r in edited)} cells; ratio {inc_total / full_total:.3f}"
    )
    for r in rows:
        print(f"  {r['step']}: {r['why']}")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--webcolors", type=Path, default=None, help="webcolors' unpacked sdist")
    parser.add_argument("--only-webcolors", action="store_true", help="Skip the shop series.")
    parser.add_argument("--json", type=Path, default=None, help="Write the figures here.")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="incremental-bench-") as tmp:
        work = Path(tmp)
        if not args.only_webcolors:
            shop = edit_series.make_project(work / "shop" / "shop")
            rows += series("shop", shop, edit_series.EDITS, work / "shop", args.jobs, "all")
        if args.webcolors is not None:
            project = make_webcolors(args.webcolors, work / "webcolors" / "webcolors")
            rows += series(
                "webcolors", project, WEBCOLORS_EDITS, work / "webcolors", args.jobs, "functions"
            )
        if args.json is not None:  # before the work tree's removal, which takes a while
            args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import run_recorded

    sys.exit(run_recorded("incremental_scores", main))
