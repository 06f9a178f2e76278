"""Small, comment-preserving edits of ``instance.toml``: drop ``[[mutants]]`` tables by id, drop
sections map entries by test id.

Construction steps edit files a user also edits by hand, so they change only the tables they
must and keep everything else (comments, order, formatting) byte for byte.  The file is read
with ``tomlkit``, which knows where a table really starts and ends (a line opening with ``[``
inside a multi-line array or string is no header) and reads each table's ``id`` whatever its
quoting; the cut itself is made in the text, so nothing the edit does not touch is rendered
again.  The result is re-read with :func:`suitebench.model.instance.load_instance` by the
callers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import AoT, Array, Table

__all__ = ["drop_map_entries", "drop_mutant_tables", "has_key", "insert_after_key"]

# A generator's block markers (:mod:`suitebench.construct.writing`) are kept even where they
# fall inside a dropped table's trailing comments: another run finds its block by them.
_MARKER = re.compile(r"^# (>>>|<<<) suitebench ", re.M)


def _header(table: Table, key: str) -> str:
    """The ``[[key]]`` line of an array-of-tables element, as written."""
    trivia = table.trivia
    return f"{trivia.indent}[[{key}]]{trivia.comment_ws}{trivia.comment}{trivia.trail}"


def drop_mutant_tables(text: str, ids: set[str]) -> str:
    """``text`` without the ``[[mutants]]`` tables whose ``id`` is in ``ids``: each such table
    from its header to the next header (its trailing comments and blank lines with it), but a
    block marker and what follows it."""
    doc = tomlkit.parse(text)
    mutants = doc.get("mutants")
    if not isinstance(mutants, AoT):
        return text
    spelled = "mutants"
    for k, _ in doc.body:  # the key as written (``[[ mutants ]]`` keeps its spaces)
        if k is not None and k == "mutants":
            spelled = k.as_string().strip()
            break
    cuts: list[tuple[int, int]] = []
    at = 0
    for table in mutants.body:
        chunk = _header(table, spelled) + table.as_string()
        start = text.find(chunk, at)
        if start < 0:  # tomlkit rendered a table otherwise than written: leave the file be
            raise ValueError(f"cannot locate a [[mutants]] table as written: {chunk[:80]!r}")
        end = start + len(chunk)
        at = end
        if str(table.get("id", "")) in ids:
            marker = _MARKER.search(text, start, end)
            cuts.append((start, end if marker is None else marker.start()))
    return _without(text, cuts)


def _without(text: str, cuts: list[tuple[int, int]]) -> str:
    """``text`` with the ``(start, end)`` spans cut out (in order, not overlapping)."""
    out: list[str] = []
    at = 0
    for start, end in cuts:
        out.append(text[at:start])
        at = end
    out.append(text[at:])
    return "".join(out)


def _entries(text: str, containers: list[Container]) -> Iterator[tuple[Any, Any, int, int]]:
    """Each ``key = value`` entry of ``containers`` (in the file's order), with where it is
    written in ``text`` (start, end); raises ValueError when tomlkit renders one otherwise."""
    at = 0
    for container in containers:
        for key, value in container.body:
            if key is None or isinstance(value, Table | AoT):
                continue
            chunk = _entry(key, value)
            start = text.find(chunk, at)
            if start < 0:
                raise ValueError(f"cannot locate an entry as written: {chunk[:80]!r}")
            at = start + len(chunk)
            yield key, value, start, at


def _entry(key: Any, value: Any) -> str:
    """A ``key = value`` line (or lines, for a multi-line value) as written, with its
    indentation, comment and line break."""
    trivia = value.trivia
    return (
        f"{trivia.indent}{key.as_string()}{key.sep}{value.as_string()}"
        f"{trivia.comment_ws}{trivia.comment}{trivia.trail}"
    )


def drop_map_entries(text: str, tests: set[str]) -> tuple[str, list[str]]:
    """``text`` (``instance.toml`` with its ``[sections_map]`` table, or a sections map file
    of its own) without the map's entries for ``tests``, each cut whole (a multi-line list of
    sections with it), and the tests whose entries were cut, in the file's order."""
    doc = tomlkit.parse(text)
    containers: list[Container] = [doc]  # a document is the root's container
    table = doc.get("sections_map")
    if isinstance(table, Table):
        containers.append(table.value)
    cuts: list[tuple[int, int]] = []
    removed: list[str] = []
    for key, value, start, end in _entries(text, containers):
        if key.key in tests and isinstance(value, Array):
            cuts.append((start, end))
            removed.append(key.key)
    return _without(text, cuts), removed


def has_key(text: str, key: str) -> bool:
    """Whether the document sets ``key`` at its root (a value or a table of that name)."""
    return key in tomlkit.parse(text)


def insert_after_key(text: str, after: str, line: str) -> str:
    """``text`` with ``line`` (a ``key = value`` written by the caller) on the line right after
    the root entry ``after`` (unchanged when there is none)."""
    for key, _value, _start, end in _entries(text, [tomlkit.parse(text)]):
        if key.key == after:
            added = line + "\n" if text[:end].endswith("\n") else "\n" + line
            return text[:end] + added + text[end:]
    return text
