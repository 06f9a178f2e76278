"""Per-test coverage through the Python processes a test starts (``python -m package``).

A project's command-line tests run the program in a child interpreter
(``subprocess.run([sys.executable, "-m", "slugify", ...])``).  Without a look inside that
child, such a test's coverage is unknown and it runs on every mutant -- on python-slugify,
three such tests cost more than every other test together.  During the reference's coverage
run, each Python process a test starts is traced too: ``subcover/sitecustomize.py`` (last on
``PYTHONPATH`` in that run only) starts a :class:`~suitebench.suite.inside.probe.tracer.LineTracer`
in it (:func:`~suitebench.suite.inside.probe.tracer.start_here`), in the context of the test that
started it (the environment says which), and the process writes what it entered when it
exits.  The run's tracer then merges those records into the test's coverage.  This module is
what both sides share (the environment, counting the starts, reading the records back); it
does not import the tracer, which imports it.

A test stays unknown (``spawned``) unless every process it started is accounted for: a start
that is not a Python interpreter (a shell, another program, ``os.fork``), a Python process that
left no record (killed, ``os._exit``, run with ``-I``/``-E``/``-S`` so that it never read
``sitecustomize``, given an environment of its own), or one that itself started a process or
had the program imported before tracing began.  Standard library only: it runs in the sandbox.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from typing import Any

DIRECTORY = "SUITEBENCH_SUBCOVERAGE"  # where the started processes write their records
ROOT = "SUITEBENCH_SUBCOVERAGE_ROOT"  # the program's source root (what is traced)
CONTEXT = "SUITEBENCH_SUBCOVERAGE_CONTEXT"  # the test (or fixture) running now
PROBES = "SUITEBENCH_SUBCOVERAGE_PROBES"  # the weak-mutation probes to compile in (a file)
# A module's own code (key 0) run in a process the context started: an import there, in a
# fresh interpreter, is not an import in the suite's process (a change to the module's code
# reaches that test through its process, and no other test by it).
SPAWNED_IMPORT = -1
# The module a started process ran as ``__main__`` (``python -m package`` runs its
# ``__main__.py``): its own code runs as a script there, unlike any import of it, so what a
# change to it does in that process is not what the suite's import of it shows.
SPAWNED_MAIN = -2
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
_SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "subcover")


def python_like(executable: Any) -> bool:
    """A start of a Python interpreter (what the child's ``sitecustomize`` traces)."""
    if isinstance(executable, bytes):
        executable = os.fsdecode(executable)
    if not isinstance(executable, (str, os.PathLike)):
        return False
    path = os.fspath(executable)
    if os.path.realpath(path) == os.path.realpath(sys.executable):
        return True
    return _PYTHON.match(os.path.basename(path)) is not None


def _started(event: str, args: Any) -> Any:
    """The program an audit event starts, when it names one (``subprocess.Popen``:
    ``executable`` or ``args[0]``; ``os.posix_spawn``/``os.exec``: the path); else None."""
    if event == "subprocess.Popen":
        executable, argv = args[0], args[1]
        if executable is not None:
            return executable
        if isinstance(argv, (list, tuple)) and argv:
            return argv[0]
        return None  # a command string: run by a shell
    if event in ("os.posix_spawn", "os.exec"):
        return args[0]
    return None


class Starts:
    """The processes each context started, by the audit events of the run's tracer."""

    def __init__(self) -> None:
        self.python: Counter[str] = Counter()  # Python interpreters started, per context
        self.other: set[str] = set()  # contexts that started anything else (or forked)
        self._popen: Any = None  # a Popen's program: its own posix_spawn is not a 2nd start

    def saw(self, context: str, event: str, args: Any) -> None:
        program = _started(event, args)
        if event == "os.posix_spawn" and self._popen is not None and program == self._popen:
            self._popen = None
            return
        self._popen = program if event == "subprocess.Popen" else None
        if program is not None and python_like(program):
            self.python[context] += 1
        else:
            self.other.add(context)


def enable(directory: str, root: str, probes: str | None = None) -> None:
    """Trace the Python processes started from now on (the reference's coverage run), with
    the weak-mutation probes in the file ``probes`` compiled in."""
    os.makedirs(directory, exist_ok=True)
    os.environ[DIRECTORY] = directory
    os.environ[ROOT] = root
    if probes:
        os.environ[PROBES] = probes
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([*paths, _SITE_DIR])


def switch(context: str) -> None:
    """The context processes started from now on belong to."""
    if DIRECTORY in os.environ:
        os.environ[CONTEXT] = context


def merge(
    contexts: dict[str, dict[str, set[int]]],
    lines: dict[str, dict[str, set[int]]],
    starts: Starts,
    directory: str,
    probed: set[int] | None = None,
) -> set[str]:
    """Fold the started processes' records into ``contexts`` (functions entered; a module's
    own code as :data:`SPAWNED_IMPORT`, the one run as ``__main__`` as :data:`SPAWNED_MAIN`),
    ``lines`` (statements run, and infections) and
    ``probed`` (the weak-mutation sites compiled in); the contexts whose coverage stays
    unknown (a start not accounted for)."""
    unknown = set(starts.other)
    records: Counter[str] = Counter()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        names = []
    for name in names:
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            continue
        context = str(record["context"])
        records[context] += 1
        if record["spawned"] or record["preloaded"]:
            unknown.add(context)
        files = contexts.setdefault(context, {})
        main = record.get("main")
        for rel, keys in record["files"].items():
            own = SPAWNED_MAIN if rel == main else SPAWNED_IMPORT
            files.setdefault(rel, set()).update(int(k) or own for k in keys)
        files = lines.setdefault(context, {})
        for rel, keys in record.get("lines", {}).items():
            files.setdefault(rel, set()).update(int(k) for k in keys)
        if probed is not None:
            probed.update(int(k) for k in record.get("probed", ()))
    unknown.update(c for c, n in starts.python.items() if records[c] < n)
    return unknown
