"""The judge options real benchmarks need: ``[compile]`` flags, ``exit_status`` and
``output_limit`` in problem.toml, each on a problem whose submissions carry the real bug."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig, audit_problem
from suitebench.audit.judge import judge_limits, verdict_of_status
from suitebench.audit.records import Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import ExitStatus, ProblemError, load_problem
from suitebench.run.outcome import MiB, Outcome, Status

from .problems import EXITCODE_C, FOREVER_C, WRAPCHECK_C, WRONG_EXIT_C, write_next_int

EDGE = {"01-max.in": "2147483647\n", "02-zero.in": "0\n"}


def _cell(audit: object, sub: str, arm: str, input_id: str) -> Verdict:
    a = audit.arms[arm]  # type: ignore[attr-defined]
    sha = next(c.sha256 for c in a.arm.inputs if c.input_id == input_id)
    return audit.cells[(f"submissions/{sub}", sha)].verdict  # type: ignore[attr-defined,no-any-return]


def test_compile_flags_decide_a_verdict_that_rests_on_undefined_behaviour(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """wrapcheck.c tests for overflow after it happened. The old judge compiled without
    optimisation, where it wraps and is right; at the default -O2 gcc folds the test away and
    it prints -2147483648. The problem's flags decide, and they are part of the build id."""
    subs = {"wrapcheck.c": WRAPCHECK_C}
    plain = load_problem(write_next_int(tmp_path / "plain", subs, arms={"edge": EDGE}))
    old = load_problem(
        write_next_int(
            tmp_path / "old",
            subs,
            extra='[compile]\nc = ["-O0", "-std=gnu99"]\n',
            arms={"edge": EDGE},
        )
    )
    assert old.compile == {"c": ("-O0", "-std=gnu99")}
    engine = make_engine()
    arm = [parse_arm("edge=arms/edge")]
    at_o2 = audit_problem(plain, arm, AuditConfig(), engine)
    at_o0 = audit_problem(old, arm, AuditConfig(), engine)
    assert _cell(at_o2, "wrapcheck.c", "edge", "01-max.in") is Verdict.WA
    assert [r.submission_id for r in at_o2.ledger] == ["submissions/wrapcheck.c"]
    assert at_o2.ledger[0].got_head == "-2147483648\\n"
    assert _cell(at_o0, "wrapcheck.c", "edge", "01-max.in") is Verdict.AC
    assert at_o0.ledger == []
    sub = plain.pools["accepted"][0]
    default_id = engine.build(sub).program_id
    assert engine.build(sub, old.compile).program_id != default_id
    assert engine.build(sub, {"cpp": ["-O0"]}).program_id == default_id  # other languages' flags


@pytest.mark.parametrize(
    ("extra", "field", "expected"),
    [
        ('[compile]\npython = ["-O"]\n', "compile.python", "a compiled language"),
        ('[compile]\nc = "-O0"\n', "compile.c", "a list of compiler flags"),
        ('[compile]\nc = ["-O0", 3]\n', "compile.c", "a list of compiler flags"),
        ('exit_status = "lenient"\n', "exit_status", '"judge" or "ignore"'),
        ("output_limit = 0\n", "output_limit", "MiB in [1, 4096]"),
    ],
)
def test_judge_options_are_validated(tmp_path: Path, extra: str, field: str, expected: str) -> None:
    d = write_next_int(tmp_path / "p", {"wrapcheck.c": WRAPCHECK_C}, extra=extra)
    with pytest.raises(ProblemError) as err:
        load_problem(d)
    assert err.value.field == field and expected in str(err.value)
    assert "problem.toml" in str(err.value)


def test_defaults_of_the_judge_options(tmp_path: Path) -> None:
    p = load_problem(write_next_int(tmp_path / "p", {"wrapcheck.c": WRAPCHECK_C}))
    assert p.exit_status is ExitStatus.JUDGE and p.output_limit == 64 and p.compile == {}
    assert judge_limits(p).output_bytes == 64 * MiB


