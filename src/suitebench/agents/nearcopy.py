"""Near-copies: a collected file that is held-out material with a comment added, its white space
changed, or some of it deleted.

Both sides are reduced to their *significant lines* first: comments removed (Python ``#`` by
its tokenizer, C-family ``//`` and ``/* */`` outside string literals, shell ``#``), every white
space character removed from each line, and lines left with no letter or digit (``)``, ``],``,
``}``) or shorter than :data:`MIN_LINE_CHARS` dropped. Each line is kept as a short hash, so that
``agent.json`` can carry the held-out side (``held_out_lines``) without the material itself.

A file is a near-copy (:func:`near_copies`) when either

* at least :data:`SHARE` of its significant lines are lines of held-out material, and at least
  :data:`MIN_SHARED` of them; or
* it holds a run of :data:`RUN_LINES` consecutive significant lines in the order one held-out
  file has them (found with :class:`difflib.SequenceMatcher`).

The same test is applied to everything a round collected taken together, so that the reference
suite cut into one-test files is still caught. ``docs/agents.md`` gives the reasoning behind the
figures and the measurements on the bundled instances.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import re
import tokenize
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHARE = 0.7  # of a file's significant lines found in held-out material
MIN_SHARED = 8  # ... and at least this many: a short file shares boilerplate by chance
RUN_LINES = 10  # consecutive significant lines in held-out order
MIN_LINE_CHARS = 6  # without white space: shorter lines (``else:``, ``pass``) say nothing
MAX_LINES = 200_000  # held-out lines kept in agent.json
HASH_CHARS = 12

_PY = frozenset({".py", ".pyi", ".pyw"})
_HASH_COMMENT = frozenset({".sh", ".bash", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".r", ".pl"})
_C_LIKE = frozenset(
    {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".java", ".js", ".ts", ".go", ".rs"}
    | {".cs", ".kt", ".scala", ".swift", ".php"}
)
_NO_SPACE = re.compile(r"\s+")
_ALNUM = re.compile(r"[A-Za-z0-9]")


def _strip_python(text: str) -> str:
    """``text`` without its ``#`` comments (tokenize knows a ``#`` in a string is no comment);
    code that does not tokenize loses everything after a ``#`` that starts a word."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return re.sub(r"(^|\s)#.*$", r"\1", text, flags=re.M)
    lines = text.split("\n")
    for tok in reversed(tokens):  # from the end: earlier columns stay valid
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + line[tok.end[1] :]
    return "\n".join(lines)


def _strip_c(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments, string and character literals kept (a
    block comment keeps its line breaks, so lines stay where they were)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def significant_lines(data: bytes, name: str) -> list[str]:
    """The significant lines of a file called ``name`` (its suffix says which comments it has)."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    suffix = Path(name).suffix.lower()
    if suffix in _PY:
        text = _strip_python(text)
    elif suffix in _C_LIKE:
        text = _strip_c(text)
    elif suffix in _HASH_COMMENT:
        text = re.sub(r"(^|\s)#.*$", r"\1", text, flags=re.M)
    out = []
    for line in text.split("\n"):
        squeezed = _NO_SPACE.sub("", line)
        if len(squeezed) >= MIN_LINE_CHARS and _ALNUM.search(squeezed):
            out.append(squeezed)
    return out


def line_hashes(data: bytes, name: str) -> list[str]:
    return [
        hashlib.sha256(line.encode()).hexdigest()[:HASH_CHARS]
        for line in significant_lines(data, name)
    ]


@dataclass(frozen=True)
class Match:
    lines: int  # significant lines of the collected file (or files)
    shared: int  # of them, lines of held-out material
    longest_run: int  # consecutive lines in one held-out file's order
    held_out: str  # the held-out file it shares most with

    @property
    def share(self) -> float:
        return self.shared / self.lines if self.lines else 0.0

    @property
    def is_near_copy(self) -> bool:
        by_share = self.shared >= MIN_SHARED and self.share >= SHARE
        return by_share or self.longest_run >= RUN_LINES

    def to_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "shared_lines": self.shared,
            "share": round(self.share, 3),
            "longest_run": self.longest_run,
        }


class HeldOutLines:
    """The held-out side: each held-out file's significant lines (as hashes, in order)."""

    def __init__(self, files: Mapping[str, Sequence[str]]) -> None:
        self.files = {path: list(lines) for path, lines in files.items()}
        self.index: dict[str, set[str]] = {}
        for path, lines in self.files.items():
            for h in lines:
                self.index.setdefault(h, set()).add(path)

    def match(self, hashes: Sequence[str]) -> Match:
        """How much of ``hashes`` (a collected file's lines) is held-out material."""
        shared = sum(1 for h in hashes if h in self.index)
        per_file: Counter[str] = Counter()
        for h in set(hashes):
            per_file.update(self.index.get(h, ()))
        best_run, best = 0, ""
        # Only files that share enough lines can hold a run (or be named as the source).
        for path, common in per_file.most_common():
            if common <= best_run:
                break
            sm = difflib.SequenceMatcher(None, list(hashes), self.files[path], autojunk=False)
            run = max((b.size for b in sm.get_matching_blocks()), default=0)
            if run > best_run or not best:
                best_run, best = max(run, best_run), path
        return Match(len(hashes), shared, best_run, best)


def held_out_lines(files: Mapping[str, bytes], given: Mapping[str, bytes]) -> dict[str, list[str]]:
    """Held-out file -> its significant line hashes, without the lines the workspace gave the
    agent (``given``, name -> content: the spec, the brief, a given reference), at most
    :data:`MAX_LINES` in all."""
    shown = {h for name, data in given.items() for h in line_hashes(data, name)}
    out: dict[str, list[str]] = {}
    total = 0
    for path, data in files.items():
        hashes = [h for h in line_hashes(data, path) if h not in shown]
        if not hashes:
            continue
        if total + len(hashes) > MAX_LINES:
            break
        out[path] = hashes
        total += len(hashes)
    return out
