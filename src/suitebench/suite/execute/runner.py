"""Run a pytest suite against programs under test, sandboxed: the plain and batched engines.

Both engines run the suite the same way: pytest with our plugin's event log (the record of
every test's outcome, and the only one: no JUnit XML is written), plugin autoload off
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, ``-p no:cacheprovider``), the venv's interpreter by
absolute path, ``--continue-on-collection-errors`` (a file that does not import breaks only its
own tests), our plugin for per-test timeouts, inside the sandbox with no network, in a fresh copy
of the suite whose working directory holds ``./executable`` (and ``$SUITEBENCH_EXECUTABLE``
points at it).  For ``kind = "python"`` the program under test is a source root put first on
``PYTHONPATH``.

* ``plain``: one sandbox and one pytest process per program -- the reference path.
* ``batched``: one sandbox per batch of programs; inside it
  :mod:`suitebench.suite.inside.batch.forkserver` pays pytest's start-up once and forks per program.
  Same event log, same reader, same matrix.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from suitebench.run import sandbox
from suitebench.run.layout import sandbox_path
from suitebench.run.outcome import Backend, Limits, Outcome, Status
from suitebench.suite.execute.eventlog import LOG_TAIL, read_log, run_of
from suitebench.suite.execute.gcov import read_gcov, write_launcher
from suitebench.suite.execute.interpreter import Interpreter, current
from suitebench.suite.execute.rewritecache import write_rewrite_cache
from suitebench.suite.execute.runspec import SuiteLimits, Target
from suitebench.suite.inside import untrusted, wire
from suitebench.suite.inside.batch.rewrite import SERVED_NAME
from suitebench.suite.inside.workdir import collect_only, open_up, populate_workdir
from suitebench.suite.records import RunStatus, SuiteRun

SUITE_DIRNAME = "tests"  # test ids read tests/<file>::<name> wherever the suite lives
CHILD_POLL = 0.2  # how often a batch's ended children are looked for (seconds)


def pytest_args(
    suite_name: str,
    limits: SuiteLimits,
    rewrite_cache: Path | None = None,
    plugins: Sequence[str] = (),
) -> list[str]:
    """The pytest command line shared by both engines (minus output paths); the suite's
    directory comes last.  ``rewrite_cache``: the host's rewritten test modules; ``plugins``:
    a project interpreter's pytest plugins (:func:`.interpreter.choose_plugins`)."""
    cache = [] if rewrite_cache is None else [f"--suitebench-rewrite-cache={rewrite_cache}"]
    return [
        "-p",
        "no:cacheprovider",
        *(arg for module in plugins for arg in ("-p", module)),
        "-p",
        "suitebench.suite.inside.plugin",
        "-q",
        "--continue-on-collection-errors",
        "--rootdir",
        ".",
        f"--suitebench-timeout={limits.per_test:g}",
        *cache,
        suite_name,
    ]


def _scratch(base: Path) -> tuple[Path, Path]:
    """The run's writable layout inside the sandbox's work dir: ``work/`` (the tests' working
    directory), ``out/`` (event logs), ``home/`` ($HOME) and ``tmp/`` ($TMPDIR), the last
    two empty whenever a program's tests start."""
    workdir, out_dir = base / "work", base / "out"
    for d in (workdir, out_dir, *_home_and_tmp(base)):
        d.mkdir()
        d.chmod(0o777)
    return workdir, out_dir


def _home_and_tmp(base: Path) -> tuple[Path, Path]:
    return base / "home", base / "tmp"


HASH_SEED = "0"
# ... and one memory layout (address space randomization off for the suite's process and what
# it starts): on Python before 3.12 ``hash(None)`` is its address, so a set of tuples holding
# None (isodate's test cases) is ordered by where None was loaded, and so are the ids of the
# tests parametrized over it.  The code it protects is the code under test itself.
FIXED_LAYOUT = ("/usr/bin/setarch", "-R")


def _env(workdir: Path, base: Path, target: Target | None, python: Interpreter) -> dict[str, str]:
    home, tmp = _home_and_tmp(base)
    env = {
        "PATH": sandbox_path(python),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # One hash seed for every run of a score: a test parametrized over a set has the same
        # id (``expected3``) in the reference's runs and in every mutant's.
        "PYTHONHASHSEED": HASH_SEED,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "SUITEBENCH_EXECUTABLE": str(workdir / "executable"),
        "TMPDIR": str(tmp),
    }
    # The program's source root first (the plugin reads it there), a project interpreter's
    # copy of suitebench's plugin package last.
    path = [target.pythonpath] if target is not None and target.pythonpath else []
    if python.plugin_root is not None:
        path.append(python.plugin_root)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    return env


