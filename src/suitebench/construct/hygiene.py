"""``build hygiene``: the paper's test-suite refinement and spec clean-up (TestSuiteBench
Section 2.1 and Appendices B.1 and B.3).

Reference tests are dropped when they
* fail on the reference in every one of the runs (``fails``),
* disagree across the runs (``flaky``: "whenever a test fails on I in any step, we exclude
  it"; never retried into passing),
* exceed the resource limits (``timeout``: past the per-test time limit), or
* need the network (``network``): they fail in the sandbox without network and pass when the
  same run is allowed the network (a second, single run made only for the failing tests).

A test skipped in every run (``pytest.mark.skipif``, ``importorskip``) is neither failing nor
dropped: it is kept in the suite and listed as ``skipped`` with pytest's reason (it is not
valid, so it kills no mutant, and it may run where its condition holds).

Each dropped test is removed from its file (its function, or its method, through libcst so
the rest of the file is untouched) and from the sections map.  In the spec, source locations
in error messages (``panicked at src/main.rs:24:40``) become ``<error location>``: each mutant
moves them, so a test asserting one kills every mutant.  A spec section all of whose mapped
tests were dropped describes behaviour nothing checks any more and is removed.  Every change is
listed in ``hygiene.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from suitebench.construct.tomledit import drop_map_entries
from suitebench.construct.writing import prepare_target
from suitebench.model.instance import Instance, load_instance
from suitebench.run.executor import Executor
from suitebench.run.store import Store
from suitebench.suite.execute.runner import SUITE_DIRNAME
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.records import TestStatus
from suitebench.suite.score import score_suite

__all__ = [
    "ERROR_LOCATION",
    "DroppedTest",
    "HygieneReport",
    "apply_hygiene",
    "classify_reference_runs",
    "remove_test_functions",
    "remove_tests",
    "scrub_error_locations",
]

ERROR_LOCATION = "<error location>"
_LOCATION = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.(?:rs|c|h|cc|cpp|hpp|cxx|go|py|zig|java|js|ts)"
    r":\d+(?::\d+)?(?!\d)"
)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DroppedTest:
    id: str
    reason: str  # fails | flaky | timeout | network (dropped); skipped (kept)
    detail: str


@dataclass
class HygieneReport:
    instance: str
    runs: int
    tests: int
    dropped: list[DroppedTest] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    not_removed: list[str] = field(default_factory=list)
    skipped: list[DroppedTest] = field(default_factory=list)  # kept: skipped in every run
    spec_changes: list[dict[str, Any]] = field(default_factory=list)
    sections_dropped: list[str] = field(default_factory=list)
    # why the reference's runs did not finish (a conftest's failed import: no test at all)
    harness_errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def classify_reference_runs(
    statuses: dict[str, list[TestStatus]],
    per_test: float,
    messages: dict[str, str] | None = None,
) -> dict[str, tuple[str, str]]:
    """Test id -> (reason, detail) for every test that is not passed in every run; the detail
    ends with pytest's one-line reason (``messages``: a failure's, a skip's, a collection
    error's).  ``skipped`` (in every run) is the one reason that does not drop the test."""
    out: dict[str, tuple[str, str]] = {}
    for test, seen in statuses.items():
        if all(s is TestStatus.PASSED for s in seen):
            continue
        shown = "/".join(str(s) for s in seen)
        why = (messages or {}).get(test, "")
        if "::" not in test and test.endswith(".py"):  # a file's own unit: it did not collect
            out[test] = ("fails", f"the file does not collect: {why or shown}")
            continue
        if seen and all(s is TestStatus.SKIPPED for s in seen):
            out[test] = ("skipped", f"skipped in every run ({len(seen)})")
        elif len(set(seen)) > 1:
            out[test] = ("flaky", f"outcomes differ across {len(seen)} runs: {shown}")
        elif seen and seen[0] is TestStatus.TIMEOUT:
            out[test] = ("timeout", f"exceeds the per-test limit of {per_test:g} s in every run")
        else:
            out[test] = ("fails", f"{shown} on the reference in every run")
        if why:
            out[test] = (out[test][0], f"{out[test][1]}: {why}")
    return out


def _reference_statuses(
    instance: Instance, store: Store, runs: int, limits: SuiteLimits, **kw: Any
) -> tuple[dict[str, list[TestStatus]], dict[str, str], list[str]]:
    """Each reference test's outcomes over the runs, and its one-line reason where it has
    one (a file that did not collect is a unit of its own, its error the reason); and why
    runs did not finish, if any did not."""
    result = score_suite(
        instance, store=store, reference_runs=runs, limits=limits, mutant_ids=[], **kw
    )
    return (
        {t.id: list(t.reference) for t in result.tests},
        {t.id: t.message for t in result.tests if t.message},
        [e.message for e in result.harness_errors],
    )


def remove_test_functions(path: Path, names: set[str]) -> set[str]:
    """Remove test functions (``name`` or ``Class::name``, parameters ignored) from one file;
    return the names removed."""
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    removed: set[str] = set()

    class Remover(cst.CSTTransformer):
        def __init__(self) -> None:
            self.classes: list[str] = []

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.classes.append(node.name.value)

        def leave_ClassDef(
            self, original_node: cst.ClassDef, updated_node: cst.ClassDef
        ) -> cst.ClassDef:
            self.classes.pop()
            return updated_node

        def leave_FunctionDef(
            self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
        ) -> cst.FunctionDef | cst.RemovalSentinel:
            qualified = "::".join([*self.classes, original_node.name.value])
            if qualified in names:
                removed.add(qualified)
                return cst.RemoveFromParent()
            return updated_node

    new = module.visit(Remover())
    if removed:
        path.write_text(new.code, encoding="utf-8")
    return removed


