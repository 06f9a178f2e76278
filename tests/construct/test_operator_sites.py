"""Operator mutation sites on small programs in every language: every diff applies with
``patch -p1 --fuzz=0``, no mutant touches a comment or a string, none is a duplicate or no-op."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from suitebench.construct.edits import Edit, apply_edit, unified_diff
from suitebench.construct.mutants import mutation_sites


def _patch(tmp: Path, name: str, source: bytes, diff: bytes) -> bytes:
    tree = tmp / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / name).write_bytes(source)
    (tmp / "m.diff").write_bytes(diff)
    proc = subprocess.run(
        ["patch", "-p1", "--fuzz=0", "--batch", "-d", str(tree), "-i", str(tmp / "m.diff")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr + diff.decode()
    return (tree / name).read_bytes()


NAMES = ["clamp.c", "clamp.cpp", "clamp.go", "clamp.py", "clamp.rs"]


@pytest.mark.parametrize("name", NAMES)
def test_every_site_applies_with_patch_and_spares_comments_and_strings(
    name: str, tmp_path: Path, programs: dict[str, str], protected: dict[str, list[str]]
) -> None:
    source = programs[name].encode()
    sites = mutation_sites(name, source)
    assert len(sites) >= 12, [s.description for s in sites]
    operators = {s.operator for s in sites}
    if name.endswith(".py"):
        assert {"arithmetic", "comparison", "boolean", "constant", "return_value"} <= operators
        assert {"break_continue", "slice_bound", "range_bound", "swap_arguments"} <= operators
        assert {"unary", "string", "delete_statement"} <= operators
    else:
        assert {"relational", "arithmetic", "logical", "constant"} <= operators
        assert {"negate_condition", "assignment"} <= operators
    fingerprints = set()
    for index, site in enumerate(sites):
        mutated = site.mutated(source)
        assert mutated != source, site.description
        for text in protected[name]:
            if site.operator == "string" and text.startswith('"'):
                continue  # Python's string operator changes a whole string, on purpose
            # Never an edit inside a comment or string; a deleted statement may hold one whole.
            start = source.index(text.encode())
            end = start + len(text.encode())
            e = site.edit
            outside = e.end <= start or e.start >= end
            whole = e.start <= start and end <= e.end and e.end - e.start > end - start
            assert outside or whole, f"{site.description} touched {text!r}"
        fingerprints.add(site.fingerprint(source))
        got = _patch(tmp_path / f"m{index}", name, source,
                     unified_diff(name, source, site.edit))  # fmt: skip
        assert got == mutated, site.description
    assert len(fingerprints) == len(sites)


def test_protected_text_is_really_in_the_programs(protected: dict[str, list[str]]) -> None:
    for name in NAMES:
        assert len(protected[name]) >= 2, name


def test_python_skips_annotations_docstrings_and_dunder_all(programs: dict[str, str]) -> None:
    source = programs["clamp.py"].encode()
    for site in mutation_sites("clamp.py", source):
        line = source.splitlines()[site.line - 1].decode()
        assert not line.startswith("__all__"), site.description
        assert not line.startswith('"""'), site.description
        assert "int" not in site.edit.replacement.decode(), site.description


def test_integer_literals_keep_base_and_suffix(programs: dict[str, str]) -> None:
    source = programs["clamp.c"].encode()
    replacements = {s.edit.replacement for s in mutation_sites("clamp.c", source)}
    assert {b"0x20", b"0x1E"} <= replacements
    rust = programs["clamp.rs"].encode()
    assert {b"1001", b"999"} <= {s.edit.replacement for s in mutation_sites("clamp.rs", rust)}


@pytest.mark.parametrize(
    ("source", "edit"),
    [
        (b"a\nb\nc\n", Edit(2, 3, b"B")),
        (b"a\nb\nc", Edit(4, 5, b"C")),  # last line without a newline
        (b"a\nb\nc", Edit(4, 5, b"C\n")),  # ... that gains one
        (b"one\ntwo\nthree\nfour\nfive\nsix\nseven\n", Edit(8, 19, b"3 4")),  # spans lines
        (b"x = 1\ny = 2\n", Edit(5, 6, b"")),  # joins two lines
        (b"f();\n", Edit(0, 4, b";")),
    ],
)
def test_unified_diff_is_exact_on_edge_cases(source: bytes, edit: Edit, tmp_path: Path) -> None:
    diff = unified_diff("f.txt", source, edit)
    assert _patch(tmp_path, "f.txt", source, diff) == apply_edit(source, edit)