def _sandbox_limits(limits: SuiteLimits, wall: float) -> Limits:
    return Limits(
        wall_time=wall,
        cpu_time=wall,
        memory_mb=limits.memory_mb,
        processes=256,
        network=limits.network,
        file_size_bytes=1024 * 1024 * 1024,  # the logs of a whole batch
    )


def _tail(data: bytes) -> str:
    return data[-LOG_TAIL:].decode("utf-8", errors="replace")


def _collect(
    out_dir: Path,
    index: int,
    outcome_log: str,
    exit_code: int | None,
    wall: float,
    killed: bool,
    reason: str | None = None,
    cause: str = "",
) -> SuiteRun:
    """One program's run from what it left in ``out_dir``: its event log, its log's tail and
    the fingerprint it wrote (:func:`~suitebench.suite.execute.eventlog.run_of` says what they
    make)."""
    log = outcome_log
    left = untrusted.read_bytes(out_dir / f"{index}.log")
    if left is not None:
        log = _tail(left) + log
    fingerprint = None
    written = untrusted.read_text(out_dir / f"{index}.fingerprint.json")
    if written is not None:
        try:
            fingerprint = json.loads(written)
        except ValueError:
            pass
    return run_of(
        read_log(out_dir / f"{index}.events"),
        log=log,
        exit_code=exit_code,
        wall=wall,
        killed=killed,
        reason=reason,
        cause=cause,
        fingerprint=fingerprint,
    )


def _child_cause(info: dict[str, Any], limits: SuiteLimits) -> str:
    """What ended a batch's child for one program, from its ``exit.json``."""
    code = info.get("exit_code")
    if info.get("killed"):
        return f"wall time over the per-program limit ({limits.per_program:g} s)"
    if isinstance(code, int) and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return f"killed by signal {-code} ({name}: the memory limit, or a signal sent to it)"
    return f"exit code {code}"


def _harness_failure(outcome: Outcome) -> SuiteRun:
    return SuiteRun(
        status=RunStatus.SANDBOX_ERROR,
        exit_code=outcome.exit_code,
        wall_time=outcome.wall_time,
        log=_tail(outcome.stderr),
        message=outcome.message or str(outcome.status),
    )


def run_plain(
    suite_dir: Path,
    target: Target,
    *,
    limits: SuiteLimits = SuiteLimits(),
    backend: Backend | None = None,
    workspace: Path | None = None,
    rewrite_cache: bool = True,
    beside: Path | None = None,
    python: Interpreter | None = None,
) -> SuiteRun:
    """One pytest process in one sandbox: the reference engine.

    ``workspace``: an empty directory to run in, kept afterwards (``out/`` holds the
    event log and ``rewrite-served.txt``); by default a temporary one.  ``rewrite_cache``:
    hand pytest the test modules' asserts rewritten on this side (:mod:`.rewrite`).  ``beside``:
    the project's files staged to go next to the suite (:mod:`.projectconfig`).  ``python``:
    the interpreter the suite runs on (default: suitebench's own, :mod:`.interpreter`).
    """
    suite_dir = Path(suite_dir).resolve()
    python = python or current()
    rewrite_cache = rewrite_cache and python.own  # the host's pyc files are for its Python
    with contextlib.ExitStack() as stack:
        base = _base(stack, "suitebench-run-", workspace)
        workdir, out_dir = _scratch(base)
        extra, gcov_dir, exe_link = _plain_options(target, base, out_dir)
        populate_workdir(workdir, suite_dir, SUITE_DIRNAME, target.executable, exe_link, beside)
        cache = _rewrite_cache(suite_dir, base, rewrite_cache)
        coverage_file = out_dir / "0.coverage.json"
        argv = [
            "/usr/bin/env",
            "-C",
            str(workdir),
            *FIXED_LAYOUT,
            python.executable,
            "-m",
            "pytest",
            *collect_only(pytest_args(SUITE_DIRNAME, limits, cache, python.plugins), target.select),
            f"--suitebench-events={out_dir / '0.events'}",
            f"--suitebench-faultlog={out_dir / '0.log'}",
            *extra,
        ]
        outcome = sandbox.run(
            argv,
            cwd=base,
            env=_env(workdir, base, target, python),
            limits=_sandbox_limits(limits, limits.per_program),
            backend=backend,
            ro_binds=(*python.binds, *target.binds),
        )
        if outcome.status is Status.SANDBOX_ERROR:
            return _harness_failure(outcome)
        killed = outcome.status is Status.TIMEOUT
        log = _tail(outcome.stdout) + _tail(outcome.stderr)
        code, wall = outcome.exit_code, outcome.wall_time
        cause = outcome.message or ("" if outcome.status is Status.OK else f"exit code {code}")
        run = _collect(out_dir, 0, log, code, wall, killed, cause=cause)
        if gcov_dir is not None and target.coverage_root is not None:
            record = read_gcov(gcov_dir, Path(target.coverage_root))
            run = dataclasses.replace(run, coverage=record)
        elif target.coverage_root is not None:
            run = _with_coverage(run, coverage_file)
        return run


