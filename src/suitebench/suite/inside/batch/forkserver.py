"""The batched engine's in-sandbox half: one pytest start-up for a whole batch of programs.

Running one pytest process per program under test pays interpreter start, pytest import,
plugin set-up and collection (~0.2 s) every time; for a full kill matrix that start-up, not the
tests, dominates.  This module runs *inside one sandbox* per batch and pays it once:

* **collect once, fork per program** (``kind = "cli"``): pytest collects the suite in the work
  directory, then the batch's run loop (:class:`BatchHooks`) forks one child per program.
  Before each fork the work directory is made what a plain run finds
  (:class:`suitebench.suite.inside.workdir.WorkDir`), with ``./executable`` linked to that program
  always at the *same* path, so a module-level ``os.path.abspath("./executable")`` means the
  same in every child and in the plain engine.  The child runs every test, writes its own
  event log and exits; the parent never runs a test.
* **fork per program, then collect** (``kind = "python"``, or a suite that runs the program
  while being imported): a child per program runs the whole ``pytest.main`` from a parent that
  has already imported pytest, so the package under test is imported fresh in each child, first
  on ``sys.path``.

Either way each program gets the event log the plain engine would produce, and the same
reader reads both, so the kill matrix is the same by construction (a test proves it).
A child that outlives its wall-clock budget is killed; its event log shows how far it got.

Two floors: :mod:`suitebench.suite.inside.plugin` is the per-test protocol (timeouts, event log,
test selection, coverage), loaded in every pytest session of both engines; this module is the batch
driver on top of it, whose pytest hooks (:class:`BatchHooks`) are handed to ``pytest.main`` as
a plugin object.  The plugin never imports this module.

Usage (what :mod:`suitebench.suite.execute.runner` puts on the sandbox's command line)::

    python -m suitebench.suite.inside.batch.forkserver SPEC.json
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from suitebench.suite.inside import plugin
from suitebench.suite.inside.batch.collector import Collector, patchable
from suitebench.suite.inside.batch.direct import PerProgram
from suitebench.suite.inside.batch.forking import (
    fork_each,
    fork_per_program,
    keep,
    record_exit,
)
from suitebench.suite.inside.batch.warm import (
    prime_rewrite_cache,
    warm_caches,
    warm_items,
    warm_patterns,
)
from suitebench.suite.inside.isolate import make_parent_private
from suitebench.suite.inside.wire import BatchProgram, BatchSpec
from suitebench.suite.inside.workdir import (
    Entry,
    WorkDir,
    collect_only,
    populate_workdir,
    tree_state,
)

SENTINEL_NAME = ".suitebench-collect-sentinel"
SENTINEL_SCRIPT = "sentinel.sh"
_SENTINEL_SCRIPT = """#!/bin/sh
touch "{marker}"
echo "suitebench: the program under test ran while the suite was being imported" >&2
exit 125
"""


def _selection_args(spec: BatchSpec, program: BatchProgram) -> list[str]:
    """The plugin options that restrict a program's run (``--fast`` order, a test selection,
    an import-time impact spec) or record its fingerprint."""
    out_dir = Path(spec["out_dir"])
    index = program["index"]
    args: list[str] = []
    lists = (
        ("order", program.get("order")),
        ("select", program.get("select")),
        ("probes", program.get("probes")),
    )
    for key, value in lists:
        if value is not None:
            path = out_dir / f"{index}.{key}.json"
            path.write_text(json.dumps(value), encoding="utf-8")
            args.append(f"--suitebench-{key}={path}")
    if program.get("timeouts"):  # a mutant's limits below the cap, derived from the reference
        path = out_dir / f"{index}.timeouts.json"
        path.write_text(json.dumps(dict(program["timeouts"])), encoding="utf-8")
        args.append(f"--suitebench-timeouts={path}")
    for name, shared in (("impact", spec["impacts"]), ("positions", spec.get("positions", {}))):
        digest = program.get(name)
        if digest is not None:  # one file for the many programs sharing it
            path = out_dir / f"{name}-{digest}.json"
            if not path.exists():
                path.write_text(json.dumps(shared[str(digest)]), encoding="utf-8")
            args.append(f"--suitebench-{name}={path}")
    if program.get("fingerprint"):
        args.append(f"--suitebench-fingerprint={out_dir / f'{index}.fingerprint.json'}")
    if program.get("coverage_root"):  # the reference's coverage run (``kind = "python"``)
        args.append(f"--suitebench-coverage={out_dir / f'{index}.coverage.json'}")
        args.append(f"--suitebench-coverage-root={program['coverage_root']}")
    return args


def _mentions(value: Any, needle: str, depth: int = 2) -> bool:
    if isinstance(value, str | os.PathLike):
        return needle in str(os.fspath(value))
    if depth <= 0:
        return False
    if isinstance(value, list | tuple | set | frozenset):
        return any(_mentions(v, needle, depth - 1) for v in value)
    if isinstance(value, dict):
        return any(_mentions(v, needle, depth - 1) for v in value.values())
    if isinstance(value, type):
        return any(_mentions(v, needle, depth - 1) for v in vars(value).values())
    return False


def _kept_sentinel_path(workdir: Path, needle: str) -> bool:
    """Whether a module of the suite holds the sentinel's resolved path in a global (e.g.
    ``EXE = Path("executable").resolve()`` at import), which would pin every child to it."""
    root = str(workdir)
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None) or ""
        if origin.startswith(root) and any(
            _mentions(v, needle) for v in list(vars(module).values())
        ):
            return True
    return False


class ImportWatch:
    """A meta path finder that imports nothing: it notes any attempt to import a module the
    programs under test provide (their source roots' top-level names)."""

    def __init__(self, names: set[str]) -> None:
        self.names = frozenset(names)
        self.seen: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in self.names:
            self.seen.append(fullname)


def provided_names(root: str) -> set[str]:
    """Top-level modules and packages importable from a source root."""
    names: set[str] = set()
    with os.scandir(root) as entries:
        for entry in entries:
            stem = entry.name.split(".", 1)[0]
            if entry.is_dir() and entry.name.isidentifier():
                names.add(entry.name)
            elif entry.name.endswith((".py", ".so", ".pyd")) and stem.isidentifier():
                names.add(stem)
    return names


def _redirect_output(shared: Path, own: Path) -> None:
    """Every descriptor writing to ``shared`` writes to ``own`` from now on -- stdout, stderr
    and the duplicates pytest's capture keeps to restore them between tests."""
    target = os.stat(shared)
    fd_own = os.open(own, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
    try:
        for name in os.listdir("/proc/self/fd"):
            try:
                st = os.fstat(int(name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                os.dup2(fd_own, int(name))
    finally:
        os.close(fd_own)


class BatchHooks(Collector):
    """The batch driver's pytest hooks, given to ``pytest.main`` as a plugin object.

    ``collect_per_program=False`` (collect once): the run loop forks a child per program after
    collection.  ``True`` (configure once, ``kind = "python"``): collection forks a child per
    program first, and each child collects and runs as ``pytest.main`` does.
    """

    def __init__(self, spec: BatchSpec, *, collect_per_program: bool) -> None:
        self.spec = spec
        self.collect_per_program = collect_per_program
        self.out_dir = Path(spec["out_dir"])
        self.bare: dict[str, Entry] = {}  # the work dir before pytest configured the suite
        self.watch: ImportWatch | None = None
        self.path0: str | None = None
        self.reached = False  # collection was reached (configure once)
        self.child = False  # this process is a forked child
        self.fallback = False  # the batch must run per program after all
        self.group: list[BatchProgram] | None = None
        self.link = str(Path(spec["workdir"]).parent / "program")
        self.steps: list[tuple[Any, Any]] = []
        self.alone: float | None = None  # when a batch of one began its program, in-process

    # -- collect once (kind = "cli") --------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if self.group is not None:
            self.run_patched_batch(session)
            return True
        if self.child:
            # A program that collected for itself: pytest's loop, with the direct protocol
            # standing in for pytest's runner where it can.
            self.plan_direct(session)
            if self.direct is not None:
                self.direct.announce(session.items)
            return None
        if not self.collect_per_program:
            self.run_collected_batch(session)
        return True  # the parent runs no test itself

    def run_collected_batch(self, session: pytest.Session) -> None:
        """Fork one child per program after collection; each runs the collected items."""
        spec, out_dir = self.spec, self.out_dir
        workdir = Path(spec["workdir"])
        ran = (workdir / SENTINEL_NAME).exists()
        if ran or _kept_sentinel_path(workdir, str(out_dir / SENTINEL_SCRIPT)):
            # The suite ran the program, or resolved ./executable to where it points, while
            # being imported: collection depends on the program, so collect per program.
            self.fallback = True
            return
        # A child's failure reports end up only in its event log (outcomes, the timeout
        # marker and the one-line failure message); nobody sees the long traceback with source
        # that pytest would format by default (~0.5 ms a failing test).  The line style keeps
        # what is read.
        session.config.option.tbstyle = "line"
        warm_caches()
        warm_items(session.items)
        self.plan_direct(session)
        gc.freeze()  # children share the collected session copy-on-write; keep gc off it

        workdir_state = WorkDir(spec)
        if self.bare:
            workdir_state.adopt_setup(self.bare)
        fork_each(spec, lambda program: self.run_items(session, program), workdir_state)

    # -- configure once, collect per program (kind = "python") -----------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if not self.collect_per_program:
            return None
        if self.fork_before_collection(session):
            session.items = []  # the parent: every program ran in its own child
            session.testscollected = 0
            return True
        return None  # a child: collect for its program, as pytest does

    def fork_before_collection(self, session: pytest.Session) -> bool:
        """Fork one child per program *before* collection.  True in the parent once every
        child has run (it collects nothing); False in a child, set up for its program, which
        then collects and runs the suite exactly as ``pytest.main`` does -- the test modules,
        and through them the package under test, are imported fresh in every child."""
        spec, out_dir = self.spec, self.out_dir
        self.reached = True
        watch = self.watch
        if watch is not None:
            if watch in sys.meta_path:
                sys.meta_path.remove(watch)
            if watch.seen or any(name in sys.modules for name in watch.names):
                # Configuring the suite (conftest, plugins) imported the program: configure
                # anew for every program.
                self.fallback = True
                return True
        workdir = WorkDir(spec)
        if self.bare:
            workdir.adopt_setup(self.bare)
        prime_rewrite_cache(session.config, workdir.path)
        warm_caches()
        warm_patterns(spec.get("patterns", ()))
        gc.collect()
        gc.freeze()
        programs = list(spec["programs"])
        # Body-only changes first: the collector imports the first program of the group,
        # and a body can be patched from a base whose import-time code is the reference's.
        group = sorted(
            (p for p in programs if patchable(p)), key=lambda p: p.get("impact") is not None
        )
        if len(group) > 1:
            if self.fork_collector(group):
                return False  # the collector: collect once, as pytest does
            done = {p["index"] for p in group if (out_dir / f"{p['index']}.exit.json").exists()}
            for index in done:  # the collector's records, kept from the children after it
                keep(out_dir, index)
            programs = [p for p in programs if p["index"] not in done]
        if len(spec["programs"]) == 1:
            # One program (a reference run): run it in this process, as a plain run would;
            # a fork would only add its cost and copy-on-write faults.
            program = programs[0].copy()
            workdir.prepare(program["executable"])
            os.chdir(workdir.path)
            self.alone = time.monotonic()
        else:
            forked = fork_per_program(spec, workdir, programs)
            if forked is None:
                return True
            program = forked
        self.child = True
        if not spec.get("reference"):
            # A mutant that raises on import fails its suite's collection: its outcome and
            # pytest's ``E`` line are what is read, and the line style keeps them without the
            # short style's source lines (each module parsed again per entry: ~15 ms a run).
            session.config.option.tbstyle = "line"
        index = program["index"]
        _redirect_output(out_dir / "batch.log", out_dir / f"{index}.log")
        root = program.get("pythonpath")
        if root:
            self.put_on_path(root)
        plugin.open_events(str(out_dir / f"{index}.events"))
        plugin.BUDGET.fault_file = open(out_dir / f"{index}.log", "a")  # noqa: SIM115
        for arg in _selection_args(spec, program):
            option, _, value = arg.partition("=")
            setattr(session.config.option, option[2:].replace("-", "_"), value)
        if program.get("coverage_root"):
            # Configured already: start recording now, before the package is first imported
            # (the parent's configuration imported none of it, or it would not be here).
            coverage = session.config.option.suitebench_coverage
            probes = getattr(session.config.option, "suitebench_probes", None)
            plugin.start_tracer(coverage, program["coverage_root"], session.config, probes)
        select = program.get("select")
        if select is not None:  # collect only the files of the selected tests
            session.config.args = collect_only(list(session.config.args), select)
        return False


def _configure_once(spec: BatchSpec, pytest_args: list[str]) -> bool:
    """Run a ``kind = "python"`` batch with pytest configured once (plugins, conftest files,
    ``pytest_configure`` hooks) and the suite collected in each child; False when it cannot
    be: the suite's configuration imports the program under test, or it never got as far as
    collecting.  Then nothing of the attempt is kept and the caller configures per program."""
    workdir = Path(spec["workdir"])
    out_dir = Path(spec["out_dir"])
    populate_workdir(
        workdir, Path(spec["suite_src"]), spec["suite_name"], None, beside=spec.get("beside")
    )
    hooks = BatchHooks(spec, collect_per_program=True)
    hooks.bare = tree_state(workdir)
    names: set[str] = set()
    for program in spec["programs"]:
        root = program.get("pythonpath")
        if root:
            names |= provided_names(root)
    hooks.watch = ImportWatch(names)
    hooks.path0 = sys.path[0]
    initial_path = list(sys.path)
    sys.meta_path.insert(0, hooks.watch)
    os.chdir(workdir)
    try:
        code = pytest.main(pytest_args, plugins=[hooks])
    except BaseException:
        if hooks.child:
            os._exit(3)
        raise
    if hooks.child:  # a child's session ended: its exit is the run's
        sys.stdout.flush()
        sys.stderr.flush()
        if hooks.alone is not None:  # no parent to record it
            record_exit(out_dir, 0, int(code), time.monotonic() - hooks.alone)
        os._exit(int(code))
    if hooks.watch in sys.meta_path:
        sys.meta_path.remove(hooks.watch)
    if hooks.reached and not hooks.fallback:
        return True
    if hooks.watch.seen:
        (out_dir / "needs-reconfigure").write_text(" ".join(hooks.watch.seen), encoding="utf-8")
    _forget_suite(workdir, initial_path)
    return False


def _collect_once(spec: BatchSpec, pytest_args: list[str]) -> bool:
    """Run a ``kind = "cli"`` batch with the suite collected once; False when collection
    depends on the program (the suite ran ``./executable``, a sentinel here, while being
    imported, or kept its resolved path), and nothing of the attempt is kept."""
    out_dir = Path(spec["out_dir"])
    workdir = Path(spec["workdir"])
    marker = workdir / SENTINEL_NAME
    populate_workdir(
        workdir, Path(spec["suite_src"]), spec["suite_name"], None, beside=spec.get("beside")
    )
    sentinel = out_dir / SENTINEL_SCRIPT
    sentinel.write_text(_SENTINEL_SCRIPT.format(marker=marker), encoding="utf-8")
    sentinel.chmod(0o755)
    os.symlink(sentinel, workdir / "executable")
    hooks = BatchHooks(spec, collect_per_program=False)
    hooks.bare = tree_state(workdir)  # to tell what the suite's set-up writes
    os.chdir(workdir)
    initial_path = list(sys.path)
    pytest.main(pytest_args, plugins=[hooks])
    if not hooks.fallback:
        return True
    (out_dir / "needs-recollect").write_text("1", encoding="utf-8")
    _forget_suite(workdir, initial_path)  # collecting per program after all
    return False


def _forget_suite(workdir: Path, initial_path: list[str]) -> None:
    """Undo a set-up attempt before configuring per program: put ``sys.path`` back and forget
    the suite's modules, so that each child imports them as a plain run would."""
    sys.path[:] = initial_path
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(str(workdir)):
            del sys.modules[name]


def _run_forked_main(spec: BatchSpec, pytest_args: list[str]) -> None:
    """Fork per program, each child running a whole ``pytest.main`` (collects fresh)."""
    out_dir = Path(spec["out_dir"])
    base_path = list(sys.path)
    warm_caches()
    warm_patterns(spec.get("patterns", ()))
    # Children run a whole session each, and pytest ends a session with several full
    # collections (``gc_collect_harder``): without this they would walk every object of this
    # parent each time.  Collect first, so no garbage is frozen: only live objects move to
    # the permanent generation, where no child's collection would have freed them anyway.
    gc.collect()
    gc.freeze()

    def child(program: BatchProgram) -> int:
        index = program["index"]
        log = os.open(out_dir / f"{index}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        pythonpath = program.get("pythonpath")
        if pythonpath:
            os.environ["PYTHONPATH"] = pythonpath
            sys.path[:] = [base_path[0], pythonpath, *base_path[1:]]
        args = [
            *collect_only(pytest_args, program.get("select")),
            *_selection_args(spec, program),
            f"--suitebench-events={out_dir / f'{index}.events'}",
            f"--suitebench-faultlog={out_dir / f'{index}.log'}",
        ]
        return int(pytest.main(args, plugins=[PerProgram(spec, out_dir)]))

    fork_each(spec, child, WorkDir(spec))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec: BatchSpec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    # The batch's terminal output goes to a file, not the sandbox's capped pipe: many programs'
    # failure reports must not add up to an output limit a single plain run would not hit.
    log = os.open(Path(spec["out_dir"]) / "batch.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    make_parent_private()
    from _pytest.config import default_plugins

    for name in default_plugins:  # pay for every import once, before the first fork
        try:
            __import__(f"_pytest.{name}")
        except ImportError:
            pass
    from suitebench.suite.inside import promptwait

    if spec.get("prompt_wait", True):
        promptwait.install()  # every child inherits it: no idle poll after each spawn

    out_dir = Path(spec["out_dir"])
    pytest_args: list[str] = list(spec["pytest_args"])
    if spec["collect_once"]:
        if _collect_once(spec, pytest_args):
            _note_mode(out_dir, "collect-once")
            return 0
    elif spec.get("configure_once", True) and _configure_once(spec, pytest_args):
        _note_mode(out_dir, "configure-once")
        return 0
    _note_mode(out_dir, "per-program")
    _run_forked_main(spec, pytest_args)
    return 0


def _note_mode(out_dir: Path, mode: str) -> None:
    """How the batch ran (collect-once, configure-once or per-program), for whoever looks."""
    (out_dir / "batch-mode.txt").write_text(mode + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