def test_exit_status_ignore_judges_the_output_only(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """exitcode.c answers right and returns the answer's low byte as its exit status: RE under
    the default, AC where the benchmark judges output only. wrong_exit.c answers -1 wrongly and
    exits 3: WA either way once the output is judged (never AC)."""
    subs = {"exitcode.c": EXITCODE_C, "wrong_exit.c": WRONG_EXIT_C}
    tests = {"01.in": "5\n", "02.in": "-1\n", "03.in": "255\n"}
    strict = load_problem(write_next_int(tmp_path / "strict", subs, tests=tests))
    lenient = load_problem(
        write_next_int(tmp_path / "lenient", subs, tests=tests, extra='exit_status = "ignore"\n')
    )
    engine = make_engine()
    a = audit_problem(strict, [], AuditConfig(), engine)
    b = audit_problem(lenient, [], AuditConfig(), engine)
    assert _cell(a, "exitcode.c", "official", "01.in") is Verdict.RE
    assert _cell(a, "exitcode.c", "official", "03.in") is Verdict.AC  # (255 + 1) & 0xff == 0
    assert _cell(a, "wrong_exit.c", "official", "02.in") is Verdict.RE
    assert _cell(b, "exitcode.c", "official", "01.in") is Verdict.AC
    assert _cell(b, "exitcode.c", "official", "02.in") is Verdict.AC
    assert _cell(b, "wrong_exit.c", "official", "02.in") is Verdict.WA
    assert {r.submission_id: r.verdict for r in b.ledger} == {"submissions/wrong_exit.c": "WA"}
    assert {r.submission_id: r.verdict for r in a.ledger} == {
        "submissions/exitcode.c": "RE",
        "submissions/wrong_exit.c": "RE",
    }
    # a signal is a crash whatever the exit-status rule
    killed = Outcome(Status.SIGNALED, signal=11)
    assert verdict_of_status(killed, ignore_exit=True) is Verdict.RE
    assert verdict_of_status(Outcome(Status.RUNTIME_ERROR, exit_code=1), ignore_exit=True) is None


def test_output_limit_is_the_problems_and_outputs_are_stored_once(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """forever.c prints YES forever on large inputs: OLE at the problem's output_limit (1 MiB
    here), a certified crash. Its identical 1 MiB outputs (three inputs, three re-judges each)
    are one compressed blob, and no store row holds a big string."""
    tests = {"01.in": "5\n", "02.in": "1000000\n", "03.in": "1000001\n", "04.in": "2000000\n"}
    d = write_next_int(
        tmp_path / "p", {"forever.c": FOREVER_C}, tests=tests, extra="output_limit = 1\n"
    )
    problem = load_problem(d)
    assert judge_limits(problem).output_bytes == 1 * MiB
    engine = make_engine()
    audit = audit_problem(problem, [], AuditConfig(), engine)
    assert _cell(audit, "forever.c", "official", "01.in") is Verdict.AC
    for i in ("02.in", "03.in", "04.in"):
        assert _cell(audit, "forever.c", "official", i) is Verdict.OLE
    (row,) = audit.ledger
    assert row.verdict == "OLE" and row.determinism == "DET_RE"
    with sqlite3.connect(engine.store.path) as db:
        (biggest_row,) = db.execute("SELECT MAX(LENGTH(value)) FROM outcomes").fetchone()
        big = db.execute("SELECT sha256, size FROM blobs WHERE size >= ?", (MiB,)).fetchall()
        (biggest_part,) = db.execute("SELECT MAX(LENGTH(data)) FROM blob_parts").fetchone()
    assert biggest_row < 4096
    assert len(big) == 1 and big[0][1] == MiB and big[0][0] == row.got_sha256
    assert biggest_part < 64 * 1024  # "YES\n" x 262144 compresses well
    assert engine.output(row.got_sha256) == b"YES\n" * (MiB // 4)
