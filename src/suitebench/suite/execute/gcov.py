r"""Per-test coverage of a C or C++ program from a ``gcc --coverage`` build of the reference.

In the coverage run ``./executable`` is a launcher that sets ``GCOV_PREFIX`` to a directory
named after the running test (the plugin writes its index to ``current`` at each test's start,
``outside`` between tests) and runs the coverage build; every process of the program writes its
counters (``.gcda``) there, whatever environment the test gave it.  Afterwards each test's
counters are read with ``gcov --json-format`` into the record
:class:`suitebench.suite.select.selection.Coverage` reads: per test, the functions (by first line)
that ran at least once, and per source file every function's span.  A process that does not
exit normally (killed, crashed, ``_exit``) writes no counters: the launcher counts the runs, and
a test with more runs than completed ``main``\ s has unknown coverage (it always runs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from suitebench.suite.inside import untrusted
from suitebench.suite.inside.probe.tracer import OUTSIDE

LAUNCHER = """#!/bin/sh
GCOV_PREFIX="{gcov_dir}/$(cat "{gcov_dir}/current" 2>/dev/null || echo outside)"
export GCOV_PREFIX
echo run >> "$GCOV_PREFIX.runs"
exec "{executable}" "$@"
"""


def write_launcher(path: Path, gcov_dir: Path, executable: str) -> None:
    path.write_text(LAUNCHER.format(gcov_dir=gcov_dir, executable=executable), encoding="utf-8")
    path.chmod(0o755)


def _gcov_json(gcda: Path, gcno: Path) -> dict[str, Any] | None:
    shutil.copyfile(gcno, gcda.with_suffix(".gcno"))
    try:
        proc = subprocess.run(
            ["gcov", "--json-format", "--stdout", "-o", str(gcda.parent), str(gcda)],
            capture_output=True,
            cwd=gcda.parent,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    try:
        data: dict[str, Any] = json.loads(proc.stdout.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return data


def read_gcov(gcov_dir: Path, tree: Path) -> dict[str, Any] | None:
    """The coverage record of a run, or None when it cannot be read (no gcov, no tests)."""
    written = untrusted.read_text(gcov_dir / "tests.json")  # the run's: no link followed
    if written is None or shutil.which("gcov") is None:
        return None
    tests: list[str] = json.loads(written)
    notes = {p.relative_to(tree).with_suffix("").as_posix(): p for p in tree.rglob("*.gcno")}
    contexts: dict[str, dict[str, list[int]]] = {}
    unknown: list[str] = []
    spans: dict[str, set[tuple[int, int, int, int]]] = {}
    prefix = str(tree).lstrip("/")
    names = {p.name for p in gcov_dir.iterdir() if p.is_dir()}
    names |= {p.name[: -len(".runs")] for p in gcov_dir.glob("*.runs")}
    for name in sorted(names):
        entry = gcov_dir / name
        context = OUTSIDE if name == "outside" else tests[int(name)]
        ran: dict[str, set[int]] = {}
        mains = 0
        for gcda in entry.rglob("*.gcda") if entry.is_dir() else []:
            rel = gcda.relative_to(entry).with_suffix("").as_posix()
            if not rel.startswith(prefix + "/"):
                continue
            gcno = notes.get(rel[len(prefix) + 1 :])
            data = _gcov_json(gcda, gcno) if gcno is not None else None
            if data is None:
                return None
            for record in data.get("files", []):
                name = str(record.get("file", ""))
                source = os.path.relpath(
                    os.path.join(data.get("current_working_directory", tree), name), tree
                )
                for function in record.get("functions", []):
                    start, end = int(function["start_line"]), int(function["end_line"])
                    spans.setdefault(source, set()).add((start, end, 0, start))
                    count = int(function.get("execution_count", 0))
                    if count > 0:
                        ran.setdefault(source, set()).add(start)
                    if function.get("name") == "main":
                        mains += count
        contexts[context] = {f: sorted(v) for f, v in ran.items()}
        ran_lines = untrusted.read_text(gcov_dir / f"{name}.runs")
        runs = 0 if ran_lines is None else len(ran_lines.splitlines())
        if runs > mains:
            unknown.append(context)
    for test in tests:
        contexts.setdefault(test, {})
    return {
        "version": 1,
        "granularity": "function",
        "contexts": contexts,
        "fixtures": {t: [] for t in tests},
        "spawned": unknown,
        "spans": {f: sorted(v) for f, v in spans.items()},
    }
