"""``mutation-report.json`` in the mutation-testing-elements schema (version 2).

Stryker, and every tool that speaks its report format, opens this file in the
``<mutation-test-report-app>`` viewer: the reference source with each mutant shown in place,
its status, the tests that killed it and the tests that ran on it.  Writing our suite-mode
results in that schema lets a user read a TestSuiteBench kill matrix there instead of in CSV.

How suite mode maps onto the schema:

* ``files`` is keyed by source path relative to the instance's source directory; each mutant
  goes under the file its diff changes (the first file, for a diff touching several).
* ``location`` comes from the mutant's diff hunk (1-based lines and columns, end exclusive, in
  the reference source).  A one-line change is narrowed to the changed columns and carries the
  new text as ``replacement``; a larger hunk covers its removed lines whole.
* ``status``: killed -> Killed, timeout -> Timeout (killed only by valid tests that hit the
  per-test limit), survived -> Survived, build_error (patch did not apply or the build failed)
  -> CompileError, crashed (pytest died outside any test) -> RuntimeError, equivalent (the
  compiler gives the reference's code, or the instance declares it) -> Ignored, its reason as
  the ``statusReason``.  The report's score,
  (Killed + Timeout) / (Killed + Timeout + Survived), is the paper's mutation_score M.
* ``killedBy`` are the *valid* tests that failed on the mutant.  ``coveredBy``: with
  coverage-guided test selection, the valid tests that reach the code the mutant changes (a
  survivor no valid test reaches is ``NoCoverage``, as in Stryker); without it, every valid
  test that ran on it.  A test that fails on the reference (not valid) neither covers nor kills.
* ``statusReason`` says why: for a kill, the first killing test and its one-line failure
  message (pytest's exception and message); for a build error or a crash, the first line of
  the build's or pytest's output.
* ``mutatorName`` is the mutant's operator (a bug pattern such as ``off_by_one``), else
  ``requirement: <section>``: TestSuiteBench mutants are built to violate one spec section.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import suitebench
from suitebench.model.diffs import DiffError, DiffLine, read_diff
from suitebench.model.instance import Instance, MutantSpec

__all__ = [
    "SCHEMA_VERSION",
    "THRESHOLDS",
    "Hunk",
    "location_from_diff",
    "mutation_report",
    "parse_unified_diff",
    "report_mutation_score",
    "write_mutation_report",
]

SCHEMA_VERSION = "2"
THRESHOLDS = {"high": 80, "low": 60}

_STATUS = {
    "killed": "Killed",
    "timeout": "Timeout",
    "survived": "Survived",
    "build_error": "CompileError",
    "crashed": "RuntimeError",
    "equivalent": "Ignored",  # out of the score, as the schema's Ignored is
}
_LANGUAGES = {
    ".py": "python",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".sh": "shell",
    ".js": "javascript",
    ".ts": "typescript",
}
_RAN = {"passed", "failed", "error", "timeout"}  # outcomes of a test that actually ran


class _Test(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def valid(self) -> bool: ...


class _Mutant(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def killed_by(self) -> Sequence[str]: ...
    @property
    def outcomes(self) -> Mapping[str, str]: ...
    @property
    def message(self) -> str: ...


class ScoredSuite(Protocol):
    """What the report needs of a scored suite
    (``suitebench.suite.result.SuiteResult``)."""

    @property
    def instance(self) -> str: ...
    @property
    def suite(self) -> str: ...
    @property
    def tests(self) -> Sequence[_Test]: ...
    @property
    def mutants(self) -> Sequence[_Mutant]: ...


@dataclass(frozen=True)
class Hunk:
    """One hunk of a unified diff: its file, old start line, removed and added lines."""

    path: str
    old_start: int
    removed: tuple[str, ...]
    added: tuple[str, ...]
    before: int  # old line number of the first removed line (or of the insertion point)


def _strip_prefix(name: str) -> str:
    name = name.split("\t", 1)[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


def parse_unified_diff(text: str) -> list[Hunk]:
    """The changed runs of a unified diff, one ``Hunk`` per contiguous run of -/+ lines.

    Paths lose their ``a/``/``b/`` prefix (the diffs are applied with ``patch -p1``).  A hunk's
    body is read by the line counts of its ``@@`` header, so a removed line that reads
    ``-- note`` or an added one that reads ``++ i`` is not taken for a file header.  Text that
    is not a unified diff has no hunks.
    """
    hunks: list[Hunk] = []
    try:
        files = read_diff(text).files
    except DiffError:
        return hunks
    for file in files:
        old_path = _strip_prefix(file.old_name)
        path = old_path if old_path != "/dev/null" else ""
        new_path = _strip_prefix(file.new_name)
        if not path and new_path != "/dev/null":
            path = new_path
        if not path:
            continue
        for hunk in file.hunks:
            start = hunk.old_start + (1 if hunk.old_length == 0 else 0)  # "-N,0": after N
            old_line = first = start
            run: list[DiffLine] = []
            for line in [*hunk.lines, None]:  # None: the hunk's end closes the last run
                if line is not None and line.tag == "\\":
                    continue  # "\ No newline at end of file"
                if line is not None and line.tag in "-+":
                    if not run:
                        first = old_line
                    run.append(line)
                    old_line += line.tag == "-"
                    continue
                if run:  # context closes a run
                    removed = tuple(x.text for x in run if x.tag == "-")
                    added = tuple(x.text for x in run if x.tag == "+")
                    hunks.append(Hunk(path, start, removed, added, first))
                run = []
                old_line += 1
    return hunks


def _position(line: int, column: int) -> dict[str, int]:
    return {"line": line, "column": column}


def location_from_diff(
    hunks: Sequence[Hunk], source_lines: Sequence[str]
) -> tuple[dict[str, Any], str]:
    """Location (1-based, end exclusive) and replacement text of a mutant's main change.

    The main change is the largest run of changed lines (the first, on ties).  Positions are
    clamped to the reference source, so a diff that no longer applies still gets a location.
    """
    if not hunks:
        return {"start": _position(1, 1), "end": _position(1, 1)}, ""
    hunk = max(hunks, key=lambda h: len(h.removed) + len(h.added))
    count = max(len(source_lines), 1)

    def text(line: int) -> str:
        return source_lines[line - 1] if 1 <= line <= len(source_lines) else ""

    if not hunk.removed:  # pure insertion before old line ``before``: after the line above it
        line = min(max(hunk.before - 1, 1), count)
        end = _position(line, len(text(line)) + 1)
        return {"start": end, "end": end}, "\n" + "\n".join(hunk.added)
    first = min(max(hunk.before, 1), count)
    last = min(first + len(hunk.removed) - 1, count)
    if not hunk.added:  # pure deletion: the removed lines and their line breaks
        if last < count:
            return {"start": _position(first, 1), "end": _position(last + 1, 1)}, ""
        if first > 1:
            start = _position(first - 1, len(text(first - 1)) + 1)
            return {"start": start, "end": _position(last, len(text(last)) + 1)}, ""
    if len(hunk.removed) == 1 and len(hunk.added) == 1:
        old, new = hunk.removed[0], hunk.added[0]
        prefix = 0
        while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < min(len(old), len(new)) - prefix
            and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]
        ):
            suffix += 1
        location = {
            "start": _position(first, prefix + 1),
            "end": _position(first, len(old) - suffix + 1),
        }
        return location, new[prefix : len(new) - suffix]
    location = {"start": _position(first, 1), "end": _position(last, len(text(last)) + 1)}
    return location, "\n".join(hunk.added)


def _language(path: str) -> str:
    return _LANGUAGES.get(Path(path).suffix.lower(), "plaintext")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _test_name(test_id: str) -> str:
    return test_id.split("::", 1)[1].replace("::", ".") if "::" in test_id else test_id


def _status_reason(
    status: str,
    killed_by: Sequence[str],
    target: str | None,
    message: str,
    kill_messages: Mapping[str, str] | None = None,
    covered: bool = True,
) -> str:
    if status in ("killed", "timeout"):
        hit = ""
        if target:
            hit = "; its target test killed it" if target in killed_by else "; not its target"
        why = ""
        first = killed_by[0] if killed_by else None
        if first is not None and kill_messages and kill_messages.get(first):
            why = f"; {first}: {kill_messages[first]}"
        return f"killed by {len(killed_by)} valid test(s){hit}{why}"[:500]
    if status == "survived":
        if not covered:
            return "no valid test reaches the code this mutant changes"
        return "every valid test passed on this mutant"
    first = message.strip().splitlines()[0] if message.strip() else status
    return first[:500]


def _test_files(result: ScoredSuite) -> dict[str, Any]:
    """Tests by file (node-id file part); sources and ``def`` lines when the suite is readable."""
    suite_dir = Path(result.suite)
    files: dict[str, Any] = {}
    lines: dict[str, list[str]] = {}
    for test in result.tests:
        entry = files.get(test.file)
        if entry is None:
            entry = {"tests": []}
            relative = test.file.split("/", 1)[1] if "/" in test.file else test.file
            source = _read(suite_dir / relative) if suite_dir.is_dir() else None
            if source is not None:
                entry["source"] = source
            lines[test.file] = (source or "").splitlines()
            files[test.file] = entry
        why = getattr(test, "message", "") or ""
        name = _test_name(test.id)
        if not test.valid:
            name += (
                f" (not valid on the reference: {why})" if why else " (not valid on the reference)"
            )
        definition: dict[str, Any] = {"id": test.id, "name": name}
        function = test.id.rsplit("::", 1)[-1].split("[", 1)[0]
        pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\s*\(")
        for number, line in enumerate(lines[test.file], start=1):
            if "::" in test.id and pattern.match(line):
                definition["location"] = {"start": _position(number, line.index("def") + 1)}
                break
        entry["tests"].append(definition)
    return files


def _mutant_entry(
    mutant: _Mutant,
    spec: MutantSpec | None,
    valid: set[str],
    location: dict[str, Any],
    replacement: str,
) -> dict[str, Any]:
    """One mutant's entry in the report: its status (NoCoverage for a survivor no valid test
    ran), the reason, the valid tests that killed and covered it, and its duration."""
    status = str(mutant.status)
    section = spec.section if spec is not None else None
    operator = spec.operator if spec is not None else None
    target = spec.target if spec is not None else None
    description = spec.description if spec is not None else ""
    killed_by = [t for t in mutant.killed_by if t in valid]
    selected: Sequence[str] | None = getattr(mutant, "covered_by", None)
    if selected is not None:
        covered_by = [t for t in selected if t in valid]
    else:
        covered_by = [t for t, o in mutant.outcomes.items() if t in valid and str(o) in _RAN]
    report_status = _STATUS.get(status, "RuntimeError")
    if status == "survived" and selected is not None and not covered_by:
        report_status = "NoCoverage"
    kill_messages: Mapping[str, str] = getattr(mutant, "kill_messages", None) or {}
    reason = _status_reason(
        status, killed_by, target, mutant.message, kill_messages, bool(covered_by)
    )
    completed = getattr(mutant, "tests_run", None)
    if not isinstance(completed, int):
        completed = sum(1 for o in mutant.outcomes.values() if str(o) in _RAN)
    entry: dict[str, Any] = {
        "id": mutant.id,
        "mutatorName": operator or (f"requirement: {section}" if section else "requirement"),
        "location": location,
        "status": report_status,
        "statusReason": reason,
        "description": "; ".join(
            part
            for part in (
                description,
                f"section: {section}" if section else "",
                f"target: {target}" if target else "",
            )
            if part
        ),
        "replacement": replacement,
        "killedBy": killed_by,
        "coveredBy": covered_by,
        "testsCompleted": completed,
        "static": False,
    }
    wall_time = getattr(mutant, "wall_time", 0.0)
    if isinstance(wall_time, int | float) and wall_time > 0:
        entry["duration"] = round(wall_time * 1000.0, 1)  # milliseconds, as the schema says
    return entry


def mutation_report(
    instance: Instance,
    suite_result: ScoredSuite,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The mutation-testing-elements report (schema version 2) of a scored suite.

    ``progress(done, total)`` is called once per mutant placed.
    """
    mutant_specs = {m.id: m for m in instance.mutants}
    valid = {t.id for t in suite_result.tests if t.valid}
    files: dict[str, dict[str, Any]] = {}
    sources: dict[str, list[str]] = {}
    total = len(suite_result.mutants)
    for done, mutant in enumerate(suite_result.mutants, start=1):
        spec = mutant_specs.get(mutant.id)
        diff = _read(spec.patch) if spec is not None else None
        hunks = parse_unified_diff(diff or "")
        path = hunks[0].path if hunks else "(unknown)"
        hunks = [h for h in hunks if h.path == path]
        if path not in files:
            text = _read(instance.source / path) if hunks else None
            files[path] = {"language": _language(path), "source": text or "", "mutants": []}
            sources[path] = (text or "").splitlines()
        location, replacement = location_from_diff(hunks, sources[path])
        entry = _mutant_entry(mutant, spec, valid, location, replacement)
        files[path]["mutants"].append(entry)
        if progress is not None:
            progress(done, total)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "thresholds": dict(THRESHOLDS),
        "projectRoot": str(instance.source),
        "files": files,
        "testFiles": _test_files(suite_result),
        "framework": {"name": "suitebench", "version": suitebench.__version__},
        "system": {"ci": bool(os.environ.get("CI"))},
        "config": {"instance": suite_result.instance, "suite": suite_result.suite},
    }


def report_mutation_score(report: Mapping[str, Any]) -> float | None:
    """The report's own score, (Killed + Timeout) / (Killed + Timeout + Survived + NoCoverage)."""
    counts: dict[str, int] = {}
    for entry in report["files"].values():
        for mutant in entry["mutants"]:
            counts[mutant["status"]] = counts.get(mutant["status"], 0) + 1
    detected = counts.get("Killed", 0) + counts.get("Timeout", 0)
    scored = detected + counts.get("Survived", 0) + counts.get("NoCoverage", 0)
    return detected / scored if scored else None


def write_mutation_report(
    path: Path | str,
    instance: Instance,
    suite_result: ScoredSuite,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Write ``mutation-report.json`` (a directory gets the file inside it)."""
    target = Path(path)
    if target.is_dir():
        target = target / "mutation-report.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    report = mutation_report(instance, suite_result, progress=progress)
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return target
