"""The schedule: many problems at once on one job queue, chunks that hand time-outs and slow
runs back.

The results must not depend on the interleaving: every run is keyed by what determines it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import suitebench.audit.runs as runs_mod
from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig, audit_problem
from suitebench.audit.pipeline import run_audit
from suitebench.audit.runs import AuditEngine, RunSpec, chunk_job
from suitebench.model.problem import load_problem
from suitebench.run import sandbox
from suitebench.run.outcome import Limits, Status

from .conftest import PROBLEMS
from .problems import write_next_int

RANDOM = "nondet.c"

#: A real bug: the loop that should count down to x counts up and never ends for x < 0.
COUNTDOWN_C = """\
#include <stdio.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  volatile long long i = 0; while (i != x) i++;
  if (x + 1 > 2147483647LL) puts("OVERFLOW"); else printf("%lld\\n", x + 1);
  return 0; }
"""

#: A real bug: a debugging delay left in (300 ms before the answer) makes every run slow, well
#: within the time limit.
DELAYED_C = """\
#include <stdio.h>
#include <time.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  struct timespec t = {0, 300000000L}; nanosleep(&t, NULL);  /* was: debug pacing */
  printf("%lld\\n", x + 1);
  return 0; }
"""


def _funnels_without_random(audit: Any) -> dict[str, Any]:
    """Each arm's funnel with the withdrawals of nondet.c's flags taken out: on how many
    inputs its random answer was flagged, and so withdrawn, differs from run to run."""
    funnels = {}
    for name, arm in audit.arms.items():
        withdrawn = dict(arm.funnel.withdrawn_by)
        for r in audit.retractions:
            if r.arm == name and RANDOM in r.submission_id:
                withdrawn[str(r.stage)] -= 1
        kept = {stage: n for stage, n in withdrawn.items() if n}
        funnels[name] = replace(arm.funnel, withdrawn_by=kept)
    return funnels


def test_problems_audited_at_once_agree_with_each_audited_alone(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    arms = [parse_arm("hand=arms/handmade")]
    names = ["maxsum", "divsum", "mean"]
    # divsum's 0.2 s limit lets a busy machine time out its Python solution on one side only:
    # the schedule is under test here, not the machine's load, so the copy allows 1 s (its
    # O(N) solution still times out on n = 10^9 and 10^12, far beyond either limit).
    dirs = {n: PROBLEMS / n for n in names}
    dirs["divsum"] = tmp_path / "divsum"
    shutil.copytree(PROBLEMS / "divsum", dirs["divsum"])
    toml = dirs["divsum"] / "problem.toml"
    text = toml.read_text()
    assert "time_limit = 0.2\n" in text
    toml.write_text(text.replace("time_limit = 0.2\n", "time_limit = 1.0\n"))
    together = run_audit([dirs[n] for n in names], arms, make_engine("together.sqlite"))
    for n in names:
        alone = audit_problem(
            load_problem(dirs[n]), arms, AuditConfig(), make_engine(f"{n}.sqlite")
        )
        a = next(x for x in together.audits if x.problem.id == n)
        # nondet.c prints a random one of the later tied maxima by design: its outputs (and
        # whether a lucky streak certifies it) differ from run to run, however they are scheduled
        assert {k: j.verdict for k, j in a.cells.items() if RANDOM not in k[0]} == {
            k: j.verdict for k, j in alone.cells.items() if RANDOM not in k[0]
        }
        assert [r for r in a.ledger if RANDOM not in r.submission_id] == [
            r for r in alone.ledger if RANDOM not in r.submission_id
        ]
        assert [
            (r.submission_id, r.input_id, r.stage)
            for r in a.retractions
            if RANDOM not in r.submission_id
        ] == [
            (r.submission_id, r.input_id, r.stage)
            for r in alone.retractions
            if RANDOM not in r.submission_id
        ]
        assert _funnels_without_random(a) == _funnels_without_random(alone)
    assert [a.problem.id for a in together.audits] == names
    assert together.ledger_rows > 0


def test_a_chunk_hands_its_runs_back_after_a_time_out(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """countdown.c loops forever on negative inputs. A chunk that meets the first time-out
    returns at once; the engine runs the rest as new chunks, and every run's outcome is what a
    single sandboxed run of it gives."""
    d = write_next_int(tmp_path / "p", {"countdown.c": COUNTDOWN_C})
    engine = make_engine()
    built = engine.build(d / "submissions" / "countdown.c")
    limits = Limits(wall_time=0.6, cpu_time=0.3)
    stdins = [b"-5\n", b"3\n", b"-7\n", b"10\n", b"4\n"]
    payload = {
        "mode": "stdin",
        "argv": list(built.argv),
        "limits": limits.to_dict(),
        "ro_binds": list(built.ro_binds),
        "stdins": stdins,
    }
    first = chunk_job(payload)
    assert [r["status"] for r in first["outcomes"]] == ["timeout"]
    whole = chunk_job({**payload, "handback": False})
    assert [r["status"] for r in whole["outcomes"]] == ["timeout", "ok", "timeout", "ok", "ok"]

    results = engine.run([RunSpec(built, s, limits) for s in stdins])
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o777)
        single = [
            sandbox.run(built.argv, cwd=work, stdin=s, limits=limits, ro_binds=built.ro_binds)
            for s in stdins
        ]
    assert [r.status for r in results] == [o.status for o in single]
    assert [r.read_stdout() for r in results] == [o.stdout for o in single]
    assert results[1].read_stdout() == b"4\n" and results[0].status is Status.TIMEOUT
    # one run each, and once more each TLE the wall clock gave while its CPU time stayed under
    # the limit (a loaded machine: judged again before it counts)
    again = sum(r.tle_first is not None for r in results)
    assert engine.executed_runs == len(stdins) + again


def test_a_chunk_hands_its_runs_back_once_its_runs_took_long(
    make_engine: Callable[..., AuditEngine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """delayed.c sleeps 0.3 s per run. With a budget of 0.5 s of run time per chunk, a chunk
    returns after at most two runs (however loaded the machine: the budget counts the runs'
    own wall time) and hands the rest back; the engine runs them as new chunks, which two
    workers share, and every run's outcome is what one chunk running them all gives."""
    d = write_next_int(tmp_path / "p", {"delayed.c": DELAYED_C})
    engine = make_engine()
    engine.chunk_seconds = 0.5
    built = engine.build(d / "submissions" / "delayed.c")
    limits = Limits(wall_time=5.0, cpu_time=2.0)
    stdins = [f"{v}\n".encode() for v in (1, -2, 30, 400, 5000, 6, 77)]
    payload = {
        "mode": "stdin",
        "argv": list(built.argv),
        "limits": limits.to_dict(),
        "ro_binds": list(built.ro_binds),
        "stdins": stdins,
        "seconds": 0.5,
    }
    first = chunk_job(payload)
    assert 1 <= len(first["outcomes"]) <= 2
    assert all(r["status"] == "ok" and r["wall_time"] >= 0.3 for r in first["outcomes"])
    whole = chunk_job({**payload, "handback": False})
    assert len(whole["outcomes"]) == len(stdins)

    chunks: list[int] = []

    def counting(p: dict[str, Any]) -> dict[str, Any]:
        res = chunk_job(p)
        chunks.append(len(res["outcomes"]))
        return res

    monkeypatch.setattr(runs_mod, "chunk_job", counting)
    results = engine.run([RunSpec(built, s, limits) for s in stdins])
    assert [r.read_stdout() for r in results] == [
        f"{v}\n".encode() for v in (2, -1, 31, 401, 5001, 7, 78)
    ]
    assert [r.status for r in results] == [Status.OK] * len(stdins)
    assert engine.executed_runs == len(stdins)
    # at most two runs per chunk: the seven runs went out in four chunks or more
    assert sum(chunks) == len(stdins) and len(chunks) >= 4 and max(chunks) <= 2
