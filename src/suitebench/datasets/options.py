"""What a dataset reader is given and how it words a row that is not its schema.

The format modules (:mod:`.codecontests`, :mod:`.taco`, ...) and their shared helpers
(:mod:`.common`) need these, and :mod:`.importer` needs the format modules: kept here, below
both, so no reader imports the importer that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from suitebench.datasets.languages import ALL_LANGUAGES, Lang

__all__ = ["ImportOptions", "schema_reason"]


@dataclass(frozen=True)
class ImportOptions:
    """What the command line passes to a format: how many references to pick (``seed``
    makes the pick), which languages to keep, at most how many problems, a ``testlib.h`` to
    place beside testlib programs, at most how many programs a pool keeps (a seeded pick),
    and the submissions table (Codeforces)."""

    references: int = 3
    seed: int = 0
    languages: frozenset[Lang] = frozenset(ALL_LANGUAGES)
    limit: int | None = None
    max_pool: int | None = None
    testlib: Path | None = None
    submissions: Path | None = None


def schema_reason(fmt: str, exc: ValidationError) -> str:
    """A row that does not match the published schema, as one skip reason."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(row)"
    if err["type"] == "extra_forbidden":
        return f"not the {fmt} schema: unexpected field {where!r}"
    if err["type"] == "missing":
        return f"not the {fmt} schema: field {where!r} missing"
    return f"not the {fmt} schema: field {where!r}: {err['msg']}"
