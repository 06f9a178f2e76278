"""No certified row rests on state an earlier run left (threat model: "State the kernel keeps").

Each submission of ``next-int`` below answers right on the first run of a sandbox and wrong
(``x`` instead of ``x + 1``) whenever it can tell an earlier run happened: through a System V
shared memory segment, a key in the kernel keyring, or its own pid (pids rise run by run within
one sandbox). Before runs got their own IPC namespace, the keyring was refused and re-judges ran
as the first runs of fresh sandboxes, the first two were certified as DET_WA (the re-judges were
not first runs either) and the keyring one on every later audit of the machine. Now the first two
are never wrong at all, and the pid one is wrong on the first verdicts of a shared session but
right on every re-judge: withdrawn as NOT_REPRODUCED.

The control, ``wrong_exit.c`` (prints 1 and exits 3 on -1), is certified on the official input
-1: the audit does certify what is really there.
"""

from __future__ import annotations

import csv
import uuid
from pathlib import Path

from .problems import WRONG_EXIT_C, write_next_int
from .test_cli_ledger import suitebench

ANSWER = """
  if (x + 1 > 2147483647LL) puts("OVERFLOW"); else printf("%lld\\n", first ? x + 1 : x);
  return 0; }
"""

IPC_FIRST_C = (
    """\
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/shm.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  int first = shmget(0x5b1e, 64, IPC_CREAT | IPC_EXCL | 0600) >= 0;"""
    + ANSWER
)

KEYRING_FIRST_C = (
    """\
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  /* KEYCTL_SEARCH (10) in the user keyring (-4); add the key when it is not there */
  int first = syscall(SYS_keyctl, 10, -4, "user", "DESC", 0) < 0;
  if (first) syscall(SYS_add_key, "user", "DESC", "1", 1, -4);"""
    + ANSWER
)

PID_FIRST_C = (
    """\
#include <stdio.h>
#include <unistd.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  int first = getpid() < 5;"""
    + ANSWER
)

EDGE = {f"{n:02}.in": f"{n}\n" for n in range(1, 9)}


def test_no_certified_row_rests_on_an_earlier_run(tmp_path: Path, build_cache: Path) -> None:
    # a description no earlier audit on this machine used: a key left by a broken defence
    # must not decide this run
    keyring = KEYRING_FIRST_C.replace("DESC", f"suitebench-test-{uuid.uuid4().hex}")
    subs = {
        "ipc_first.c": IPC_FIRST_C,
        "keyring_first.c": keyring,
        "pid_first.c": PID_FIRST_C,
        "wrong_exit.c": WRONG_EXIT_C,
    }
    problem = write_next_int(
        tmp_path / "p", subs, tests={"01.in": "5\n", "02.in": "-1\n"}, arms={"edge": EDGE}
    )
    out = tmp_path / "out"
    proc = suitebench(
        "audit",
        str(problem),
        "--arm",
        "edge=arms/edge",
        "--build-cache",
        str(build_cache),
        "--out",
        str(out),
        store=tmp_path / "store.sqlite",
    )
    assert proc.returncode == 0, proc.stderr
    certified = [r["submission_id"] for r in csv.DictReader((out / "ledger.csv").open())]
    assert certified == ["submissions/wrong_exit.c"]
    retracted = list(csv.DictReader((out / "retractions.csv").open()))
    # the other two were never wrong; the pid one was flagged where a shared session's later
    # runs got it wrong, and no fresh re-judge reproduced it
    assert {r["submission_id"] for r in retracted} == {"submissions/pid_first.c"}
    assert retracted
    assert all(r["reason"].startswith("NOT_REPRODUCED") for r in retracted)
