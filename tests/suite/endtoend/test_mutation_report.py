"""mutation-report.json: valid mutation-testing-elements (schema version 2), faithful to results.

The JSON schema below is written from the schema's documented required fields (draft-07):
what Stryker's report viewer needs to open a file.  Beyond the schema, the report must say the
same thing as the scoring: the viewer's score equals mutation_score M, every ``killedBy`` test is
a valid test listed in ``testFiles``, and a mutant's location and replacement, spliced into the
reference source, give back the mutated source.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from suitebench.data import INSTANCES_DIR
from suitebench.model.instance import Instance, load_instance
from suitebench.report.mutation_report import (
    mutation_report,
    parse_unified_diff,
    report_mutation_score,
    write_mutation_report,
)
from suitebench.suite import score as score_module

from ...cli_helpers import run_suitebench

INSTANCES = INSTANCES_DIR

_POSITION = {
    "type": "object",
    "required": ["line", "column"],
    "properties": {
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1},
    },
}
_STRINGS = {"type": "array", "items": {"type": "string"}}
MUTATION_TESTING_ELEMENTS_V2: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["schemaVersion", "thresholds", "files"],
    "properties": {
        "schemaVersion": {"type": "string", "pattern": r"^2(\.\d+){0,2}$"},
        "thresholds": {
            "type": "object",
            "required": ["high", "low"],
            "properties": {
                "high": {"type": "integer", "minimum": 0, "maximum": 100},
                "low": {"type": "integer", "minimum": 0, "maximum": 100},
            },
        },
        "projectRoot": {"type": "string"},
        "config": {"type": "object"},
        "system": {"type": "object", "required": ["ci"], "properties": {"ci": {"type": "boolean"}}},
        "framework": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
        },
        "files": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["language", "source", "mutants"],
                "properties": {
                    "language": {"type": "string"},
                    "source": {"type": "string"},
                    "mutants": {
                        "type": "array",
                        "uniqueItems": True,
                        "items": {
                            "type": "object",
                            "required": ["id", "mutatorName", "location", "status"],
                            "properties": {
                                "id": {"type": "string"},
                                "mutatorName": {"type": "string"},
                                "location": {
                                    "type": "object",
                                    "required": ["start", "end"],
                                    "properties": {"start": _POSITION, "end": _POSITION},
                                },
                                "status": {
                                    "enum": [
                                        "Killed",
                                        "Survived",
                                        "NoCoverage",
                                        "CompileError",
                                        "RuntimeError",
                                        "Timeout",
                                        "Ignored",
                                        "Pending",
                                    ]
                                },
                                "killedBy": _STRINGS,
                                "coveredBy": _STRINGS,
                                "description": {"type": "string"},
                                "replacement": {"type": "string"},
                                "statusReason": {"type": "string"},
                                "testsCompleted": {"type": "number"},
                                "duration": {"type": "number"},
                                "static": {"type": "boolean"},
                            },
                        },
                    },
                },
            },
        },
        "testFiles": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["tests"],
                "properties": {
                    "source": {"type": "string"},
                    "tests": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id", "name"],
                            "properties": {
                                "id": {"type": "string"},
                                "name": {"type": "string"},
                                "location": {
                                    "type": "object",
                                    "required": ["start"],
                                    "properties": {"start": _POSITION, "end": _POSITION},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def validate(report: dict[str, Any]) -> None:
    """The schema, then what the schema cannot say: ids resolve, locations lie in the source."""
    jsonschema.Draft7Validator.check_schema(MUTATION_TESTING_ELEMENTS_V2)
    jsonschema.validate(report, MUTATION_TESTING_ELEMENTS_V2, cls=jsonschema.Draft7Validator)
    assert report["schemaVersion"] == "2"
    assert report["thresholds"] == {"high": 80, "low": 60}
    test_ids = {t["id"] for f in report["testFiles"].values() for t in f["tests"]}
    for entry in report["files"].values():
        lines = entry["source"].splitlines() or [""]
        for mutant in entry["mutants"]:
            assert set(mutant["killedBy"]) <= set(mutant["coveredBy"]) <= test_ids
            start, end = mutant["location"]["start"], mutant["location"]["end"]
            assert (start["line"], start["column"]) <= (end["line"], end["column"])
            assert end["line"] <= len(lines)
            assert end["column"] <= len(lines[end["line"] - 1]) + 1


def splice(source: str, location: dict[str, Any], replacement: str) -> str:
    """Put ``replacement`` over ``location`` (1-based, end exclusive) in ``source``."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(position: dict[str, int]) -> int:
        return starts[position["line"] - 1] + position["column"] - 1

    return source[: offset(location["start"])] + replacement + source[offset(location["end"]) :]


