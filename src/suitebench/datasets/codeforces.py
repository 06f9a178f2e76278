"""Codeforces problem and submission tables (the ``open-r1/codeforces`` and
``open-r1/codeforces-submissions`` layout) -> problems.

Two tables, two paths: PATH is the problem table, ``--submissions`` the submissions table.
Problem rows: ``id`` (``1000/A``), ``aliases``, ``contest_id``, ``index``, ``title``,
``description``, ``input_format``, ``output_format``, ``interaction_format``, ``note``,
``examples`` and ``official_tests`` (lists of ``{input, output}``),
``official_tests_complete``, ``time_limit`` (seconds), ``memory_limit`` (MB), ``input_mode``
(``stdio`` or ``file``), a ``checker`` or ``generated_checker`` where given, and the table's
other columns (rating, tags, editorial, ...). Submission rows: ``submission_id``,
``problem_id`` (or ``contestId`` + ``problem_index``), ``programmingLanguage``, ``verdict``,
``source`` and the judge's figures.

What each becomes: ``official_tests`` the ``official`` arm, ``examples`` the ``samples`` arm;
submissions with verdict ``OK`` the ``accepted`` pool (and a seeded pick of them the
references), every other verdict the ``rejected`` pool, except ``COMPILATION_ERROR`` and the
verdicts that are no judgement (``SKIPPED``, ``TESTING``), which are dropped and counted. A
test that Codeforces shows truncated (ending in ``...``) is dropped: it is not the input the
judge ran. A checker given is written beside the problem and called the testlib way (a testlib
one needs ``--testlib``); without one the checker is ``tokens``. Interactive problems and
``input_mode = file`` are skipped with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from suitebench.datasets.common import (
    INTERACTIVE_REASON,
    TESTLIB_REASON,
    TestPair,
    collect_programs,
    is_interactive,
    limits,
    needs_testlib,
    testlib_files,
    validate_row,
)
from suitebench.datasets.languages import dialect_from_text
from suitebench.datasets.options import ImportOptions, schema_reason
from suitebench.datasets.source import SourceRow, read_rows
from suitebench.datasets.writer import Dropped, ProblemDraft, Skipped, TestCase, problem_id

__all__ = ["CodeforcesProblemRow", "CodeforcesSubmissionRow", "read"]

FORMAT = "codeforces"
NO_JUDGEMENT = ("SKIPPED", "TESTING", "")
_TRUNCATED = "..."


class CodeforcesProblemRow(BaseModel):
    """A problem row; an unknown field is refused at this boundary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    aliases: list[str] | None = None
    contest_id: str | int | None = None
    contest_name: str | None = None
    contest_type: str | None = None
    contest_start: int | None = None
    contest_start_year: int | None = None
    index: str | None = None
    time_limit: float | None = None
    memory_limit: float | None = None
    title: str | None = None
    description: str | None = None
    input_format: str | None = None
    output_format: str | None = None
    interaction_format: str | None = None
    note: str | None = None
    examples: list[TestPair] | None = None
    editorial: str | None = None
    rating: int | None = None
    tags: list[str] | None = None
    testset_size: int | None = None
    official_tests: list[TestPair] | None = None
    official_tests_complete: bool | None = None
    input_mode: str | None = None
    checker: str | None = None
    generated_checker: str | None = None
    executable: bool | None = None
    generated_tests: int | None = None


class CodeforcesSubmissionRow(BaseModel):
    """A submission row (``source`` is the program)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    submission_id: str | int | None = None
    source: str
    contestId: str | int | None = None  # the table's own column names
    problem_index: str | None = None
    programmingLanguage: str = ""
    verdict: str | None = None
    testset: str | None = None
    passedTestCount: float | None = None
    timeConsumedMillis: float | None = None
    memoryConsumedBytes: float | None = None
    creationTimeSeconds: float | None = None
    problem_id: str | None = None

    def key(self) -> str | None:
        if self.problem_id:
            return self.problem_id
        if self.contestId is not None and self.problem_index:
            return f"{self.contestId}/{self.problem_index}"
        return None


def _keys(data: dict[str, Any]) -> list[str]:
    keys = [str(data.get("id") or "")]
    keys += [str(a) for a in data.get("aliases") or []]
    if data.get("contest_id") is not None and data.get("index"):
        keys.append(f"{data['contest_id']}/{data['index']}")
    return list(dict.fromkeys(k for k in keys if k))


_Sub = tuple[str, str, str, str]  # (verdict, language, source, origin)


def _submissions(path: Path, wanted: set[str]) -> tuple[dict[str, list[_Sub]], list[Dropped]]:
    """The submissions of the wanted problems, by problem key; the rest counted."""
    by_problem: dict[str, list[_Sub]] = defaultdict(list)
    dropped: list[Dropped] = []
    for src in read_rows(path):
        where = f"{src.file.name}[{src.index}]"
        try:
            row = CodeforcesSubmissionRow.model_validate(src.data)
        except ValidationError as exc:
            dropped.append(Dropped(where, schema_reason("codeforces submissions", exc)))
            continue
        key = row.key()
        if key is None or key not in wanted:
            dropped.append(Dropped(where, "submission of a problem not in the problem table"))
            continue
        name = str(row.submission_id if row.submission_id is not None else src.index)
        origin = f"submission {name} ({where})"
        by_problem[key].append((row.verdict or "", row.programmingLanguage, row.source, origin))
    return by_problem, dropped


def _tests(
    tests: list[TestPair] | None, field: str, dropped: list[Dropped]
) -> tuple[TestCase, ...]:
    out = []
    for i, t in enumerate(tests or []):
        origin = f"{field}[{i}]"
        if t.input.rstrip().endswith(_TRUNCATED) or (t.output or "").rstrip().endswith(_TRUNCATED):
            dropped.append(Dropped(origin, "truncated on Codeforces (ends in ...)", "test"))
            continue
        out.append(TestCase(t.input, t.output, origin))
    return tuple(out)


def _by_verdict(
    entries: list[_Sub], dropped: list[Dropped]
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The submissions judged OK and those judged wrong, as ``(language, source, origin)``;
    one that did not compile or got no judgement is dropped with the reason."""
    ok, bad = [], []
    for verdict, lang, source, origin in entries:
        v = verdict.strip().upper()
        if v == "OK":
            ok.append((lang, source, origin))
        elif v == "COMPILATION_ERROR":
            dropped.append(Dropped(origin, "compilation error on the original judge"))
        elif v in NO_JUDGEMENT:
            dropped.append(Dropped(origin, f"verdict {verdict or 'missing'}: no judgement"))
        else:
            bad.append((lang, source, origin))
    return ok, bad


