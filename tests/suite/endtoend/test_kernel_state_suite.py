"""Red team: a suite that remembers the reference's behaviour in the kernel moves no figure.

Each cheat below knows nothing of the spec. It runs the program on a few inputs, takes a digest
of what it printed, and keeps it where the kernel keeps state between runs: a key in the uid's
keyring (not namespaced: every sandbox of uid 65534 shares it), or a System V shared memory
segment. The reference's runs come first, so the digest it finds on every later run is the
reference's; it fails wherever the program behaves otherwise -- a differential test against the
reference, which decoys cannot catch (a decoy behaves like the reference). Before each run had
its own IPC namespace and the keyring was refused (measured by turning both off): the keyring
cheat took the ``stats`` suite below from M = 2/6 to 5/6 on the plain engine (every mutant that
changes an output on the cheat's inputs; the sixth is equivalent), and the segment, shared by
the programs of one batch, made the batched engine's figures depend on the order of the batch
(V = 3/4 on the batched engine and ``--fast``, M = 3/6 on one ``--fast`` run).

Now neither can keep anything: the keyring calls fail, the segment dies with its run, so each
cheat finds nothing on every run, stores its digest again, and passes. Expected figures, worked
out by hand from the program and the valid tests (``test_hostile_tests``'s): ``test_sum_overflow``
kills ``sum_no_overflow_check`` and ``test_max_last`` kills ``max_off_by_one``: M = 2/6 on every
engine, V = 5/5 (the cheats pass everywhere, as tests that assert nothing would).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from .test_hostile_tests import KILLED, VALID

LIMITS = SuiteLimits(per_test=6.0, per_program=90.0, memory_mb=256)

DIGEST = """\
import ctypes
import hashlib
import subprocess

libc = ctypes.CDLL(None, use_errno=True)
NONCE = {nonce!r}


def digest():
    seen = b""
    for args in (["sum", "2", "3"], ["sum", "9223372036854775807", "1"],
                 ["sum", "-9223372036854775808", "-1"], ["max", "4", "9"], ["max"],
                 ["clamp", "5", "1", "9"], ["clamp", "0", "1", "9"]):
        seen += subprocess.run(["./executable", *args], capture_output=True).stdout + b"|"
    return hashlib.sha256(seen).hexdigest()[:32].encode()
"""

CHEATS = {
    # a key named after the test, its payload the reference's digest (KEYCTL_SEARCH = 10,
    # KEYCTL_READ = 11, the user keyring = -4)
    "keyring": """
def test_cheat_keyring():
    mine = digest()
    desc = ("suitebench-cheat-" + NONCE).encode()
    key = libc.syscall(250, 10, -4, b"user", desc, 0)
    if key < 0:
        libc.syscall(248, b"user", desc, mine, len(mine), -4)
        return
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(250, 11, key, buf, 64)
    assert buf.raw[:n] == mine
""",
    # a segment keyed by the nonce, holding the digest
    "ipc": """
def test_cheat_ipc():
    mine = digest()
    libc.shmat.restype = ctypes.c_void_p
    key = int(NONCE[:7], 16)
    seg = libc.shmget(key, 64, 0o1000 | 0o2000 | 0o666)  # IPC_CREAT | IPC_EXCL
    first = seg >= 0
    if not first:
        seg = libc.shmget(key, 64, 0)
    at = libc.shmat(seg, None, 0)
    if first:
        ctypes.memmove(at, mine, len(mine))
    else:
        assert ctypes.string_at(at, len(mine)) == mine
""",
}


def _suite(root: Path) -> Path:
    root.mkdir()
    for name, text in VALID.items():
        (root / name).write_text(text)
    nonce = uuid.uuid4().hex  # a key or segment no earlier run on this machine left
    head = DIGEST.format(nonce=nonce)
    for name, body in CHEATS.items():
        (root / f"test_cheat_{name}.py").write_text(head + body)
    return root


@pytest.mark.parametrize(
    ("engine", "fast"),
    [(Engine.PLAIN, False), (Engine.BATCHED, False), (Engine.BATCHED, True)],
    ids=["plain", "batched", "fast"],
)
def test_a_suite_cannot_remember_the_reference_in_the_kernel(
    stats_instance: Path, tmp_path: Path, engine: Engine, fast: bool
) -> None:
    result = score_suite(
        load_instance(stats_instance),
        _suite(tmp_path / "suite"),
        store=Store(tmp_path / "st.db"),
        engine=engine,
        fast=fast,
        limits=LIMITS,
    )
    tests = {t.id: t for t in result.tests}
    for name in CHEATS:
        assert tests[f"tests/test_cheat_{name}.py::test_cheat_{name}"].valid, tests
    killed = {m.id for m in result.mutants if m.status is MutantStatus.KILLED}
    assert killed == KILLED, [(m.id, m.killed_by) for m in result.mutants]
    assert result.mutation_score == pytest.approx(2 / 6)
    assert result.validity == 1.0
