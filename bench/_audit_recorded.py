"""The ``suitebench`` command with every run its audit executes recorded, for the bare pool of
``audit_at_scale.py``: the chunk job of the local pool is wrapped (as ``judge_throughput.py``
does in-process) and the runs -- argv, stdin, limits -- are pickled to RUNS when the command
ends, however it ends.

    python bench/_audit_recorded.py RUNS.pickle [suitebench arguments...]
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import suitebench.audit.runs as runs_mod

RunRecord = tuple[list[str], bytes, dict[str, Any]]


class Recorder:
    """Wraps the audit's chunk job to record every run it executes (argv, stdin, limits)."""

    def __init__(self) -> None:
        self.runs: list[RunRecord] = []
        self.original: Callable[[dict[str, Any]], dict[str, Any]] = runs_mod.chunk_job

    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        res = self.original(payload)
        if payload["mode"] == "stdin":
            n = len(res["outcomes"])
            argv, lim = list(payload["argv"]), payload["limits"]
            self.runs += [(argv, s, lim) for s in payload["stdins"][:n]]
        return res


def main() -> None:
    target = Path(sys.argv[1])
    sys.argv = ["suitebench", *sys.argv[2:]]
    from suitebench.cli.main import main as cli

    rec = Recorder()
    runs_mod.chunk_job = rec
    try:
        cli()
    finally:
        with target.open("wb") as f:
            pickle.dump(rec.runs, f, protocol=pickle.HIGHEST_PROTOCOL)


if __name__ == "__main__":
    main()
