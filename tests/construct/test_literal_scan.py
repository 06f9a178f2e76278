"""The literals the hard-coding check and the literal-perturbation re-run see: every literal a
tokenizer of the language finds, none in a comment (TestSuiteBench, Figure 13)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from suitebench.construct.literal_scan import find_literals, literal_values
from suitebench.construct.literals import perturb_test_file
from suitebench.construct.refine import hardcoded_literals, introduced_literals

OVERFLOW_TEST = textwrap.dedent(
    """\
    def test_thirty_third_value_overflows():
        assert calc(" ".join(["1"] * 33) + " +" * 32) == "error: stack overflow\\n"
    """
)


def values(text: str, language: str) -> list[tuple[str, str]]:
    return [(lit.kind.value, lit.value) for lit in find_literals(text, language)]


def test_python_literals_in_repetitions_and_comprehensions() -> None:
    # A regular expression read '".join(["' and '"] * 33) + "' as strings here, and lost 33.
    assert values(OVERFLOW_TEST, "python") == [
        ("string", " "),
        ("string", "1"),
        ("number", "33"),
        ("string", " +"),
        ("number", "32"),
        ("string", "error: stack overflow\n"),
    ]
    comprehension = 'xs = [str(i) * 7 for i in range(-3, 12) if i != 5] + ["b"] * 9\n'
    assert values(comprehension, "python") == [
        ("number", "7"), ("number", "-3"), ("number", "12"), ("number", "5"),
        ("string", "b"), ("number", "9"),
    ]  # fmt: skip


def test_python_numbers_signs_floats_and_bases() -> None:
    text = "f(-1, a - 3, a-4, [-5], 1e-6, .5, 0x1F, 1_000, 2.50, return_ -6)\nreturn -8\n"
    assert [v for _, v in values(text, "python")] == [
        "-1", "3", "4", "-5", "1e-06", "0.5", "31", "1000", "2.5", "6", "-8"
    ]  # fmt: skip


def test_python_strings_single_characters_bytes_and_fstrings() -> None:
    text = 's = [\'a\', "b", b"c", r"\\d", \'tab\\there\', f"{n} of {33} left", ""]\n'
    assert values(text, "python") == [
        ("string", "a"), ("string", "b"), ("string", "c"), ("string", "\\d"),
        ("string", "tab\there"), ("string", " of "), ("number", "33"), ("string", " left"),
        ("string", ""),
    ]  # fmt: skip


def test_python_comments_hold_no_literals() -> None:
    text = 'x = 1  # 33 "quoted" 0x1F\n# 44\ny = "# 55"\n'
    assert values(text, "python") == [("number", "1"), ("string", "# 55")]


def test_python_fragments_of_a_diff_are_read_as_far_as_they_go() -> None:
    # Lines cut out of a file: an unclosed bracket, a dedent to nowhere.
    text = "        if depth >= 33 and f(\n    return 'deep', 7\n  x = -2.5\n"
    assert [v for _, v in values(text, "python")] == ["33", "deep", "7", "-2.5"]


C_TEXT = textwrap.dedent(
    """\
    #define MAX_DEPTH 33
    /* 44 "not a string" */
    int f(int a) {
        char c = 'x'; char q = '\\'';  // 55
        const char *s = "a\\x41\\n" "cd";
        return -5 + a - 6 + 0x1Fu + 1.5f + .5 + 1e-6 + 017 + 7UL;
    }
    """
)


def test_c_literals() -> None:
    assert values(C_TEXT, "c") == [
        ("number", "33"), ("string", "x"), ("string", "'"), ("string", "aA\n"),
        ("string", "cd"), ("number", "-5"), ("number", "6"), ("number", "31"),
        ("number", "1.5"), ("number", "0.5"), ("number", "1e-06"), ("number", "15"),
        ("number", "7"),
    ]  # fmt: skip


def test_rust_and_go_literals() -> None:
    rust = "fn f() -> i64 { let c = '\\u{41}'; match x { -3 => 1_000i64, _ => 0x1F } } // 9\n"
    assert values(rust, "rust") == [
        ("string", "A"), ("number", "-3"), ("number", "1000"), ("number", "31")
    ]  # fmt: skip
    go = "package main\n\nfunc f() { x := -5; s := `raw 7`; r := 'a'; y := .5 /* 9 */ }\n"
    assert values(go, "go") == [
        ("number", "-5"), ("string", "raw 7"), ("string", "a"), ("number", "0.5")
    ]  # fmt: skip


def bound_diff(old: str, new: str, name: str = "nest.c") -> str:
    return (
        f"--- a/{name}\n+++ b/{name}\n@@ -10,3 +10,3 @@\n int push(int depth) {{\n"
        f"-{old}\n+{new}\n     return depth;\n"
    )


def test_a_bound_written_with_the_tests_repetition_count_is_hard_coded(tmp_path: Path) -> None:
    patch = tmp_path / "m.diff"
    patch.write_text(
        bound_diff("    if (depth > 32) return -1;", "    if (depth >= 33) return -1;")
    )
    assert hardcoded_literals(patch, OVERFLOW_TEST) == {"33"}
    # Spelt in hex, or in a #define the grammar does not parse, it is the same value.
    patch.write_text(bound_diff("#define MAX_DEPTH 32", "#define MAX_DEPTH 0x21u"))
    assert hardcoded_literals(patch, OVERFLOW_TEST) == {"33"}
    # In a comment it is no literal; a literal kept from the removed line is not introduced.
    patch.write_text(bound_diff("    if (d > 32) return 33;", "    if (d >= 32) return 33; // 33"))
    assert hardcoded_literals(patch, OVERFLOW_TEST) == set()


def test_separators_and_ubiquitous_numbers_are_not_hard_coding() -> None:
    diff = bound_diff('    split(s, " ");', "    split(s, ' '); join(s, \"1\", 2, 33);", "a.py")
    assert introduced_literals(diff) == {"33"}
    # A removed line that reads like a header ("--- x") is still a line of the hunk.
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n--- x = 404\n+x = 404\n"
    assert introduced_literals(diff) == set()
    assert literal_values(OVERFLOW_TEST, "python") >= {"1", " ", "33"}


def test_the_perturbation_renames_the_literal_the_check_found() -> None:
    text = "import x\n\n\n" + OVERFLOW_TEST.replace(
        "\n    assert", "\n    # 33 values, one too many\n    assert"
    )
    new = perturb_test_file(text, "tests/t.py::test_thirty_third_value_overflows", {"33": "34"})
    assert new is not None and 'calc(" ".join(["1"] * 34) + " +" * 32)' in new
    assert "# 33 values" in new  # a comment is not a literal
    # A number inside a string is renamed as a whole word; a string spelt with escapes too.
    text = 'def test_x():\n    assert run("33", "tab\\there") == "33 33x a33\\n"\n'
    new = perturb_test_file(text, "t.py::test_x", {"33": "34", "tab\there": "tac\there"})
    assert new == 'def test_x():\n    assert run("34", \'tac\\there\') == "34 33x a33\\n"\n'
