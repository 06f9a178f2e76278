"""The batched engine's work dir: what each program's tests start from, in both engines.

Tests find the program under test as ``./executable`` in their working directory (the
ProgramBench convention) next to a fresh copy of the suite as ``tests/``.  The plain engine fills
a work dir once per run; the batched engine once per program, refilling it only when a child
changed it.  This module must stay importable with nothing but the standard library: it runs
inside the sandbox.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from pathlib import Path

from suitebench.suite.inside.wire import BatchSpec


def program_links(
    executable: str | None,
    suite_name: str,
    exe_link: str | None = None,
    beside: Path | str | None = None,
) -> dict[str, str]:
    """What a program under test puts in the tests' working directory: ``./executable``, and
    beside it every other top-level entry of the tree its build left it in (ProgramBench runs
    the tests where the build happened: a launcher running ``"$(dirname "$0")/main.py"``, data
    files and shared libraries next to the executable must be found), each a link into the
    build tree, which the sandbox shows read-only.  The suite's own directory and the files
    staged ``beside`` it (:func:`copy_beside`) keep their names."""
    if executable is None:
        return {}
    links = {"executable": exe_link or executable}
    tree = os.path.dirname(executable)
    try:
        names = sorted(os.listdir(tree))
    except OSError:
        names = []
    taken = {suite_name, "executable", *(os.listdir(beside) if beside is not None else ())}
    for name in names:
        if name not in taken:
            links[name] = os.path.join(tree, name)
    return links


def link_program(workdir: Path, links: dict[str, str]) -> None:
    for name, target in links.items():
        os.symlink(target, workdir / name)


def unlink_program(workdir: Path, links: dict[str, str]) -> None:
    for name in links:
        (workdir / name).unlink(missing_ok=True)


def populate_workdir(
    workdir: Path,
    suite_src: Path,
    suite_name: str,
    executable: str | None,
    exe_link: str | None = None,
    beside: Path | str | None = None,
) -> dict[str, str]:
    """A fresh copy of the suite under ``workdir/suite_name``, the program linked beside it
    (:func:`program_links`) and the project's files ``beside`` it (:func:`copy_beside`); the
    links made.

    Shared by both engines: the plain engine calls it once per run, the batched engine once
    per program, so tests see the same layout either way.  ``exe_link``: what ``./executable``
    links to instead of the program itself (the coverage run's launcher).
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
    copy_beside(beside, workdir)
    links = program_links(executable, suite_name, exe_link, beside)
    link_program(workdir, links)
    return links


def copy_beside(beside: Path | str | None, workdir: Path) -> None:
    """Copy the files staged beside the suite (the carried ``pytest.ini``, the project's root
    ``conftest.py``, the instance's ``beside`` entries) into the work dir's root, read-only
    to the tests: they are the project's, which a test may read but not rewrite for the next."""
    if beside is None:
        return
    for entry in sorted(Path(beside).iterdir()):
        target = workdir / entry.name
        if entry.is_dir():
            shutil.copytree(entry, target, symlinks=True)
        else:
            shutil.copy(entry, target)
        _read_only(target)


def _read_only(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555 if os.stat(path).st_mode & 0o100 else 0o444)
    if root.is_file() and not root.is_symlink():
        os.chmod(root, 0o555 if os.stat(root).st_mode & 0o100 else 0o444)


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


Entry = tuple[int, int, int, int, int, bytes | None]
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


def tree_state(root: Path, like: dict[str, Entry] | None = None) -> dict[str, Entry]:
    """What a child could have changed in a tree: each entry's inode, mode, size, mtime and
    ctime (``lstat``; a ctime cannot be set back from user space, so a write never hides),
    plus the content of entries too young for their timestamps to be trusted (and of those
    ``like``, a state taken earlier, holds content for)."""
    now = time.time_ns()
    state: dict[str, Entry] = {}
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
    :func:`tree_state` differs from how the last child found it -- otherwise only the
    program's links (``executable`` and its build tree's entries) are swapped.
    """

    def __init__(self, spec: BatchSpec) -> None:
        self.path = Path(spec["workdir"])
        self.suite_src = Path(spec["suite_src"])
        self.suite_name = str(spec["suite_name"])
        self.scratch = [Path(p) for p in spec.get("scratch", ())]
        self.beside: str | None = spec.get("beside")
        self.baseline: dict[str, Entry] | None = None
        self.template: Path | None = None
        self.refills = 0
        self.links: dict[str, str] = {}  # the program's links now in the work dir

    def adopt_setup(self, bare: dict[str, Entry]) -> bool:
        """Start every child from the work dir and scratch dirs as they are now, after the
        suite's set-up, if that set-up changed them from ``bare`` (the state before it);
        whether it did.  The program's links are left out: each child gets its own."""
        changed = tree_state(self.path, bare) != bare
        if not changed and not any(any(d.iterdir()) for d in self.scratch):
            return False
        template = self.path.parent / "setup-template"
        shutil.rmtree(template, ignore_errors=True)
        top = str(self.path)
        own = {"executable", *self.links}
        shutil.copytree(
            self.path,
            template / "work",
            symlinks=True,
            ignore=lambda d, names: [n for n in names if n in own] if d == top else [],
        )
        for i, directory in enumerate(self.scratch):
            shutil.copytree(directory, template / f"scratch{i}", symlinks=True)
        self.template = template
        self.baseline = None  # the first child starts from a copy of the template too
        return True

    def _refill(self, executable: str | None) -> None:
        self.refills += 1
        if self.template is None:
            self.links = populate_workdir(
                self.path, self.suite_src, self.suite_name, executable, beside=self.beside
            )
            return
        _empty_dir(self.path)
        _copy_into(self.template / "work", self.path)
        open_up(self.path)
        for name in os.listdir(self.beside) if self.beside is not None else ():
            _read_only(self.path / name)  # as copy_beside left them
        self.links = program_links(executable, self.suite_name, beside=self.beside)
        link_program(self.path, self.links)

    def prepare(self, executable: str | None) -> None:
        if self.baseline is None or tree_state(self.path, self.baseline) != self.baseline:
            self._refill(executable)
        else:
            unlink_program(self.path, {"executable": "", **self.links})
            self.links = program_links(executable, self.suite_name, beside=self.beside)
            link_program(self.path, self.links)
        for i, directory in enumerate(self.scratch):
            _empty_dir(directory)
            if self.template is not None:
                saved = self.template / f"scratch{i}"
                _copy_into(saved, directory)
                open_up(directory)
        self.baseline = tree_state(self.path)


def collect_only(args: list[str], select: tuple[str, ...] | list[str] | None) -> list[str]:
    """pytest's arguments with the suite directory (the last one) replaced by the files that
    hold the selected tests: a mutant's run collects only what it runs.  A selected doctest of
    the package under test (``pkg/mod.py::pkg.mod.f``) is not in the suite's directory: the
    plugin collects the package itself (:mod:`.doctests`)."""
    if select is None:
        return args
    suite = args[-1].rstrip("/") + "/"
    files = sorted({t.split("::", 1)[0] for t in select if t.startswith(suite)})
    return [*args[:-1], *files] if files else args
