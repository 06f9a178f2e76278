"""What the model steps of construction show a model, and how its replies are read.

Replies are untrusted text: every reader here either returns what it found or raises
:class:`ReplyFormatError` saying what was expected, so a caller can retry with that message
(the paper's agents retry up to three times) or report it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from suitebench.model.instance import Instance

__all__ = [
    "NoUsableReply",
    "ReplyFormatError",
    "ask",
    "extract_diff",
    "extract_files",
    "extract_json",
    "extract_markdown",
    "section_text",
    "source_listing",
    "test_source",
    "tests_listing",
]

_FENCE = re.compile(r"```([^\n`]*)\n(.*?)```", re.S)
_FILE_HEADER = re.compile(r"^(?:#+\s*)?FILE:\s*`?([^\s`]+)`?\s*$", re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


class ReplyFormatError(ValueError):
    """A model reply that does not have the expected shape (said in the message)."""


class NoUsableReply(RuntimeError):
    """The model gave no usable reply after every attempt."""


def ask(
    client: Any,
    prompt: str,
    parse: Callable[[str], Any],
    *,
    attempts: int,
    retryable: tuple[type[Exception], ...],
    what: str,
    system: str | None = None,
) -> Any:
    """One question with retries: a reply ``parse`` rejects is answered with the problem, in
    the same conversation; ``retryable`` client errors spend an attempt."""
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    problem = ""
    for _ in range(attempts):
        try:
            reply = client.chat(messages)
        except retryable as exc:
            problem = f"unusable reply: {exc}"
            continue
        try:
            return parse(reply.text)
        except ReplyFormatError as exc:
            problem = str(exc)
            messages += [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": f"That reply cannot be used: {problem}. Answer again."},
            ]
    raise NoUsableReply(f"{what}: no usable reply after {attempts} attempts ({problem})")


def _fenced(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).strip().lower(), m.group(2)) for m in _FENCE.finditer(text)]


def extract_diff(text: str) -> str:
    """The unified diff in a reply: a ```diff (or ```patch) block, else the text from its
    first ``--- `` line."""
    for info, body in _fenced(text):
        is_diff = info.split()[:1] in (["diff"], ["patch"]) or body.lstrip().startswith("--- ")
        if is_diff and "@@" in body:
            return body if body.endswith("\n") else body + "\n"
    start = text.find("\n--- ") + 1 if not text.startswith("--- ") else 0
    if (start > 0 or text.startswith("--- ")) and "@@" in text[start:]:
        body = text[start:]
        return body if body.endswith("\n") else body + "\n"
    raise ReplyFormatError("expected a unified diff in a ```diff block (--- a/FILE, +++ b/FILE)")


def normalize_diff_paths(diff: str, source: Path) -> str:
    """Rewrite ``---``/``+++`` paths to ``a/<path>``/``b/<path>`` relative to ``source``, as
    ``patch -p1`` needs, when the model wrote them without prefixes or with a leading
    directory; a path that names no file of the source is an error."""
    out: list[str] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("--- ", "+++ ")) and not line.startswith(
            ("--- /dev/null", "+++ /dev/null")
        ):
            marker, rest = line[:4], line[4:].rstrip("\n").split("\t")[0].strip()
            parts = PurePosixPath(rest).parts
            if parts and parts[0] in ("a", "b"):
                parts = parts[1:]
            found = None
            for skip in range(len(parts)):
                candidate = PurePosixPath(*parts[skip:])
                if (source / candidate).is_file():
                    found = candidate
                    break
            if found is None:
                raise ReplyFormatError(f"the diff names {rest!r}, which is not a source file")
            prefix = "a/" if marker == "--- " else "b/"
            out.append(f"{marker}{prefix}{found.as_posix()}\n")
        else:
            out.append(line)
    return "".join(out)


def extract_files(text: str) -> dict[str, str]:
    """Files of a reply written as ``FILE: path`` lines each followed by a fenced block."""
    files: dict[str, str] = {}
    headers = list(_FILE_HEADER.finditer(text))
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        blocks = _fenced(text[header.end() : end])
        if not blocks:
            raise ReplyFormatError(f"expected a fenced code block after 'FILE: {header.group(1)}'")
        path = PurePosixPath(header.group(1))
        if path.is_absolute() or ".." in path.parts:
            raise ReplyFormatError(f"expected a relative path inside the project, got {path}")
        files[path.as_posix()] = blocks[0][1]
    if not files:
        raise ReplyFormatError("expected files as 'FILE: path' lines, each before a code block")
    return files


def extract_json(text: str) -> object:
    """The JSON value of a reply (a ```json block, or the whole text)."""
    import json

    candidates = [body for info, body in _fenced(text) if info in ("json", "")] + [text]
    last: Exception | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            last = exc
    raise ReplyFormatError(f"expected JSON ({last})")


def extract_markdown(text: str) -> str:
    """A markdown document: the reply, or the ```markdown block it is wrapped in."""
    for info, body in _fenced(text):
        if info in ("markdown", "md"):
            return body
    return text


def section_text(spec: str, section: str) -> str:
    """A section's heading and body, up to the next heading of the same or a higher level."""
    lines = spec.splitlines(keepends=True)
    out: list[str] = []
    level = 0
    for line in lines:
        match = _HEADING.match(line.rstrip("\n"))
        if match:
            here = len(match.group(1))
            if level and here <= level:
                break
            if not level and match.group(2).strip() == section:
                level = here
        if level:
            out.append(line)
    return "".join(out)


def test_function(tree: ast.Module, test_id: str) -> ast.AST | None:
    """The function (or method) node a pytest node id (``tests/f.py::[Class::]name[params]``)
    names in a parsed test file, or None."""
    parts = test_id.partition("::")[2].split("[", 1)[0].split("::")
    body: list[ast.stmt] = tree.body
    for part in parts:
        node = next(
            (
                n
                for n in body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        if part == parts[-1]:
            return node
        body = node.body
    return None


def test_source(root: Path, test_id: str) -> str:
    """The source of one test function (``tests/f.py::[Class::]name[params]``), or ''."""
    path = root / test_id.partition("::")[0]
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return ""
    node = test_function(tree, test_id)
    return (ast.get_source_segment(text, node) or "") if node is not None else ""


test_function.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported
test_source.__test__ = False  # type: ignore[attr-defined]


def _listing(files: list[tuple[str, str]], budget: int) -> str:
    chunks: list[str] = []
    used = 0
    for name, text in files:
        if used + len(text) > budget:
            chunks.append(f"FILE: {name}\n(omitted: over the prompt budget)\n")
            continue
        used += len(text)
        chunks.append(f"FILE: {name}\n```\n{text}```\n")
    return "\n".join(chunks)


def source_listing(instance: Instance, files: list[Path], budget: int = 60_000) -> str:
    """The reference implementation's files, as ``FILE: path`` + code block each."""
    return _listing(
        [(f.as_posix(), (instance.source / f).read_text(encoding="utf-8", errors="replace"))
         for f in files], budget,
    )  # fmt: skip


def tests_listing(instance: Instance, budget: int = 80_000) -> str:
    """The reference suite's files (``tests/...``), as ``FILE: path`` + code block each."""
    files = sorted(p for p in instance.tests.rglob("*.py") if "__pycache__" not in p.parts)
    return _listing(
        [(f"tests/{p.relative_to(instance.tests).as_posix()}",
          p.read_text(encoding="utf-8", errors="replace")) for p in files], budget,
    )  # fmt: skip
