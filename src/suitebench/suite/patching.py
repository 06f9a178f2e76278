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
import re
import subprocess
from pathlib import Path

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# Lines a plain unified diff may carry outside its hunks (``diff -u``, ``git diff`` of edits).
_HEADER = (b"diff ", b"index ", b"--- ", b"+++ ", b"@@ ")

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
    for rel, hunks in files:
        path = tree / rel
        if path.is_symlink() or not path.is_file():
            return False
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
    lines = diff.splitlines(keepends=True)
    files: list[tuple[str, list[Hunk]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(b"--- "):
            if i + 1 >= len(lines) or not lines[i + 1].startswith(b"+++ "):
                return None
            old, new = _name(line[4:]), _name(lines[i + 1][4:])
            if old is None or old != new or any(old == seen for seen, _ in files):
                return None  # created, deleted, renamed, quoted or named twice
            files.append((old, []))
            i += 2
        elif line.startswith(b"@@ "):
            match = _HUNK.match(line)
            if match is None or not files:
                return None
            old_len = 1 if match.group(2) is None else int(match.group(2))
            new_len = 1 if match.group(4) is None else int(match.group(4))
            before: list[bytes] = []
            after: list[bytes] = []
            i += 1
            while len(before) < old_len or len(after) < new_len:
                if i >= len(lines):
                    return None
                tag, body = lines[i][:1], lines[i][1:]
                if tag == b" ":
                    before.append(body)
                    after.append(body)
                elif tag == b"-":
                    before.append(body)
                elif tag == b"+":
                    after.append(body)
                else:  # "\ No newline at end of file", or a hunk shorter than its header
                    return None
                i += 1
            if len(before) != old_len or len(after) != new_len:
                return None
            files[-1][1].append((int(match.group(1)), old_len, before, after))
        elif line.startswith(_HEADER):
            i += 1
        else:
            return None
    return files if all(hunks for _, hunks in files) else None


def _name(field: bytes) -> str | None:
    """The path a ``---``/``+++`` line names, its first component stripped (``-p1``)."""
    name = field.split(b"\t", 1)[0].rstrip(b"\r\n")
    if name.startswith(b'"') or name == b"/dev/null" or b"/" not in name:
        return None
    rel = name.split(b"/", 1)[1].decode("utf-8", errors="surrogateescape")
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
