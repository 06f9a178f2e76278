"""The batched engine's fork loop (in the sandbox): one child per program, one at a time.

Before each fork the work directory is made what a plain run of that program finds
(:class:`suitebench.suite.inside.workdir.WorkDir`); the child hides the other programs' build trees
(:func:`suitebench.suite.inside.isolate.hide_others`), reseeds its random generators and runs the
program's tests; the parent waits for it, kills it at the per-program wall-clock budget and
records how it ended (``<index>.exit.json``).  Standard library only, plus the suite package.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from suitebench.suite.inside import leftovers, untrusted
from suitebench.suite.inside.isolate import hide_others
from suitebench.suite.inside.wire import BatchProgram, BatchSpec
from suitebench.suite.inside.workdir import WorkDir

Program = BatchProgram


def wait_child(pid: int, budget: float) -> tuple[int, bool]:
    """Wait for a child, killing it after ``budget`` seconds: (wait status, killed)."""
    deadline = time.monotonic() + budget
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = -1
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status, False
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                return status, True
            if fd >= 0:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(0.005, left))
    finally:
        if fd >= 0:
            os.close(fd)


def record_exit(out_dir: Path, index: int, code: int, wall: float, killed: bool = False) -> None:
    """How a program's run ended (``<index>.exit.json``): its exit code, whether it was killed
    at the per-program budget, its wall time.  Written whole or not at all (a new file moved
    into place): the host counts each as it appears, while the batch goes on."""
    record = {"exit_code": code, "killed": killed, "wall_time": wall}
    _write_whole(out_dir / f"{index}.exit.json", json.dumps(record).encode())


def _write_whole(path: Path, data: bytes) -> None:
    """``data`` at ``path``, written to a new file moved into place (what a child left under
    either name -- a link, say -- is replaced, never written through)."""
    partial = path.with_name(path.name + ".part")
    try:
        os.unlink(partial)
    except FileNotFoundError:
        pass
    with open(partial, "xb") as handle:
        handle.write(data)
    os.replace(partial, path)


def _reseed_after_fork() -> None:
    """Forked children share the parent's PRNG state; reseed so flakiness stays measurable."""
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        try:
            numpy.random.seed()
        except Exception:
            pass


def _enter_child(spec: BatchSpec, program: Program, workdir: WorkDir) -> None:
    """In a fresh child: the other programs' trees hidden, fresh seeds, the work dir."""
    out_dir = Path(spec["out_dir"])
    own = set(program.get("binds", ()))
    others = sorted({b for p in spec["programs"] for b in p.get("binds", ())} - own)
    keep = [
        str(spec["workdir"]),
        str(spec["out_dir"]),
        str(spec["suite_src"]),
        *map(str, spec.get("scratch", ())),
        sys.prefix,
        sys.base_prefix,
        os.path.dirname(os.path.dirname(os.path.dirname(__file__))),  # suitebench's package
    ]
    failed = hide_others(others, sorted(own), keep)
    if failed is not None:
        with open(out_dir / "isolation.txt", "a", encoding="utf-8") as fh:
            fh.write(f"program {program['index']}: others not hidden: {failed}\n")
    _reseed_after_fork()
    os.chdir(workdir.path)


# What a program's child leaves in ``out_dir`` for the host.  Every child of the batch may write
# there, so each program's is cleared before its child starts (what an earlier child wrote in
# its name goes), kept in this process's memory once its child has ended, and put back when the
# batch's loop ends, after every child (and what it left running) is gone: a test of a later
# program cannot change an earlier one's record.
OUTPUTS = (".events", ".log", ".exit.json", ".fingerprint.json", ".coverage.json")
_kept: dict[int, dict[str, bytes]] = {}


def clear(out_dir: Path, index: int) -> None:
    """Program ``index``'s outputs removed (before its child starts, or when none ran it)."""
    for suffix in OUTPUTS:
        try:
            os.unlink(out_dir / f"{index}{suffix}")
        except FileNotFoundError:
            pass


def keep(out_dir: Path, index: int) -> None:
    """Program ``index``'s outputs, as its child left them, kept in this process's memory."""
    kept: dict[str, bytes] = {}
    for suffix in OUTPUTS:
        data = untrusted.read_bytes(out_dir / f"{index}{suffix}")
        if data is not None:
            kept[suffix] = data
    _kept[index] = kept


def put_back(out_dir: Path, programs: Iterable[Program]) -> None:
    """Every kept output written back as it was kept (each file new, moved into place), and
    the outputs of ``programs`` not kept (not run here) cleared."""
    for program in programs:
        if program["index"] not in _kept:
            clear(out_dir, program["index"])
    for index, kept in _kept.items():
        clear(out_dir, index)
        for suffix, data in kept.items():
            _write_whole(out_dir / f"{index}{suffix}", data)


def fork_per_program(
    spec: BatchSpec,
    workdir: WorkDir,
    programs: Iterable[Program] | None = None,
    before: Callable[[Program], bool] | None = None,
) -> Program | None:
    """For every program (``programs``, default all of the batch): a fresh work dir, then a
    fork.  ``before(program)``, in the parent before the work dir is prepared, may decline a
    program (False: it is not forked here).  In the parent, waits for each child (killing it
    at the per-program wall-clock budget), records its exit, and returns None when all have
    run; in a child, returns the program it is to test, in the work dir."""
    out_dir = Path(spec["out_dir"])
    mine = list(spec["programs"] if programs is None else programs)
    for program in mine:
        if before is not None and not before(program):
            continue
        workdir.prepare(program["executable"])
        declined = out_dir / f"{program['index']}.declined"
        if declined.exists():  # declined by a collector's child: its run is this one now
            declined.unlink()
        clear(out_dir, program["index"])
        sys.stdout.flush()
        sys.stderr.flush()
        leftovers.become_subreaper()
        alive = leftovers.children()  # a collector child, say: not this program's
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _enter_child(spec, program, workdir)
            return program.copy()
        status, killed = wait_child(pid, float(spec["run_wall"]))
        leftovers.end_new(alive)  # what the child left (its orphans came here) ends with it
        if not killed and (out_dir / f"{program['index']}.declined").exists():
            continue  # left to whoever runs the batch's other programs (:func:`decline`)
        code = os.waitstatus_to_exitcode(status)
        record_exit(out_dir, program["index"], code, time.monotonic() - start, killed)
        keep(out_dir, program["index"])
    put_back(out_dir, mine)
    return None


def decline(out_dir: Path, index: int, why: str) -> None:
    """In a child, before its run began: give the program back (no exit is recorded, so the
    batch's parent runs it as usual) and say why in ``patched.txt``."""
    with open(out_dir / "patched.txt", "a", encoding="utf-8") as fh:
        fh.write(f"{index} fresh import: {why}\n")
    (out_dir / f"{index}.declined").write_text(why, encoding="utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def fork_each(spec: BatchSpec, child: Callable[[Program], int], workdir: WorkDir) -> None:
    """:func:`fork_per_program`, each child running ``child(program)`` and exiting."""
    program = fork_per_program(spec, workdir)
    if program is None:
        return
    exit_in_child(lambda: child(program))


def exit_in_child(run: Callable[[], int]) -> None:
    """Run a forked child's work and leave the process with its code (3 on an exception),
    never returning into the parent's stack."""
    code = 3
    try:
        code = run()
    except BaseException:
        code = 3
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