# -- a hand-made result: the plain records the report reads -----------------------------------


@dataclass(frozen=True)
class HandTest:
    id: str
    file: str
    valid: bool


@dataclass(frozen=True)
class HandMutant:
    id: str
    status: str
    killed_by: list[str] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)
    message: str = ""


@dataclass(frozen=True)
class HandResult:
    instance: str
    suite: str
    tests: list[HandTest]
    mutants: list[HandMutant]


def _hand_result(inst: Instance) -> HandResult:
    sub = "tests/test_arithmetic.py::test_subtraction_operand_order"
    mod = "tests/test_arithmetic.py::test_remainder_by_zero"
    shaky = "tests/test_stack.py::test_dup_swap_drop"
    tests = [
        HandTest(sub, "tests/test_arithmetic.py", True),
        HandTest(mod, "tests/test_arithmetic.py", True),
        HandTest(shaky, "tests/test_stack.py", False),
    ]
    ran = {sub: "passed", mod: "passed", shaky: "failed"}
    return HandResult(
        instance=inst.name,
        suite=str(inst.tests),
        tests=tests,
        mutants=[
            HandMutant("c02", "killed", [sub], {**ran, sub: "failed"}),
            HandMutant("c04", "timeout", [mod], {**ran, mod: "timeout"}),
            HandMutant("c05", "survived", [], ran),
            HandMutant("c11", "crashed", [], {sub: "passed"}, "pytest died: signal 9"),
            HandMutant("c17", "build_error", [], {}, "build failed (exit code 1)\nrpn.c: error"),
            HandMutant("c18", "build_error", [], {}, "patch: Hunk #1 FAILED at 44."),
        ],
    )


def _mutants_by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for f in report["files"].values() for m in f["mutants"]}


def test_hand_made_result_gives_a_valid_report_with_each_status() -> None:
    inst = load_instance(INSTANCES / "rpn-c")
    seen: list[tuple[int, int]] = []
    report = mutation_report(inst, _hand_result(inst), progress=lambda d, t: seen.append((d, t)))
    validate(report)
    assert seen[-1] == (6, 6)
    assert list(report["files"]) == ["rpn.c"]
    rpn = report["files"]["rpn.c"]
    assert rpn["language"] == "c"
    assert rpn["source"] == (inst.source / "rpn.c").read_text()
    mutants = _mutants_by_id(report)
    assert {m: v["status"] for m, v in mutants.items()} == {
        "c02": "Killed",
        "c04": "Timeout",
        "c05": "Survived",
        "c11": "RuntimeError",
        "c17": "CompileError",
        "c18": "CompileError",
    }
    # The invalid test neither covers nor kills, though it failed everywhere.
    shaky = "tests/test_stack.py::test_dup_swap_drop"
    assert all(shaky not in m["coveredBy"] for m in mutants.values())
    assert mutants["c02"]["killedBy"] == [
        "tests/test_arithmetic.py::test_subtraction_operand_order"
    ]
    assert "target test killed it" in mutants["c02"]["statusReason"]
    assert mutants["c18"]["statusReason"] == "patch: Hunk #1 FAILED at 44."
    assert mutants["c02"]["mutatorName"] == "operand_order"
    assert "section: Operators" in mutants["c02"]["description"]
    # The viewer's score is M: (Killed + Timeout) / (Killed + Timeout + Survived).
    assert report_mutation_score(report) == pytest.approx(2 / 3)
    names = {t["id"]: t["name"] for t in report["testFiles"]["tests/test_stack.py"]["tests"]}
    assert names[shaky] == "test_dup_swap_drop (not valid on the reference)"
    located = report["testFiles"]["tests/test_arithmetic.py"]["tests"][0]
    source = report["testFiles"]["tests/test_arithmetic.py"]["source"].splitlines()
    assert source[located["location"]["start"]["line"] - 1].startswith("def test_subtraction")


def test_one_line_mutant_is_located_to_the_changed_columns() -> None:
    inst = load_instance(INSTANCES / "wordfreq-py")
    result = HandResult(inst.name, str(inst.tests), [], [HandMutant("m01", "survived")])
    report = mutation_report(inst, result)
    validate(report)
    mutant = report["files"]["wordfreq/counting.py"]["mutants"][0]
    line = report["files"]["wordfreq/counting.py"]["source"].splitlines()[
        mutant["location"]["start"]["line"] - 1
    ]
    start, end = mutant["location"]["start"]["column"], mutant["location"]["end"]["column"]
    assert line.strip() == "items = items[:top]"
    assert line[start - 1 : end - 1] == "top"
    assert mutant["replacement"] == " top - 1"


