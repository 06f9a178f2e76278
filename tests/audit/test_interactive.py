"""Interactive problems: a submission and an interactor, each sandboxed, joined by pipes.

The fixture problem ``guess`` (tests/fixtures/interactive/guess): the jury's number x is in
[1, 1000], at most 10 queries ``? y`` answered ``<``, ``>`` or ``=``, then ``! x``. Worked by
hand for its tests (01: x=1, 02: x=1000, 03: x=500, 04: x=7, 05: x=2):

* ``off_by_one.py`` stops with two candidates left and answers the lower one. For x=2 its
  queries are 500, 250, 125, 62, 31, 15, 7, 3 (each ``<``: hi = mid - 1), leaving lo=1, hi=2:
  it answers 1, wrong. x=1: the same queries, answers 1, right. x=1000: 500, 750, 875, 938, 969,
  985, 993, 997, 999 (each ``>``) leave lo = hi = 1000: right. x=500: first query ``=``. x=7:
  500 ... 15 then 7 ``=``: right. So WA on 05.in only.
* ``linear.py`` asks 1, 2, 3, ...: x queries, over 10 for x=1000 and x=500 (WA on 02, 03), fine
  for x=1, 7, 2.
* The references (binary search, at most ceil(log2(1001)) = 10 queries) and ``bsearch.py`` are
  right everywhere; the interactor writes ``guessed`` to its output file on success, the gold.
"""

from __future__ import annotations

import csv
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest

from suitebench.model.problem import ProblemError, load_problem
from suitebench.run.interact import Convention, Interaction, InteractorVerdict, interact
from suitebench.run.outcome import Limits, Status

from .test_cli_ledger import suitebench

GUESS = Path(__file__).resolve().parents[1] / "fixtures" / "interactive" / "guess"
PY = [sys.executable, "-I", "-S"]
LIMITS = Limits(wall_time=4.0, cpu_time=2.0, memory_mb=256)

# The same judge in the Kattis package format's convention: argv = input answer feedback_dir,
# exit 42 accept, 43 reject, its reason in feedback_dir/judgemessage.txt.
KATTIS_VALIDATOR = """\
import sys

x = int(open(sys.argv[1]).read())
feedback = sys.argv[3]

def reject(why):
    open(feedback + "judgemessage.txt", "w").write(why)
    sys.exit(43)

for n, line in enumerate(sys.stdin, 1):
    kind, y = line.split()
    if kind == "!":
        sys.exit(42) if int(y) == x else reject(f"answered {y}, x was {x}")
    if n > 10:
        reject("more than 10 queries")
    print("<" if x < int(y) else ">" if x > int(y) else "=", flush=True)
reject("no answer")
"""


def _run(
    sub: str, x: int, interactor: list[str] | None = None, convention: str = "testlib"
) -> Interaction:
    inter = interactor or [*PY, str(GUESS / "interactor.py")]
    return interact(
        [*PY, str(GUESS / sub)],
        inter,
        f"{x}\n".encode(),
        limits=LIMITS,
        convention=Convention(convention),
    )


@pytest.mark.parametrize(
    ("sub", "x", "verdict"),
    [
        ("refs/bsearch.py", 1000, InteractorVerdict.OK),
        ("refs/bsearch.py", 2, InteractorVerdict.OK),
        ("submissions/rejected/off_by_one.py", 2, InteractorVerdict.WA),
        ("submissions/rejected/off_by_one.py", 7, InteractorVerdict.OK),
        ("submissions/rejected/linear.py", 7, InteractorVerdict.OK),
        ("submissions/rejected/linear.py", 500, InteractorVerdict.WA),
    ],
)
def test_testlib_interactor_decides(sub: str, x: int, verdict: InteractorVerdict) -> None:
    ia = _run(sub, x)
    assert ia.verdict is verdict, ia
    if verdict is InteractorVerdict.OK:
        assert ia.output == b"guessed\n"


def test_interactor_says_why() -> None:
    ia = _run("submissions/rejected/linear.py", 1000)
    assert "more than 10 queries (the number was 1000)" in ia.message
    ia = _run("submissions/rejected/off_by_one.py", 2)
    assert "guessed 1, the number was 2" in ia.message


def test_kattis_convention(tmp_path: Path) -> None:
    validator = tmp_path / "validate.py"
    validator.write_text(KATTIS_VALIDATOR)
    kattis = [*PY, str(validator)]
    ok = _run("refs/bsearch.py", 1000, kattis, convention=Convention.KATTIS)
    assert ok.verdict is InteractorVerdict.OK and ok.output == b""
    wa = _run("submissions/rejected/off_by_one.py", 2, kattis, convention=Convention.KATTIS)
    assert wa.verdict is InteractorVerdict.WA
    assert wa.message.endswith("answered 1, x was 2")


