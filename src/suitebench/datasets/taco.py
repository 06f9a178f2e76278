"""TACO and APPS rows -> problems, with a call driver for function-call problems.

The published schemas: APPS (``codeparrot/apps``) has ``problem_id``, ``question``,
``solutions`` (a JSON list of Python sources), ``input_output`` (JSON: ``inputs``,
``outputs``, optional ``fn_name``), ``difficulty``, ``url``, ``starter_code``; TACO
(``BAAI/TACO``) has the same core plus ``name``, ``source``, ``tags``, ``raw_tags``,
``skill_types``, ``date``, ``picture_num``, ``time_limit`` and ``memory_limit`` (text such as
``1 second``, ``256 megabytes``), ``Expected Time Complexity``, ``Expected Auxiliary Space``.

Without ``fn_name`` a problem is plain stdin/stdout: each input is a stdin, the checker is
``tokens``. With ``fn_name`` each input is the list of the function's arguments: it is
written as JSON (the test's stdin), every solution becomes one ``.py`` file, the solution
followed by :data:`DRIVER` -- which reads the arguments as JSON from stdin, calls the function
(a top-level ``def``, or the method of ``class Solution``, as LeetCode-style starter code
declares it) with anything the function prints sent to stderr, and prints the result as one
JSON value (tuples as lists, sets as sorted lists, anything else JSON cannot hold as its
``repr``) -- and the checker is :data:`JSON_CHECKER`, written as ``checker.py``: output and
answer parsed as JSON and compared as values, floats within 1e-6 absolute or relative,
integers and strings exactly; output that is not JSON is a presentation error. Every solution
is a correct one: the references are a seeded pick of them and the ``accepted`` pool is all
of them (the audit finds the accepted-but-wrong ones); these datasets have no incorrect pool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from suitebench.datasets.common import (
    INTERACTIVE_REASON,
    collect_programs,
    is_interactive,
    limits,
    validate_row,
)
from suitebench.datasets.languages import Lang
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

__all__ = ["DRIVER", "JSON_CHECKER", "TacoRow", "read", "read_apps"]


DRIVER = """

# ---- call driver (suitebench import): arguments as JSON on stdin, result as JSON ----
def _suitebench_call_driver(fn_name):
    import contextlib as _cl
    import json as _js
    import sys as _sy

    def plain(v):
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, (set, frozenset)):
            return sorted((plain(x) for x in v), key=repr)
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        return repr(v)

    args = _js.loads(_sy.stdin.read())
    if not isinstance(args, list):
        args = [args]
    space = globals()
    cls = space.get("Solution")
    if isinstance(cls, type) and hasattr(cls, fn_name):
        fn = getattr(cls(), fn_name)
    elif callable(space.get(fn_name)):
        fn = space[fn_name]
    else:
        print(f"no function or Solution method named {fn_name!r}", file=_sy.stderr)
        raise SystemExit(3)
    with _cl.redirect_stdout(_sy.stderr):
        result = fn(*args)
    print(_js.dumps(plain(result)))


_suitebench_call_driver(FN_NAME)
"""

JSON_CHECKER = '''"""JSON checker, called the testlib way: checker input output answer.

Exit 0 ok, 1 WA, 2 PE. Output and answer are one JSON value each, compared as values: floats
within 1e-6 absolute or relative; integers, strings and booleans exactly; lists item by item,
objects key by key.
"""

import json
import math
import sys

EPS = 1e-6


def same(got, want):
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        if isinstance(got, int) and isinstance(want, int):
            return got == want
        if math.isnan(want) or math.isnan(got):
            return math.isnan(want) and math.isnan(got)
        return math.isclose(got, want, rel_tol=EPS, abs_tol=EPS)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    return type(got) is type(want) and got == want


def main():
    _, _input, output, answer = sys.argv
    with open(answer, encoding="utf-8") as fh:
        want = json.loads(fh.read())  # the gold: not JSON is a harness error (FAIL)
    try:
        with open(output, encoding="utf-8") as fh:
            got = json.loads(fh.read())
    except (ValueError, UnicodeDecodeError):
        print("output is not one JSON value")
        sys.exit(2)
    if same(got, want):
        sys.exit(0)
    print(f"expected {json.dumps(want)[:80]}, got {json.dumps(got)[:80]}")
    sys.exit(1)


if __name__ == "__main__":
    main()
'''


class TacoRow(BaseModel):
    """A TACO or APPS row; an unknown field is refused at this boundary."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    question: str
    solutions: str | list[str] | None = None
    input_output: str | dict[str, Any] | None = None
    starter_code: str | None = None
    difficulty: str | None = None
    url: str | None = None
    problem_id: int | str | None = None
    name: str | None = None
    source: str | None = None
    tags: str | list[str] | None = None
    raw_tags: str | list[str] | None = None
    skill_types: str | list[str] | None = None
    date: str | None = None
    picture_num: str | int | None = None
    time_limit: str | float | None = None
    memory_limit: str | float | None = None
    expected_time: str | None = Field(None, alias="Expected Time Complexity")
    expected_space: str | None = Field(None, alias="Expected Auxiliary Space")


