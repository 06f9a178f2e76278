"""The batched engine's in-sandbox half: one pytest start-up for a whole batch of programs.

Running one pytest process per program under test pays interpreter start, pytest import,
plugin set-up and collection (~0.2 s) every time; for a full kill matrix that start-up, not the
tests, dominates.  This module runs *inside one sandbox* per batch and pays it once:

* **collect once, fork per program** (``kind = "cli"``): pytest collects the suite in the work
  directory, then our plugin's run loop forks one child per program.  Before each fork the work
  directory is emptied and refilled with a fresh copy of the suite and ``./executable`` linked to
  that program, always at the *same* path, so a module-level ``os.path.abspath("./executable")``
  means the same in every child and in the plain engine.  The child runs every test, writes its
  own JUnit XML through pytest's junitxml plugin and exits; the parent never runs a test.
* **fork per program, then collect** (``kind = "python"``, or a suite that runs the program
  while being imported): a child per program runs the whole ``pytest.main`` from a parent that
  has already imported pytest, so the package under test is imported fresh in each child, first
  on ``sys.path``.

Either way each program gets the JUnit XML and event log the plain engine would produce, and
the same parser reads both, so the kill matrix is the same by construction (a test proves it).
A child that outlives its wall-clock budget is killed; its event log shows how far it got.

Usage (what :mod:`suitebench.suite.runner` puts on the sandbox's command line)::

    python -m suitebench.suite.forkserver SPEC.json
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import select
import shutil
import signal
import stat
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

SENTINEL_NAME = ".suitebench-collect-sentinel"
SENTINEL_SCRIPT = "sentinel.sh"
_SENTINEL_SCRIPT = """#!/bin/sh
touch "{marker}"
echo "suitebench: the program under test ran while the suite was being imported" >&2
exit 125
"""


def populate_workdir(
    workdir: Path, suite_src: Path, suite_name: str, executable: str | None
) -> None:
    """A fresh copy of the suite under ``workdir/suite_name`` and ``./executable`` linked.

    Shared by both engines: the plain engine calls it once per run, the batched engine once
    per program, so tests see the same layout either way.
    """
    if workdir.exists():
        for child in workdir.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(suite_src, workdir / suite_name, symlinks=True)
    open_up(workdir)
    if executable is not None:
        os.symlink(executable, workdir / "executable")


def open_up(root: Path) -> None:
    """Make a tree writable by everyone: the sandbox may run the suite as an unprivileged uid,
    and tests must be able to write where they run whichever engine created the files."""
    me = os.geteuid()
    for dirpath, _dirnames, filenames in os.walk(root):
        if os.stat(dirpath).st_uid == me:
            os.chmod(dirpath, 0o777)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            st = os.stat(path)
            if st.st_uid == me:
                extra = 0o666 | (0o111 if st.st_mode & 0o100 else 0)
                os.chmod(path, (st.st_mode & 0o777) | extra)


def _wait(pid: int, budget: float) -> tuple[int, bool]:
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


def _record_exit(out_dir: Path, index: int, status: int, killed: bool, wall: float) -> None:
    code = os.waitstatus_to_exitcode(status)
    (out_dir / f"{index}.exit.json").write_text(
        json.dumps({"exit_code": code, "killed": killed, "wall_time": wall}), encoding="utf-8"
    )


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


_Entry = tuple[int, int, int, int, int, bytes | None]
# Timestamps come from the kernel's coarse clock (a tick of 1-10 ms): a file changed within the
# tick it was created in can keep its ctime.  Entries younger than this also keep their content.
_RECENT_NS = 100_000_000


def _content(path: str, mode: int) -> bytes:
    if stat.S_ISLNK(mode):
        return os.fsencode(os.readlink(path))
    if stat.S_ISREG(mode):
        with open(path, "rb") as fh:
            return hashlib.blake2b(fh.read(), digest_size=16).digest()
    return b""


def _tree_state(root: Path, like: dict[str, _Entry] | None = None) -> dict[str, _Entry]:
    """What a child could have changed in a tree: each entry's inode, mode, size, mtime and
    ctime (``lstat``; a ctime cannot be set back from user space, so a write never hides),
    plus the content of entries too young for their timestamps to be trusted (and of those
    ``like``, a state taken earlier, holds content for)."""
    now = time.time_ns()
    state: dict[str, _Entry] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (".", *dirnames, *filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            before = like.get(path) if like is not None else None
            young = now - st.st_ctime_ns < _RECENT_NS
            digest = None
            if young or (before is not None and before[5] is not None):
                digest = _content(path, st.st_mode)
            state[path] = (
                st.st_ino,
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
                digest,
            )
    return state


def _empty_dir(path: Path) -> None:
    """Remove everything inside ``path`` (cheap when it is already empty)."""
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


# The collect-once work dir before pytest configured and collected the suite (see main()).
_bare_state: dict[str, _Entry] = {}


def _copy_into(src: Path, dst: Path) -> None:
    """Copy the entries of ``src`` into the existing directory ``dst`` (whose own owner and
    mode stay: it may not be ours to change)."""
    with os.scandir(src) as entries:
        for entry in entries:
            target = dst / entry.name
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), target)
            elif entry.is_dir():
                shutil.copytree(entry.path, target, symlinks=True)
            else:
                shutil.copy2(entry.path, target)


class WorkDir:
    """The batched engine's work dir: what each program's tests start from.

    Before each program the work dir must be as a plain run would find it when its tests start:
    a pristine copy of the suite with ``./executable`` linked to this program, and an empty home
    and temporary directory -- or, where the batch collected the suite once, all of these as
    the suite's set-up (``pytest_configure`` hooks, test modules run at import) left them,
    which a plain run redoes for every program (:meth:`adopt_setup`).  Copying the suite again
    costs ~2 ms a program; most children change nothing in it, so it is copied again only when
    :func:`_tree_state` differs from how the last child found it -- otherwise only the
    ``executable`` link is swapped.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self.path = Path(spec["workdir"])
        self.suite_src = Path(spec["suite_src"])
        self.suite_name = str(spec["suite_name"])
        self.scratch = [Path(p) for p in spec.get("scratch", ())]
        self.baseline: dict[str, _Entry] | None = None
        self.template: Path | None = None
        self.refills = 0

    def adopt_setup(self, bare: dict[str, _Entry]) -> bool:
        """Start every child from the work dir and scratch dirs as they are now, after the
        suite's set-up, if that set-up changed them from ``bare`` (the state before it);
        whether it did.  The ``executable`` link is left out: each child gets its own."""
        changed = _tree_state(self.path, bare) != bare
        if not changed and not any(any(d.iterdir()) for d in self.scratch):
            return False
        template = self.path.parent / "setup-template"
        shutil.rmtree(template, ignore_errors=True)
        top = str(self.path)
        shutil.copytree(
            self.path,
            template / "work",
            symlinks=True,
            ignore=lambda d, names: ["executable"] if d == top else [],
        )
        for i, directory in enumerate(self.scratch):
            shutil.copytree(directory, template / f"scratch{i}", symlinks=True)
        self.template = template
        self.baseline = None  # the first child starts from a copy of the template too
        return True

    def _refill(self, executable: str | None) -> None:
        self.refills += 1
        if self.template is None:
            populate_workdir(self.path, self.suite_src, self.suite_name, executable)
            return
        _empty_dir(self.path)
        _copy_into(self.template / "work", self.path)
        open_up(self.path)
        if executable is not None:
            os.symlink(executable, self.path / "executable")

    def prepare(self, executable: str | None) -> None:
        if self.baseline is None or _tree_state(self.path, self.baseline) != self.baseline:
            self._refill(executable)
        else:
            link = self.path / "executable"
            link.unlink(missing_ok=True)
            if executable is not None:
                os.symlink(executable, link)
        for i, directory in enumerate(self.scratch):
            _empty_dir(directory)
            if self.template is not None:
                saved = self.template / f"scratch{i}"
                _copy_into(saved, directory)
                open_up(directory)
        self.baseline = _tree_state(self.path)


