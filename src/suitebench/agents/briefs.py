"""The task briefs an agent reads (``AGENTS.md``, and a byte-identical ``CLAUDE.md``).

One brief per task, identical across agents (both papers hold the brief fixed and vary the
agent). The suite brief asks for "smaller, focused tests rather than one huge test function",
the wording TestSuiteBench's evaluation prompt uses so that one failing assertion does not hide
a whole test's worth of checks; the inputs brief follows the Auditors paper's Appendix D.1
(objective, output contract, toolbox, the ``--no-wrongs`` ablation); the code brief asks for a
``build.sh`` that leaves ``./executable`` (the ProgramBench convention R is scored under).
"""

from __future__ import annotations

from collections.abc import Sequence

SUITE_BRIEF = """\
# Test-suite task -- {name}

**Objective.** Write a pytest test suite for the program described in `spec.md`. The suite is
scored by how many subtly wrong versions of the program (mutants, each violating one requirement
of the spec) it catches, and only tests that pass on the correct program count. Cover every
requirement in the spec, its edge cases and the combinations of inputs where mistakes hide.

**Output contract (strict -- this is what gets scored).** Put every test file (and any
`conftest.py` it needs) under `{suite_dir}/` in this directory. Only `{scored}/` is scored.

- {how}
- Break the checks down into smaller, focused tests rather than writing one huge test
  function: a test that fails on the correct program is not counted at all.
- Tests must be deterministic and must not need the network.
{executable}
- Time limit for this whole task: {time_limit}.

Do not look for the program's source, its reference tests or any mutants: they are not here.
"""

SUITE_HOW_CLI = (
    "Each test runs the program as `./executable` in its working directory (the path is also "
    "in `$SUITEBENCH_EXECUTABLE`), e.g. with `subprocess.run`."
)
SUITE_HOW_WORKSPACE = (
    "Each test runs the program as `./executable`, with this directory as its working "
    "directory, as ProgramBench runs a task's `eval/run.sh` (`python -m pytest eval/tests`): "
    "files your tests read go under `eval/` (e.g. `eval/fixtures/`), found as "
    "`eval/fixtures/...` from the working directory."
)
SUITE_HOW_PYTHON = "Each test imports the Python package `{package}` described in the spec."
SUITE_NO_EXECUTABLE = (
    "- The program itself is not provided: write the tests from the spec alone; they are run "
    "against it after you finish."
)
SUITE_WITH_EXECUTABLE = (
    "- The reference program is provided as `./executable` in this directory: run your tests "
    "against it (`python -m pytest {suite_dir}`) to check they pass on the correct program."
)
SUITE_WITH_PACKAGE = (
    "- The reference package is provided as `{package}/` in this directory: run your tests "
    "against it (`python -m pytest tests`) to check they pass on the correct program."
)

CODE_BRIEF = """\
# Implementation task -- {name}

**Objective.** Implement the program described in `spec.md`, in this directory.

**Output contract (strict -- this is what gets scored).** {contract} The implementation is scored
by the fraction of a hidden reference test suite it passes.

- Use any language available here; the build runs without network.
- Time limit for this whole task: {time_limit}.

Do not look for a reference implementation or the hidden tests: they are not here.
"""

CODE_CONTRACT_CLI = (
    "Write a `build.sh` that, run with `bash build.sh` in a fresh copy of this directory, leaves "
    "an executable file `./executable` that behaves as the spec says."
)
CODE_CONTRACT_PYTHON = (
    "Write the Python package `{package}/` in this directory (standard library only); tests "
    "import it as `import {package}`."
)

