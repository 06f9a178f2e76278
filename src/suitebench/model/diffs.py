"""Unified diffs, read once: the one reader of a mutant's patch for every layer that looks in it.

A mutant is a unified diff (``patch -p1``).  Applying it in the process
(:mod:`suitebench.suite.execute.patching`), telling which reference lines it changes
(:mod:`suitebench.suite.select.selection`), locating it for a report
(:mod:`suitebench.report.mutation_report`) and naming the line a model's mutant changes
(:mod:`suitebench.construct.llm_mutants`) all read the same format; they read it here, through
the ``unidiff`` library, and keep only their own decisions (what a diff must look like to be
applied without ``patch``, which lines count as changed).

Lines are split as ``patch`` and ``bytes.splitlines`` split them (``\\n``, ``\\r\\n`` or a lone
``\\r``) and keep their line breaks, so a hunk's text is byte for byte the file's; bytes that
are not UTF-8 survive the round trip (``surrogateescape``).
"""

from __future__ import annotations

import functools
import hashlib
import io
from dataclasses import dataclass, replace

from unidiff import PatchSet
from unidiff.constants import RE_HUNK_HEADER
from unidiff.errors import UnidiffParseError

__all__ = ["Diff", "DiffError", "DiffFile", "DiffHunk", "DiffLine", "content_digest", "read_diff"]

DEV_NULL = "/dev/null"


class DiffError(ValueError):
    """Text that is not a unified diff (a hunk shorter or longer than its header, a hunk
    before any file, a target without a source)."""


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk's body."""

    tag: str  # "-" removed, "+" added, " " context, "\\" no newline at end of file
    body: str  # what follows the tag, line break kept (a context line written empty: "\n")
    raw: str  # the line as the diff writes it
    old: int | None  # its line in the old file (removed and context lines)
    new: int | None  # its line in the new file (added and context lines)

    @property
    def text(self) -> str:
        """The body without its line break."""
        return self.body.rstrip("\r\n")

    @property
    def written_empty(self) -> bool:
        """A context line whose leading space was trimmed (an empty line in the diff)."""
        return self.raw[:1] != self.tag


@dataclass(frozen=True)
class DiffHunk:
    """One ``@@ -old_start,old_length +new_start,new_length @@`` hunk."""

    old_start: int
    old_length: int
    new_start: int
    new_length: int
    lines: tuple[DiffLine, ...]


@dataclass(frozen=True)
class DiffFile:
    """One file of a diff: its names as written (``a/pkg/x.py``; ``/dev/null`` for a file
    created or deleted; from the ``diff --git`` line where no ``---``/``+++`` pair follows)."""

    old_name: str
    new_name: str
    hunks: tuple[DiffHunk, ...]
    binary: bool = False


@dataclass(frozen=True)
class Diff:
    """A whole diff: its files, and every line outside the hunks' bodies (file headers, hunk
    headers, anything else), with its 1-based line number, in order."""

    files: tuple[DiffFile, ...]
    outside: tuple[tuple[int, str], ...]


def _lines(diff: str | bytes) -> list[str]:
    text = diff.decode("utf-8", "surrogateescape") if isinstance(diff, bytes) else diff
    return list(io.StringIO(text, newline=""))


def _name(field: str | None) -> str:
    return (field or "").rstrip("\r\n")


def _patch_set(lines: list[str]) -> tuple[PatchSet, tuple[int, int] | None]:
    """``unidiff``'s reading of the lines, and the counts the last hunk's header gave where
    they were more than its lines: a diff that ends inside its last hunk (an editor chopped the
    trailing empty lines, or the text was cut) is read up to where it ends."""
    try:
        return PatchSet(lines), None
    except UnidiffParseError as exc:
        if "shorter than expected" not in str(exc):
            raise
        at = max((k for k, line in enumerate(lines) if RE_HUNK_HEADER.match(line)), default=-1)
        header = RE_HUNK_HEADER.match(lines[at]) if at >= 0 else None
        if header is None:
            raise
        body = [line[:1] for line in lines[at + 1 :]]
        old = sum(1 for tag in body if tag in ("", " ", "-", "\r", "\n"))
        new = sum(1 for tag in body if tag in ("", " ", "+", "\r", "\n"))
        start, _, target, _, section = header.groups()
        fixed = f"@@ -{start},{old} +{target},{new} @@ {section}".rstrip(" ") + "\n"
        stated = (int(header.group(2) or 1), int(header.group(4) or 1))
        return PatchSet([*lines[:at], fixed, *lines[at + 1 :]]), stated