def _statement(row: CodeforcesProblemRow) -> str:
    """The statement: the description, input and output formats and note, those given."""
    return "\n\n".join(
        part
        for part in (row.description, row.input_format, row.output_format, row.note)
        if part and part.strip()
    )


def draft(
    src: SourceRow, subs: dict[str, list[_Sub]], options: ImportOptions
) -> ProblemDraft | Skipped:
    """One problem row's draft, with its submissions from ``subs``, or why it is skipped."""
    name = str(src.data.get("id") or f"row {src.index}")
    row = validate_row(CodeforcesProblemRow, src, FORMAT, name)
    if isinstance(row, Skipped):
        return row
    if row.input_mode and row.input_mode.strip().lower() not in ("stdio", "stdin", ""):
        return Skipped(
            name, src.file, src.index, f"input_mode {row.input_mode}: the judge gives stdio only"
        )
    if (row.interaction_format or "").strip() or is_interactive(row.description):
        return Skipped(name, src.file, src.index, INTERACTIVE_REASON)
    dropped: list[Dropped] = []
    files: dict[str, str] = {}
    checker = "tokens"
    checker_src = row.checker or row.generated_checker
    if checker_src and checker_src.strip():
        if needs_testlib(checker_src):
            if options.testlib is None:
                return Skipped(name, src.file, src.index, TESTLIB_REASON)
            files.update(testlib_files(options))
        checker = "checker.cpp" if "#include" in checker_src else "checker.py"
        files[checker] = checker_src
    entries = [s for k in _keys(src.data) for s in subs.get(k, [])]
    ok, bad = _by_verdict(entries, dropped)
    accepted = collect_programs(ok, dialect_from_text, options, "a", dropped)
    rejected = collect_programs(bad, dialect_from_text, options, "r", dropped)
    arms = {
        "official": _tests(row.official_tests, "official_tests", dropped),
        "samples": _tests(row.examples, "examples", dropped),
    }
    if not accepted:
        return Skipped(
            name, src.file, src.index, "no usable OK submission for the references", tuple(dropped)
        )
    if not arms["official"] and not arms["samples"]:
        return Skipped(name, src.file, src.index, "no official test or example", tuple(dropped))
    notes = []
    if row.official_tests_complete is False:
        notes.append("official_tests_complete is false: Codeforces showed only some tests")
    time_limit, memory_limit = limits(row.time_limit, row.memory_limit, dropped)
    used = [k for k in CodeforcesProblemRow.model_fields if src.data.get(k) not in (None, "", [])]
    return ProblemDraft(
        id=problem_id(row.id),
        title=row.title or row.id,
        statement=_statement(row),
        time_limit=time_limit,
        memory_limit=memory_limit,
        source_file=src.file,
        row=src.index,
        fields_used=tuple(used),
        checker=checker,
        files=files,
        pools={"accepted": accepted, "rejected": rejected},
        arms=arms,
        dropped=tuple(dropped),
        metadata={
            "id": row.id,
            "contest_id": row.contest_id,
            "index": row.index,
            "rating": row.rating,
            "tags": row.tags or [],
            "submissions": str(options.submissions) if options.submissions else None,
        },
        notes=tuple(notes),
    )


def read(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped | Dropped]:
    wanted = {k for src in read_rows(path) for k in _keys(src.data)}
    subs: dict[str, list[_Sub]] = {}
    if options.submissions is not None:
        subs, unmatched = _submissions(options.submissions, wanted)
        yield from unmatched
    for src in read_rows(path):
        yield draft(src, subs, options)
