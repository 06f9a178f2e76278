"""One mutation as one edit of one file, and the unified diff ``score`` applies for it.

Every operator mutant replaces one contiguous byte range of one source file.  The diff is
written by hand rather than by :mod:`difflib` because the changed lines are known exactly:
one hunk, three lines of context, ``a/``/``b/`` prefixes relative to the instance's source
directory, as ``patch -p1 --fuzz=0`` (the reader in :mod:`suitebench.suite.execute.patching`)
expects.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["CONTEXT", "Edit", "MutationSite", "apply_edit", "unified_diff"]

CONTEXT = 3


@dataclass(frozen=True)
class Edit:
    """Replace ``source[start:end]`` (bytes) by ``replacement``."""

    start: int
    end: int
    replacement: bytes


@dataclass(frozen=True)
class MutationSite:
    """A candidate mutant before it is numbered: where, which operator, what it does.

    ``line`` is 1-based; ``function`` is the enclosing function (the cap per function counts
    these), empty at module level; ``in_body``: the site lies inside a function's body (code
    that runs when the function is called, not on import: ``--scope functions`` keeps these).
    """

    file: str
    line: int
    operator: str
    description: str
    function: str
    edit: Edit
    in_body: bool = True

    def mutated(self, source: bytes) -> bytes:
        return apply_edit(source, self.edit)

    def fingerprint(self, source: bytes) -> str:
        """Equal for two sites that yield the same mutated file: the duplicate test."""
        return hashlib.sha256(self.file.encode() + b"\0" + self.mutated(source)).hexdigest()


def apply_edit(source: bytes, edit: Edit) -> bytes:
    return source[: edit.start] + edit.replacement + source[edit.end :]


def _split(data: bytes) -> list[bytes]:
    """Lines with their terminators (the last one may lack ``\\n``)."""
    return data.splitlines(keepends=True) if data else []


def _emit(prefix: bytes, line: bytes, out: list[bytes]) -> None:
    if line.endswith(b"\n"):
        out.append(prefix + line)
    else:
        out.append(prefix + line + b"\n\\ No newline at end of file\n")


def unified_diff(path: str, source: bytes, edit: Edit) -> bytes:
    """The one-hunk unified diff turning ``source`` into ``apply_edit(source, edit)``."""
    first = source.count(b"\n", 0, edit.start)
    last = source.count(b"\n", 0, max(edit.start, edit.end - 1))
    if edit.end > edit.start and source[edit.end - 1 : edit.end] == b"\n":
        last = source.count(b"\n", 0, edit.end - 1)
    lines = _split(source)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))
    old_block = b"".join(lines[first : last + 1])
    block_start = line_starts[first]
    new_block = (
        old_block[: edit.start - block_start]
        + edit.replacement
        + old_block[edit.end - block_start :]
    )
    new_lines = _split(new_block)
    # A replacement that drops the block's last newline joins it with the next line.
    tail = last + 1
    if new_block and not new_block.endswith(b"\n") and tail < len(lines):
        new_lines[-1] = new_lines[-1] + lines[tail]
        old_lines = lines[first : tail + 1]
        tail += 1
    else:
        old_lines = lines[first : last + 1]
    before = lines[max(0, first - CONTEXT) : first]
    after = lines[tail : tail + CONTEXT]
    old_count = len(before) + len(old_lines) + len(after)
    new_count = len(before) + len(new_lines) + len(after)
    old_start = first - len(before) + 1
    new_start = old_start
    if old_count == 0:
        old_start -= 1
    if new_count == 0:
        new_start -= 1
    out = [
        f"--- a/{path}\n".encode(),
        f"+++ b/{path}\n".encode(),
        f"@@ -{old_start},{old_count} +{new_start},{new_count} @@\n".encode(),
    ]
    for line in before:
        _emit(b" ", line, out)
    for line in old_lines:
        _emit(b"-", line, out)
    for line in new_lines:
        _emit(b"+", line, out)
    for line in after:
        _emit(b" ", line, out)
    return b"".join(out)
