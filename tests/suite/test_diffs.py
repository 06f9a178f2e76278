"""The one unified-diff reader (``suitebench.model.diffs``): what every layer that looks in a
mutant's patch reads from it."""

from __future__ import annotations

import pytest

from suitebench.model.diffs import DiffError, changed_paths, read_diff


def test_lines_keep_their_breaks_and_bytes() -> None:
    diff = b"--- a/x.c\r\n+++ b/x.c\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\xff\r\n+c\r\n"
    (file,) = read_diff(diff).files
    assert (file.old_name, file.new_name) == ("a/x.c", "b/x.c")
    (hunk,) = file.hunks
    assert [(line.tag, line.body) for line in hunk.lines] == [
        (" ", "a\r\n"),
        ("-", "b\udcff\r\n"),
        ("+", "c\r\n"),
    ]
    assert [(line.old, line.new) for line in hunk.lines] == [(1, 1), (2, None), (None, 2)]
    assert hunk.lines[1].body.encode("utf-8", "surrogateescape") == b"b\xff\r\n"


def test_an_empty_context_line_and_what_lies_outside_the_hunks() -> None:
    diff = "junk\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n\n-a\n+b\n\\ No newline at end of file\n"
    read = read_diff(diff)
    lines = read.files[0].hunks[0].lines
    assert lines[0].tag == " " and lines[0].written_empty and lines[0].body == "\n"
    assert lines[-1].tag == "\\"
    assert [n for n, _ in read.outside] == [1, 2, 3, 4, 8]


def test_a_diff_that_ends_inside_its_last_hunk_is_read_up_to_its_end() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n"
    (hunk,) = read_diff(diff).files[0].hunks
    assert (hunk.old_length, hunk.new_length) == (3, 3)  # as its header says
    assert [line.tag for line in hunk.lines] == [" ", "-", "+"]


def test_text_that_is_no_diff() -> None:
    with pytest.raises(DiffError):
        read_diff("@@ -1 +1 @@\n-a\n+b\n")  # a hunk before any file
    assert read_diff("no diff here\n").files == ()


def test_the_paths_a_diff_changes() -> None:
    # a change to a.py, a new file and a removed one, written as git writes them (-p1)
    diff = (
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+y = 3\n"
        "--- a/pkg/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z = 4\n"
    )
    assert changed_paths(diff) == ["pkg/a.py", "pkg/new.py", "pkg/old.py"]
    assert changed_paths("not a diff at all\n") == []
