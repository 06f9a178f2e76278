"""A bound written with the target test's repetition count is a literal special case.

The instance is a small C stack calculator, ``depth``, that holds at most 32 values: its target
test pushes ``" ".join(["1"] * 33)`` and expects an overflow.  Its candidates:

* ``b01`` moves the bound to ``depth >= 33``: wrong for exactly 33 values, the test's own count;
* ``b02`` does the same through the macro, ``#define MAX_DEPTH 33``;
* ``b03`` drops the check (``depth < 0``): wrong for every count past 32 (the control).

``build refine`` must see the ``33`` in ``["1"] * 33`` to flag ``b01`` and ``b02``, and the
literal-perturbation re-run must rename it: with 34 or 35 values the target passes on both, as
on the reference, while it still kills ``b03``.
"""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

import pytest

from suitebench.construct.refine import hardcoded_literals, refine_instance
from suitebench.model.instance import load_instance
from suitebench.run.store import Store

DEPTH_C = textwrap.dedent(
    """\
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    /* depth: adds up a line of numbers and '+' in reverse Polish notation, at most 32 held */
    #define MAX_DEPTH 32

    int main(void) {
        static char line[8192];
        long values[64];
        int depth = 0;
        if (!fgets(line, sizeof line, stdin)) return 1;
        for (char *tok = strtok(line, " \\n"); tok; tok = strtok(NULL, " \\n")) {
            if (strcmp(tok, "+") == 0) {
                if (depth < 2) { puts("error: stack underflow"); return 1; }
                depth--;
                values[depth - 1] += values[depth];
                continue;
            }
            if (depth >= MAX_DEPTH) { puts("error: stack overflow"); return 1; }
            values[depth++] = strtol(tok, NULL, 10);
        }
        if (depth != 1) { puts("error: values left on stack"); return 1; }
        printf("%ld\\n", values[0]);
        return 0;
    }
    """
)

TEST_DEPTH = textwrap.dedent(
    """\
    import subprocess


    def calc(line):
        return subprocess.run(
            ["./executable"], input=line + "\\n", capture_output=True, text=True, timeout=30
        ).stdout


    def test_adds():
        assert calc("2 3 +") == "5\\n"


    def test_thirty_two_values_fit():
        assert calc(" ".join(["1"] * 32) + " +" * 31) == "32\\n"


    def test_thirty_third_value_overflows():
        assert calc(" ".join(["1"] * 33) + " +" * 32) == "error: stack overflow\\n"


    def test_underflow():
        assert calc("1 +") == "error: stack underflow\\n"
    """
)

TARGET = "tests/test_depth.py::test_thirty_third_value_overflows"
CHECK = "        if (depth >= MAX_DEPTH) {"
MUTANTS = {
    "b01": (CHECK, "        if (depth >= 33) {"),
    "b02": ("#define MAX_DEPTH 32", "#define MAX_DEPTH 33"),
    "b03": (CHECK, "        if (depth < 0) {"),
}


def write_depth(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "depth.c").write_text(DEPTH_C)
    (root / "src" / "build.sh").write_text(
        "#!/bin/sh\nset -eu\n${CC:-gcc} -std=c11 -O2 -Wall -Werror -o executable depth.c\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_depth.py").write_text(TEST_DEPTH)
    (root / "spec.md").write_text("# depth\n\n## Depth\n\nAt most 32 values are held.\n")
    (root / "mutants").mkdir()
    lines = ['name = "depth"', 'spec = "spec.md"', 'source = "src"', 'build = "build.sh"']
    lines.append('tests = "tests"')
    for mid, (old, new) in MUTANTS.items():
        assert DEPTH_C.count(old) == 1
        diff = difflib.unified_diff(
            DEPTH_C.splitlines(keepends=True),
            DEPTH_C.replace(old, new).splitlines(keepends=True),
            "a/depth.c",
            "b/depth.c",
        )
        (root / "mutants" / f"{mid}.diff").write_text("".join(diff))
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
        lines += ['section = "Depth"', f'target = "{TARGET}"']
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root


def test_the_bound_is_hard_coded_from_the_repetition_count(tmp_path: Path) -> None:
    """What ``build mutants --llm`` rejects and ``build refine`` flags (one check serves both)."""
    root = write_depth(tmp_path / "depth")
    target = TEST_DEPTH[TEST_DEPTH.index("def test_thirty_third") :].split("\n\n\n")[0]
    found = {mid: hardcoded_literals(root / "mutants" / f"{mid}.diff", target) for mid in MUTANTS}
    assert found == {"b01": {"33"}, "b02": {"33"}, "b03": set()}


@pytest.mark.slow
def test_refine_drops_the_bound_written_with_the_tests_count(tmp_path: Path) -> None:
    root = write_depth(tmp_path / "depth")
    store = Store(tmp_path / "store.sqlite")
    report = refine_instance(
        load_instance(root), store=store, out=tmp_path / "refined", cache_dir=tmp_path / "b"
    )
    store.close()
    d = {m.id: m for m in report.mutants}
    # Each is killed by its target alone: the single-test criterion keeps all three.
    for mid in MUTANTS:
        assert d[mid].killed_by_target and d[mid].unrelated == 0, (mid, d[mid])
    assert d["b01"].hardcoded == ["33"] == d["b02"].hardcoded and d["b03"].hardcoded == []
    for mid in ("b01", "b02"):
        check = d[mid].literal_check
        assert check is not None and check.outcome == "literal_special_case", (mid, check)
        # 32 is in the test already (" +" * 32): 34 and 35 are the nearest renames.
        assert check.perturbations == [{"33": "34"}, {"33": "35"}] and check.tried == 2
        assert check.killed_under == [False, False] and check.controls == ["b03"]
        assert not d[mid].kept and d[mid].reason.startswith("literal_special_case: ")
    assert d["b03"].kept and d["b03"].literal_check is None
    assert report.before["hardcodes_target_literal"] == 2
    assert report.after["mutants"] == 1 and report.after["literal_special_case"] == 0
    assert [m.id for m in load_instance(tmp_path / "refined").mutants] == ["b03"]
    assert "with 33 -> 34, then 33 -> 35 passes on it" in d["b01"].reason
