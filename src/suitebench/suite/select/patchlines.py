"""What a patch changes, file by file: the reference lines it removes or replaces and where it
inserts lines -- what coverage-guided selection (:mod:`.selection`) looks up in the coverage
run's record."""

from __future__ import annotations

from dataclasses import dataclass, field

from suitebench.model.diffs import DiffError, read_diff, strip_p1


@dataclass
class FileChange:
    """What a patch changes in one file: the reference lines removed or replaced, and where
    lines are inserted (after which reference line, at which indentation)."""

    path: str  # relative to the source root (after -p1)
    lines: set[int] = field(default_factory=set)
    insertions: list[tuple[int, int]] = field(default_factory=list)  # (after line, indent)
    whole_file: bool = False  # added, removed or renamed
    preprocessor: bool = False  # a C preprocessor line changed: it may reach any later code


def _python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _blank(text: str, path: str) -> bool:
    """A line that changes no behaviour where it stands: empty or a comment only."""
    stripped = text.strip()
    comment = stripped.startswith("#") if _python(path) else stripped.startswith("//")
    return not stripped or comment


def changed_lines(patch: str) -> dict[str, FileChange]:
    """What a unified diff (``-p1``) changes, per file: removed or replaced reference lines
    and insertion points (blank and comment-only lines change nothing and are left out).
    Text that is not a unified diff changes nothing this can tell (every test runs)."""
    changes: dict[str, FileChange] = {}
    try:
        files = read_diff(patch).files
    except DiffError:
        return changes
    for file in files:
        old, new = strip_p1(file.old_name), strip_p1(file.new_name)
        path = old or new or ""
        current = changes.setdefault(path, FileChange(path))
        if old is None or new is None or old != new:
            current.whole_file = True
            if new is not None and new != path:
                changes.setdefault(new, FileChange(new, whole_file=True))
        for hunk in file.hunks:
            line_no = hunk.old_start
            if hunk.old_length == 0:  # an insertion into an empty stretch goes after line N
                line_no += 1
            for line in hunk.lines:
                tag, rest = line.tag, line.text
                if tag in "-+" and not _python(current.path) and rest.strip().startswith("#"):
                    current.preprocessor = True
                if tag == "-":
                    if not _blank(rest, current.path):
                        current.lines.add(line_no)
                    line_no += 1
                elif tag == "+":
                    if not _blank(rest, current.path):
                        indent = len(rest) - len(rest.lstrip())
                        current.insertions.append((line_no - 1, indent))
                elif tag == " ":
                    line_no += 1
    return changes
