"""Per-test coverage of the program under test, recorded inside the pytest process.

Coverage-guided test selection (what mutmut, Stryker and PIT call per-test coverage) runs on a
mutant only the tests that reach the code it changes.  This recorder says, for one run of the
suite on the reference, which functions of the program each test entered (by the first line of
their ``def``: the line of the first decorator if any, as ``co_firstlineno``; a lambda by its
own first line; module code is 0).  Function granularity is what selection uses (a changed
line counts as reached whenever its function runs).

How: the program's modules are imported through a loader that adds, at the top of every
function body (after its docstring), of every lambda's body and of the module, a call noting
that function -- the source file and its line numbers stay as they are.  Unlike ``sys.settrace`` or
``sys.setprofile`` (Python 3.11 has no ``sys.monitoring``), this costs nothing outside the
program's own function calls: a coverage run takes about the time of a plain one.  A module of
the program already imported when recording starts cannot be instrumented: it is listed as
``preloaded`` and coverage is then unknown.

Lines executed outside any test -- while pytest configures and collects (module-level code of
the package, a test module calling it at import) or between tests -- belong to the context
``OUTSIDE``; functions entered while setting up a fixture shared beyond one test belong to
``fixture:<name>``, and so to every test that uses that fixture.  A Python process a test
starts is traced too, for that test (:mod:`suitebench.suite.inside.probe.subcoverage`); a test that
starts anything else, forks, or starts a Python process that leaves no record is listed in
``spawned``: what that process ran is not seen, so its coverage is unknown.  ``suite_calls``
lists the program functions entered outside any test and outside the program's own import
(the suite's collection ran them); ``writes``, the program globals each test changed and left
changed (the fingerprint of the program's globals taken after every test), and ``order`` the
tests in the order they ran, so that selection can tell which tests the state one leaves for
the next ties together; ``unknown_state``, the globals whose state cannot be fingerprinted (each
test that names one is taken to change it).  Standard library only: it runs inside the
sandbox.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import importlib.abc
import importlib.machinery
import json
import os
import sys
from collections.abc import Sequence
from types import CodeType, ModuleType
from typing import Any

from suitebench.suite.inside.probe.defaults import (
    DEFAULT_PROBE,
    install_defaults,
    make_default_probe,
    watch_signatures,
)
from suitebench.suite.inside.probe.fingerprint import program_modules, state_of
from suitebench.suite.inside.probe.impact import code_names
from suitebench.suite.inside.probe.infection import PROBE, install, make_probe
from suitebench.suite.inside.probe.subcoverage import (
    CONTEXT,
    DIRECTORY,
    PROBES,
    ROOT,
    Starts,
    enable,
    merge,
    switch,
)

OUTSIDE = "<outside tests>"
FIXTURE_PREFIX = "fixture:"
HIT = "__suitebench_hit__"
HIT_LINE = "__suitebench_line__"
_SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}
)


def _hit_call(rel: str, key: int, where: ast.AST) -> ast.stmt:
    call = ast.Expr(ast.Call(ast.Name(HIT, ast.Load()), [ast.Constant(rel), ast.Constant(key)], []))
    return ast.fix_missing_locations(ast.copy_location(call, where))


def _after_docstring(body: list[ast.stmt], future: bool = False) -> int:
    index = 0
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        index = 1 if isinstance(first.value.value, str) else 0
    while future and index < len(body):
        node = body[index]
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            index += 1
        else:
            break
    return index


def _line_call(rel: str, stmt: ast.stmt) -> ast.stmt:
    call = ast.Call(
        ast.Name(HIT_LINE, ast.Load()), [ast.Constant(rel), ast.Constant(stmt.lineno)], []
    )
    return ast.fix_missing_locations(ast.copy_location(ast.Expr(call), stmt))


# The statement lists of a compound statement (a nested function's are its own).
_BLOCKS = ("body", "orelse", "finalbody")


def _with_lines(rel: str, body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with a note before every statement, into the blocks of compound statements
    (an ``elif`` is an ``if`` in its parent's ``orelse``), not into nested functions."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(_line_call(rel, stmt))
        out.append(stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for name in _BLOCKS:
            block = getattr(stmt, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(stmt, name, _with_lines(rel, block))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = _with_lines(rel, handler.body)
        for case in getattr(stmt, "cases", ()):
            case.body = _with_lines(rel, case.body)
    return out


class _Instrument(ast.NodeTransformer):
    def __init__(self, rel: str) -> None:
        self.rel = rel

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        self.generic_visit(node)
        key = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        at = _after_docstring(node.body)
        where = node.body[at] if at < len(node.body) else node.body[-1]
        node.body[at:] = _with_lines(self.rel, node.body[at:])
        node.body.insert(at, _hit_call(self.rel, key, where))
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        """A lambda is entered when its body runs: ``note(...) or body`` (the note returns
        None), by its first line, as its ``co_firstlineno``."""
        self.generic_visit(node)
        note = ast.Call(
            ast.Name(HIT, ast.Load()), [ast.Constant(self.rel), ast.Constant(node.lineno)], []
        )
        body = ast.BoolOp(ast.Or(), [note, node.body])
        node.body = ast.fix_missing_locations(ast.copy_location(body, node.body))
        return node


def instrumented(
    source: bytes,
    path: str,
    rel: str,
    probes: Sequence[list[Any]] = (),
    installed: set[int] | None = None,
) -> CodeType:
    """The module's code with a note of every function entered and of every statement run in
    a function body, by its first line (lines unchanged); and ``probes`` (this file's) compiled
    in (:mod:`suitebench.suite.inside.probe.infection`), their sites added to ``installed``."""
    tree = ast.parse(source, path)
    if probes:
        done = install(tree, probes) | install_defaults(tree, rel, probes)
        if installed is not None:
            installed |= done
    tree = _Instrument(rel).visit(tree)
    if tree.body:
        at = _after_docstring(tree.body, future=True)
        where = tree.body[at] if at < len(tree.body) else tree.body[-1]
        tree.body.insert(at, _hit_call(rel, 0, where))
    return compile(tree, path, "exec", dont_inherit=True)


def function_names(code: CodeType) -> dict[int, set[str]]:
    """For every function of a module's code, by its key (``co_firstlineno``), the names it
    can read (:func:`suitebench.suite.inside.probe.impact.code_names`), for import-time impact; and
    under key 0 the module's own code's (class bodies included, not the functions')."""
    ours = {HIT, PROBE, DEFAULT_PROBE}
    found: dict[int, set[str]] = {0: code_names(code, functions=False) - ours}
    stack = [c for c in code.co_consts if isinstance(c, CodeType)]
    while stack:
        current = stack.pop()
        found.setdefault(current.co_firstlineno, set()).update(code_names(current) - ours)
        stack.extend(c for c in current.co_consts if isinstance(c, CodeType))
    return found


class _Loader(importlib.machinery.SourceFileLoader):
    rel = ""
    tracer: LineTracer | None = None

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        tracer = self.tracer
        probes = () if tracer is None else tracer.probes.get(self.rel, ())
        installed = None if tracer is None else tracer.probed
        code = instrumented(self.get_data(path), path, self.rel, probes, installed)
        if tracer is not None:
            tracer.names[self.rel] = function_names(code)
        return code

    def exec_module(self, module: ModuleType) -> None:
        tracer = self.tracer
        if tracer is not None:
            tracer.importing += 1
        try:
            super().exec_module(module)
        finally:
            if tracer is not None:
                tracer.importing -= 1
        if tracer is not None:
            tracer.imported(module)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, tracer: LineTracer) -> None:
        self.tracer = tracer

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            return None
        rel = self.tracer.relative(spec.origin)
        if rel is None:
            return None
        loader = _Loader(fullname, spec.origin)
        loader.rel = rel
        loader.tracer = self.tracer
        spec.loader = loader
        return spec


class LineTracer:
    """Records ``{context: {file relative to root: {function key, ...}}}`` while started."""

    def __init__(self, root: str, path: str, probes: str | None = None) -> None:
        self.root = os.path.realpath(root).rstrip("/") + "/"
        self.path = path
        # Weak mutation (:mod:`.infection`): the probes to compile in, by file, read from the
        # file ``probes`` names, and the sites compiled in so far.
        self.probes_file = probes
        self.probes: dict[str, list[list[Any]]] = {}
        if probes:
            with open(probes, encoding="utf-8") as fh:
                for probe in json.load(fh):
                    self.probes.setdefault(str(probe[1]), []).append(probe)
        self.probed: set[int] = set()
        self.contexts: dict[str, dict[str, set[int]]] = {}
        # {context: {file: {first line of each statement run in a function body}}}
        self.lines: dict[str, dict[str, set[int]]] = {}
        self.name = OUTSIDE
        self.current = self._context(OUTSIDE)
        self.current_lines = self.lines.setdefault(OUTSIDE, {})
        self.stack: list[tuple[str, dict[str, set[int]]]] = []
        self.fixtures: dict[str, list[str]] = {}
        self.starts = Starts()  # the processes each context started
        self.subcoverage: str | None = None  # where started Python processes write records
        self.preloaded: list[str] = []
        self.names: dict[str, dict[int, set[str]]] = {}  # file -> function -> names read
        self.test_names: dict[str, list[str]] = {}  # test -> names its own code reads
        # Program functions entered outside any test and outside the program's own import
        # (the suite's module-level code or a hook called them while being collected).
        self.suite_calls: set[str] = set()
        self.importing = 0  # program modules being imported right now
        # The program globals each test changed and left changed ("module:global"); None
        # when the program's state cannot be fingerprinted.
        self.writes: dict[str, list[str]] | None = {}
        # The globals whose state cannot be fingerprinted (a lock, a random generator): left
        # out of ``writes``; the host takes every test that names one to change it.
        self.unknown_state: set[str] = set()
        self.state: dict[str, object] | None = None  # the program's state after the last test
        # Program modules the running test imported first, by name: their globals as their
        # import left them, or None when the test had changed the program's state before
        # (what that import built may differ from what another test's import of it builds).
        self.fresh: dict[str, dict[str, object] | None] = {}
        self._modules: tuple[int, list[tuple[str, ModuleType]]] | None = None
        self.active = False
        self._finder = _Finder(self)

    def _context(self, name: str) -> dict[str, set[int]]:
        return self.contexts.setdefault(name, {})

    def relative(self, filename: str) -> str | None:
        real = os.path.realpath(filename)
        return real[len(self.root) :] if real.startswith(self.root) else None

    def hit(self, rel: str, key: int) -> None:
        functions = self.current.get(rel)
        if functions is None:
            functions = self.current[rel] = set()
        functions.add(key)
        if key and not self.importing and self.name == OUTSIDE:
            self.suite_calls.add(f"{rel}:{key}")

    def line(self, rel: str, line: int) -> None:
        lines = self.current_lines.get(rel)
        if lines is None:
            lines = self.current_lines[rel] = set()
        lines.add(line)

    def _audit(self, event: str, args: Any) -> None:
        if self.active and event in _SPAWN_EVENTS:
            self.starts.saw(self.name, event, args)

    def start(self, subprocesses: bool = False) -> None:
        """Record from now on; ``subprocesses``: the Python processes started too (the run's
        tracer, not a started process's own)."""
        if self.active:
            return
        self.active = True
        if subprocesses:
            self.subcoverage = f"{self.path}.processes"
            enable(self.subcoverage, self.root, self.probes_file)
        for name, module in list(sys.modules.items()):
            origin = getattr(module, "__file__", None)
            if origin and self.relative(origin) is not None:
                self.preloaded.append(name)
        setattr(builtins, HIT, self.hit)
        setattr(builtins, HIT_LINE, self.line)
        setattr(builtins, PROBE, make_probe(self.line))
        setattr(builtins, DEFAULT_PROBE, make_default_probe(self.line))
        watch_signatures(self.line)
        sys.addaudithook(self._audit)
        sys.meta_path.insert(0, self._finder)

    def stop(self) -> None:
        self.active = False
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def _switch(self, name: str) -> None:
        self.name = name
        self.current = self._context(name)
        self.current_lines = self.lines.setdefault(name, {})
        switch(name)

    def enter_context(self, name: str) -> None:
        """A started process records in the context of the test that started it."""
        self._switch(name)

    def enter_test(self, nodeid: str, fixturenames: list[str]) -> None:
        self.fixtures[nodeid] = fixturenames
        self.stack.clear()
        self.fresh.clear()
        if self.state is None and self.writes is not None:
            self.state = self._state()
        self._switch(nodeid)

    def leave_test(self) -> None:
        test = self.name
        self._switch(OUTSIDE)
        if self.state is not None and self.writes is not None:
            after = self._state()
            if after is not None:
                changed = {k for k in self.state.keys() | after.keys()
                           if self.state.get(k) != after.get(k)
                           and not self._as_imported(k, after)}  # fmt: skip
                if changed:
                    self.writes[test] = sorted(changed)
            self.state = after

    def imported(self, module: ModuleType) -> None:
        """A program module's import ended: if a test imported it first, note its globals as
        the import left them.  A later test importing it in a run without this one builds the
        same globals, so only what differs from them at the test's end is state the test left
        (a whole module counted as written tied every later test reading any of its names to
        this one).  When the test had changed the program's globals before importing it, the
        import may have read those changes: then all of the module counts, as before."""
        before = self.state
        if before is None or self.writes is None or self.name == OUTSIDE:
            return
        name = module.__name__
        prefix = name + ":"
        if name in self.fresh or any(k.startswith(prefix) for k in before):
            return
        now = self._state()
        if now is None:
            return
        known = {k.split(":", 1)[0] for k in before}
        untouched = all(
            before.get(k) == v for k, v in now.items() if k.split(":", 1)[0] in known
        ) and all(k in now for k in before)
        self.fresh[name] = (
            {k: v for k, v in now.items() if k.startswith(prefix)} if untouched else None
        )
        parent, _, child = name.rpartition(".")
        if parent and untouched and not (parent in self.fresh and self.fresh[parent] is None):
            # the import binds it on its package next: that binding is the import's too
            self.fresh.setdefault(parent, {})[f"{parent}:{child}"] = id(module)  # type: ignore[index]

    def _as_imported(self, label: str, after: dict[str, object]) -> bool:
        """``label`` is a global of a module the test imported first, as its import left it."""
        assert self.state is not None
        snapshot = self.fresh.get(label.split(":", 1)[0])
        return (
            snapshot is not None
            and label not in self.state
            and label in snapshot
            and label in after
            and snapshot[label] == after[label]
        )

    def _state(self) -> dict[str, object] | None:
        """What of the program's globals a test can change
        (:func:`suitebench.suite.inside.probe.impact. state_of`), to tell which tests change them (a
        cache filled, a registry appended to): None, and no more tries, when it cannot be taken."""
        root = self.root.rstrip("/")
        try:
            if self._modules is None or self._modules[0] != len(sys.modules):
                self._modules = (len(sys.modules), program_modules(root))
            return state_of(root, self._modules[1], self.unknown_state)
        except Exception:  # Unknown, or an object whose attributes raise
            self.writes = None
            return None

    def enter_fixture(self, argname: str) -> None:
        self.stack.append((self.name, self.current))
        self._switch(FIXTURE_PREFIX + argname)

    def leave_fixture(self) -> None:
        if self.stack:  # back to the test (its statements, the processes it starts)
            self._switch(self.stack.pop()[0])

    def to_dict(self) -> dict[str, Any]:
        if self.subcoverage is not None:
            spawned = merge(self.contexts, self.lines, self.starts, self.subcoverage, self.probed)
        else:
            spawned = self.starts.other | set(self.starts.python)
        return {
            "version": 1,
            "granularity": "function",  # and "lines": statements run in function bodies
            "contexts": {
                ctx: {f: sorted(lines) for f, lines in files.items()}
                for ctx, files in self.contexts.items()
            },
            "lines": {
                ctx: {f: sorted(lines) for f, lines in files.items() if lines}
                for ctx, files in self.lines.items()
                if any(files.values())
            },
            "fixtures": self.fixtures,
            "spawned": sorted(spawned),
            "preloaded": self.preloaded,
            "names": {
                f: {str(k): sorted(v) for k, v in keys.items()} for f, keys in self.names.items()
            },
            "test_names": self.test_names,
            "suite_calls": sorted(self.suite_calls),
            "writes": self.writes,
            "unknown_state": sorted(self.unknown_state),
            "order": list(self.fixtures),  # the tests in the order they started
            "patterns": compiled_patterns(),
            "probed": sorted(self.probed),  # the weak-mutation sites compiled in
        }

    def write(self) -> None:
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh)