@functools.lru_cache(maxsize=4096)
def read_diff(diff: str | bytes) -> Diff:
    """The files and hunks of a unified diff.  Raises :class:`DiffError` for text that is not
    one; text before, between or after the files is kept in ``outside`` and read by nobody
    here.  A score reads each mutant's patch at several steps (locating it, its selection,
    its build): read once, the :class:`Diff` (immutable) is shared."""
    lines = _lines(diff)
    try:
        patch, stated = _patch_set(lines)
    except (UnidiffParseError, UnicodeError) as exc:
        raise DiffError(str(exc)) from exc
    files: list[DiffFile] = []
    inside: set[int] = set()
    for patched in patch:
        hunks: list[DiffHunk] = []
        for hunk in patched:
            body: list[DiffLine] = []
            for line in hunk:
                number = line.diff_line_no
                if line.line_type == "\\" and number is None:
                    # a marker after the hunk's last line: where the diff writes it
                    body.append(DiffLine("\\", line.value, "\\" + line.value, None, None))
                    continue
                if number is None or line.line_type not in ("-", "+", " ", "\\"):
                    continue  # an empty line after the hunk: outside it
                raw = lines[number - 1]
                inside.add(number)
                tag = line.line_type
                text = raw[1:] if raw[:1] == tag else raw
                body.append(DiffLine(tag, text, raw, line.source_line_no, line.target_line_no))
            hunks.append(
                DiffHunk(
                    hunk.source_start,
                    hunk.source_length,
                    hunk.target_start,
                    hunk.target_length,
                    tuple(body),
                )
            )
        if stated is not None and patched is patch[-1] and hunks:
            hunks[-1] = replace(hunks[-1], old_length=stated[0], new_length=stated[1])
        files.append(
            DiffFile(
                _name(patched.source_file),
                _name(patched.target_file),
                tuple(hunks),
                bool(patched.is_binary_file),
            )
        )
    outside = tuple((n, line) for n, line in enumerate(lines, 1) if n not in inside)
    return Diff(tuple(files), outside)


def changed_paths(diff: str | bytes) -> list[str]:
    """The files a ``-p1`` unified diff changes (old and new names, their first component cut,
    ``/dev/null`` left out), in order; none for text that is not a diff."""
    try:
        files = read_diff(diff).files
    except DiffError:
        return []
    out: list[str] = []
    for f in files:
        for name in (f.old_name, f.new_name):
            path = strip_p1(name)
            if path and path not in out:
                out.append(path)
    return out


def strip_p1(name: str) -> str | None:
    """A diff's file name as ``patch -p1`` reads it (the first component cut, a tab-separated
    date dropped); None for ``/dev/null`` or no name."""
    name = name.split("\t", 1)[0].strip()
    if not name or name == "/dev/null":
        return None
    return name.split("/", 1)[1] if "/" in name else name


def content_digest(diff: str | bytes) -> str:
    """What a mutant changes, as a short digest (12 hex digits) that survives renumbering and
    edits elsewhere in the file: the files' names and every hunk's lines (context, removed,
    added) without the hunks' line numbers.  A declaration keyed by it (``[[equivalent]]``
    ``digest``) cannot move to another mutant when a rebuild renumbers the mutants.  A diff
    that cannot be read is digested as its bytes."""
    h = hashlib.sha256()
    try:
        files = read_diff(diff).files
    except DiffError:
        h.update(diff.encode("utf-8", "surrogateescape") if isinstance(diff, str) else diff)
        return h.hexdigest()[:12]
    for f in files:
        h.update(f"{_strip_prefix(f.old_name)}\0{_strip_prefix(f.new_name)}\0".encode())
        for hunk in f.hunks:
            h.update(b"@@\0")
            for line in hunk.lines:
                h.update(f"{line.tag}{line.text}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:12]


def _strip_prefix(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name