@pytest.mark.parametrize("name", ["wordfreq-py", "rpn-c", "intervals-pkg"])
def test_location_and_replacement_reproduce_every_single_hunk_mutant(
    name: str, tmp_path: Path
) -> None:
    """Spliced into the reference source, a mutant's replacement gives the patched file."""
    inst = load_instance(INSTANCES / name)
    result = HandResult(
        inst.name, str(inst.tests), [], [HandMutant(m.id, "survived") for m in inst.mutants]
    )
    report = mutation_report(inst, result)
    validate(report)
    checked = 0
    for path, entry in report["files"].items():
        for mutant in entry["mutants"]:
            spec = inst.mutant(mutant["id"])
            hunks = parse_unified_diff(spec.patch.read_text())
            if len(hunks) != 1:
                continue
            tree = tmp_path / mutant["id"]
            shutil.copytree(inst.source, tree)
            applied = subprocess.run(
                ["patch", "-p1", "--batch", "--fuzz=0", "-s", "-i", str(spec.patch)],
                cwd=tree,
                capture_output=True,
            )
            if applied.returncode != 0:
                continue  # the stale patch: located from its hunk, but nothing to compare
            expected = (tree / path).read_text()
            assert splice(entry["source"], mutant["location"], mutant["replacement"]) == expected
            checked += 1
    assert checked >= 8


def test_write_mutation_report_into_a_directory(tmp_path: Path) -> None:
    inst = load_instance(INSTANCES / "rpn-c")
    path = write_mutation_report(tmp_path, inst, _hand_result(inst))
    assert path == tmp_path / "mutation-report.json"
    validate(json.loads(path.read_text()))


@pytest.mark.slow
def test_report_of_a_real_scoring_is_valid_and_scores_m(tmp_path: Path) -> None:
    score = score_module
    from suitebench.run.store import Store

    inst = load_instance(INSTANCES / "rpn-c")
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score.score_suite(inst, store=store, cache_dir=tmp_path / "builds")
    finally:
        store.close()
    path = write_mutation_report(tmp_path / "out" / "mutation-report.json", inst, result)
    report = json.loads(path.read_text())
    validate(report)
    assert report_mutation_score(report) == pytest.approx(result.mutation_score)
    mutants = _mutants_by_id(report)
    assert len(mutants) == len(inst.mutants)
    for mutant in result.mutants:
        assert sorted(mutants[mutant.id]["killedBy"]) == sorted(mutant.killed_by)
    assert mutants["c17"]["status"] == mutants["c18"]["status"] == "CompileError"
    assert mutants["c05"]["status"] == "Survived"
    # Selection from the gcc coverage build: c05 is covered by the valid tests that reach it.
    c05 = next(m for m in result.mutants if m.id == "c05")
    valid = {t.id for t in result.tests if t.valid}
    assert c05.covered_by is not None
    assert set(mutants["c05"]["coveredBy"]) == set(c05.covered_by) & valid
    assert 0 < len(mutants["c05"]["coveredBy"]) < result.counts.valid
    assert mutants["c05"]["duration"] > 0 and "duration" not in mutants["c17"]
    listed = {t["id"] for f in report["testFiles"].values() for t in f["tests"]}
    assert listed == set(result.test_ids())


@pytest.mark.slow
def test_score_command_writes_a_valid_report(tmp_path: Path) -> None:
    """What a user runs: ``suitebench score INSTANCE --out DIR`` leaves a report that validates
    and whose score is the M in results.json."""
    proc = run_suitebench(
        "score", INSTANCES / "intervals-pkg", "--out", tmp_path / "out", store=tmp_path / "s.sqlite"
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "mutation-report.json").read_text())
    validate(report)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert report_mutation_score(report) == pytest.approx(results["mutation_score"])
    assert set(report["files"]) == {"intervals/core.py", "intervals/text.py"}
    assert all(f["language"] == "python" for f in report["files"].values())


def test_diff_lines_that_look_like_file_headers_stay_in_their_hunk() -> None:
    """A removed ``-- note`` line reads ``--- note`` in the diff, an added ``++ i`` line
    ``+++ i``: the hunk's line counts, not the prefix, say where the body ends."""
    diff = (
        "--- a/query.lua\n"
        "+++ b/query.lua\n"
        "@@ -1,3 +1,3 @@\n"
        " local n = 0\n"
        "--- note: count from zero\n"
        "+++ i\n"
        " return n\n"
        "--- a/other.lua\n"
        "+++ b/other.lua\n"
        "@@ -4,0 +5,1 @@\n"
        "+print(n)\n"
    )
    hunks = parse_unified_diff(diff)
    assert [(h.path, h.before, h.removed, h.added) for h in hunks] == [
        ("query.lua", 2, ("-- note: count from zero",), ("++ i",)),
        ("other.lua", 5, (), ("print(n)",)),
    ]