def _plain_options(
    target: Target, base: Path, out_dir: Path
) -> tuple[list[str], Path | None, str | None]:
    """The plugin options of a plain run (what it chooses, records and covers), its C or C++
    coverage directory and the launcher ``./executable`` links to there (None: the program)."""
    extra: list[str] = ["--suitebench-end-lingering"]  # nothing waited for after pytest
    gcov_dir: Path | None = None
    exe_link: str | None = None
    if target.coverage_root is not None and not target.pythonpath and target.executable:
        gcov_dir = out_dir / "gcov"  # a C or C++ coverage build: counters per test
        gcov_dir.mkdir()
        gcov_dir.chmod(0o777)
        launcher = base / "launcher"
        launcher.mkdir()
        write_launcher(launcher / "executable", gcov_dir, target.executable)
        exe_link = str(launcher / "executable")
        extra.append(f"--suitebench-gcov-dir={gcov_dir}")
    chosen_by: tuple[tuple[str, Any], ...] = (
        ("order", None if target.order is None else list(target.order)),
        ("select", None if target.select is None else list(target.select)),
        ("impact", target.impact),
        ("timeouts", dict(target.timeouts) if target.timeouts else None),
        ("positions", dict(target.positions) if target.positions else None),
        ("probes", [list(probe) for probe in target.probes] if target.probes else None),
    )
    for name, chosen in chosen_by:
        if chosen is not None:
            path = out_dir / f"0.{name}.json"
            path.write_text(json.dumps(chosen), encoding="utf-8")
            extra.append(f"--suitebench-{name}={path}")
    if target.fingerprint:
        extra.append(f"--suitebench-fingerprint={out_dir / '0.fingerprint.json'}")
    if target.coverage_root is not None and target.pythonpath:
        extra += [
            f"--suitebench-coverage={out_dir / '0.coverage.json'}",
            f"--suitebench-coverage-root={target.coverage_root}",
        ]
    return extra, gcov_dir, exe_link


def _with_coverage(run: SuiteRun, path: Path) -> SuiteRun:
    """A Python coverage run with the record its tracer wrote (none if it wrote none)."""
    written = untrusted.read_text(path)
    if written is None:
        return run
    try:
        coverage = json.loads(written)
    except ValueError:
        coverage = None
    return dataclasses.replace(run, coverage=coverage)


