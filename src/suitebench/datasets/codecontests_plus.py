"""CodeContests+ rows (``ByteDance-Seed/Code-Contests-Plus``) -> problems with their own
generator, validator and checker.

The rows: ``id``, ``title``, ``description``, ``source``, ``url``, ``time_limit``
(milliseconds), ``memory_limit`` (MB), ``generator`` and ``generator_cmd`` (a testlib
generator and the command lines that make the tests), ``validator`` and ``checker`` (testlib
C++ sources), ``correct_submissions`` and ``incorrect_submissions`` (lists of ``{code,
language}``), and, in the configurations that carry them, ``test_cases`` (``{input,
output}``).

What each becomes: ``correct_submissions`` the ``accepted`` pool (a seeded pick of them the
references), ``incorrect_submissions`` the ``rejected`` pool, ``test_cases`` the ``official``
arm. The checker is written as ``checker.cpp`` and the validator as ``validator.cpp`` beside
the ``testlib.h`` given with ``--testlib`` (a C++ checker or validator is built with the
headers beside it). The generator becomes a build-script program ``generator/``: its
``build.sh`` compiles ``gen.cpp`` and leaves an ``executable`` that reads a seed on stdin and
runs command line number ``seed mod N`` of ``generator_cmd``, so ``--arm
gen=generator@N`` replays the dataset's own tests. Without ``--testlib`` a problem whose
checker includes ``testlib.h`` is skipped ("testlib checker needs testlib.h"); a testlib
validator or generator alone is dropped, with the reason, and the problem kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

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
from suitebench.datasets.languages import (
    CODECONTESTS_LANGUAGES,
    Dialect,
    Lang,
    LanguageDrop,
    dialect_from_text,
)
from suitebench.datasets.options import ImportOptions
from suitebench.datasets.source import SourceRow, read_rows
from suitebench.datasets.writer import (
    Dropped,
    ProblemDraft,
    Program,
    Skipped,
    TestCase,
    problem_id,
)

__all__ = ["GENERATOR_BUILD", "CodeContestsPlusRow", "read"]

FORMAT = "codecontests-plus"

#: ``generator/build.sh``: compile the testlib generator; ``executable`` maps a seed on stdin
#: to one of the dataset's generator command lines (the program name is dropped).
GENERATOR_BUILD = """#!/bin/sh
# Built by suitebench import: the dataset's testlib generator, run as a seed -> input program.
set -e
g++ -O2 -std=gnu++17 -pipe -o gen gen.cpp
cat > executable <<'EOS'
#!/bin/sh
here=$(dirname "$0")
read seed
n=$(grep -c . "$here/commands.txt")
line=$(grep . "$here/commands.txt" | sed -n "$((seed % n + 1))p")
set -- $line
shift
exec "$here/gen" "$@"
EOS
chmod +x executable
"""


class _Submission(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    language: int | str


class CodeContestsPlusRow(BaseModel):
    """A CodeContests+ row; an unknown field is refused at this boundary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str | None = None
    description: str = ""
    source: str | None = None
    url: str | None = None
    time_limit: float | None = None  # milliseconds
    memory_limit: float | None = None  # MB
    generator: str | None = None
    generator_cmd: str | list[str] | None = None
    validator: str | None = None
    checker: str | None = None
    correct_submissions: list[_Submission] | None = None
    incorrect_submissions: list[_Submission] | None = None
    test_cases: list[TestPair] | None = None


def plus_language(label: int | str) -> Lang | Dialect | LanguageDrop:
    """An integer is CodeContests' class label; a name is read as a judge's language name."""
    if isinstance(label, int):
        return CODECONTESTS_LANGUAGES.get(label, LanguageDrop(f"unknown language ({label})"))
    return dialect_from_text(label)


def _commands(cmd: str | list[str] | None) -> list[str]:
    lines = cmd.splitlines() if isinstance(cmd, str) else list(cmd or [])
    return [line.strip() for line in lines if line.strip()]