def test_a_hanging_interactor_is_bounded_and_fails(tmp_path: Path) -> None:
    """An interactor that never answers: the submission times out (its wall limit), the
    interactor is stopped by its own limits, both sandboxes are gone well before a minute."""
    stuck = tmp_path / "stuck.py"
    stuck.write_text("import time\nwhile True:\n    time.sleep(1)\n")
    t0 = time.monotonic()
    ia = _run("refs/bsearch.py", 5, [*PY, str(stuck)])
    assert ia.submission.status is Status.TIMEOUT
    assert ia.verdict is InteractorVerdict.CRASHED  # no word: its own time-out
    # submission wall 4 s; interactor wall 4 + 5 = 9 s (interactor_limits)
    assert time.monotonic() - t0 < 30


def test_a_submission_gone_before_the_interactor_opened_its_pipes(tmp_path: Path) -> None:
    """A submission that exits at once (before the interactor's sandbox is up, often): the
    interactor still opens its pipes, reads end-of-file and says WA ("ended without an
    answer") -- it is not left waiting on a pipe for its wall-clock limit."""
    gone = tmp_path / "gone.py"
    gone.write_text("import sys\nsys.exit(5)\n")
    ia = interact([*PY, str(gone)], [*PY, str(GUESS / "interactor.py")], b"5\n", limits=LIMITS)
    assert ia.submission.exit_code == 5
    assert ia.interactor.status is not Status.TIMEOUT
    assert ia.verdict is InteractorVerdict.WA
    assert "ended without an answer" in ia.message


