"""``score --incremental``: a mutant's stored row reused when nothing it depends on changed.

Every suite run is keyed by the content of what it runs (:mod:`suitebench.suite.execute.jobs`): the
suite's hash, the program's (the whole package, mutant included), the limits, the backend,
the per-test limits derived from the reference's times.  One comment added to the package
changes the reference's id and every mutant's, so every run is new: the issue's 553 cells
rerun for a comment.  This module keeps, per instance and suite, a *snapshot* of the last
incremental score in the store -- the definitions of the package and the suite
(:mod:`suitebench.suite.select.definitions`), each test's reference outcome, and each mutant's row
as its selected run gave it -- and reuses a row when:

* nothing global changed: the interpreter and its installed packages, the limits, backend and
  engine, the project's files carried beside the suite (its pytest configuration and root
  ``conftest.py``), any file of the package that is not Python source, the package's
  module-level code, a decorated definition (decorators run on import), any file of the suite
  that is not a test module (``conftest.py``, helpers, data files), and a test module's
  module-level code but for imports;
* the mutant is the same: it changes the same definitions from the same text to the same text
  (its position may move), inside function bodies (not an import-time mutant);
* the tests it runs are the same, in the same order (coverage-guided selection, recomputed from
  this run's coverage of the reference: a new test that reaches it, or one tied to its tests by
  state, changes them), each with the same outcome on the reference, none of them timed out
  and none of them took more than half of its per-test limit now;
* no changed definition can be reached from the mutant's definitions, its tests (their
  functions, the fixtures of their modules and every ``conftest.py`` definition) and what the
  reference's coverage says those tests entered -- reachability by names, over the old and the
  new code (:func:`suitebench.suite.select.definitions.reachable`): a changed helper reached only on
  the mutant's path is found by its name, not by the reference's coverage.

Anything else reruns, and the results say why.  Assumed, as coverage-guided selection assumes
(:mod:`suitebench.suite.select.selection`): a test's outcome does not depend on its code's line
numbers, nor on state outside the program an earlier test left behind.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench import __version__
from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run.store import Store, job_key
from suitebench.suite.execute import jobs
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.patching import patched_sources
from suitebench.suite.execute.runspec import Timeouts
from suitebench.suite.inside.probe.tracer import OUTSIDE
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus
from suitebench.suite.select.definitions import (
    MODULE,
    Definition,
    TreeDefinitions,
    changed,
    file_definitions,
    is_import,
    module_statements,
    reachable,
    tree_definitions,
)
from suitebench.suite.select.selection import Selection

__all__ = ["SNAPSHOT_KIND", "Reuse"]

SNAPSHOT_VERSION = "suite-incremental/1"
SNAPSHOT_KIND = "suite-incremental"
_SLACK = 0.5  # a reused test took at most this share of its per-test limit


def _test_module(path: str) -> bool:
    """A file pytest collects tests from by default (``test_*.py``, ``*_test.py``)."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _own_packages() -> str:
    """suitebench's own interpreter's installed distributions (a suite run by it imports
    them), digested: an upgraded dependency reruns everything."""
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    return hashlib.sha256("\n".join(dists).encode()).hexdigest()[:16]


def environment(runner: SuiteRuns, engine_version: str) -> str:
    """What every row depends on beyond the code and the tests: a change reruns everything."""
    return job_key(
        SNAPSHOT_VERSION,
        engine_version,
        runner.limits.to_dict(),
        runner.backend_name,
        str(runner.engine),
        runner.kind,
        None if runner.beside is None else runner.beside.digest,
        runner.python.identity() if runner.python is not None else _own_packages(),
    )


@dataclass
class Snapshot:
    """What one incremental score knew of its inputs, and its mutants' rows by mutant key."""

    run_id: str
    environment: str
    package: TreeDefinitions
    suite: TreeDefinitions
    statements: dict[str, list[str]]  # test module -> its module-level statements
    reference: dict[str, str]  # test -> its outcome in the first reference run
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    reference_keys: list[str] = field(default_factory=list)  # its reference runs' job keys

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "run_id": self.run_id,
            "environment": self.environment,
            "package": self.package.to_dict(),
            "suite": self.suite.to_dict(),
            "statements": self.statements,
            "reference": self.reference,
            "rows": self.rows,
            "reference_keys": self.reference_keys,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Snapshot | None:
        if d.get("version") != SNAPSHOT_VERSION:
            return None
        return cls(
            run_id=d["run_id"],
            environment=d["environment"],
            package=TreeDefinitions.from_dict(d["package"]),
            suite=TreeDefinitions.from_dict(d["suite"]),
            statements={k: list(v) for k, v in d["statements"].items()},
            reference=dict(d["reference"]),
            rows=dict(d["rows"]),
            reference_keys=list(d.get("reference_keys", [])),
        )