def _judge_files(
    row: CodeContestsPlusRow, commands: list[str], options: ImportOptions, dropped: list[Dropped]
) -> tuple[dict[str, str], str, str | None, str | None]:
    """The problem's files for its checker, validator and generator (with ``testlib.h`` when
    given), and their names (``tokens`` for no checker, None for none); a testlib validator
    or generator without ``--testlib``, or a generator without command lines, is dropped."""
    has_testlib = options.testlib is not None
    files: dict[str, str] = {}
    checker = "tokens"
    if row.checker and row.checker.strip():
        checker = "checker.cpp"
        files[checker] = row.checker
    validator = None
    if row.validator and row.validator.strip():
        if needs_testlib(row.validator) and not has_testlib:
            dropped.append(Dropped("validator", "testlib validator needs testlib.h", "field"))
        else:
            validator = "validator.cpp"
            files[validator] = row.validator
    generator = None
    if row.generator and row.generator.strip():
        if needs_testlib(row.generator) and not has_testlib:
            dropped.append(Dropped("generator", "testlib generator needs testlib.h", "field"))
        elif not commands:
            dropped.append(Dropped("generator", "no generator_cmd to run it with", "field"))
        else:
            generator = "generator"
            files["generator/gen.cpp"] = row.generator
            files["generator/commands.txt"] = "\n".join(commands) + "\n"
            files["generator/build.sh"] = GENERATOR_BUILD
            if has_testlib:
                files["generator/testlib.h"] = testlib_files(options)["testlib.h"]
    if has_testlib and (needs_testlib(row.checker) or needs_testlib(row.validator)):
        files.update(testlib_files(options))
    return files, checker, validator, generator


def _pools(
    row: CodeContestsPlusRow, options: ImportOptions, dropped: list[Dropped]
) -> tuple[tuple[Program, ...], tuple[Program, ...]]:
    """The usable correct submissions (``accepted``) and incorrect ones (``rejected``)."""

    def entries(subs: list[_Submission] | None, field: str) -> list[tuple[int | str, str, str]]:
        return [(s.language, s.code, f"{field}[{i}]") for i, s in enumerate(subs or [])]

    accepted = collect_programs(
        entries(row.correct_submissions, "correct_submissions"),
        plus_language,
        options,
        "s",
        dropped,
    )
    rejected = collect_programs(
        entries(row.incorrect_submissions, "incorrect_submissions"),
        plus_language,
        options,
        "i",
        dropped,
    )
    return accepted, rejected


def draft(src: SourceRow, options: ImportOptions) -> ProblemDraft | Skipped:
    """One row's problem draft, or why it is skipped."""
    name = str(src.data.get("id") or f"row {src.index}")
    row = validate_row(CodeContestsPlusRow, src, FORMAT, name)
    if isinstance(row, Skipped):
        return row
    if is_interactive(row.description):
        return Skipped(name, src.file, src.index, INTERACTIVE_REASON)
    has_testlib = options.testlib is not None
    if needs_testlib(row.checker) and not has_testlib:
        return Skipped(name, src.file, src.index, TESTLIB_REASON)
    dropped: list[Dropped] = []
    commands = _commands(row.generator_cmd)
    files, checker, validator, generator = _judge_files(row, commands, options, dropped)
    accepted, rejected = _pools(row, options, dropped)
    if not accepted:
        return Skipped(
            name,
            src.file,
            src.index,
            "no usable correct submission for the references",
            tuple(dropped),
        )
    tests = tuple(
        TestCase(t.input, t.output, f"test_cases[{i}]") for i, t in enumerate(row.test_cases or [])
    )
    if not tests:
        return Skipped(
            name,
            src.file,
            src.index,
            "no test_cases (this configuration carries none)",
            tuple(dropped),
        )
    tl = row.time_limit / 1000 if row.time_limit is not None else None
    time_limit, memory_limit = limits(tl, row.memory_limit, dropped)
    used = [k for k in CodeContestsPlusRow.model_fields if src.data.get(k) not in (None, "", [])]
    return ProblemDraft(
        id=problem_id(row.id),
        title=row.title or row.id,
        statement=row.description,
        time_limit=time_limit,
        memory_limit=memory_limit,
        source_file=src.file,
        row=src.index,
        fields_used=tuple(used),
        checker=checker,
        validator=validator,
        generator=generator,
        files=files,
        pools={"accepted": accepted, "rejected": rejected},
        arms={"official": tests},
        dropped=tuple(dropped),
        metadata={
            "id": row.id,
            "source": row.source,
            "url": row.url,
            "generator_cmds": len(commands),
        },
    )


def read(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped]:
    for src in read_rows(path):
        yield draft(src, options)