def test_an_interactor_has_no_network(tmp_path: Path) -> None:
    """The interactor is sandboxed like the submission: a connection to the loopback address
    of the host fails inside (its own network namespace), and it says so with exit 3 (FAIL)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import socket, sys\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "except OSError:\n    sys.exit(3)\n"
        "sys.exit(0)\n"
    )
    try:
        ia = _run("refs/bsearch.py", 5, [*PY, str(probe)])
    finally:
        server.close()
    assert ia.verdict is InteractorVerdict.FAIL
    assert ia.interactor.exit_code == 3


def test_problem_toml_interactor_fields(tmp_path: Path) -> None:
    p = load_problem(GUESS)
    assert p.interactor == GUESS / "interactor.py" and p.interactor_convention == "testlib"
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (GUESS / "problem.toml").read_text().replace('= "testlib"', '= "polygon"')
    for f in GUESS.iterdir():
        if f.is_file():
            (bad / f.name).write_bytes(f.read_bytes())
    for d in ("refs", "submissions", "tests"):
        shutil.copytree(GUESS / d, bad / d)
    (bad / "problem.toml").write_text(text)
    with pytest.raises(ProblemError, match=r"interactor_convention.*testlib, kattis"):
        load_problem(bad)


def test_audit_certifies_interactive_kills(tmp_path: Path) -> None:
    """The chain under the interactor: the references' consensus (``guessed``) is the gold;
    off_by_one is certified on 05.in and linear on 02.in (its first killing official test)."""
    out = tmp_path / "out"
    proc = suitebench(
        "audit", str(GUESS), "--pool", "rejected", "--out", str(out), store=tmp_path / "s.db"
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((out / "ledger.csv").open()))
    got = {(r["submission_id"], r["input_id"], r["verdict"], r["determinism"]) for r in rows}
    assert got == {
        ("submissions/rejected/off_by_one.py", "05.in", "WA", "DET_WA"),
        ("submissions/rejected/linear.py", "02.in", "WA", "DET_WA"),
    }
    assert {r["expected_head"] for r in rows} == {"guessed\\n"}
    accepted = suitebench(
        "audit", str(GUESS), "--out", str(tmp_path / "acc"), store=tmp_path / "s.db"
    )
    assert accepted.returncode == 0, accepted.stderr
    assert list(csv.DictReader((tmp_path / "acc" / "ledger.csv").open())) == []


def test_audit_under_a_kattis_validator(tmp_path: Path) -> None:
    """The same problem judged by a Kattis-convention validator (exit 42/43, no output
    file): the gold is the empty output all references share, the verdicts are the same --
    off_by_one on 05.in, linear on 02.in -- and an accepted pool gives no row."""
    problem = tmp_path / "guess-kattis"
    shutil.copytree(GUESS, problem)
    (problem / "validate.py").write_text(KATTIS_VALIDATOR)
    toml = problem / "problem.toml"
    toml.write_text(
        toml.read_text()
        .replace('interactor = "interactor.py"', 'interactor = "validate.py"')
        .replace('interactor_convention = "testlib"', 'interactor_convention = "kattis"')
    )
    out = tmp_path / "out"
    proc = suitebench(
        "audit", str(problem), "--pool", "rejected", "--out", str(out), store=tmp_path / "s.db"
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((out / "ledger.csv").open()))
    assert {(r["submission_id"], r["input_id"], r["verdict"]) for r in rows} == {
        ("submissions/rejected/off_by_one.py", "05.in", "WA"),
        ("submissions/rejected/linear.py", "02.in", "WA"),
    }
    assert {r["expected_head"] for r in rows} == {""}


def test_a_failing_interactor_is_a_harness_error(tmp_path: Path) -> None:
    """An interactor that exits 3 (testlib's FAIL) on every run: no reference succeeds, so
    no input has a gold -- exit 4, naming the references' failure, never a kill."""
    problem = tmp_path / "guess-fail"
    shutil.copytree(GUESS, problem)
    (problem / "interactor.py").write_text("import sys\nsys.exit(3)\n")
    out = tmp_path / "out"
    proc = suitebench(
        "audit", str(problem), "--pool", "rejected", "--out", str(out), store=tmp_path / "s.db"
    )
    assert proc.returncode == 4, proc.stderr
    assert "no gold on any of 5 inputs" in " ".join(proc.stderr.split())
    assert list(csv.DictReader((out / "ledger.csv").open())) == []


# A Kattis-convention validator in C, as problemtools' examples write them: it answers each
# query with printf and never guards against a submission that has hung up.
C_VALIDATOR = r"""
#include <stdio.h>
int reject(const char *dir, const char *why) {
    char path[4096];
    snprintf(path, sizeof path, "%sjudgemessage.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) { fputs(why, f); fclose(f); }
    return 43;
}
int main(int argc, char **argv) {
    int x, y;
    char kind[8];
    FILE *in = fopen(argv[1], "r");
    if (!in || fscanf(in, "%d", &x) != 1) return 1;
    for (int n = 1; n <= 10; n++) {
        if (scanf("%7s %d", kind, &y) != 2) return reject(argv[3], "no answer");
        if (kind[0] == '!') return y == x ? 42 : reject(argv[3], "wrong answer");
        printf("%s\n", x < y ? "<" : x > y ? ">" : "=");
        fflush(stdout);
    }
    return reject(argv[3], "more than 10 queries");
}
"""


def test_a_submission_that_hangs_up_is_wrong_not_a_broken_interactor(tmp_path: Path) -> None:
    """The submission closes its input, asks one query and exits: the validator's reply goes
    to a pipe nobody reads.  Run as the package format's judges run it (SIGPIPE ignored), the
    write fails with EPIPE, the next read sees end-of-file and the validator rejects (43): WA,
    the submission's doing.  With SIGPIPE at its default the validator would die of it with no
    word -- a harness error blamed on the jury's program (as the real problemtools example
    ``guess`` did under ``guess_0.cc``-style submissions)."""
    source = tmp_path / "validate.c"
    source.write_text(C_VALIDATOR)
    binary = tmp_path / "validate"
    import subprocess

    subprocess.run(["gcc", "-O2", "-o", str(binary), str(source)], check=True)
    hangs_up = tmp_path / "hangs_up.py"
    hangs_up.write_text("import os\nos.close(0)\nprint('? 500', flush=True)\n")
    ia = interact(
        [*PY, str(hangs_up)], [str(binary)], b"7\n", limits=LIMITS, convention=Convention.KATTIS
    )
    assert ia.interactor.status is not Status.SIGNALED, ia.interactor
    assert ia.verdict is InteractorVerdict.WA, ia
    assert ia.message.endswith("no answer")


def test_a_rejected_answer_stands_over_the_time_limit_that_follows(tmp_path: Path) -> None:
    """problemtools' ``guess_tle.cc`` (a wrong_answer submission): it answers out of range and
    then loops.  The validator rejects at once (43) while the submission still runs; the
    submission then reaches its time limit.  The package format's judges give WA -- the
    validator's word came first -- so the judge does too, not TLE."""
    from suitebench.audit.judge import verdict_of_status
    from suitebench.audit.records import Verdict
    from suitebench.audit.runs import RunResult

    validator = tmp_path / "validate.py"
    validator.write_text(KATTIS_VALIDATOR)
    loops = tmp_path / "loops.py"
    loops.write_text("print('! 0', flush=True)\nwhile True:\n    pass\n")
    ia = interact(
        [*PY, str(loops)],
        [*PY, str(validator)],
        b"7\n",
        limits=Limits(wall_time=3.0, cpu_time=1.0, memory_mb=256),
        convention=Convention.KATTIS,
    )
    assert ia.submission.status is Status.TIMEOUT
    assert ia.verdict is InteractorVerdict.WA and ia.interactor_first
    run = RunResult(ia.submission, "", 0, interactor_verdict="wa", interactor_first=True)
    assert verdict_of_status(run) is Verdict.WA
    # A submission that times out before the interactor says anything keeps its TLE.
    late = RunResult(ia.submission, "", 0, interactor_verdict="wa", interactor_first=False)
    assert verdict_of_status(late) is Verdict.TLE