def run_batched(
    suite_dir: Path,
    targets: list[Target],
    *,
    collect_once: bool,
    limits: SuiteLimits = SuiteLimits(),
    backend: Backend | None = None,
    workspace: Path | None = None,
    rewrite_cache: bool = True,
    reference: bool = False,
    patterns: Sequence[Sequence[Any]] = (),
    beside: Path | None = None,
    python: Interpreter | None = None,
    on_child: Callable[[int], None] | None = None,
) -> list[SuiteRun]:
    """Many programs in one sandbox through the fork server; one SuiteRun per target.

    ``workspace``: an empty directory to run the batch in, kept afterwards with its event
    logs, ``out/batch-mode.txt`` (how the fork server ran it) and ``out/rewrite-served.txt``;
    by default a temporary one.  ``rewrite_cache``: as for :func:`run_plain`.  ``reference``:
    the targets are the reference's runs, run by pytest's own protocol throughout
    (:mod:`suitebench.suite.inside.batch.direct`).  ``patterns``: regular expressions (pattern,
    flags) the batch compiles once before forking its programs' children
    (:func:`suitebench.suite.inside.batch.warm. warm_patterns`).  ``on_child(index)``: told
    of each program as its child ends, while the batch goes on (:class:`_Children`).
    """
    suite_dir = Path(suite_dir).resolve()
    if not targets:
        return []
    python = python or current()
    rewrite_cache = rewrite_cache and python.own  # the host's pyc files are for its Python
    with contextlib.ExitStack() as stack:
        base = _base(stack, "suitebench-batch-", workspace)
        workdir, out_dir = _scratch(base)
        suite_src = base / "suite-src" / SUITE_DIRNAME
        shutil.copytree(suite_dir, suite_src, symlinks=True)
        open_up(suite_src.parent)
        staged = None if beside is None else shutil.copytree(beside, base / "beside", symlinks=True)
        cache = _rewrite_cache(suite_dir, base, rewrite_cache)
        spec = _batch_spec(targets, limits, base, workdir, out_dir, staged, cache, python)
        spec["collect_once"] = collect_once
        spec["reference"] = reference
        spec["patterns"] = [list(p) for p in patterns]
        spec_path = base / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        binds = sorted({*python.binds, *(b for t in targets for b in t.binds)})
        argv = [
            "/usr/bin/env",
            "-C",
            str(workdir),
            *FIXED_LAYOUT,
            python.executable,
            "-m",
            "suitebench.suite.inside.batch.forkserver",
            str(spec_path),
        ]
        # A batch of one runs its program in-process: the plain engine's budget, then.
        wall = limits.per_program * len(targets) + (30.0 if len(targets) > 1 else 0.0)
        with (
            _Children(len(targets), out_dir, on_child)
            if on_child is not None and len(targets) > 1
            else contextlib.nullcontext()
        ):
            outcome = sandbox.run(
                argv,
                cwd=base,
                env=_env(workdir, base, None, python),
                limits=_sandbox_limits(limits, wall),
                backend=backend,
                ro_binds=binds,
            )
        if outcome.status is Status.SANDBOX_ERROR:
            return [_harness_failure(outcome) for _ in targets]
        return _batch_runs(targets, out_dir, outcome, limits)


def _batch_spec(
    targets: list[Target],
    limits: SuiteLimits,
    base: Path,
    workdir: Path,
    out_dir: Path,
    staged: Path | None,
    cache: Path | None,
    python: Interpreter,
) -> wire.BatchSpec:
    """What the fork server is told about a batch: where things are, the limits, each program
    (how it runs them: :func:`run_batched` says)."""
    suite_src = base / "suite-src" / SUITE_DIRNAME
    # Many targets share one impact spec or positions map (large): each digested once here.
    digests: dict[int, str] = {}

    def digest(value: Any) -> str:
        found = digests.get(id(value))
        if found is None:
            found = digests[id(value)] = spec_digest(value)
        return found

    return {
        "beside": None if staged is None else str(staged),
        "workdir": str(workdir),
        "out_dir": str(out_dir),
        "suite_src": str(suite_src),
        "suite_name": SUITE_DIRNAME,
        "scratch": [str(p) for p in _home_and_tmp(base)],
        "run_wall": limits.per_program,
        "protocol": str(limits.protocol),
        "pytest_args": pytest_args(SUITE_DIRNAME, limits, cache, python.plugins),
        "programs": [
            {
                "index": i,
                "executable": t.executable,
                "pythonpath": t.pythonpath,
                "order": None if t.order is None else list(t.order),
                "select": None if t.select is None else list(t.select),
                "binds": list(t.binds),  # hidden from the other programs' tests
                "fingerprint": t.fingerprint,
                "impact": None if t.impact is None else digest(t.impact),
                "patched_files": None if t.patched_files is None else list(t.patched_files),
                # the reference's coverage run, batched with a reference run (Python only)
                "coverage_root": t.coverage_root if t.pythonpath else None,
                "timeouts": [list(pair) for pair in t.timeouts],
                "positions": digest(t.positions) if t.positions else None,
                "probes": [list(probe) for probe in t.probes] if t.probes else None,
            }
            for i, t in enumerate(targets)
        ],
        # An import-time impact spec is the same for many mutants: written once.
        "impacts": {digest(t.impact): t.impact for t in targets if t.impact is not None},
        "positions": {digest(t.positions): dict(t.positions) for t in targets if t.positions},
        "collect_once": False,  # (run_batched's arguments say)
        "reference": False,
        "patterns": [],
    }