@functools.lru_cache(maxsize=64)
def _reference_definitions(rel: str, text: bytes) -> dict[str, Definition] | None:
    """A reference file's definitions, read once for all the mutants of that file."""
    return file_definitions(rel, text.decode("utf-8", "surrogateescape"))


def mutant_key(source: Path, patch: bytes) -> tuple[str, set[str]] | None:
    """A mutant's identity across edits -- the definitions it changes, from which text to which
    -- and those definitions' keys; None when it changes module-level code, adds or removes a
    definition, or is not a diff that applies exactly."""
    files = patched_sources(source, patch)
    if not files:
        return None
    parts: list[tuple[str, str, str]] = []
    touched: set[str] = set()
    for rel, (before, after) in sorted(files.items()):
        old = _reference_definitions(rel, before)
        new = file_definitions(rel, after.decode("utf-8", "surrogateescape"), like=old)
        if old is None or new is None or set(old) != set(new):
            return None
        keys = changed(old, new)
        if not keys or any(k.endswith(f"::{MODULE}") or old[k].decorated for k in keys):
            return None
        touched |= keys
        parts += [(k, old[k].digest, new[k].digest) for k in sorted(keys)]
    return job_key(SNAPSHOT_VERSION, "mutant", [list(p) for p in parts]), touched