def fork_per_program(spec: dict[str, Any], workdir: WorkDir) -> dict[str, Any] | None:
    """For every program: a fresh work dir, then a fork.  In the parent, waits for each child
    (killing it at the per-program wall-clock budget), records its exit, and returns None when
    all have run; in a child, returns the program it is to test, in the work dir."""
    out_dir = Path(spec["out_dir"])
    for program in spec["programs"]:
        workdir.prepare(program["executable"])
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _reseed_after_fork()
            os.chdir(workdir.path)
            return dict(program)
        status, killed = _wait(pid, float(spec["run_wall"]))
        _record_exit(out_dir, program["index"], status, killed, time.monotonic() - start)
    return None


def _fork_each(
    spec: dict[str, Any], child: Callable[[dict[str, Any]], int], workdir: WorkDir | None = None
) -> None:
    """:func:`fork_per_program`, each child running ``child(program)`` and exiting."""
    program = fork_per_program(spec, workdir or WorkDir(spec))
    if program is None:
        return
    code = 3
    try:
        code = child(program)
    except BaseException:
        code = 3
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


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


def warm_caches() -> None:
    """Fill, once in the parent, the caches every child would otherwise fill on its own.

    Each is a pure memo (same answers, cold or warm), so warming changes no outcome, only what
    a child pays: the regular expressions of pytest's JUnit XML escaping, of the tokenizer
    (reporting a failure re-reads the test's source) and of ``argparse`` (``pytest.main``), and
    :func:`inspect.getmodule`'s file -> module map, which it builds on a miss by resolving
    every loaded module's path (``realpath``: a ``lstat`` per component).  Measured on a
    24-test CLI suite: about 6 ms of CPU per program that has a failing test.
    """
    import argparse
    import inspect
    import io
    import tokenize

    def xml_escape() -> None:
        from _pytest.junitxml import bin_xml_escape

        bin_xml_escape("warm")

    def module_map() -> None:
        # A miss maps every module loaded so far (the suite's too, once collected).
        inspect.getmodule(warm_caches.__code__, "<suitebench: warm the module map>")

    warmers: list[Callable[[], object]] = [
        xml_escape,
        lambda: list(tokenize.generate_tokens(io.StringIO("x = 1\n").readline)),
        lambda: argparse.ArgumentParser(prog="warm", add_help=False),
        module_map,
    ]
    for warm in warmers:
        try:  # only a saving: a warmer that fails leaves its cache to the children, as before
            warm()
        except Exception:
            pass


