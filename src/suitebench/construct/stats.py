"""``build stats``: TestSuiteBench Table 1 over a set of instances.

Per instance: the spec's words, lines and sections (markdown headings) and its number of
files; the reference implementation's lines of code (non-blank lines of its source files of a
supported language, build scripts excluded); the reference suite's test functions (read from
the files, not collected: a parametrized test is one function, as in the paper's "# Func");
and the number of mutants.  Over the instances: min, max and median of each.
"""

from __future__ import annotations

import ast
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from suitebench.construct.treesitter_ops import language_of
from suitebench.model.instance import Instance

__all__ = ["FIGURES", "InstanceStats", "instance_stats", "summarize", "test_functions"]

FIGURES = (
    ("spec_words", "S", "# Words"),
    ("spec_lines", "S", "# Lines"),
    ("spec_sections", "S", "# Sections"),
    ("spec_files", "S", "# Files"),
    ("source_loc", "I", "# LOC"),
    ("reference_tests", "T", "# Func"),
    ("mutants", "M", "# Amount"),
)


@dataclass(frozen=True)
class InstanceStats:
    instance: str
    spec_words: int
    spec_lines: int
    spec_sections: int
    spec_files: int
    source_loc: int
    reference_tests: int
    mutants: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def test_functions(tests_dir: Path) -> list[str]:
    """Node ids of the test functions defined in a pytest suite (``test_*.py``/``*_test.py``:
    ``test*`` functions at module level and in ``Test*`` classes)."""
    ids: list[str] = []
    for path in sorted(tests_dir.rglob("*.py")):
        if not (path.name.startswith("test_") or path.name.endswith("_test.py")):
            continue
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError):
            continue
        rel = f"{tests_dir.name}/{path.relative_to(tests_dir).as_posix()}"
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                "test"
            ):
                ids.append(f"{rel}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for item in node.body:
                    if isinstance(
                        item, (ast.FunctionDef, ast.AsyncFunctionDef)
                    ) and item.name.startswith("test"):
                        ids.append(f"{rel}::{node.name}::{item.name}")
    return ids


def _loc(source: Path) -> int:
    total = 0
    for path in source.rglob("*"):
        if not path.is_file() or any(p in ("__pycache__", ".git") for p in path.parts):
            continue
        name = path.name
        if not (name.endswith(".py") or language_of(name) not in (None, "bash")):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        total += sum(1 for line in text.splitlines() if line.strip())
    return total


def _reference_tests(instance: Instance) -> int:
    """The reference suite's size: for a ProgramBench task the tests ``tests.json`` lists, less
    the ignored ones (or, without it, the test functions of the branches scored)."""
    branches = getattr(instance, "branches", None)
    if branches is None:
        return len(test_functions(instance.tests))
    listed = instance.scored_tests()  # type: ignore[attr-defined]
    if listed:
        return len(listed)
    return sum(len(test_functions(instance.tests / b / "eval" / "tests")) for b in branches)


def instance_stats(instance: Instance) -> InstanceStats:
    spec_text = ""
    if instance.spec is not None and instance.spec.is_file():
        spec_text = instance.spec.read_text(encoding="utf-8", errors="replace")
    return InstanceStats(
        instance=instance.name,
        spec_words=len(spec_text.split()),
        spec_lines=len(spec_text.splitlines()),
        spec_sections=len(instance.spec_sections()),
        spec_files=1 if spec_text else 0,
        source_loc=_loc(instance.source),
        reference_tests=_reference_tests(instance),
        mutants=len(instance.mutants),
    )


def summarize(rows: list[InstanceStats]) -> dict[str, dict[str, float]]:
    """min, max and median of every figure over the instances (Table 1's columns)."""
    out: dict[str, dict[str, float]] = {}
    for key, _, _ in FIGURES:
        values = [getattr(r, key) for r in rows]
        out[key] = {
            "min": min(values),
            "max": max(values),
            "median": statistics.median(values),
        }
    return out
