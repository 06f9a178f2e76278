"""What the format modules share: programs by language, tests from input/output pairs, the
judge's limits, and the problems this judge cannot run (interactive ones, file I/O, testlib
programs without a ``testlib.h``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from suitebench.datasets.languages import Dialect, Lang, LanguageDrop
from suitebench.datasets.options import ImportOptions, schema_reason
from suitebench.datasets.source import SourceRow
from suitebench.datasets.writer import Dropped, Program, Skipped, TestCase

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIME_LIMIT",
    "INTERACTIVE_REASON",
    "TESTLIB_REASON",
    "TestPair",
    "collect_programs",
    "is_interactive",
    "limits",
    "needs_testlib",
    "testlib_files",
    "tests_from_pairs",
    "validate_row",
]

DEFAULT_TIME_LIMIT = 2.0  # seconds, where a row gives none
DEFAULT_MEMORY_MB = 256
TESTLIB_REASON = "testlib checker needs testlib.h"
INTERACTIVE_REASON = "interactive: the judge has no interactor"
_INTERACTIVE = re.compile(r"\binteractive\s+problem\b|^\s*#*\s*interaction\s*$", re.I | re.M)
_TESTLIB = re.compile(r'#\s*include\s*[<"]testlib\.h[>"]')


class TestPair(BaseModel):
    """One ``{input, output}`` test as a list of them gives it (Codeforces, CodeContests+)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: str
    output: str | None = None


RowT = TypeVar("RowT", bound=BaseModel)


def validate_row(model: type[RowT], src: SourceRow, fmt: str, name: str) -> RowT | Skipped:
    """The row read into its format's schema, or skipped naming the field that is not."""
    try:
        return model.model_validate(src.data)
    except ValidationError as exc:
        return Skipped(name, src.file, src.index, schema_reason(fmt, exc))


def is_interactive(*texts: str | None) -> bool:
    """Whether a statement says the problem is interactive (``This is an interactive
    problem``, an ``Interaction`` section): the judge here has no interactor."""
    return any(t and _INTERACTIVE.search(t) for t in texts)


def needs_testlib(source: str | None) -> bool:
    return bool(source and _TESTLIB.search(source))


def testlib_files(options: ImportOptions) -> dict[str, str]:
    """``testlib.h`` from ``--testlib``, written beside the checker and validator (a C++
    program is built with the headers beside it), or nothing."""
    if options.testlib is None:
        return {}
    return {"testlib.h": Path(options.testlib).read_text(encoding="utf-8", errors="replace")}


def limits(
    time_seconds: float | None,
    memory_mb: float | None,
    dropped: list[Dropped],
    *,
    default_time: float = DEFAULT_TIME_LIMIT,
    default_memory: int = DEFAULT_MEMORY_MB,
    sources: tuple[str, str] = ("the row", "the row"),
) -> tuple[float, int]:
    """The judge's limits from the row's (seconds, MiB); where it gives none or an impossible
    value, the format's default, recorded as a defaulted field whose reason names the field,
    where it was looked for (``sources``: time, memory) and the value taken."""
    tl = time_seconds
    if tl is None or not math.isfinite(tl) or not 0 < tl <= 600:
        given = "missing" if tl is None else f"{tl} out of range (0, 600]"
        dropped.append(
            Dropped(
                "time_limit", f"time_limit {given} in {sources[0]}: {default_time} s taken", "field"
            )
        )
        tl = default_time
    mem = memory_mb
    if mem is None or not math.isfinite(mem) or not 1 <= mem <= 65536:
        given = "missing" if mem is None else f"{mem} out of range [1, 65536]"
        dropped.append(
            Dropped(
                "memory_limit",
                f"memory_limit {given} in {sources[1]}: {default_memory} MiB taken",
                "field",
            )
        )
        mem = default_memory
    return round(float(tl), 3), math.ceil(mem)


def collect_programs(
    entries: Iterable[tuple[Any, str, str]],
    resolve: Callable[[Any], Lang | Dialect | LanguageDrop],
    options: ImportOptions,
    prefix: str,
    dropped: list[Dropped],
    *,
    wrap: Callable[[Program], Program | Dropped] | None = None,
) -> tuple[Program, ...]:
    """Programs from ``(language label, source, origin)`` entries, named ``PREFIX`` plus
    their index in the row (``s003``: the dataset's ``solutions[3]``). Python 2, unknown or
    other languages, languages left out by ``--languages`` and empty sources are dropped
    with the reason; ``wrap`` may rewrite (or drop) each kept program."""
    out: list[Program] = []
    for i, (label, source, origin) in enumerate(entries):
        found = resolve(label)
        if isinstance(found, LanguageDrop):
            dropped.append(Dropped(origin, found.reason))
            continue
        lang, standard = (
            (found.lang, found.standard) if isinstance(found, Dialect) else (found, None)
        )
        if lang not in options.languages:
            dropped.append(Dropped(origin, f"language {lang} not selected (--languages)"))
            continue
        if not source or not source.strip():
            dropped.append(Dropped(origin, "empty source"))
            continue
        prog = Program(f"{prefix}{i:03d}", lang, source, origin, standard)
        if wrap is not None:
            wrapped = wrap(prog)
            if isinstance(wrapped, Dropped):
                dropped.append(wrapped)
                continue
            prog = wrapped
        out.append(prog)
    return tuple(out)


def tests_from_pairs(
    inputs: Sequence[str], outputs: Sequence[str] | None, field: str, dropped: list[Dropped]
) -> tuple[TestCase, ...]:
    """Tests from parallel input and output lists (``{input: [...], output: [...]}``); an
    output list of another length keeps the inputs and drops the outputs, said so."""
    outs: Sequence[str | None]
    if outputs is not None and len(outputs) == len(inputs):
        outs = list(outputs)
    else:
        if outputs:
            dropped.append(
                Dropped(
                    f"{field}.output",
                    f"{len(outputs)} outputs for {len(inputs)} inputs: outputs not written",
                    "field",
                )
            )
        outs = [None] * len(inputs)
    return tuple(
        TestCase(inp, out, f"{field}[{i}]")
        for i, (inp, out) in enumerate(zip(inputs, outs, strict=True))
    )
