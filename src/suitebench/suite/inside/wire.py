"""What the plugin inside the sandbox and the host agree on: the records that cross.

The plugin (:mod:`.plugin`) writes reports; the host (:mod:`suitebench.suite.execute.eventlog`,
:mod:`suitebench.suite.execute.runner`) reads them from the event log, the one record of every
test's outcome, message and seconds (no JUnit XML is written).  The other way, the host hands
a batch its :class:`BatchSpec` and an import-time mutant its :class:`ImpactSpec`.  Each record
is a ``TypedDict`` here, both sides annotated with it.  Both import this module, which needs
nothing but the standard library (and pytest's report types, for the plugin's side), so the
host never imports the plugin.
"""

from __future__ import annotations

import itertools
from typing import Any, Final, Literal, NotRequired, TypedDict

# The event log (``--suitebench-events``): one JSON object a line, its kind under "event";
# each kind's fields are the TypedDict below it.  The host reads what the sandbox wrote: a
# record is what the plugin meant to write, not a promise (a suite's code can write there too).
EVENT_COLLECTED: Final = "collected"
EVENT_COLLECT_ERROR: Final = "collect_error"
EVENT_START: Final = "start"
EVENT_REPORT: Final = "report"
EVENT_DIRECT: Final = "direct"
EVENT_SELECTED: Final = "selected"
EVENT_ENDED: Final = "ended"
EVENT_FINISHED: Final = "finished"


class Collected(TypedDict):
    """Every test the run will attempt (a crash leaves the rest not_run)."""

    event: Literal["collected"]
    nodeids: list[str]


class CollectError(TypedDict):
    """A file (or directory, or class) that did not collect, and pytest's one-line reason."""

    event: Literal["collect_error"]
    nodeid: str
    message: str


class Start(TypedDict):
    """A test starts (on disk before it runs: a crash is attributed to it)."""

    event: Literal["start"]
    nodeid: str


class Report(TypedDict):
    """One phase's (or subtest's) report."""

    event: Literal["report"]
    nodeid: str
    when: Literal["setup", "call", "teardown"]
    outcome: Literal["passed", "failed", "skipped"]
    timeout: bool  # the phase ran past its limit
    on_cpu: NotRequired[bool]  # ... having used its limit of CPU time (only when true)
    seconds: NotRequired[float]  # a teardown's: the test's seconds from its start
    subtest: NotRequired[bool]  # a subtest's report (only when true)
    message: NotRequired[str]  # a failure's or skip's one-line reason


class Direct(TypedDict):
    """How many tests a batch's child runs by the direct protocol (its passing tests are one
    passed teardown report each)."""

    event: Literal["direct"]
    tests: int


class Selected(TypedDict):
    """Import-time impact's choice: the tests the change reaches (None: all) and why."""

    event: Literal["selected"]
    nodeids: list[str] | None
    reason: str


class Ended(TypedDict):
    """The plugin ends the run early (the rest goes on afresh), and why."""

    event: Literal["ended"]
    reason: str


class Finished(TypedDict):
    """The session ended (a run without it crashed)."""

    event: Literal["finished"]
    exitstatus: int


Event = Collected | CollectError | Start | Report | Direct | Selected | Ended | Finished


# An import-time mutant's impact spec (``--suitebench-impact``, a batch's ``impacts``): what
# its own run needs to choose its tests (:func:`suitebench.suite.inside.probe.impact.choose`),
# worked out on the host (:mod:`suitebench.suite.select.impactspec`).  Tests are named by their
# index into ``tests``.
class ImpactReaders(TypedDict):
    """The part every import-time mutant shares, from the reference's coverage run."""

    reference: dict[str, str]  # the reference's fingerprint: module:global -> its digest
    collected: list[str]  # the reference's collected test ids
    tests: list[str]  # the test ids indices refer to
    readers: dict[str, list[int]]  # a global's name -> the tests whose code names it
    always: list[int]  # the tests whose reads are unknown or by computed names
    writers: dict[str, list[str]]  # a test (its index, as a string) -> the globals it changes
    rank: list[int]  # each test's place in the coverage run
    # the names read by the program code the suite ran while collected (a child carrying an
    # import-time change into the one collection declines a change to one of them)
    collection_reads: list[str]
    collection_calls: list[str]  # those functions ("file:first line"): none may change
    # per test file, a digest of what the reference's collection computed (None: unknown)
    suite: dict[str, str | None] | None


class ImpactSpec(ImpactReaders):
    """One mutant's spec: the shared part and the tests that run anyway."""

    base: list[int]
    final: NotRequired[str]  # the reason, when ``base`` is the choice already


# A batch (``spec.json``): what the host (:func:`suitebench.suite.execute.runner.run_batched`)
# tells the fork server (:mod:`suitebench.suite.inside.batch.forkserver`).
class BatchProgram(TypedDict):
    """One program of a batch (a ``Target`` of the host's, as the sandbox needs it)."""

    index: int  # its place in the batch: its files in ``out_dir`` are named by it
    executable: str | None  # ./executable (kind = "cli")
    pythonpath: str | None  # its source root, first on sys.path (kind = "python")
    order: list[str] | None  # ``--fast``: only these tests, in this order
    select: list[str] | None  # only these tests, in collected order
    binds: list[str]  # its paths, hidden from the other programs' tests
    fingerprint: bool  # record the fingerprint of its globals after collection
    impact: str | None  # the digest of its impact spec in the batch's ``impacts``
    patched_files: list[str] | None  # the files a hot-patchable mutant changes
    coverage_root: str | None  # the reference's coverage run, under this root
    timeouts: list[list[Any]]  # [node id, seconds]: limits below the cap
    positions: NotRequired[str | None]  # the digest of its positions in ``positions``
    probes: list[list[Any]] | None  # weak-mutation probes to compile in