def run_collected_batch(session: Any, spec_path: str) -> None:
    """The plugin's run loop in batched mode: fork one child per program after collection."""
    from _pytest.junitxml import xml_key

    from suitebench.suite import plugin

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    out_dir = Path(spec["out_dir"])
    workdir = Path(spec["workdir"])
    ran = (workdir / SENTINEL_NAME).exists()
    if ran or _kept_sentinel_path(workdir, str(out_dir / SENTINEL_SCRIPT)):
        # The suite ran the program, or resolved ./executable to where it points, while being
        # imported: collection depends on the program, so collect per program (see main()).
        (out_dir / "needs-recollect").write_text("1", encoding="utf-8")
        return
    logxml = session.config.stash.get(xml_key, None)
    # A child's failure reports end up only in its JUnit XML, which is read for outcomes and
    # for the timeout marker in the crash line (the same in every style): nobody sees the
    # long traceback with source that pytest would format by default (~0.5 ms a failing test,
    # reading and parsing the test's file).  The one-line style keeps what is read.
    session.config.option.tbstyle = "line"
    warm_caches()
    gc.freeze()  # children share the collected session copy-on-write; keep gc off those pages

    def child(program: dict[str, Any]) -> int:
        index = program["index"]
        plugin.open_events(str(out_dir / f"{index}.events"))
        # This program's own log for the watchdog, so a hard hang is attributed to it alone.
        plugin._state["fault_file"] = open(out_dir / f"{index}.log", "a")  # noqa: SIM115
        items = list(session.items)
        if program.get("order") is not None:
            items = plugin.order_items(items, program["order"])
            session.items = items
            plugin._state["exitfirst"] = True
        plugin.emit_collected(items)
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail or session.shouldstop:
                break
        if logxml is not None:
            logxml.logfile = str(out_dir / f"{index}.xml")
            logxml.pytest_sessionfinish()
        return 0

    workdir_state = WorkDir(spec)
    if _bare_state:
        workdir_state.adopt_setup(_bare_state)
    _fork_each(spec, child, workdir_state)


# -- configure once, collect per program (kind = "python") -------------------------------------

# Shared between main() and the plugin's hooks (through the imported module, see main()).
_per_program: dict[str, Any] = {}


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