class Reuse:
    """One incremental score: the last snapshot, this run's inputs, and what was reused."""

    def __init__(
        self,
        instance: Instance,
        suite_dir: Path,
        store: Store,
        runner: SuiteRuns,
        *,
        own_suite: bool = True,
    ) -> None:
        self.instance = instance
        self.own_suite = own_suite
        self.store = store
        self.runner = runner
        self.suite_dir = suite_dir
        self.key = job_key(
            SNAPSHOT_VERSION, str(instance.root.resolve()), str(Path(suite_dir).resolve())
        )
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.run_id = f"{stamp}-{job_key(self.key, time.time_ns())[:6]}"
        stored = store.get(self.key)
        self.before = Snapshot.from_dict(stored) if isinstance(stored, dict) else None
        self.now = Snapshot(
            self.run_id,
            environment(runner, f"{__version__}/{jobs._JOB_VERSION}"),
            tree_definitions(instance.source),
            tree_definitions(suite_dir),
            {},
            {},
        )
        for rel in self.now.suite.files():
            if _test_module(rel):
                text = (suite_dir / rel).read_text(encoding="utf-8", errors="surrogateescape")
                self.now.statements[rel] = module_statements(text) or ["<does not parse>"]
        self.why_not = self._everything_reruns()
        self.reused: dict[str, str] = {}  # mutant id -> the run its row came from
        self.rerun: dict[str, str] = {}  # mutant id -> why it ran
        self.unreached: list[str] = []  # no test reaches them: nothing to run or reuse
        self.carried_reference = False
        self._keys: dict[str, tuple[str, set[str]] | None] = {}

    # -- what changed for everyone -------------------------------------------------------

    def _everything_reruns(self) -> str | None:
        """Why no row can be reused (None: rows may be, one by one)."""
        old, new = self.before, self.now
        if self.instance.kind is not InstanceKind.PYTHON:
            kind = self.instance.kind
            return f'rows are reused for Python packages (kind = "python"), not kind = {kind}'
        if not self.own_suite:
            # Its runs meet decoys (the reference run as mutants) that make a test telling the
            # reference apart invalid; a run that reused every row would run no decoy.
            return "a suite from elsewhere is scored with decoys in every run: nothing reused"
        if old is None:
            return "no earlier incremental run of this instance and suite in the store"
        if old.environment != new.environment:
            return (
                "the interpreter, its packages, the limits, backend, engine or the project's "
                "files beside the suite changed"
            )
        for name, after in (
            ("the package", new.package),
            ("the suite", new.suite),
        ):
            if after.unparsed:
                return f"{name}: {after.unparsed[0]} does not parse"
        added = new.package.files() ^ old.package.files()
        if added:
            return f"the package: {sorted(added)[0]} added or removed"
        for rel, digest in new.package.others.items():
            if old.package.others.get(rel) != digest:
                return f"the package: {rel} (not Python source) changed"
        defs = changed(old.package.definitions, new.package.definitions)
        for key in sorted(defs):
            if key.endswith(f"::{MODULE}"):
                return f"the package: module-level code of {key.split('::')[0]} changed"
            for side in (old.package.definitions, new.package.definitions):
                if key in side and side[key].decorated:
                    return f"the package: {key} changed and is decorated (runs on import)"
        for rel in sorted(new.suite.files() | old.suite.files()):
            if _test_module(rel):
                continue
            if _file_digest(old.suite, rel) != _file_digest(new.suite, rel):
                return f"the suite: {rel} changed (not a test module)"
        for rel in sorted(set(old.statements) | set(new.statements)):
            diff = Counter(new.statements.get(rel, [])) - Counter(old.statements.get(rel, []))
            diff += Counter(old.statements.get(rel, [])) - Counter(new.statements.get(rel, []))
            if rel not in new.statements:
                continue  # a test module removed: its tests are in no selection now
            if any(not is_import(s) for s in diff):
                return f"the suite: module-level code of {rel} changed (beyond imports)"
        return None

    def carry_reference(self, keys: list[str]) -> bool:
        """The earlier run's reference runs stored under this run's keys when the edit changed
        nothing that runs -- no definition, no module-level code, no test, no file of the
        package or the suite but Python comments and blank lines -- so they are not run again
        (the coverage run is: it records lines, and lines moved).  Whether they were."""
        self.now.reference_keys = list(keys)
        old, new = self.before, self.now
        if self.why_not is not None or old is None or len(old.reference_keys) != len(keys):
            return False
        if changed(old.package.definitions, new.package.definitions) or changed(
            old.suite.definitions, new.suite.definitions
        ):
            return False
        if old.suite.others != new.suite.others or old.statements != new.statements:
            return False
        found = self.store.get_many(old.reference_keys)
        if len(found) != len(keys):
            return False
        pairs = [
            (new_key, found[old_key])
            for old_key, new_key in zip(old.reference_keys, keys, strict=True)
        ]
        self.store.put_many(pairs, kind="suite-run", replace=False)
        self.carried_reference = True
        return True

    # -- one mutant at a time ------------------------------------------------------------

    def rows(
        self,
        mutants: list[MutantSpec],
        selections: Mapping[str, Selection],
        impacts: Mapping[str, Any],
        ref0: SuiteRun,
        coverage: Mapping[str, Any] | None,
        *,
        timeouts: Timeouts,
    ) -> dict[str, SuiteRun]:
        """The rows reused, by mutant id; every other mutant's reason is in ``rerun``.
        ``timeouts``: the mutants' derived per-test limits (a test that took over half its
        limit is run again)."""
        contexts = (coverage or {}).get("contexts") or {}
        self.now.reference.update({t: str(ref0.status_of(t)) for t in ref0.outcomes})
        out: dict[str, SuiteRun] = {}
        for m in mutants:
            sel = selections.get(m.id)
            if sel is not None and sel.tests == () and sel.import_time is None:
                self.unreached.append(m.id)  # no test reaches it: it runs nothing either way
                continue
            why, run = self._row(m, sel, m.id in impacts, ref0, contexts, dict(timeouts))
            if run is None:
                self.rerun[m.id] = why
            else:
                out[m.id] = run
        return out

    def _mutant(self, m: MutantSpec) -> tuple[str, set[str]] | None:
        if m.id not in self._keys:
            try:
                patch = m.patch.read_bytes()
            except OSError:
                self._keys[m.id] = None
            else:
                self._keys[m.id] = mutant_key(self.instance.source, patch)
        return self._keys[m.id]

    def _row(
        self,
        m: MutantSpec,
        sel: Selection | None,
        import_time: bool,
        ref0: SuiteRun,
        contexts: Mapping[str, Any],
        limits: Mapping[str, float],
    ) -> tuple[str, SuiteRun | None]:
        if self.why_not is not None or self.before is None:
            return self.why_not or "", None
        if sel is None or sel.tests is None or import_time or sel.import_time is not None:
            return "not a coverage selection of function-body tests", None
        identity = self._mutant(m)
        if identity is None:
            return "changes module-level code or a decorated definition", None
        key, touched = identity
        stored = self.before.rows.get(key)
        if stored is None:
            return "no stored row: a new or changed mutant", None
        tests = tuple(sel.tests)
        if tuple(stored["tests"]) != tests:
            return "the tests that reach it changed", None
        for t in tests:
            if self.before.reference.get(t) != str(ref0.status_of(t)):
                return f"a test's outcome on the reference changed -- {t}", None
            outcome = stored["outcomes"].get(t)
            if outcome in (None, TestStatus.TIMEOUT, TestStatus.NOT_RUN):
                return f"a test timed out or did not run -- {t}", None
            limit = limits.get(t, self.runner.limits.per_test)
            if float(stored["seconds"].get(t, limit)) > _SLACK * limit:
                return f"a test took over half its per-test limit -- {t}", None
        hit = self._reaches_change(touched, tests, contexts)
        if hit is not None:
            return hit, None
        run = SuiteRun.from_maps(
            RunStatus.OK,
            {t: TestStatus(stored["outcomes"][t]) for t in tests},
            wall_time=float(stored.get("wall_time", 0.0)),
            messages=dict(stored.get("messages", {})),
            seconds={t: float(s) for t, s in stored["seconds"].items()},
        )
        self.reused[m.id] = str(stored["from"])
        return "", run

    def _reaches_change(
        self, touched: set[str], tests: tuple[str, ...], contexts: Mapping[str, Any]
    ) -> str | None:
        """Why a changed definition may be reached from the mutant's and its tests' code
        (None: none can be)."""
        assert self.before is not None
        old = {**self.before.package.definitions, **self.before.suite.definitions}
        new = {**self.now.package.definitions, **self.now.suite.definitions}
        differ = {k for k in changed(old, new) if not k.endswith(f"::{MODULE}")}
        if not differ:
            return None
        roots = set(touched)
        suite_defs = self.now.suite.definitions
        roots |= {k for k in suite_defs if k.split("::")[0].endswith("conftest.py")}
        by_line = _by_first_line(self.now.package.definitions)
        entered = [contexts.get(OUTSIDE) or {}]  # what ran while the suite was collected
        for t in tests:
            module, qual = _test_def(t, self.suite_dir)
            if f"{module}::{qual}" not in suite_defs:
                return f"a test's code is not found in the suite -- {t}"
            roots.add(f"{module}::{qual}")
            roots.add(f"{module}::{MODULE}")
            roots |= {
                k
                for k, d in suite_defs.items()
                if k.startswith(f"{module}::") and "fixture" in d.uses
            }
            entered.append(contexts.get(t) or {})
        for files in entered:
            for file, firsts in files.items():
                roots |= {by_line[(file, int(n))] for n in firsts if (file, int(n)) in by_line}
        hits = reachable(roots, [old, new]) & differ
        return f"reaches a changed definition -- {min(hits)}" if hits else None

    # -- the record ----------------------------------------------------------------------

    def keep(self, mutants: list[MutantSpec], runs: Mapping[str, SuiteRun | None],
             selections: Mapping[str, Selection], impacts: Mapping[str, Any]) -> None:  # fmt: skip
        """This run's snapshot, with a row per mutant whose selected run finished (a reused
        row keeps the run it came from), written to the store for the next run."""
        for m in mutants:
            run, sel = runs.get(m.id), selections.get(m.id)
            identity = self._mutant(m)
            if run is None or sel is None or sel.tests is None or m.id in impacts:
                continue
            if identity is None or run.status is not RunStatus.OK:
                continue
            tests = list(sel.tests)
            self.now.rows[identity[0]] = {
                "id": m.id,
                "from": self.reused.get(m.id, self.run_id),
                "tests": tests,
                "outcomes": {t: str(run.status_of(t)) for t in tests},
                "messages": {t: said for t in tests if (said := run.own_message(t)) is not None},
                "seconds": {t: s for t in tests if (s := run.seconds_of(t)) is not None},
                "wall_time": run.wall_time,
            }
        self.store.put(self.key, self.now.to_dict(), kind=SNAPSHOT_KIND)

    def summary(self) -> dict[str, Any]:
        """What results.json says of the reuse (``incremental``)."""
        reasons = Counter(_gist(why) for why in self.rerun.values())
        return {
            "run_id": self.run_id,
            "previous": None if self.before is None else self.before.run_id,
            "reused": len(self.reused),
            "rerun": len(self.rerun),
            "unreached": len(self.unreached),
            "everything_reruns": self.why_not,
            "reference_runs_reused": self.carried_reference,
            "rerun_reasons": dict(reasons.most_common()),
            "reused_mutants": dict(sorted(self.reused.items())),
            "rerun_mutants": dict(sorted(self.rerun.items())),
        }


def _gist(why: str) -> str:
    """A reason without the test or definition it names, for counting."""
    return why.split(" -- ", 1)[0]


def _file_digest(tree: TreeDefinitions, rel: str) -> str | None:
    """A file's digest as the tree knows it: its own for a file that is not Python source,
    else its definitions' digests."""
    if rel in tree.others:
        return tree.others[rel]
    parts = sorted(
        f"{k}={d.digest}" for k, d in tree.definitions.items() if k.split("::")[0] == rel
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest() if parts else None


def _by_first_line(defs: Mapping[str, Definition]) -> dict[tuple[str, int], str]:
    """(file, first line) -> definition: how per-test coverage names a function."""
    return {(key.split("::")[0], d.first): key for key, d in defs.items() if d.name}


def _test_def(test_id: str, suite_dir: Path) -> tuple[str, str]:
    """A test id's module (relative to the suite) and qualified name (parameters dropped)."""
    parts = test_id.split("::")
    module = parts[0]
    first = module.split("/", 1)
    if len(first) == 2 and first[0] == suite_dir.name and not (suite_dir / module).is_file():
        module = first[1]
    qual = ".".join(p.split("[", 1)[0] for p in parts[1:])
    return module, qual