def remove_tests(suite: Path, test_ids: set[str]) -> tuple[list[Path], list[str]]:
    """Remove tests given by node id (``tests/<file>::<name>``) from the suite's files, and
    files given by their own id (``tests/<file>``: a file that does not collect, whose tests
    nothing can name); the files changed or removed and the ids not found.  A doctest of the
    package or of a text file beside the suite (``pkg/mod.py::pkg.mod.f``, ``README.rst``) is
    not in the suite's files: it is left where it is, and among the ids not found."""
    by_file: dict[str, set[str]] = {}
    changed: list[Path] = []
    missing: list[str] = []
    for test in test_ids:
        path_text, _, name = test.partition("::")
        if Path(path_text).parts[:1] != (SUITE_DIRNAME,):
            missing.append(test)
            continue
        if not name:
            file = suite / Path(path_text).relative_to(Path(path_text).parts[0])
            if file.is_file():
                file.unlink()
                changed.append(file)
            else:
                missing.append(test)
            continue
        by_file.setdefault(path_text, set()).add(name.split("[", 1)[0])
    for path_text, names in sorted(by_file.items()):
        # Node ids start with the suite's directory name (``tests``): the file is below it.
        rel = Path(path_text).relative_to(Path(path_text).parts[0])
        file = suite / rel
        removed = remove_test_functions(file, names) if file.is_file() else set()
        if removed:
            changed.append(file)
        missing += [f"{path_text}::{n}" for n in sorted(names - removed)]
    return changed, missing


def scrub_error_locations(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Replace source locations by ``<error location>``; the changes, line by line."""
    changes: list[dict[str, Any]] = []
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        new = _LOCATION.sub(ERROR_LOCATION, line)
        if new != line:
            changes.append(
                {
                    "line": number,
                    "change": "error location",
                    "before": line.rstrip("\n"),
                    "after": new.rstrip("\n"),
                }
            )
            lines[number - 1] = new
    return "".join(lines), changes


def drop_sections(text: str, sections: set[str]) -> tuple[str, list[str]]:
    """Remove the named sections (heading and body, up to the next heading of the same or a
    higher level, subsections included)."""
    out: list[str] = []
    dropped: list[str] = []
    skip_level = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line.rstrip("\n"))
        if match:
            level = len(match.group(1))
            if skip_level and level <= skip_level:
                skip_level = 0
            if not skip_level and match.group(2).strip() in sections:
                skip_level = level
                dropped.append(match.group(2).strip())
        if not skip_level:
            out.append(line)
    return "".join(out), dropped


def _drop_map_entries(file: Path, tests: set[str]) -> list[str]:
    """Remove ``"test id" = [...]`` entries from a sections map (instance.toml or its own
    file), everything else kept byte for byte (:func:`.tomledit.drop_map_entries`)."""
    text, removed = drop_map_entries(file.read_text(encoding="utf-8"), tests)
    if removed:
        file.write_text(text, encoding="utf-8")
    return removed


def apply_hygiene(
    instance: Instance,
    *,
    store: Store,
    out: Path | None = None,
    runs: int = 3,
    per_test: float = 10.0,
    check_network: bool = True,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
) -> HygieneReport:
    """Run the reference suite ``runs`` times, drop what must go, clean the spec; write the
    result into the instance (or into ``out``, a copy made first) and ``hygiene.json``."""
    limits = SuiteLimits(per_test=per_test)
    kw: dict[str, Any] = {"cache_dir": cache_dir, "executor": executor, "progress": progress}
    statuses, messages, errors = _reference_statuses(instance, store, runs, limits, **kw)
    verdicts = classify_reference_runs(statuses, per_test, messages)
    failing = [t for t, (reason, _) in verdicts.items() if reason == "fails"]
    if failing and check_network:
        online, _, _ = _reference_statuses(
            instance, store, 1, SuiteLimits(per_test=per_test, network=True), **kw
        )
        for test in failing:
            if online.get(test, [TestStatus.NOT_RUN])[0] is TestStatus.PASSED:
                verdicts[test] = ("network", "fails without network, passes with it")
    report = HygieneReport(instance=instance.name, runs=runs, tests=len(statuses))
    report.harness_errors = errors
    listed = [DroppedTest(t, r, d) for t, (r, d) in sorted(verdicts.items())]
    report.dropped = [d for d in listed if d.reason != "skipped"]
    report.skipped = [d for d in listed if d.reason == "skipped"]

    target = prepare_target(instance, out)
    moved = load_instance(target)
    dropped_ids = {d.id for d in report.dropped}

    changed, missing = remove_tests(moved.tests, dropped_ids)
    report.files_changed += [str(f.relative_to(target)) for f in changed]
    report.not_removed += missing

    map_files = [target / "instance.toml"]
    raw = (target / "instance.toml").read_text(encoding="utf-8")
    extra = re.search(r'^sections_map\s*=\s*"([^"]+)"', raw, re.M)
    if extra:
        map_files.append(target / extra.group(1))
    for file in map_files:
        _drop_map_entries(file, dropped_ids)

    if moved.spec is not None:
        text = moved.spec.read_text(encoding="utf-8")
        text, changes = scrub_error_locations(text)
        orphaned: set[str] = set()
        linked: dict[str, set[str]] = {}
        for test, sections in instance.sections_map.items():
            for section in sections:
                linked.setdefault(section, set()).add(test)
        for section, tests in linked.items():
            if tests and tests <= dropped_ids:
                orphaned.add(section)
        text, gone = drop_sections(text, orphaned)
        report.spec_changes = changes
        report.sections_dropped = gone
        moved.spec.write_text(text, encoding="utf-8")
    load_instance(target)  # still a valid instance
    (target / "hygiene.json").write_text(json.dumps(report.to_dict(), indent=1) + "\n", "utf-8")
    return report