def prime_rewrite_cache(config: Any, root: Path) -> int:
    """Rewrite the asserts of the suite's modules once, in the parent, for every child.

    pytest rewrites each test module's asserts when it imports it, and caches the result as a
    pyc next to the module -- but not here, where bytecode is not written (a plain run would not
    leave a ``__pycache__`` in the suite).  Each child of a configure-once batch would rewrite
    every test module again (~3 ms a module).  This compiles them once, with the session's own
    configuration, and has pytest's pyc lookup answer from memory when the file's bytes are the
    ones compiled -- the code pytest would have produced, as its own pyc cache does in a normal
    run.  Uses pytest's private rewrite functions: if they are not there as expected, nothing
    is cached and children rewrite as before.  Returns the number of modules cached.
    """
    try:
        from _pytest.assertion import rewrite

        read_pyc = rewrite._read_pyc
        rewrite_test = rewrite._rewrite_test
    except (ImportError, AttributeError):
        return 0
    if config.getoption("assertmode", "rewrite") != "rewrite":
        return 0
    cache: dict[str, tuple[bytes, Any]] = {}
    for path in sorted(root.rglob("*.py")):
        try:
            code = rewrite_test(path, config)[1]
            digest = hashlib.blake2b(path.read_bytes(), digest_size=16).digest()
        except Exception:  # a syntax error: the child's import reports it, as pytest's does
            continue
        if isinstance(code, types.CodeType):
            cache[str(path)] = (digest, code)

    def cached_read_pyc(source: Any, pyc: Any, *args: Any, **kwargs: Any) -> Any:
        hit = cache.get(str(source))
        if hit is not None:
            try:
                data = Path(source).read_bytes()
            except OSError:
                data = None
            if data is not None and hashlib.blake2b(data, digest_size=16).digest() == hit[0]:
                return hit[1]
        return read_pyc(source, pyc, *args, **kwargs)

    rewrite._read_pyc = cached_read_pyc
    return len(cache)


def fork_before_collection(session: Any, spec_path: str) -> bool:
    """The plugin's collection hook in a configure-once batch: fork one child per program
    *before* collection.  True in the parent once every child has run (it collects nothing);
    False in a child, set up for its program, which then collects and runs the suite exactly as
    ``pytest.main`` does -- the test modules, and through them the package under test, are
    imported fresh in every child."""
    from _pytest.junitxml import xml_key

    from suitebench.suite import plugin

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    out_dir = Path(spec["out_dir"])
    _per_program["reached"] = True
    watch: ImportWatch | None = _per_program.get("watch")
    if watch is not None:
        if watch in sys.meta_path:
            sys.meta_path.remove(watch)
        if watch.seen or any(name in sys.modules for name in watch.names):
            # Configuring the suite (conftest, plugins) imported the program: configure anew
            # for every program (see main()).
            (out_dir / "needs-reconfigure").write_text(" ".join(watch.seen), encoding="utf-8")
            return True
    workdir = WorkDir(spec)
    if _bare_state:
        workdir.adopt_setup(_bare_state)
    prime_rewrite_cache(session.config, workdir.path)
    warm_caches()
    gc.collect()
    gc.freeze()
    program = fork_per_program(spec, workdir)
    if program is None:
        return True
    _per_program["child"] = True
    plugin._state["batch_child"] = True
    index = program["index"]
    _redirect_output(out_dir / "batch.log", out_dir / f"{index}.log")
    pythonpath = program.get("pythonpath")
    if pythonpath:
        # Where PYTHONPATH puts it in a plain run: right after the script's directory.
        os.environ["PYTHONPATH"] = pythonpath
        first = _per_program.get("path0")
        sys.path.insert(sys.path.index(first) + 1 if first in sys.path else 0, pythonpath)
    plugin.open_events(str(out_dir / f"{index}.events"))
    plugin._state["fault_file"] = open(out_dir / f"{index}.log", "a")  # noqa: SIM115
    logxml = session.config.stash.get(xml_key, None)
    if logxml is not None:
        logxml.logfile = str(out_dir / f"{index}.xml")
    if program.get("order") is not None:
        order_file = out_dir / f"{index}.order.json"
        order_file.write_text(json.dumps(program["order"]), encoding="utf-8")
        session.config.option.suitebench_order = str(order_file)
    return False


def _configure_once(spec: dict[str, Any], spec_path: str, pytest_args: list[str]) -> bool:
    """Run a ``kind = "python"`` batch with pytest configured once (plugins, conftest files,
    ``pytest_configure`` hooks) and the suite collected in each child; False when it cannot
    be: the suite's configuration imports the program under test, or it never got as far as
    collecting.  Then nothing of the attempt is kept and the caller configures per program."""
    import pytest

    from suitebench.suite import forkserver as shared  # the module the plugin's hooks see

    workdir = Path(spec["workdir"])
    out_dir = Path(spec["out_dir"])
    populate_workdir(workdir, Path(spec["suite_src"]), spec["suite_name"], None)
    shared._bare_state.update(_tree_state(workdir))
    names: set[str] = set()
    for program in spec["programs"]:
        if program.get("pythonpath"):
            names |= provided_names(program["pythonpath"])
    watch = ImportWatch(names)
    shared._per_program.update(watch=watch, path0=sys.path[0])
    initial_path = list(sys.path)
    sys.meta_path.insert(0, watch)
    os.chdir(workdir)
    try:
        code = pytest.main(
            [
                *pytest_args,
                f"--junitxml={out_dir / 'collect.xml'}",
                f"--suitebench-batch={spec_path}",
                "--suitebench-collect-per-program",
            ]
        )
    except BaseException:
        if shared._per_program.get("child"):
            os._exit(3)
        raise
    if shared._per_program.get("child"):  # a child's session ended: its exit is the run's
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    if watch in sys.meta_path:
        sys.meta_path.remove(watch)
    if shared._per_program.get("reached") and not (out_dir / "needs-reconfigure").exists():
        return True
    _forget_suite(workdir, initial_path)
    shared._bare_state.clear()
    return False