INPUTS_BRIEF = """\
# Test-data task -- {pid}

**Objective.** Build a general discriminating test set -- a diverse set of legal inputs that
catches ANY subtly-wrong solution (the trusted reference runs OK but the solution diverges --
different output, time-out, or crash). The goal is the COVERAGE of a diverse, budget-filling
SET -- breadth across distinct failure modes, not a few clever inputs.

OUTPUT CONTRACT (strict -- this is what gets scored): put your FINAL, curated test set --
exactly the inputs to be scored, deduplicated, in the order you want them evaluated -- as
numbered files {first} ... {last} in workspace/final/. Only workspace/final/ is scored.
workspace/hacks/ is scratch.

- Problem statement: docs/statement.txt | Oracle: docs/{ref} | (no validator shipped -- an input
  is legal if docs/{ref} runs OK on it; honor the statement's constraints yourself)
- Limits: time {time_limit:g} s | memory {memory_limit} MB
- Input budget -- produce {budget} distinct inputs. This is a TARGET to FILL, not a ceiling.
{wrongs}
- Time limit for this whole task: {task_time}.

This is an open-ended task -- you choose the strategy and tool order; nothing is mandatory.

Toolbox (every tool is OPTIONAL):
- docs/{ref} -- the trusted reference (oracle).
- scripts/eval_hack.py <input> -- check ONE candidate: is it LEGAL, does the reference run OK,
  and which wrongs in workspace/wrongs/ it kills.
- scripts/write_generator.py workspace/gen.cpp --seeds N -- compile and run a C++ (or C, or
  Python) generator across N seeds; outputs go to workspace/hacks/.
- scripts/gen_wrongs.py --n K -- optionally draft weak-coder candidate solutions.{disabled}

A capable test-setter typically constructs inputs directly (edge cases, boundary and extreme
values, overflow triggers, degenerate structures, worst cases), writes a generator and sweeps
seeds, optionally drafts wrong solutions to discover failure modes, checks candidates, then
merges and deduplicates into a tight set.

Do not look for the held-out evaluation pool: it isn't here, and your only correctness oracle is
docs/{ref}.
"""

INPUTS_WRONGS_ON = (
    "- Wrong-solution drafts: scripts/gen_wrongs.py asks the model for plausible wrong "
    "solutions (workspace/wrongs/); eval_hack.py tells which of them an input kills."
)
INPUTS_WRONGS_OFF = (
    "- Ablation -- the weak-coder wrong-generator (gen_wrongs.py) is DISABLED this run: you have "
    "no self-drafted wrongs to probe, so there is no kill signal to iterate on. Build from "
    "direct reasoning about the reference and generator sweeps."
)

ROUND_BRIEF = """\

## Round {round}: feedback

Your suite was run against the hidden mutants. Tests that failed on the correct program were
not counted ({invalid} of {tests}). Requirements in these sections of `spec.md` still have a
violation that no valid test catches (a mutant survived):

{sections}

Add tests (under `tests/`, keep the passing ones) that check these sections more thoroughly:
their edge cases, each rule they state, and the combinations of inputs they cover.
"""


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    if seconds >= 60:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


def suite_brief(
    name: str,
    *,
    python_package: str | None,
    with_executable: bool,
    time_limit: float,
    workspace: bool = False,
) -> str:
    """``workspace``: a ProgramBench task's layout (tests under ``eval/tests/``, run from the
    directory holding ``./executable`` and ``eval/``) instead of ``tests/``."""
    how = SUITE_HOW_PYTHON.format(package=python_package) if python_package else SUITE_HOW_CLI
    suite_dir = "eval/tests" if workspace else "tests"
    if workspace and not python_package:
        how = SUITE_HOW_WORKSPACE
    if not with_executable:
        executable = SUITE_NO_EXECUTABLE
    elif python_package:
        executable = SUITE_WITH_PACKAGE.format(package=python_package)
    else:
        executable = SUITE_WITH_EXECUTABLE.format(suite_dir=suite_dir)
    return SUITE_BRIEF.format(
        name=name,
        how=how,
        executable=executable,
        time_limit=_duration(time_limit),
        suite_dir=suite_dir,
        scored="eval" if workspace else "tests",
    )


def code_brief(name: str, *, python_package: str | None, time_limit: float) -> str:
    contract = (
        CODE_CONTRACT_PYTHON.format(package=python_package) if python_package else CODE_CONTRACT_CLI
    )
    return CODE_BRIEF.format(name=name, contract=contract, time_limit=_duration(time_limit))


def inputs_brief(
    pid: str,
    *,
    ref: str,
    time_limit: float,
    memory_limit: int,
    budget: int,
    wrongs: bool,
    task_time: float,
) -> str:
    return INPUTS_BRIEF.format(
        pid=pid,
        first="01.txt",
        last=f"{budget:02d}.txt",
        ref=ref,
        time_limit=time_limit,
        memory_limit=memory_limit,
        budget=budget,
        wrongs=INPUTS_WRONGS_ON if wrongs else INPUTS_WRONGS_OFF,
        disabled="" if wrongs else " (DISABLED this run.)",
        task_time=_duration(task_time),
    )


def round_brief(round_no: int, sections: Sequence[str], *, tests: int, invalid: int) -> str:
    """Feedback for mutation-guided round ``round_no``: the spec sections of surviving mutants
    (never the mutants themselves)."""
    listed = "\n".join(f"- {s}" for s in sections) or "- (none: every scored mutant is killed)"
    return ROUND_BRIEF.format(round=round_no, sections=listed, tests=tests, invalid=invalid)