def start_here() -> None:
    """In a Python process a test started (its ``sitecustomize``, :mod:`.subcoverage`): record
    what it enters, for that test, and write it when the process exits."""
    directory = os.environ[DIRECTORY]
    path = os.path.join(directory, f"{os.getpid()}.json")
    tracer = LineTracer(os.environ[ROOT], path, os.environ.get(PROBES) or None)
    tracer.writes = None  # its globals end with it: nothing for a later test to read
    context = os.environ.get(CONTEXT, OUTSIDE)
    tracer.enter_context(context)
    tracer.start()

    def write() -> None:
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        record = {
            "context": context,
            "main": tracer.relative(main) if isinstance(main, str) else None,
            "files": {f: sorted(k) for f, k in tracer.contexts.get(context, {}).items()},
            "lines": {f: sorted(k) for f, k in tracer.lines.get(context, {}).items()},
            "spawned": bool(tracer.starts.python or tracer.starts.other),
            "preloaded": tracer.preloaded,
            "probed": sorted(tracer.probed),
        }
        with open(tracer.path, "w", encoding="utf-8") as fh:
            json.dump(record, fh)

    atexit.register(write)


def compiled_patterns(most: int = 512) -> list[list[Any]]:
    """The regular expressions compiled in this process so far, as ``[pattern, flags]`` (text
    patterns only, at most ``most``): read from :mod:`re`'s cache at the end of the
    reference's coverage run, for :func:`suitebench.suite.inside.batch.warm.warm_patterns`.  Empty
    if the cache is not where it is expected."""
    import re

    found: list[list[Any]] = []
    for cache in (getattr(re, "_cache", None), getattr(re, "_cache2", None)):
        for key in list(cache) if isinstance(cache, dict) else []:
            if (
                isinstance(key, tuple)
                and len(key) == 3
                and key[0] is str
                and isinstance(key[1], str)
                and isinstance(key[2], int)
                and [key[1], int(key[2])] not in found
            ):
                found.append([key[1], int(key[2])])
    return found[-most:]
