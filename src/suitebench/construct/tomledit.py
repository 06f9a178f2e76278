"""Small, comment-preserving edits of ``instance.toml``: drop ``[[mutants]]`` tables by id.

Construction steps edit files a user also edits by hand, so they change only the tables they
must and keep everything else (comments, order, formatting) byte for byte.  The result is
re-read with :func:`suitebench.model.instance.load_instance` by the callers.
"""

from __future__ import annotations

import re

__all__ = ["drop_mutant_tables"]

_HEADER = re.compile(r"^\s*\[")
_MARKER = re.compile(r"^# (>>>|<<<) suitebench ")
_ID = re.compile(r'^\s*id\s*=\s*"([^"]+)"', re.M)


def drop_mutant_tables(text: str, ids: set[str]) -> str:
    """``text`` without the ``[[mutants]]`` tables whose ``id`` is in ``ids``."""
    chunks: list[list[str]] = [[]]
    for line in text.splitlines(keepends=True):
        if _HEADER.match(line) or _MARKER.match(line):
            chunks.append([])
        chunks[-1].append(line)
    kept: list[str] = []
    for chunk in chunks:
        body = "".join(chunk)
        if chunk and chunk[0].strip() == "[[mutants]]":
            match = _ID.search(body)
            if match and match.group(1) in ids:
                continue
        kept.append(body)
    return "".join(kept)
