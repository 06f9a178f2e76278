"""``suitebench import``: a dataset on disk -> problem directories plus an import summary.

Each format module registers a reader in :data:`FORMATS`: it turns the rows of a dataset into
:class:`~suitebench.datasets.writer.ProblemDraft` records (or :class:`Skipped` ones, with the
reason). :func:`run_import` writes every draft with the one writer, keeps ids unique, and
writes ``import-summary.json``: the problems written, the rows skipped with their reason, and
the programs and tests dropped, counted by reason. Nothing is dropped silently.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suitebench.datasets.options import ImportOptions
from suitebench.datasets.source import DatasetError
from suitebench.datasets.writer import Dropped, ProblemDraft, Skipped, cap_pools, write_problem

__all__ = [
    "FORMATS",
    "SUMMARY_FILE",
    "ImportSummary",
    "run_import",
]

SUMMARY_FILE = "import-summary.json"


#: A format: the rows of a dataset as drafts, skipped rows, and drops that belong to no
#: problem (a submission whose problem is not in the problem table).
Reader = Callable[[Path, ImportOptions], Iterator[ProblemDraft | Skipped | Dropped]]


def _formats() -> dict[str, Reader]:
    from suitebench.datasets import (
        codecontests,
        codecontests_plus,
        codeforces,
        kattis,
        polygon,
        taco,
    )

    return {
        "codecontests": codecontests.read,
        "codecontests-plus": codecontests_plus.read,
        "codeforces": codeforces.read,
        "taco": taco.read,
        "apps": taco.read_apps,
        "kattis": kattis.read,
        "polygon": polygon.read,
    }


FORMATS = ("codecontests", "codecontests-plus", "codeforces", "taco", "apps", "kattis", "polygon")
#: The formats whose PATH is a problem package (a directory), several of which may be given.
PACKAGE_FORMATS = ("kattis", "polygon")


@dataclass
class ImportSummary:
    """What an import did, as ``import-summary.json`` holds it."""

    format: str
    source: Path
    out: Path
    sources: list[Path] = field(default_factory=list)
    written: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    programs_dropped: Counter[str] = field(default_factory=Counter)
    tests_dropped: Counter[str] = field(default_factory=Counter)
    fields_dropped: Counter[str] = field(default_factory=Counter)
    programs_written: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": str(self.source),
            "sources": [str(s) for s in self.sources or [self.source]],
            "out": str(self.out),
            "problems_written": len(self.written),
            "problems_skipped": len(self.skipped),
            "programs_written": dict(sorted(self.programs_written.items())),
            "programs_dropped": dict(self.programs_dropped.most_common()),
            "tests_dropped": dict(self.tests_dropped.most_common()),
            "fields_dropped": dict(self.fields_dropped.most_common()),
            "written": self.written,
            "skipped": self.skipped,
        }

    def count(self, dropped: Any) -> None:
        for d in dropped:
            bucket = {"program": self.programs_dropped, "test": self.tests_dropped}
            bucket.get(d.kind, self.fields_dropped)[d.reason] += 1


def _read_all(
    reader: Reader, sources: Sequence[Path], options: ImportOptions
) -> Iterator[ProblemDraft | Skipped | Dropped]:
    for source in sources:
        yield from reader(source, options)


def run_import(
    fmt: str, source: Path | Sequence[Path], out: Path, options: ImportOptions
) -> ImportSummary:
    """Import the dataset at ``source`` (several problem packages: a list) as format ``fmt``
    into ``out`` (created)."""
    readers = _formats()
    if fmt not in readers:
        raise DatasetError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    sources = [source] if isinstance(source, Path) else list(source)
    out.mkdir(parents=True, exist_ok=True)
    summary = ImportSummary(fmt, sources[0], out, sources=sources)
    taken: set[str] = {p.name for p in out.iterdir()}
    for item in _read_all(readers[fmt], sources, options):
        if isinstance(item, Dropped):
            summary.count([item])
            continue
        if isinstance(item, Skipped):
            summary.skipped.append(item.to_dict())
            summary.count(item.dropped)
            continue
        if options.max_pool is not None:
            item = cap_pools(item, options.max_pool, options.seed)
        pid, n = item.id, 2
        while pid in taken:
            pid, n = f"{item.id}-{n}", n + 1
        taken.add(pid)
        if pid != item.id:
            item = _renamed(item, pid)
        prov = write_problem(item, out / pid, references=options.references, seed=options.seed)
        summary.count(item.dropped)
        for pool, progs in prov["programs"].items():
            summary.programs_written[pool] += len(progs)
        summary.written.append(
            {
                "id": pid,
                "dir": pid,
                "title": item.title,
                "source_file": str(item.source_file),
                "row": item.row,
                "references": len(prov["programs"]["references"]),
                "pools": {p: len(v) for p, v in prov["programs"].items() if p != "references"},
                "tests": {arm: len(v) for arm, v in prov["tests"].items()},
                "checker": item.checker,
                "validator": item.validator,
                "interactor": item.interactor,
                "defaults": [d.reason for d in item.dropped if d.kind == "field"],
                "notes": list(item.notes),
                "loads": _loads(out / pid),
            }
        )
        if options.limit is not None and len(summary.written) >= options.limit:
            break
    (out / SUMMARY_FILE).write_text(
        json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return summary


def _loads(root: Path) -> str | None:
    """None if the problem written loads, else the loader's one-line error (a problem whose
    ``interactor`` this suitebench does not read yet, for one)."""
    from suitebench.model.problem import ProblemError, load_problem

    try:
        load_problem(root)
    except ProblemError as exc:
        return str(exc)
    return None


def _renamed(draft: ProblemDraft, pid: str) -> ProblemDraft:
    return replace(draft, id=pid, notes=(*draft.notes, f"id {draft.id!r} taken: renamed {pid}"))