def _number(value: str | float | None) -> float | None:
    if value is None or isinstance(value, float | int):
        return value
    m = re.search(r"\d+(?:\.\d+)?", value)
    return float(m.group()) if m else None


def _json(value: Any) -> Any:
    """A JSON field as the datasets store it: text (empty where APPS has none) or decoded."""
    if isinstance(value, str):
        return json.loads(value) if value.strip() else None
    return value


def _text(value: Any) -> str:
    """A stdin or stdout as the datasets write it: a string, or a list of lines."""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value) + "\n"
    return str(value)


def _driven(fn_name: str) -> Any:
    def wrap(prog: Program) -> Program:
        driver = DRIVER.replace("FN_NAME", json.dumps(fn_name))
        return Program(prog.name, prog.lang, prog.source.rstrip() + "\n" + driver, prog.origin)

    return wrap


def _drop_outputs(inputs: list[Any], outputs: list[Any], dropped: list[Dropped]) -> None:
    """Outputs that do not pair with the inputs are not written; says so in ``dropped``."""
    dropped.append(
        Dropped(
            "input_output.outputs",
            f"{len(outputs)} outputs for {len(inputs)} inputs: outputs not written",
            "field",
        )
    )


def _tests(inputs: list[Any], outputs: list[Any] | None, fn_name: Any) -> list[TestCase]:
    """The official tests: each input (a call's JSON arguments when call-based) with its
    output, if any."""
    tests = []
    for i, inp in enumerate(inputs):
        out = None if outputs is None else outputs[i]
        if fn_name:
            args = inp if isinstance(inp, list) else [inp]
            tests.append(
                TestCase(
                    json.dumps(args) + "\n",
                    None if out is None else json.dumps(out) + "\n",
                    f"input_output.inputs[{i}]",
                )
            )
        else:
            tests.append(
                TestCase(
                    _text(inp), None if out is None else _text(out), f"input_output.inputs[{i}]"
                )
            )
    return tests


def draft(src: SourceRow, options: ImportOptions, fmt: str) -> ProblemDraft | Skipped:
    """One row's problem draft, or why it is skipped."""
    label = str(src.data.get("name") or src.data.get("problem_id") or f"row {src.index}")
    row = validate_row(TacoRow, src, fmt, label)
    if isinstance(row, Skipped):
        return row
    if is_interactive(row.question):
        return Skipped(label, src.file, src.index, INTERACTIVE_REASON)
    try:
        sols, io = _json(row.solutions), _json(row.input_output)
    except json.JSONDecodeError as exc:
        return Skipped(label, src.file, src.index, f"solutions or input_output not JSON: {exc}")
    io = io or {}
    inputs, outputs = io.get("inputs") or [], io.get("outputs")
    if not inputs:
        return Skipped(label, src.file, src.index, "input_output has no inputs")
    fn_name = io.get("fn_name")
    dropped: list[Dropped] = []
    entries = [(Lang.PYTHON3, s, f"solutions[{i}]") for i, s in enumerate(sols or [])]
    accepted = collect_programs(
        entries,
        lambda lang: lang,
        options,
        "s",
        dropped,
        wrap=_driven(fn_name) if fn_name else None,
    )
    if not accepted:
        return Skipped(
            label, src.file, src.index, "no usable solution for the references", tuple(dropped)
        )
    if outputs is not None and len(outputs) != len(inputs):
        _drop_outputs(inputs, outputs, dropped)
        outputs = None
    tests = _tests(inputs, outputs, fn_name)
    files = {"checker.py": JSON_CHECKER} if fn_name else {}
    time_limit, memory_limit = limits(_number(row.time_limit), _number(row.memory_limit), dropped)
    name = row.name or (f"{fmt}-{row.problem_id}" if row.problem_id is not None else label)
    notes = [f"call-based: fn_name {fn_name!r}, solutions run through the call driver"] * bool(
        fn_name
    )
    if fn_name and outputs is not None:
        notes.append("answers/ hold the dataset's outputs as JSON (APPS often wraps them in [])")
    used = [f.alias or k for k, f in TacoRow.model_fields.items() if src.data.get(f.alias or k)]
    return ProblemDraft(
        id=problem_id(name),
        title=name,
        statement=row.question
        + (f"\n\nStarter code:\n\n```\n{row.starter_code}\n```" if row.starter_code else ""),
        time_limit=time_limit,
        memory_limit=memory_limit,
        source_file=src.file,
        row=src.index,
        fields_used=tuple(used),
        checker="checker.py" if fn_name else "tokens",
        files=files,
        pools={"accepted": accepted},
        arms={"official": tuple(tests)},
        dropped=tuple(dropped),
        metadata={
            "problem_id": row.problem_id,
            "fn_name": fn_name,
            "difficulty": row.difficulty,
            "url": row.url,
            "source": row.source,
        },
        notes=tuple(notes),
    )


def read(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped]:
    for src in read_rows(path):
        yield draft(src, options, "taco")


def read_apps(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped]:
    """APPS rows: the same reader; problems without a name are named ``apps-ID``."""
    for src in read_rows(path):
        yield draft(src, options, "apps")