def _batch_runs(
    targets: list[Target], out_dir: Path, outcome: Outcome, limits: SuiteLimits
) -> list[SuiteRun]:
    """One SuiteRun per target, read from what the batch's children left in ``out/``."""
    shared_log = _tail(outcome.stdout) + _tail(outcome.stderr)
    batch_log = untrusted.read_bytes(out_dir / "batch.log")
    if batch_log is not None:
        shared_log = _tail(batch_log) + shared_log
    runs: list[SuiteRun] = []
    for i in range(len(targets)):
        child = _child_run(targets[i], out_dir, i, limits)
        if child is not None:
            runs.append(child)
            continue
        if len(targets) == 1:  # run in the batch's own process: its end is the run's
            killed = outcome.status is Status.TIMEOUT
            code, wall = outcome.exit_code, outcome.wall_time
            cause = "" if outcome.status is Status.OK else outcome.message
            runs.append(_collect(out_dir, i, shared_log, code, wall, killed, cause=cause))
        else:  # the batch ended before this program ran (e.g. the suite did not collect)
            reason = f"the batch ended before this program ran ({outcome.status})"
            runs.append(
                _collect(out_dir, i, shared_log, outcome.exit_code, 0.0, False, reason=reason)
            )
        if targets[i].coverage_root is not None and targets[i].pythonpath:
            runs[-1] = _with_coverage(runs[-1], out_dir / f"{i}.coverage.json")
    return runs


def _child_run(target: Target, out_dir: Path, i: int, limits: SuiteLimits) -> SuiteRun | None:
    """Program ``i``'s run, read from what its child left once it ended (its ``exit.json``,
    written whole after the child's end), or None while it has not ended."""
    written = untrusted.read_text(out_dir / f"{i}.exit.json")
    if written is None:
        return None
    info = json.loads(written)
    run = _collect(
        out_dir,
        i,
        "",
        info["exit_code"],
        float(info["wall_time"]),
        bool(info["killed"]),
        cause=_child_cause(info, limits),
    )
    if target.coverage_root is not None and target.pythonpath:
        run = _with_coverage(run, out_dir / f"{i}.coverage.json")
    return run


class _Children:
    """A batch's programs told as their children end, while the batch goes on (``on_child``
    of :func:`run_batched`): the progress moves within a batch of a hundred mutants.  Only
    that a child ended is told (its ``exit.json`` is there): its run is read when the batch
    ends, once the fork server has put back each record as its child left it -- before then,
    any later child of the batch could have written it."""

    def __init__(self, count: int, out_dir: Path, on_child: Callable[[int], None]) -> None:
        self._out_dir = out_dir
        self._on_child = on_child
        self._left = set(range(count))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="suitebench-children", daemon=True)

    def __enter__(self) -> _Children:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(CHILD_POLL):
            for i in sorted(self._left):
                if os.path.lexists(self._out_dir / f"{i}.exit.json"):
                    self._left.discard(i)
                    self._on_child(i)


def _base(stack: contextlib.ExitStack, prefix: str, workspace: Path | None) -> Path:
    """The run's base directory: ``workspace`` (kept), or a temporary one."""
    if workspace is None:
        return Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
    base = Path(workspace).resolve()
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o755)
    return base


def _rewrite_cache(suite_dir: Path, base: Path, enabled: bool) -> Path | None:
    """The host's rewritten test modules for this launch (paid once per suite in this worker;
    :mod:`suitebench.suite.inside.batch.rewrite`), or None."""
    if not enabled:
        return None
    out_dir = base / "out"
    return write_rewrite_cache(
        suite_dir, base, base / "work" / SUITE_DIRNAME, out_dir / SERVED_NAME
    )


def spec_digest(value: Any) -> str:
    """A short digest of a JSON value (an import-time impact spec: one file per batch, and part
    of a run's job key)."""
    import hashlib

    data = json.dumps(value, sort_keys=True).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
