"""Coverage-guided test selection: run on a mutant only the tests that can see it.

A full kill matrix needs every test's outcome on every mutant, but a test that never executes
the code a mutant changes has, on that mutant, the outcome it has on the reference.  One extra
run of the suite on the reference records which functions each test enters (per-test coverage:
:mod:`suitebench.suite.inside.probe.tracer` for ``kind = "python"``, a ``gcc --coverage`` build of
the reference for command-line programs built with gcc, :mod:`suitebench.suite.execute.gcov`).  A
mutant's patch names the reference lines it changes; each changed line is widened to the function
whose body holds it (so a changed declaration, ``else:`` or continuation line counts as reached
whenever its function runs), and the mutant runs exactly the tests that entered such a
function -- plus:

* every test, when a change is not inside a function body (module or class level code, a
  global, a preprocessor line: code that runs on import or shapes the whole program), when a
  changed function also ran outside any test (while pytest collected), when the patch adds,
  removes or renames a file or changes one coverage does not track -- but a Python module of
  the program that the coverage run never imported (a platform's backend elsewhere) is
  reached by no test whose coverage is known, so it adds none;
* every test using a shared fixture (module, class or session scope) whose set-up reached it;
* every test whose coverage is unknown: it started a process or forked (what that process ran
  is not seen), or its outcome in the coverage run differs from the reference runs', or it is
  flaky;
* the tests tied to those by state one test leaves for the next: the coverage run fingerprints
  the program's globals after each test, and a selected test that changed some (a cache
  filled, a registry appended to) brings every later test that reads one -- a test reading a
  parse another test cached under the mutant never enters the changed code -- while a selected
  test reading them brings the earlier tests that changed them
  (:func:`suitebench.suite.inside.probe.impact.carried_by_state`).

Unknown coverage (the coverage run failed, a program not built with it) means all tests.  The
tests left out keep their reference outcome, marked not covered (Stryker's ``NoCoverage``).
This assumes a test's outcome depends on the code it runs and the program state it reads, not
on state outside the program's modules an earlier test left behind (files, environment
variables, other libraries' globals), nor, where the program's state cannot be fingerprinted,
on program state an earlier test left behind other than through the functions it enters: then
no test is left out by statement (:mod:`.linecover`) or by weak mutation (:mod:`.infection`),
only by function -- a table built by the first test that needs it is read, not built, by every
later one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suitebench.suite.execute.patching import patched_sources
from suitebench.suite.inside.probe.impact import DYNAMIC_NAMES, STAR, carried_by_state
from suitebench.suite.inside.probe.infection import INFECTED
from suitebench.suite.inside.probe.subcoverage import SPAWNED_IMPORT, SPAWNED_MAIN
from suitebench.suite.inside.probe.tracer import FIXTURE_PREFIX, OUTSIDE
from suitebench.suite.select.lambdas import Changed, lambda_key
from suitebench.suite.select.linecover import (
    Shape,
    Statement,
    innermost,
    same_shape,
    shape_of,
    statements,
)
from suitebench.suite.select.patchlines import FileChange, changed_lines

# A function: its body's first and last line, its body's indentation, and the line coverage
# names it by (Python: ``co_firstlineno``, the first decorator's line or the ``def``'s).
Span = tuple[int, int, int, int]


def python_spans(source: str) -> list[Span]:
    """The body of every function in a Python module: its statements after the docstring.
    The ``def`` line, decorators and docstring are not body: they are evaluated or stored when
    the module is imported, and a test sees them without entering the function (a renamed
    parameter fails the call before it enters; ``f.__doc__`` is read, not run)."""
    spans: list[Span] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            start = first.lineno
            if ast.get_docstring(node, clean=False) is not None:
                if len(node.body) == 1:
                    continue  # no statement to run
                start = (first.end_lineno or first.lineno) + 1
                first = node.body[1]
            if start <= node.lineno:
                continue  # ``def f(x=1): return x``: the header shares the body's line
            key = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.append((start, node.end_lineno or first.lineno, first.col_offset, key))
    return spans


def _innermost(spans: Iterable[Span], line: int, indent: int | None = None) -> Span | None:
    """The innermost function whose body holds ``line`` (and, for an insertion after it at
    ``indent``, whose body the inserted line is indented into)."""
    best: Span | None = None
    for span in spans:
        first, last, body_indent, _ = span
        # an insertion after the line before the body (the ``def`` line or the docstring's
        # last) is the body's new first statement
        low = first if indent is None else first - 1
        if not low <= line <= last or (indent is not None and indent < body_indent):
            continue
        if best is None or last - first < best[1] - best[0]:
            best = span
    return best


# The tests tied by state left between them (Coverage.state_links): writers, readers by name,
# tests reading anything, places in the run.
Links = tuple[dict[int, frozenset[str]], dict[str, set[int]], set[int], list[int]]


@dataclass(frozen=True)
class Coverage:
    """Per-test coverage of the reference: ``contexts[test][file]`` = the functions entered
    (by :data:`Span`'s last field), plus the function spans of each covered file
    (``spans[file]``, from the source or from gcov)."""

    contexts: dict[str, dict[str, set[int]]]  # test -> file -> functions entered
    fixtures: dict[str, list[str]]
    unknown: frozenset[str]  # tests whose coverage is not known: always run
    spans: dict[str, list[Span]]
    # For import-time impact: the names each covered function reads (file -> function ->
    # names) and the names each test's own code reads (absent: unknown).
    names: dict[str, dict[int, frozenset[str]]] = field(default_factory=dict)
    test_names: dict[str, frozenset[str]] = field(default_factory=dict)
    # The program functions entered outside any test and outside the program's import (the
    # suite ran them while collected: "file:function"); None when the record does not say.
    suite_calls: frozenset[str] | None = None
    # The program globals' names each test changed and left changed in the reference's run
    # (only the tests that did); None when the record does not say (the state could not be
    # fingerprinted): then no test is taken to depend on another's, and no test is left out by
    # statement or weak mutation (:attr:`state_known`).
    writes: dict[str, frozenset[str]] | None = None
    # Weak mutation (:mod:`.infection`): the probes' sites compiled into the coverage run;
    # the contexts that infected a site are its "lines" of the pseudo-file ``INFECTED``.
    probed: frozenset[int] = frozenset()
    order: tuple[str, ...] = ()  # the tests in the order the coverage run started them
    # The regular expressions (pattern, flags) compiled by the end of the coverage run: a
    # mutant's batch compiles them once for its children (warm.warm_patterns).
    patterns: tuple[tuple[str, int], ...] = ()
    # (file, function) -> the contexts that entered it, built on first use
    _entered: dict[tuple[str, int], set[str]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _links: dict[tuple[str, ...], Any] = field(default_factory=dict, compare=False, repr=False)
    # Statement level (:mod:`.linecover`): ``lines[test][file]`` = the first lines of the
    # statements it ran in function bodies (empty: not recorded), and where the sources are.
    lines: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    source_root: Path | None = None
    _hit: dict[tuple[str, int], set[str]] = field(default_factory=dict, compare=False, repr=False)
    _statements: dict[str, list[Statement] | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    _shapes: dict[str, Shape | None] = field(default_factory=dict, compare=False, repr=False)

    def collection_reads(self) -> frozenset[str] | None:
        """The names read by the program functions the suite ran while it was collected (a
        parametrization built by calling the program), or None when that is not known."""
        if self.suite_calls is None:
            return None
        names: set[str] = set()
        for call in self.suite_calls:
            file, _, key = call.rpartition(":")
            found = self.names.get(file, {}).get(int(key)) if key.isdigit() else None
            if found is None:
                return None
            names |= found
        return frozenset(names)

    @property
    def state_known(self) -> bool:
        """Whether the coverage run saw what each test left changed of the program's
        globals (:attr:`writes`)."""
        return self.writes is not None

    def shape_of(self, file: str, text: bytes) -> Shape | None:
        """The reference file's shape (:func:`.linecover.shape_of`), worked out once."""
        if file not in self._shapes:
            self._shapes[file] = shape_of(text, file)
        return self._shapes[file]

    def hitting(self, file: str, line: int) -> set[str]:
        """The contexts that ran the statement starting at ``line`` of ``file``."""
        if not self._hit:
            for context, files in self.lines.items():
                for f, keys in files.items():
                    for k in keys:
                        self._hit.setdefault((f, k), set()).add(context)
            self._hit[("", -1)] = set()
        return self._hit.get((file, line), set())

    def statements_of(self, file: str) -> list[Statement] | None:
        """The statements of a file's function bodies (None: not known at statement level)."""
        if file not in self._statements:
            found = None
            path = None if self.source_root is None else self.source_root / file
            if self.lines and path is not None and file.endswith(".py") and path.is_file():
                try:
                    found = statements(path.read_text(encoding="utf-8"))
                except (SyntaxError, UnicodeDecodeError, ValueError):
                    found = None
            self._statements[file] = found
        return self._statements[file]

    def entering(self, file: str, key: int) -> set[str]:
        """The contexts (tests, shared fixtures, outside) that entered a function."""
        if not self._entered:
            for context, files in self.contexts.items():
                for f, keys in files.items():
                    for k in keys:
                        self._entered.setdefault((f, k), set()).add(context)
            self._entered[("", -1)] = set()  # built, even when nothing was entered
        return self._entered.get((file, key), set())

    @classmethod
    def from_record(
        cls, record: dict[str, Any], source_root: Path, unknown: Iterable[str] = ()
    ) -> Coverage:
        contexts = {
            ctx: {f: set(lines) for f, lines in files.items()}
            for ctx, files in record.get("contexts", {}).items()
        }
        spans: dict[str, list[Span]] = {
            f: [(int(s[0]), int(s[1]), int(s[2]), int(s[3])) for s in v]
            for f, v in record.get("spans", {}).items()
        }
        files = {f for files in contexts.values() for f in files}
        for f in files - spans.keys():
            path = source_root / f
            if f.endswith(".py") and path.is_file():
                try:
                    spans[f] = python_spans(path.read_text(encoding="utf-8", errors="replace"))
                except SyntaxError:
                    pass
        coverage = cls(
            contexts=contexts,
            lines={
                ctx: {f: set(keys) for f, keys in files.items()}
                for ctx, files in record.get("lines", {}).items()
            },
            source_root=source_root,
            fixtures={k: list(v) for k, v in record.get("fixtures", {}).items()},
            unknown=frozenset(record.get("spawned", ())) | frozenset(unknown),
            spans=spans,
            names={
                f: {int(k): frozenset(v) for k, v in keys.items()}
                for f, keys in record.get("names", {}).items()
            },
            test_names={t: frozenset(v) for t, v in record.get("test_names", {}).items()},
            suite_calls=(
                None if record.get("suite_calls") is None else frozenset(record["suite_calls"])
            ),
            order=tuple(record.get("order", ())),
            probed=frozenset(int(k) for k in record.get("probed", ())),
            patterns=tuple(
                (str(p[0]), int(p[1]))
                for p in record.get("patterns", ())
                if isinstance(p, list) and len(p) == 2
            ),
            writes=(
                None
                if record.get("writes") is None or not record.get("order")
                else {
                    test: frozenset(label.split(":", 1)[1] for label in labels)
                    for test, labels in record["writes"].items()
                }
            ),
        )
        return coverage.with_unknown_state(record.get("unknown_state") or ())

    def with_unknown_state(self, labels: Iterable[str]) -> Coverage:
        """The coverage with each global whose state could not be fingerprinted (``labels``,
        ``module:global``) taken to be changed by every test that names it, or that reads what
        it cannot tell: whichever of those tests ran first, the later ones may read what it left
        there (a random generator drawn from, a lock held)."""
        names = frozenset(str(label).split(":", 1)[-1] for label in labels)
        if not names or self.writes is None:
            return self
        writes = dict(self.writes)
        for test in self.order:
            reads = self.reads(test)
            touched = (
                names if reads is None or reads & DYNAMIC_NAMES or STAR in reads else reads & names
            )
            if touched:
                writes[test] = writes.get(test, frozenset()) | touched
        return replace(self, writes=writes)

    def state_links(self, tests: list[str]) -> Links:
        """For :func:`suitebench.suite.inside.probe.impact.carried_by_state`, by index into
        ``tests``: the tests that changed globals (their names), per such name the tests reading it,
        the tests whose reads are unknown, and each test's place in the coverage run (the order
        a selected run keeps; a test it did not run comes last)."""
        if not self.writes:
            return {}, {}, set(), []
        key = tuple(tests)
        known = self._links.get(key)
        if known is None:
            known = self._links[key] = self._state_links(tests)
        return known

    def _state_links(self, tests: list[str]) -> Links:
        assert self.writes is not None
        index = {t: i for i, t in enumerate(tests)}
        ran = {t: i for i, t in enumerate(self.order)}
        rank = [ran.get(t, len(ran) + i) for i, t in enumerate(tests)]
        writers = {index[t]: names for t, names in self.writes.items() if t in index}
        wanted = frozenset().union(*writers.values()) if writers else frozenset()
        readers, always = self.readers(tests, wanted)
        return writers, readers, always, rank

    def readers(
        self, tests: list[str], names: frozenset[str] | set[str]
    ) -> tuple[dict[str, set[int]], set[int]]:
        """Per name of ``names``, the indices of the tests of ``tests`` whose code or covered
        functions name it, and the tests whose reads are unknown or by computed names."""
        readers: dict[str, set[int]] = {name: set() for name in names}
        always: set[int] = set()
        for i, test in enumerate(tests):
            reads = self.reads(test) if "::" in test else frozenset()
            if reads is None or reads & DYNAMIC_NAMES or STAR in reads:
                always.add(i)
                continue
            for name in reads & names:
                readers[name].add(i)
        return readers, always

    def reads(self, test: str) -> frozenset[str] | None:
        """Every name the test can read: its own code's and its covered functions' (and its
        shared fixtures'); None when not known (it then runs on every import-time change)."""
        own = self.test_names.get(test)
        if own is None or test in self.unknown or test not in self.fixtures:
            return None
        names = set(own)
        contexts = [test, *(FIXTURE_PREFIX + f for f in self.fixtures.get(test, ()))]
        for context in contexts:
            for f, keys in self.contexts.get(context, {}).items():
                by_key = self.names.get(f)
                if by_key is None:
                    return None
                for key in keys:
                    if key == SPAWNED_MAIN:  # a process the test started ran it as a script
                        names |= by_key.get(0, frozenset())
                    elif key != 0:  # module code runs on import, not in the test
                        names |= by_key.get(key, frozenset())
        return frozenset(names)


@dataclass(frozen=True)
class Selection:
    """The tests to run on one mutant (``None``: all of them) and why.

    ``import_time``: the change runs on import (``tests`` is None); these are the tests that
    run anyway (reaching a changed function, or of unknown coverage): the mutant's own run
    adds those that read a global its import changed (:func:`.impactspec.impact_spec`)."""

    tests: tuple[str, ...] | None
    reason: str
    import_time: tuple[str, ...] | None = None
    # The files the patch changes, when a batch may carry them into its one collection: a
    # coverage selection's changes lie inside function bodies that run in tests alone
    # (:mod:`.hotpatch`); an import-time change's, when the suite ran no program code while
    # collected (:mod:`.reimport`).
    files: tuple[str, ...] = ()
    # An import-time change whose tests are known already (``import_time``: a changed default
    # argument's, :func:`_by_default`): its run imports it as any import-time mutant's does, and
    # runs those tests, not the readers of what its import changed.
    final: bool = False


def _statement_level(
    coverage: Coverage, patch: str, changes: dict[str, FileChange]
) -> dict[str, list[Statement]]:
    """The files whose changes select at statement level (:mod:`.linecover`): recorded at
    that level, and the mutant's functions differing from the reference's in statements alone."""
    if not coverage.lines or coverage.source_root is None:
        return {}
    wanted = {p: coverage.statements_of(p) for p in changes}
    known = {p: stmts for p, stmts in wanted.items() if stmts is not None}
    if not known:
        return {}
    texts = patched_sources(coverage.source_root, patch.encode("utf-8"))
    if texts is None:
        return {}
    return {
        p: stmts
        for p, stmts in known.items()
        if p in texts and same_shape(*texts[p], p, coverage.shape_of(p, texts[p][0]))
    }


# What a module's own code may read of the process it runs in: a process a test starts has its
# own (``subprocess.run(..., env=...)``, its arguments), so its import may build other globals.
PROCESS_NAMES = frozenset(
    {"environ", "environb", "getenv", "argv", "orig_argv", "stdin", "stdout", "stderr",
     "isatty", "getpid", "getppid", "getcwd", "executable", "get_terminal_size"}
)  # fmt: skip


def _spawned_imports(
    coverage: Coverage, changes: dict[str, FileChange], tests: list[str]
) -> set[str] | str:
    """For an import-time change: the tests that run a changed module's code in a Python
    process they start and cannot be left to import-time impact, or why the change's reach
    cannot be told -- a module first imported while a test ran in the suite's own process
    (``from . import sub`` in a function runs its import-time code inside that test, after the
    fingerprint was taken), or in a process started outside any test.

    A started process imports the mutant's module as the suite's process does, and builds the
    same globals: when the suite's own collection imported it too, the mutant's run sees the
    globals its change makes (the fingerprint), and such a test runs when it reads one -- what
    the process ran is in its coverage, so its reads are too.  It runs on the change anyway
    when the process ran the changed module as ``__main__`` (a script's own code, which no
    import shows), when the suite's process never imported that module, or when the module's
    own code reads what its process is started with (its environment, arguments, standard
    streams: the same import builds other globals there)."""
    known = set(tests)
    spawned: set[str] = set()
    imported = coverage.contexts.get(OUTSIDE, {})
    alike = {
        path
        for path in changes
        if 0 in imported.get(path, ())
        and path in coverage.names
        and not coverage.names[path].get(0, frozenset()) & PROCESS_NAMES
    }
    for context, files in coverage.contexts.items():
        for path in changes:
            keys = files.get(path, ())
            if context != OUTSIDE and 0 in keys:
                return f"{path} is imported while a test runs ({context})"
            if SPAWNED_MAIN not in keys and (SPAWNED_IMPORT not in keys or path in alike):
                continue
            if context in known:
                spawned.add(context)
            elif context.startswith(FIXTURE_PREFIX):
                name = context[len(FIXTURE_PREFIX) :]
                spawned |= {t for t in tests if name in coverage.fixtures.get(t, ())}
            else:
                return f"{path} is imported by a process started outside a test ({context})"
    return spawned


def select_tests(
    coverage: Coverage,
    patch: str,
    tests: list[str],
    site: int | None = None,
    *,
    default: bool = False,
) -> Selection:
    """The tests of ``tests`` that can see the change ``patch`` makes (see the module doc);
    ``site``: the mutant's weak-mutation probe (:mod:`.infection`), if it has one, ``default``
    when it probes a default argument."""
    changes = changed_lines(patch)
    if not changes:
        return Selection(None, "the patch changes no file coverage could track")
    if default and site is not None and site in coverage.probed and coverage.state_known:
        infected = coverage.hitting(INFECTED, site)
        if OUTSIDE not in infected:  # else its import uses the default: decided as import-time
            return _by_default(coverage, changes, tests, infected)
    relevant: dict[str, set[int]] = {}
    # Statements and infection narrow below a function only where the state a test leaves
    # for the next is known: a table built by the first test that needs it is read, not
    # built, by every later one (isodate's regular expressions).
    statement_level = _statement_level(coverage, patch, changes) if coverage.state_known else {}
    relevant_lines: dict[str, set[int]] = {}
    lambdas: dict[str, list[Changed] | None] = {}  # per file, the lambdas the patch changes
    import_time = ""  # why the change runs on import, if it does
    never: list[str] = []  # changed modules the coverage run never imported
    for change in changes.values():
        if change.whole_file:
            return Selection(None, f"the patch adds, removes or renames {change.path}")
        if change.preprocessor:
            return Selection(None, f"the patch changes a preprocessor line of {change.path}")
        spans = coverage.spans.get(change.path)
        if spans is None and _never_imported(coverage, change.path):
            never.append(change.path)  # no test entered it: only the unknown tests can
            continue
        if spans is None:
            return Selection(None, f"no coverage of {change.path}")
        lines = relevant.setdefault(change.path, set())
        points = [(line, None) for line in sorted(change.lines)] + change.insertions
        for line, indent in points:
            span = _innermost(spans, line, indent)
            if span is None:
                key = lambda_key(coverage.source_root, patch, change.path, line, lambdas)
                if key is not None:  # a lambda's body: runs when called, as a function's
                    lines.add(key)
                    continue
                where = "is" if indent is None else "inserts after a line"
                import_time = import_time or (
                    f"{change.path}:{line} {where} outside any function body "
                    "(code run on import, or a declaration)"
                )
                continue
            stmts = statement_level.get(change.path)
            stmt = None if stmts is None else innermost(stmts, line)
            if stmt is None:
                lines.add(span[3])
            elif indent is None:
                relevant_lines.setdefault(change.path, set()).add(stmt[3])
            elif line not in change.lines or indent < stmt[2]:
                lines.add(span[3])  # a line inserted, not in place of a removed one

    reached = {c for f, keys in relevant.items() for k in keys for c in coverage.entering(f, k)}
    reached |= {c for f, ks in relevant_lines.items() for k in ks for c in coverage.hitting(f, k)}
    if site is not None and site in coverage.probed and not import_time and coverage.state_known:
        # Reached but never infected: the test runs as on the reference.  (Outside any test
        # the change is import-time, and that path decides as before.)
        infected = coverage.hitting(INFECTED, site)
        reached = {c for c in reached if c in infected or c == OUTSIDE}

    def reaches(context: str) -> bool:
        return context in reached

    if reaches(OUTSIDE):
        import_time = import_time or "a changed function runs outside any test (on import)"
    fixtures = {
        ctx[len(FIXTURE_PREFIX) :]
        for ctx in coverage.contexts
        if ctx.startswith(FIXTURE_PREFIX) and reaches(ctx)
    }

    def runs(test: str) -> bool:
        if test in coverage.unknown:
            return True
        if "::" not in test:  # a file that did not collect: changes only with import-time code
            return False
        if test not in coverage.fixtures:  # never started in the coverage run: unknown
            return True
        return reaches(test) or bool(fixtures & set(coverage.fixtures[test]))

    chosen = _with_state(coverage, tests, runs)
    if import_time:
        spawned = _spawned_imports(coverage, changes, tests)
        if isinstance(spawned, str):
            return Selection(None, spawned)
        chosen = tuple(t for t in tests if t in spawned or t in chosen)
        carried = _carried(coverage, changes)
        return Selection(None, import_time, import_time=chosen, files=carried)
    reason = "coverage" + (f" ({', '.join(never)} never imported)" if never else "")
    return Selection(chosen, reason, files=tuple(sorted(changes)))


def _never_imported(coverage: Coverage, path: str) -> bool:
    """Whether ``path`` is a Python module of the program that the coverage run never
    imported: a ``.py`` file of the traced tree (whose modules the recorder instruments as they
    are imported, module code included, in the suite's process and in the Python processes a
    test starts) of which no test, fixture or collection left a trace -- a platform's backend
    elsewhere (fasteners' ``pywin32`` modules on Linux).  Only the tests whose coverage is not
    known can reach it; before, every test ran on each of its mutants."""
    if not path.endswith(".py") or not coverage.contexts or coverage.source_root is None:
        return False
    if any(path in files for files in coverage.contexts.values()):
        return False
    return (coverage.source_root / path).is_file()


def _by_default(
    coverage: Coverage, changes: dict[str, FileChange], tests: list[str], infected: set[str]
) -> Selection:
    """A changed default argument (:mod:`.inside.defaults`): the tests that left the parameter
    to its default (or read the function's signature), the tests using a fixture whose set-up
    did, any whose coverage is unknown, and those tied to them by state."""
    fixtures = {c[len(FIXTURE_PREFIX) :] for c in infected if c.startswith(FIXTURE_PREFIX)}

    def runs(test: str) -> bool:
        if test in coverage.unknown or ("::" in test and test not in coverage.fixtures):
            return True
        return test in infected or bool(fixtures & set(coverage.fixtures.get(test, ())))

    chosen = _with_state(coverage, tests, runs)
    # The function is made on import: its module runs anew, as an import-time change's does.
    reason = "a default argument: the tests that use it"
    return Selection(
        None, reason, import_time=chosen, files=_carried(coverage, changes), final=True
    )


def _with_state(
    coverage: Coverage, tests: list[str], runs: Callable[[str], bool]
) -> tuple[str, ...]:
    """The tests that ``runs``, and those tied to them by state one test leaves for the next."""
    chosen = tuple(t for t in tests if runs(t))
    links = coverage.state_links(tests)
    if links[0]:
        tied = carried_by_state({i for i, t in enumerate(tests) if runs(t)}, *links)
        chosen = tuple(t for i, t in enumerate(tests) if i in tied)
    return chosen


def _carried(coverage: Coverage, changes: dict[str, FileChange]) -> tuple[str, ...]:
    """An import-time change's files, when a batch may run them anew beside its one collection:
    what program code the suite's collection ran is known, with the names it reads
    (:meth:`Coverage.collection_reads`; the child declines a change to one of them:
    :mod:`.inside.batch.reimport`)."""
    return tuple(sorted(changes)) if coverage.collection_reads() is not None else ()
