"""The leak audit's near-copies: held-out material written out with a comment added, its white
space changed, some of it deleted, or cut up, is still held-out material; a suite written from the
spec alone is not."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from suitebench.agents.leaks import content_leaks, held_out_digests, held_out_line_hashes
from suitebench.agents.nearcopy import significant_lines
from suitebench.data import INSTANCES_DIR, SUITES_DIR

HONEST = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "rpn-c-honest" / "tests"


def audit(tmp_path: Path, instance: str, files: dict[str, bytes]) -> list[dict[str, object]]:
    """The content audit of a run whose collected ``tests/`` holds ``files``, against the
    bundled instance (its spec given to the agent, as the suite task's workspace does)."""
    inst = tmp_path / instance
    shutil.copytree(INSTANCES_DIR / instance, inst)
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(inst / "spec.md", ws / "spec.md")
    run = tmp_path / "run"
    for rel, data in files.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_bytes(data)
    return content_leaks(run, held_out_digests([inst], ws), held_out_line_hashes([inst], ws))


def reference(instance: str, name: str) -> bytes:
    return (INSTANCES_DIR / instance / "tests" / name).read_bytes()


def leaked(found: list[dict[str, object]]) -> dict[str, tuple[object, str]]:
    return {str(f["file"]): (f["kind"], Path(str(f["held_out"])).name) for f in found}


def test_an_exact_copy_is_a_copy(tmp_path: Path) -> None:
    found = audit(tmp_path, "rpn-c", {"tests/test_lines.py": reference("rpn-c", "test_lines.py")})
    assert leaked(found) == {"tests/test_lines.py": ("copy", "test_lines.py")}


def test_a_copy_with_a_comment_added_is_a_near_copy(tmp_path: Path) -> None:
    text = b"# My own tests for the line rules.\n" + reference("rpn-c", "test_lines.py")
    found = audit(tmp_path, "rpn-c", {"tests/test_lines.py": text})
    assert leaked(found) == {"tests/test_lines.py": ("near-copy", "test_lines.py")}
    # test_lines.py's significant lines, counted by hand: its 6 tests have 4 + 3 + 2 + 4 + 4 + 5
    # = 22 (a def line and each statement); all of them the reference's, in one unbroken run.
    (entry,) = found
    assert (entry["lines"], entry["shared_lines"], entry["longest_run"]) == (22, 22, 22)


def test_a_copy_with_its_white_space_changed_is_a_near_copy(tmp_path: Path) -> None:
    text = reference("rpn-c", "test_arithmetic.py").decode()
    text = text.replace("    ", "\t").replace(" == ", "==").replace(", ", " ,  ")
    text = text.replace("\n\n\n", "\n")  # and the blank lines between tests gone
    found = audit(tmp_path, "rpn-c", {"tests/test_ops.py": text.encode()})
    assert leaked(found) == {"tests/test_ops.py": ("near-copy", "test_arithmetic.py")}


def test_a_copy_with_a_few_tests_deleted_is_still_caught(tmp_path: Path) -> None:
    text = reference("rpn-c", "test_lines.py").decode()
    tests = text.split("\n\n\n")
    assert len(tests) == 6
    kept = "\n\n\n".join(t for i, t in enumerate(tests) if i not in (1, 4))  # 2 of 6 deleted
    found = audit(tmp_path, "rpn-c", {"tests/test_lines.py": kept.encode()})
    assert leaked(found) == {"tests/test_lines.py": ("near-copy", "test_lines.py")}
    (entry,) = found
    # Tests 1 and 4 hold 3 and 4 of the 22 significant lines (counted above): 15 left, all shared.
    assert (entry["lines"], entry["shared_lines"]) == (15, 15)


def test_a_copy_padded_with_tests_of_its_own_is_caught_by_its_run(tmp_path: Path) -> None:
    own = (HONEST / "test_stack_and_lines.py").read_bytes()
    text = reference("rpn-c", "test_arithmetic.py") + b"\n\n" + own
    found = audit(tmp_path, "rpn-c", {"tests/test_mixed.py": text})
    (entry,) = found
    assert entry["kind"] == "near-copy"
    assert float(str(entry["share"])) < 0.7  # not by its share: half of it is its own
    assert entry["longest_run"] == 18  # test_arithmetic.py's 18 significant lines, in order


def test_the_reference_suite_written_out_as_one_file_with_a_comment_is_caught(
    tmp_path: Path,
) -> None:
    """Issue 44's agent case: a code-task implementation kept the reference suite in the kernel
    keyring while R was computed, and a later suite-task agent wrote it out with one comment
    line added (V 24/24, M the reference's own figure, leak audit 0). The keyring is closed by
    the sandbox's filter; this is the second net."""
    parts = [reference("rpn-c", n) for n in ("test_arithmetic.py", "test_lines.py")]
    parts += [reference("rpn-c", n) for n in ("test_numbers.py", "test_stack.py")]
    fixtures = reference("rpn-c", "conftest.py")
    text = b"# Tests for rpn, from the spec.\n" + b"\n\n".join(parts)
    found = audit(tmp_path, "rpn-c", {"tests/test_rpn.py": text, "tests/conftest.py": fixtures})
    assert leaked(found) == {
        "tests/test_rpn.py": ("near-copy", "test_lines.py"),  # its longest run: 22 lines
        "tests/conftest.py": ("copy", "conftest.py"),
    }


def test_the_reference_suite_cut_into_small_files_is_caught_as_a_whole(tmp_path: Path) -> None:
    files = {}
    for name in ("test_arithmetic.py", "test_stack.py", "test_numbers.py"):
        for i, test in enumerate(reference("rpn-c", name).decode().split("\n\n\n")):
            files[f"tests/test_{Path(name).stem}_{i}.py"] = f"# part {i}\n{test}\n".encode()
    # Each file is one test (1 to 5 significant lines): below MIN_SHARED and RUN_LINES alone.
    assert all(len(significant_lines(d, "x.py")) < 8 for d in files.values())
    found = audit(tmp_path, "rpn-c", files)
    assert [(f["file"], f["kind"]) for f in found] == [("tests/*", "near-copy")]
    assert float(str(found[0]["share"])) == 1.0


def test_a_near_copy_of_c_source_is_caught_through_its_comments(tmp_path: Path) -> None:
    src = (INSTANCES_DIR / "rpn-c" / "src" / "rpn.c").read_text()
    # Every comment rewritten, a licence block added, a // note after each return.
    src = re.sub(r"/\*.*?\*/", "/* rewritten */", src, flags=re.S)
    src = "/*\n * rpn -- my implementation\n */\n" + src.replace("return", "return /* r */", 3)
    src = src.replace(";\n", ";  // ok\n", 5)
    found = audit(tmp_path, "rpn-c", {"implementation/rpn.c": src.encode()})
    assert leaked(found) == {"implementation/rpn.c": ("near-copy", "rpn.c")}


@pytest.mark.parametrize(
    ("instance", "suite"),
    [("rpn-c", HONEST), ("wordfreq-py", SUITES_DIR / "bad-suite" / "tests")],
)
def test_a_suite_written_from_the_spec_is_not_flagged(
    tmp_path: Path, instance: str, suite: Path
) -> None:
    files = {f"tests/{p.name}": p.read_bytes() for p in sorted(suite.glob("*.py"))}
    assert audit(tmp_path, instance, files) == []


def test_comments_strings_and_blank_lines(tmp_path: Path) -> None:
    py = b'x = ("a # not a comment"  # a comment\n)\n\n\n# only a comment\nassert x == 1\n'
    assert significant_lines(py, "t.py") == ['x=("a#notacomment"', "assertx==1"]
    c = b'char *s = "// kept"; // gone\n/* gone\n gone */ int y = 0;\nputs("/* kept */");\n'
    assert significant_lines(c, "t.c") == ['char*s="//kept";', "inty=0;", 'puts("/*kept*/");']
