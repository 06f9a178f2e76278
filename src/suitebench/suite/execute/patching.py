"""Apply a mutant's unified diff to a copy of the source (``patch -p1``, no fuzz).

A diff whose every hunk matches exactly where its header says -- what ``build mutants`` writes,
and most hand-written mutants -- is applied here, in the process: the result is the one GNU
``patch`` gives then, and the process a mutant does not start costs more than applying it on a
small package (a fork of a large interpreter with threads).  Anything else (a hunk that has
moved, a file created, deleted or renamed, a missing final newline, a binary or git-extended
diff, text outside the hunks) goes to ``patch`` itself, which finds the moved hunk or says why
the diff does not apply.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from suitebench.model.diffs import DiffError, read_diff

# Lines a plain unified diff may carry outside its hunks (``diff -u``, ``git diff`` of edits).
_HEADER = ("diff ", "index ", "--- ", "+++ ", "@@ ")

Hunk = tuple[int, int, list[bytes], list[bytes]]  # (old start, old length, old lines, new lines)


def apply_patch(tree: Path, patch: Path) -> tuple[bool, str]:
    """Apply a unified diff to ``tree`` in place (``-p1``, no fuzz): (applied, patch output)."""
    if apply_exact(tree, patch.read_bytes()):
        return True, ""
    proc = subprocess.run(
        [
            "patch",
            "-p1",
            "--forward",
            "--batch",
            "--fuzz=0",
            "--no-backup-if-mismatch",
            "--reject-file=-",
            "-d",
            str(tree),
            "-i",
            str(patch),
        ],
        capture_output=True,
        timeout=120,
    )
    output = (proc.stdout + proc.stderr).decode("utf-8", errors="replace")
    return proc.returncode == 0, output


def apply_exact(tree: Path, diff: bytes) -> bool:
    """Apply ``diff`` when every hunk of it matches exactly at its stated line; False, with
    nothing written, for any diff that is not that simple (``patch`` decides it)."""
    files = _parse(diff)
    if not files:
        return False
    changed: dict[Path, bytes] = {}
    inside = tree.resolve()
    for rel, hunks in files:
        path = tree / rel
        if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(inside):
            return False  # a link, or a path through a linked directory: left to ``patch``
        text = _applied(path.read_bytes().splitlines(keepends=True), hunks)
        if text is None:
            return False
        changed[path] = text
    for path, text in changed.items():
        with open(path, "r+b") as fh:  # in place: the file keeps its mode
            fh.write(text)
            fh.truncate()
    return True


def _parse(diff: bytes) -> list[tuple[str, list[Hunk]]] | None:
    """The files and hunks of a plain unified diff of edits to existing files, or None."""
    try:
        read = read_diff(diff)
    except DiffError:
        return None
    outside = read.outside
    for k, (number, line) in enumerate(outside):
        if not line.startswith(_HEADER):
            return None  # text outside the hunks, "\ No newline at end of file"
        if line.startswith("--- ") and not (
            k + 1 < len(outside)
            and outside[k + 1][0] == number + 1
            and outside[k + 1][1].startswith("+++ ")
        ):
            return None
    files: list[tuple[str, list[Hunk]]] = []
    for file in read.files:
        old, new = _name(file.old_name), _name(file.new_name)
        if old is None or old != new or any(old == seen for seen, _ in files):
            return None  # created, deleted, renamed, quoted or named twice
        hunks: list[Hunk] = []
        for hunk in file.hunks:
            if any(line.tag == "\\" or line.written_empty for line in hunk.lines):
                return None  # "\ No newline at end of file", or an empty line for context
            before = [_bytes(line.body) for line in hunk.lines if line.tag in " -"]
            after = [_bytes(line.body) for line in hunk.lines if line.tag in " +"]
            if len(before) != hunk.old_length or len(after) != hunk.new_length:
                return None  # the diff ends inside this hunk
            hunks.append((hunk.old_start, hunk.old_length, before, after))
        files.append((old, hunks))
    return files if all(hunks for _, hunks in files) else None


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _name(field: str) -> str | None:
    """The path a ``---``/``+++`` line names, its first component stripped (``-p1``)."""
    name = field
    if name.startswith('"') or name == "/dev/null" or "/" not in name:
        return None
    rel = name.split("/", 1)[1]
    if not rel or rel.startswith("/") or ".." in rel.split("/"):
        return None
    return os.path.normpath(rel)


def _applied(source: list[bytes], hunks: list[Hunk]) -> bytes | None:
    """``source`` with each hunk applied at its stated line, or None when one does not match
    there exactly (or the hunks overlap or run backwards)."""
    out: list[bytes] = []
    at = 0  # lines of ``source`` consumed
    for start, length, before, after in hunks:
        begin = start if length == 0 else start - 1  # an empty old side inserts after ``start``
        if begin < at or source[begin : begin + length] != before:
            return None
        out += source[at:begin]
        out += after
        at = begin + length
    out += source[at:]
    return b"".join(out)


def patched_sources(root: Path, diff: bytes) -> dict[str, tuple[bytes, bytes]] | None:
    """Each file a plain diff of edits changes under ``root``: (reference text, patched text);
    None when the diff is not one :func:`apply_exact` applies."""
    files = _parse(diff)
    if files is None:
        return None
    out: dict[str, tuple[bytes, bytes]] = {}
    for rel, hunks in files:
        try:
            before = (root / rel).read_bytes()
        except OSError:
            return None
        after = _applied(before.splitlines(keepends=True), hunks)
        if after is None:
            return None
        out[rel] = (before, after)
    return out
