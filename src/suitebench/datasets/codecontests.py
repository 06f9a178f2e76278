"""CodeContests (the AlphaCode dataset, ``deepmind/code_contests``) rows -> problems.

The published schema (the dataset card's features; parquet shards or JSON lines with the same
fields): ``name``, ``description``; ``public_tests``, ``private_tests``, ``generated_tests``,
each ``{input: [str], output: [str]}``; ``solutions`` and ``incorrect_solutions``, each
``{language: [class label], solution: [str]}`` with labels 0 UNKNOWN_LANGUAGE, 1 PYTHON
(Python 2), 2 CPP, 3 PYTHON3, 4 JAVA; ``source`` and ``difficulty`` (class labels);
``cf_contest_id``, ``cf_index``, ``cf_points``, ``cf_rating``, ``cf_tags``;
``is_description_translated``, ``untranslated_description``; ``time_limit``
(``{seconds, nanos}``), ``memory_limit_bytes``, ``input_file``, ``output_file``.

What each becomes: the correct ``solutions`` are the ``accepted`` pool and a seeded pick of
them the references (the consensus_oracle); ``incorrect_solutions`` the ``rejected`` pool;
``public_tests`` the ``samples`` arm, ``private_tests`` the ``official`` arm and
``generated_tests`` an arm of their own, ``arms/generated`` (audit it with ``--arm
generated=arms/generated``). Outputs are written under ``answers/`` for provenance. The
checker is ``tokens`` (whitespace-separated tokens, as CodeContests' own evaluation compares);
there is no validator, so the official and sample tests are legal by definition and kills on
the generated arm are withdrawn at the legality stage. A problem that reads or writes files
(``input_file``/``output_file``) or says it is interactive is skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from suitebench.datasets.common import (
    INTERACTIVE_REASON,
    collect_programs,
    is_interactive,
    limits,
    tests_from_pairs,
    validate_row,
)
from suitebench.datasets.languages import codecontests_language
from suitebench.datasets.options import ImportOptions
from suitebench.datasets.source import SourceRow, read_rows
from suitebench.datasets.writer import Dropped, ProblemDraft, Skipped, TestCase, problem_id

__all__ = ["CodeContestsRow", "read"]

FORMAT = "codecontests"
#: ``source`` class labels (the card's order).
SOURCES = ("UNKNOWN_SOURCE", "CODECHEF", "CODEFORCES", "HACKEREARTH", "CODEJAM", "ATCODER", "AIZU")


class _Tests(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: list[str] = Field(default_factory=list)
    output: list[str] = Field(default_factory=list)


class _Solutions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    language: list[int | str] = Field(default_factory=list)
    solution: list[str] = Field(default_factory=list)


class _TimeLimit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seconds: int | None = 0
    nanos: int | None = 0


class CodeContestsRow(BaseModel):
    """One row as the dataset card gives it; an unknown field is refused at this boundary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    public_tests: _Tests | None = None
    private_tests: _Tests | None = None
    generated_tests: _Tests | None = None
    source: int | str | None = None
    difficulty: int | str | None = None
    solutions: _Solutions | None = None
    incorrect_solutions: _Solutions | None = None
    cf_contest_id: int | None = None
    cf_index: str | None = None
    cf_points: float | None = None
    cf_rating: int | None = None
    cf_tags: list[str] | None = None
    is_description_translated: bool | None = None
    untranslated_description: str | None = None
    time_limit: _TimeLimit | None = None
    memory_limit_bytes: int | None = None
    input_file: str | None = None
    output_file: str | None = None


def _entries(sols: _Solutions | None, field: str) -> list[tuple[int | str, str, str]]:
    if sols is None:
        return []
    return [
        (lang, src, f"{field}[{i}]")
        for i, (lang, src) in enumerate(zip(sols.language, sols.solution, strict=False))
    ]


def _tests(t: _Tests | None, field: str, dropped: list[Dropped]) -> tuple[TestCase, ...]:
    return () if t is None else tests_from_pairs(t.input, t.output, field, dropped)


def _file_io(name: str | None) -> bool:
    return bool(name and name.strip() and name.strip().lower() not in ("stdin", "stdout"))


def draft(src: SourceRow, options: ImportOptions) -> ProblemDraft | Skipped:
    """One row -> a problem draft, or the reason it cannot be one."""
    name = str(src.data.get("name") or f"row {src.index}")
    row = validate_row(CodeContestsRow, src, FORMAT, name)
    if isinstance(row, Skipped):
        return row
    if _file_io(row.input_file) or _file_io(row.output_file):
        return Skipped(
            name,
            src.file,
            src.index,
            f"file I/O (input_file={row.input_file!r}, output_file={row.output_file!r}): "
            "the judge gives stdin and stdout only",
        )
    if is_interactive(row.description):
        return Skipped(name, src.file, src.index, INTERACTIVE_REASON)
    dropped: list[Dropped] = []
    accepted = collect_programs(
        _entries(row.solutions, "solutions"), codecontests_language, options, "s", dropped
    )
    rejected = collect_programs(
        _entries(row.incorrect_solutions, "incorrect_solutions"),
        codecontests_language,
        options,
        "i",
        dropped,
    )
    arms = {
        "official": _tests(row.private_tests, "private_tests", dropped),
        "samples": _tests(row.public_tests, "public_tests", dropped),
        "generated": _tests(row.generated_tests, "generated_tests", dropped),
    }
    if not accepted:
        return Skipped(
            name,
            src.file,
            src.index,
            "no usable correct solution for the references",
            tuple(dropped),
        )
    if not arms["official"] and not arms["samples"]:
        return Skipped(name, src.file, src.index, "no public or private test", tuple(dropped))
    tl = None
    if row.time_limit is not None and row.time_limit.seconds is not None:
        tl = row.time_limit.seconds + (row.time_limit.nanos or 0) / 1e9
    mem = row.memory_limit_bytes / 2**20 if row.memory_limit_bytes else None
    time_limit, memory_limit = limits(tl, mem, dropped)
    source = row.source
    if isinstance(source, int) and 0 <= source < len(SOURCES):
        source = SOURCES[source]
    metadata = {
        "name": row.name,
        "source": source,
        "difficulty": row.difficulty,
        "cf_contest_id": row.cf_contest_id,
        "cf_index": row.cf_index,
        "cf_rating": row.cf_rating,
        "cf_tags": row.cf_tags or [],
    }
    used = [k for k in CodeContestsRow.model_fields if src.data.get(k) not in (None, "", [], {})]
    return ProblemDraft(
        id=problem_id(row.name),
        title=row.name,
        statement=row.description,
        time_limit=time_limit,
        memory_limit=memory_limit,
        source_file=src.file,
        row=src.index,
        fields_used=tuple(used),
        checker="tokens",
        pools={"accepted": accepted, "rejected": rejected},
        arms=arms,
        dropped=tuple(dropped),
        metadata=metadata,
    )


def read(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped]:
    for src in read_rows(path):
        yield draft(src, options)