def _forget_suite(workdir: Path, initial_path: list[str]) -> None:
    """Undo a set-up attempt before configuring per program: put ``sys.path`` back and forget
    the suite's modules, so that each child imports them as a plain run would."""
    sys.path[:] = initial_path
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(str(workdir)):
            del sys.modules[name]


def _run_forked_main(spec: dict[str, Any], pytest_args: list[str]) -> None:
    """Fork per program, each child running a whole ``pytest.main`` (collects fresh)."""
    import pytest

    out_dir = Path(spec["out_dir"])
    base_path = list(sys.path)
    warm_caches()
    # Children run a whole session each, and pytest ends a session with several full
    # collections (``gc_collect_harder``): without this they would walk every object of this
    # parent each time.  Collect first, so no garbage is frozen: only live objects move to
    # the permanent generation, where no child's collection would have freed them anyway.
    gc.collect()
    gc.freeze()

    def child(program: dict[str, Any]) -> int:
        index = program["index"]
        log = os.open(out_dir / f"{index}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        pythonpath = program.get("pythonpath")
        if pythonpath:
            os.environ["PYTHONPATH"] = pythonpath
            sys.path[:] = [base_path[0], pythonpath, *base_path[1:]]
        order: list[str] = []
        if program.get("order") is not None:
            order_file = out_dir / f"{index}.order.json"
            order_file.write_text(json.dumps(program["order"]), encoding="utf-8")
            order = [f"--suitebench-order={order_file}"]
        args = [
            *pytest_args,
            *order,
            f"--junitxml={out_dir / f'{index}.xml'}",
            f"--suitebench-events={out_dir / f'{index}.events'}",
            f"--suitebench-faultlog={out_dir / f'{index}.log'}",
        ]
        return int(pytest.main(args))

    _fork_each(spec, child)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    # The batch's terminal output goes to a file, not the sandbox's capped pipe: many programs'
    # failure reports must not add up to an output limit a single plain run would not hit.
    log = os.open(Path(spec["out_dir"]) / "batch.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    import pytest
    from _pytest.config import default_plugins

    for name in default_plugins:  # pay for every import once, before the first fork
        try:
            __import__(f"_pytest.{name}")
        except ImportError:
            pass
    import suitebench.suite.plugin  # noqa: F401
    from suitebench.suite import promptwait

    if spec.get("prompt_wait", True):
        promptwait.install()  # every child inherits it: no idle poll after each spawn
    from suitebench.suite import promptwait

    if spec.get("prompt_wait", True):
        promptwait.install()  # every child inherits it: no idle poll after each spawn

    out_dir = Path(spec["out_dir"])
    workdir = Path(spec["workdir"])
    pytest_args: list[str] = list(spec["pytest_args"])
    if spec["collect_once"]:
        marker = workdir / SENTINEL_NAME
        populate_workdir(workdir, Path(spec["suite_src"]), spec["suite_name"], None)
        sentinel = out_dir / SENTINEL_SCRIPT
        sentinel.write_text(_SENTINEL_SCRIPT.format(marker=marker), encoding="utf-8")
        sentinel.chmod(0o755)
        os.symlink(sentinel, workdir / "executable")
        # To tell what the suite's set-up writes.  Kept where the plugin's run loop finds it:
        # run as ``python -m``, this module is ``__main__``, not the one the plugin imports.
        from suitebench.suite import forkserver

        forkserver._bare_state.update(_tree_state(workdir))
        os.chdir(workdir)
        initial_path = list(sys.path)
        pytest.main(
            [
                *pytest_args,
                f"--junitxml={out_dir / 'collect.xml'}",
                f"--suitebench-batch={args[0]}",
            ]
        )
        if not (out_dir / "needs-recollect").exists():
            _note_mode(out_dir, "collect-once")
            return 0
        _forget_suite(workdir, initial_path)  # collecting per program after all
    elif spec.get("configure_once", True) and _configure_once(spec, args[0], pytest_args):
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
