"""What a suite run is asked to do: the engine, the limits and the program under test.

Plain records, shared by the host (the runner, the jobs, the score) and the payloads a worker
receives.  Per-test limits below the user's (``Target.timeouts``) are derived from the
reference's own times, as PIT does: ``factor x reference time + constant``, capped by the
user's per-test limit (:func:`derive_timeouts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from suitebench.suite.inside.wire import ImpactSpec
from suitebench.suite.records import SuiteRun

# Per-test limits below the user's, as sorted (node id, seconds) pairs (:func:`derive_timeouts`).
Timeouts = tuple[tuple[str, float], ...]
# A mutant's run: its parametrized tests by the reference's names, as (position, the
# reference's node id) pairs (:mod:`suitebench.suite.inside.positions`).
Positions = tuple[tuple[str, str], ...]
# Regular expressions (pattern, flags) a coverage run compiled, compiled once per batch again.
Patterns = tuple[tuple[str, int], ...]


class Engine(StrEnum):
    """How a suite is run against many programs; both give the same kill matrix."""

    PLAIN = "plain"
    BATCHED = "batched"


def own_suite(tests: Path, suite: Path | None) -> bool:
    """Whether ``suite`` is the instance's own (None, or its ``tests`` directory): the
    benchmark's yardstick, trusted.  Any other -- an agent's, a user's -- is scored as one
    written to cheat would be: on the plain engine (:func:`engine_for`) and with decoys
    (:mod:`suitebench.suite.protocol.decoys`)."""
    return suite is None or Path(suite).resolve() == Path(tests).resolve()


def engine_for(tests: Path, suite: Path | None, engine: Engine | None) -> Engine:
    """The engine a score runs on: ``engine`` when one is asked for; else batched for the
    instance's own suite and plain for any other (:func:`own_suite`).

    The batched engine runs a batch of programs under one pytest whose parent imports the
    suite once for all of them: fast, but there a suite written to cheat reaches every program
    of its batch (it could tell the reference's bytes by a vote of their trees) and every
    earlier program's results (it could rewrite them).  A suite from elsewhere runs in a
    sandbox and a pytest of its own per program unless its caller vouches for it by asking for
    the batched engine."""
    if engine is not None:
        return engine
    return Engine.BATCHED if own_suite(tests, suite) else Engine.PLAIN


class TestProtocol(StrEnum):
    """How a batch's child runs each test (:mod:`suitebench.suite.inside.batch.direct`)."""

    __test__ = False  # not a pytest test class

    DIRECT = "direct"  # pytest's per-phase work in one place, where only its plugins take part
    PYTEST = "pytest"  # every test through pytest's hooks


@dataclass(frozen=True)
class SuiteLimits:
    """Limits of suite runs: per test (so one hang does not blank a row) and per program; and
    how a batch's child runs each test (``protocol``: ``direct`` where it can, or ``pytest``:
    every test through pytest's hooks, :mod:`suitebench.suite.inside.batch.direct`)."""

    per_test: float = 10.0
    per_program: float = 600.0
    memory_mb: int | None = 2048
    network: bool = False
    protocol: TestProtocol = TestProtocol.DIRECT
    # A mutant's run gives each valid test factor x its reference time + constant seconds,
    # at most ``per_test`` (PIT's timeoutFactor and timeoutConst, with PIT's defaults).
    timeout_factor: float = 1.25
    timeout_constant: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_test": self.per_test,
            "per_program": self.per_program,
            "memory_mb": self.memory_mb,
            "network": self.network,
            "protocol": str(self.protocol),
            "timeout_factor": self.timeout_factor,
            "timeout_constant": self.timeout_constant,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SuiteLimits:
        return cls(**{**d, "protocol": TestProtocol(d.get("protocol", TestProtocol.DIRECT))})


@dataclass(frozen=True)
class Target:
    """One program under test as the runner needs it: a built executable or a source root."""

    executable: str | None = None  # absolute path of ./executable (kind = "cli")
    pythonpath: str | None = None  # absolute source root put first on sys.path (kind = "python")
    binds: tuple[str, ...] = field(default_factory=tuple)  # paths to make visible read-only
    # ``--fast``: run only these tests, in this order, and stop at the first failure.
    order: tuple[str, ...] | None = None
    # Coverage-guided selection: run only these tests (in collected order), all to the end.
    select: tuple[str, ...] | None = None
    # Record per-test coverage of the program under this root: a Python package (either
    # engine), or a gcc build of a command-line program (plain engine).
    coverage_root: str | None = None
    # Record the fingerprint of the program's globals after collection (reference runs).
    fingerprint: bool = False
    # An import-time mutant: the run picks the tests that read a changed global
    # (:func:`suitebench.suite.inside.probe.impact.choose` reads this).
    impact: ImpactSpec | None = None
    # A mutant changing only function bodies that run in tests alone: the files it changes
    # (relative to ``pythonpath``).  A batch may collect the suite once for many such mutants
    # and patch each one's functions in (:mod:`suitebench.suite.inside.batch.hotpatch`).
    patched_files: tuple[str, ...] | None = None
    # Per-test limits below ``SuiteLimits.per_test`` (a mutant's run: :func:`derive_timeouts`),
    # as sorted (node id, seconds) pairs; a test not named here has the per-test limit.
    timeouts: Timeouts = ()
    # A mutant's run: the reference's names of its parametrized tests by their positions.
    positions: Positions = ()
    # The reference's coverage run: weak-mutation probes to compile in (one tuple each, as
    # :func:`suitebench.suite.select.infection.probes_for` makes them).
    probes: tuple[tuple[Any, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "executable": self.executable,
            "pythonpath": self.pythonpath,
            "binds": list(self.binds),
            "order": None if self.order is None else list(self.order),
            "select": None if self.select is None else list(self.select),
            "coverage_root": self.coverage_root,
            "fingerprint": self.fingerprint,
            "impact": self.impact,
            "patched_files": None if self.patched_files is None else list(self.patched_files),
            "timeouts": [list(pair) for pair in self.timeouts],
            "positions": [list(pair) for pair in self.positions],
            "probes": [list(probe) for probe in self.probes],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Target:
        order, select, patched = d.get("order"), d.get("select"), d.get("patched_files")
        return cls(
            executable=d.get("executable"),
            pythonpath=d.get("pythonpath"),
            binds=tuple(d.get("binds", ())),
            order=None if order is None else tuple(order),
            select=None if select is None else tuple(select),
            coverage_root=d.get("coverage_root"),
            fingerprint=bool(d.get("fingerprint", False)),
            impact=d.get("impact"),
            patched_files=None if patched is None else tuple(patched),
            timeouts=tuple((str(t), float(s)) for t, s in d.get("timeouts") or ()),
            positions=tuple((str(p), str(t)) for p, t in d.get("positions") or ()),
            probes=tuple(tuple(probe) for probe in d.get("probes") or ()),
        )


def derive_timeouts(
    seconds: list[dict[str, float]], valid: list[str], limits: SuiteLimits
) -> Timeouts:
    """Each valid test's limit on a mutant: ``timeout_factor`` x its longest time in the
    reference runs ``seconds`` + ``timeout_constant``, rounded up to a tenth of a second, where
    that is below the per-test limit (a test with no time in every run keeps the limit)."""
    out: list[tuple[str, float]] = []
    for test in sorted(valid):
        times = [run.get(test) for run in seconds]
        if not times or any(t is None for t in times):
            continue
        longest = max(float(t) for t in times if t is not None)
        limit = math.ceil((limits.timeout_factor * longest + limits.timeout_constant) * 10) / 10
        if limit < limits.per_test:
            out.append((test, limit))
    return tuple(out)


def reference_positions(runs: list[SuiteRun]) -> Positions:
    """The reference's names of its parametrized tests by their positions, from the first of
    ``runs`` that recorded them (its fingerprint record: a ``kind = "python"`` suite's first
    reference run); what is not a string pair is left out (the record was written where the
    suite's code runs)."""
    for run in runs:
        record = run.fingerprint
        found = record.get("positions") if isinstance(record, dict) else None
        if isinstance(found, dict):
            return tuple(
                sorted(
                    (p, t) for t, p in found.items() if isinstance(t, str) and isinstance(p, str)
                )
            )
    return ()
