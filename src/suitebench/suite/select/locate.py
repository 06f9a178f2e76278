"""Where each mutant is: its file, line and function in the reference source, and its diff.

A survivor is acted on by reading its change where it is (``file:line``, in which function),
so every mutant's row in ``results.json`` carries them, with the diff's own text: ``suitebench
show`` and ``apply`` and the report then need nothing but ``results.json``, and a mutants
directory rebuilt after the score cannot make them show a different mutant than the one scored.
The patch path is written relative to the instance (``mutants/op0001.diff``), so a results
directory means the same on another machine; ``instance_dir`` says where it was scored.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from suitebench.model.diffs import DiffError, read_diff
from suitebench.model.instance import Instance
from suitebench.suite.result import MutantResult

__all__ = [
    "Change",
    "function_at",
    "function_line",
    "locate_mutants",
    "main_change",
    "mutation_score_by",
    "relative_to_instance",
]


@dataclass(frozen=True)
class Change:
    """A diff's main change: the largest run of changed lines (the first, on ties), in which
    file (relative to the source root) and from which reference line, removed and added."""

    path: str
    line: int
    removed: tuple[str, ...]
    added: tuple[str, ...]

    def one_line(self, width: int = 120) -> str:
        """``old -> new`` on one line (stripped, cut to ``width``): what a survivor changes."""
        old = " / ".join(t.strip() for t in self.removed) or "(nothing)"
        new = " / ".join(t.strip() for t in self.added) or "(removed)"
        text = f"{old}  ->  {new}"
        if len(text) <= width or not (self.removed and self.added):
            return text if len(text) <= width else text[: width - 3] + "..."
        # Long lines: the part that differs, with some context either side.
        prefix = 0
        while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
            prefix += 1
        suffix = 0
        while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
            suffix += 1
        context = 16
        start = max(0, prefix - context)
        space = old.rfind(" ", max(0, start - context), start)
        start = space + 1 if space >= 0 else start  # from a word's start, if one is near

        def part(line: str) -> str:
            end = min(len(line), len(line) - suffix + context)
            space = line.find(" ", end, end + context)
            end = space if space >= 0 else end  # to a word's end, if one is near
            return ("..." if start else "") + line[start:end] + ("..." if end < len(line) else "")

        return f"{part(old)}  ->  {part(new)}"


def _strip(name: str) -> str:
    name = name.split("\t", 1)[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


def main_change(diff: str) -> Change | None:
    """The main change of a unified diff (``patch -p1``), or None for text that is not one."""
    try:
        files = read_diff(diff).files
    except DiffError:
        return None
    best: Change | None = None
    for file in files:
        path = _strip(file.old_name)
        if path == "/dev/null":
            path = _strip(file.new_name)
        for hunk in file.hunks:
            run: list[tuple[str, str, int]] = []  # (tag, text, old line)
            old_line = hunk.old_start + (1 if hunk.old_length == 0 else 0)
            for line in [*hunk.lines, None]:
                if line is not None and line.tag in "-+":
                    run.append((line.tag, line.text, old_line))
                    old_line += line.tag == "-"
                    continue
                if line is not None and line.tag == "\\":
                    continue
                if run:
                    change = Change(
                        path,
                        run[0][2],
                        tuple(t for tag, t, _ in run if tag == "-"),
                        tuple(t for tag, t, _ in run if tag == "+"),
                    )
                    size = len(change.removed) + len(change.added)
                    if best is None or size > len(best.removed) + len(best.added):
                        best = change
                run = []
                old_line += 1
    return best


def relative_to_instance(path: Path, root: Path) -> str:
    """``path`` relative to the instance root when it lies inside it (else as it is)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def function_at(source: str, line: int) -> str:
    """The qualified name (``Class.method``) of the innermost function or class whose lines
    hold ``line`` in a Python module, or ``""`` at module level (or unparsable text)."""
    best: tuple[int, str] | None = None  # (span length, qualified name)
    for first, last, name in _definitions(source):
        if first <= line <= last and (best is None or last - first <= best[0]):
            best = (last - first, name)
    return "" if best is None else best[1]


@functools.lru_cache(maxsize=16)
def _definitions(source: str) -> tuple[tuple[int, int, str], ...]:
    """Every function and class of a module, in the order a walk of its tree meets them:
    (first line, decorators included; last line; qualified name).  A score asks for the
    mutants of one module one after another: the module is parsed once."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found.append((first, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(found)


# ``diff -p``'s and git's default: a function starts on a line beginning with a letter, ``_``
# or ``$``; its name is the identifier before the last ``(`` that follows one.
_FUNCTION_LINE = re.compile(r"^[A-Za-z_$].*?\b([A-Za-z_]\w*)\s*\([^;]*$")
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "return", "sizeof", "else", "do", "case"}


def function_line(source: str, line: int) -> str:
    """For C, C++, Rust, Go and shell: the function a line is in, by the rule ``diff -p`` uses
    (the nearest line above it, or it, that starts in column 1 with a letter and reads like a
    function's head: a name, then ``(``, no ``;``); ``""`` when none is found or the code
    at column 1 since then closes it (a ``}`` alone at the start of a line)."""
    lines = source.splitlines()
    for k in range(min(line, len(lines)) - 1, -1, -1):
        text = lines[k]
        if text.startswith("}") and k != line - 1:
            return ""  # a function ended between its head and this line
        found = _FUNCTION_LINE.match(text)
        if found is not None:
            names = re.findall(r"\b([A-Za-z_]\w*)\s*\(", text)
            name = next((n for n in reversed(names) if n not in _NOT_FUNCTIONS), "")
            if name:
                return name
    return ""


def locate_mutants(results: list[MutantResult], instance: Instance) -> list[MutantResult]:
    """The rows with ``file``, ``line``, ``function`` and ``diff`` filled in from each mutant's
    patch, and ``patch`` relative to the instance."""
    specs = {m.id: m for m in instance.mutants}
    sources: dict[str, str | None] = {}
    located: list[MutantResult] = []
    for row in results:
        spec = specs.get(row.id)
        if spec is None:
            located.append(row)
            continue
        try:
            diff = spec.patch.read_text(encoding="utf-8", errors="replace")
        except OSError:
            diff = ""
        main = main_change(diff)
        file, line, function = "", None, ""
        if main is not None:
            file, line = main.path, main.line
            if file not in sources:
                path = instance.source / file
                try:
                    sources[file] = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    sources[file] = None
            text = sources[file]
            if text is not None:
                function = (
                    function_at(text, line) if file.endswith(".py") else function_line(text, line)
                )
        located.append(
            row.model_copy(
                update={
                    "patch": relative_to_instance(spec.patch, instance.root),
                    "diff": diff,
                    "file": file,
                    "line": line,
                    "function": function,
                }
            )
        )
    return located


def mutation_score_by(mutants: list[MutantResult], key: str) -> dict[str, tuple[int, int]]:
    """(killed, scored) per ``file`` or per ``function`` (``file::function``; ``file (module
    level)`` for code outside functions), over the scored mutants, in order of appearance:
    M per file and per function, where a suite is weak."""
    table: dict[str, tuple[int, int]] = {}
    for m in mutants:
        if not m.status.scored:
            continue
        name = m.file or "?"
        if key == "function":
            name = f"{name}::{m.function}" if m.function else f"{name} (module level)"
        killed, scored = table.get(name, (0, 0))
        table[name] = (killed + int(m.status.detected), scored + 1)
    return table
