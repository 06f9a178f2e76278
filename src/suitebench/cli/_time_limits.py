"""``suitebench import kattis --measure-time-limits``: a package's missing time limit, set as
the format computes it.

The problem package format leaves a time limit out on purpose: problemtools derives it from
the accepted submissions, the slowest one's running time times ``ac_to_time_limit`` (legacy
``time_multiplier``, 5 by default; 2023-07: 2), rounded up to ``time_resolution`` (1 s), at
least one step. Here the accepted pool runs sandboxed on the problem's own tests (official and
samples) under a generous cap, and the slowest CPU time among the runs that finished
successfully gives the limit: written into ``problem.toml``, ``provenance.json`` and the
import summary, with the figures it came from.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from suitebench.audit.judge import judge_limits
from suitebench.audit.runs import AuditEngine
from suitebench.datasets.importer import SUMMARY_FILE
from suitebench.datasets.writer import PROVENANCE_FILE
from suitebench.model.problem import ProblemError, load_problem

__all__ = ["MEASURE_CAP", "measure_time_limits"]

#: CPU seconds an accepted run may take while the limit is measured (problemtools: 300).
MEASURE_CAP = 60.0


def _limit(slowest: float, rule: dict[str, float]) -> float:
    step = rule["time_resolution"]
    return max(1, math.ceil(slowest * rule["ac_to_time_limit"] / step)) * step


def _measure(root: Path, rule: dict[str, float], engine: AuditEngine) -> tuple[float, str] | None:
    """(time limit, the reason that says how) for one problem, or None if it cannot say."""
    try:
        problem = load_problem(root)
    except ProblemError:
        return None
    accepted = problem.pools.get("accepted", ())
    engine.build_all(list(accepted), problem.compile)
    built = [(problem.rel(p), engine.build(p, problem.compile)) for p in accepted]
    tests = (*problem.official, *problem.samples)
    inputs = {problem.rel(t): t.read_bytes() for t in tests}
    grid = engine.run_grid(built, inputs, judge_limits(problem, time_limit=MEASURE_CAP))
    done = [(r.outcome.cpu_time, name, test) for (name, test), r in grid.items() if r.ok]
    if not done:
        return None
    slowest, name, test = max(done)
    tl = _limit(slowest, rule)
    why = (
        f"time_limit missing in the package: measured, the slowest accepted run ({name} on "
        f"{test}, {slowest:.2f} s CPU, of {len(done)} runs) x ac_to_time_limit "
        f"{rule['ac_to_time_limit']:g}, rounded up to {rule['time_resolution']:g} s: {tl:g} s taken"
    )
    return tl, why


def _rewrite(root: Path, tl: float, why: str) -> None:
    toml = root / "problem.toml"
    text = re.sub(r"(?m)^time_limit = .*$", f"time_limit = {tl!r}", toml.read_text("utf-8"))
    toml.write_text(text, encoding="utf-8")
    prov_file = root / PROVENANCE_FILE
    prov = json.loads(prov_file.read_text("utf-8"))
    prov["limits"]["time_limit"] = tl
    for d in prov["dropped"]:
        if d.get("kind") == "field" and d.get("what") == "time_limit":
            d["reason"] = why
    prov_file.write_text(json.dumps(prov, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def measure_time_limits(out: Path, data: dict[str, Any], engine: AuditEngine) -> list[str]:
    """Measure every written problem whose import recorded a time rule (no time limit in the
    package); rewrite it and ``data`` (the summary, also on disk). Returns one line per
    problem it could not measure."""
    unmeasured = []
    for w in data["written"]:
        root = out / w["dir"]
        prov = json.loads((root / PROVENANCE_FILE).read_text("utf-8"))
        rule = (prov.get("metadata") or {}).get("time_rule")
        if not rule:
            continue
        found = _measure(root, rule, engine)
        if found is None:
            unmeasured.append(f"{w['id']}: no accepted run finished: the time limit stays")
            continue
        tl, why = found
        _rewrite(root, tl, why)
        w["notes"] = [n for n in w["notes"] if "not measured at import" not in n]
        old = [d for d in w["defaults"] if d.startswith("time_limit ")]
        w["defaults"] = [why if d in old else d for d in w["defaults"]]
        for reason in old:
            data["fields_dropped"][reason] -= 1
            if not data["fields_dropped"][reason]:
                del data["fields_dropped"][reason]
            data["fields_dropped"][why] = data["fields_dropped"].get(why, 0) + 1
    (out / SUMMARY_FILE).write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return unmeasured