class BatchSpec(TypedDict):
    """Where things are, the limits, each program."""

    beside: str | None  # the project's files beside the suite, staged
    workdir: str  # the tests' working directory
    out_dir: str  # event logs, exit records, the batch's notes
    suite_src: str  # the pristine copy of the suite
    suite_name: str
    scratch: list[str]  # $HOME and $TMPDIR, emptied before each program
    run_wall: float  # a program's wall-clock limit
    protocol: str  # "direct" or "pytest"
    pytest_args: list[str]
    programs: list[BatchProgram]
    impacts: dict[str, ImpactSpec]  # the impact specs by digest (one for many mutants)
    # a mutant's parametrized tests' positions -> the reference's names, by digest (one for
    # every mutant: :mod:`.positions`)
    positions: NotRequired[dict[str, dict[str, str]]]
    collect_once: bool  # collect the suite once for every program
    reference: bool  # the reference's runs (pytest's own protocol throughout)
    patterns: list[list[Any]]  # regular expressions (pattern, flags) compiled before forking
    configure_once: NotRequired[bool]  # (default true) configure pytest once
    prompt_wait: NotRequired[bool]  # (default true) wake waits on a subprocess at its end


TIMEOUT_MARKER = "SuiteTestTimeout"  # in a timed-out phase's report (the exception's name)
# A phase whose thread spent at least this share of its limit on the CPU timed out by its own
# doing, not by waiting for a loaded machine (a thread's CPU time never exceeds its wall time).
ON_CPU_SHARE = 0.9
# A phase at its limit that got at least this share of the CPU but less than its limit of CPU
# time (computing on a machine others share) runs on, up to this many limits of wall time,
# until its CPU time decides: the verdict does not depend on the machine's load.
SHARED_CPU_SHARE = 0.2
SHARED_WALL_LIMITS = 4.0
MESSAGE_CHARS = 300  # a failure message is pytest's one line, cut here


def short_message(report: Any) -> str:
    """pytest's one-line reason: the exception and its message (``AssertionError: assert 3 ==
    4``, ``ModuleNotFoundError: No module named 'x'``), or a skip's reason."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        text = str(longrepr[2]).removeprefix("Skipped: ")
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = str(getattr(crash, "message", "") or "")
        if not text and type(longrepr).__name__ == "ReprFailDoctest":
            text = doctest_message(str(longrepr))
        if not text:
            text = error_line(str(longrepr))
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:MESSAGE_CHARS]


def doctest_message(report_text: str) -> str:
    """A failed doctest's reason on one line, without the path of the module it ran from (a
    build's or a batch's: it would differ between runs): the example and what it gave,
    ``>>> page_count(11, 5): expected 3, got 2``, or the exception it raised."""
    lines = report_text.splitlines()
    for i, line in enumerate(lines):
        differs = line.startswith("Differences (")
        if line != "Expected:" and not differs and not line.startswith("UNEXPECTED EXCEPTION: "):
            continue
        examples = [ln.split(">>> ", 1)[1].strip() for ln in lines[:i] if ">>> " in ln]
        example = f">>> {examples[-1]}: " if examples else ""
        if differs:  # --doctest-report ndiff or udiff: the lines taken out and put in
            return example + _differences(lines[i + 1 :])
        if line != "Expected:":
            return example + line.removeprefix("UNEXPECTED EXCEPTION: ")
        rest = lines[i + 1 :]
        end = next((j for j, ln in enumerate(rest) if ln in ("Got:", "Got nothing")), len(rest))
        got: list[str] = []
        for text in rest[end + 1 :] if rest[end : end + 1] == ["Got:"] else []:
            if not text.startswith("    "):
                break
            got.append(text.strip())
        expected = " ".join(ln.strip() for ln in rest[:end])
        return f"{example}expected {expected}, got {' '.join(got) or 'nothing'}"
    return ""


def _differences(lines: list[str]) -> str:
    """``expected A, got B`` from a diff of a doctest's output as ``--doctest-report`` writes
    it (``- c`` / ``+ b`` lines: ndiff's and udiff's), up to the report's blank line."""
    # the report indents the diff by 4; a context line starts with a space ("  -1" is one)
    body = [ln.removeprefix("    ") for ln in itertools.takewhile(str.strip, lines)]
    body = [ln for ln in body if not ln.startswith(("---", "+++", "@@", "?"))]
    taken = [ln[1:].strip() for ln in body if ln.startswith("-")]
    put = [ln[1:].strip() for ln in body if ln.startswith("+")]
    if not taken and not put:
        return "output differs: " + " ".join(ln.strip() for ln in body)
    return f"expected {' '.join(taken) or 'nothing'}, got {' '.join(put) or 'nothing'}"


def error_line(report_text: str) -> str:
    """The reason in a report as pytest prints it: its last ``E`` line, else its last line."""
    lines = [ln for ln in report_text.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    return errors[-1] if errors else (lines[-1].strip() if lines else "")
