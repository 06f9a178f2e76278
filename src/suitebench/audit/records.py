"""Records the certification chain's stages read and write.

Each stage of the auditors paper's chain (legality, consensus_oracle, judge, determinism,
consensus correction, brute-force adjudication, tolerance) turns records into records; keeping
them explicit (frozen dataclasses, enums) is what lets every certified kill in the ledger be
traced back to its input, its oracle and its legality certificate.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum

from suitebench.run.outcome import sha256_bytes


class Verdict(StrEnum):
    """Judge verdicts. TLE is its own bucket and never a bug (the paper's excl-TLE basis).

    ``CE`` (the submission did not build) and ``FAIL`` (the harness or the checker failed) are
    never kills: "the harness broke" is not "the submission is wrong". ``SKIP`` marks an input
    that was not judged (illegal, or no gold).
    """

    AC = "AC"
    WA = "WA"
    PE = "PE"
    RE = "RE"
    TLE = "TLE"
    MLE = "MLE"
    OLE = "OLE"
    CE = "CE"
    FAIL = "FAIL"
    SKIP = "SKIP"

    @property
    def code(self) -> int:
        """Stable uint8 code of the compact kill matrix."""
        return _CODES[self]

    @property
    def is_kill(self) -> bool:
        """A logic kill: wrong output or a crash (TLE excluded, harness failures excluded)."""
        return self in KILL_VERDICTS


_CODES = {v: i for i, v in enumerate(Verdict)}
VERDICT_BY_CODE = dict(enumerate(Verdict))
WRONG_OUTPUT = frozenset({Verdict.WA, Verdict.PE})
CRASH = frozenset({Verdict.RE, Verdict.MLE, Verdict.OLE})
KILL_VERDICTS = WRONG_OUTPUT | CRASH


class Legality(StrEnum):
    """What the validator says about an input.

    ``unmeasured``: the problem's validator failed its quality gate, so its word certifies
    nothing (never counted as illegal). ``no_validator``: the problem has none.
    """

    LEGAL = "legal"
    ILLEGAL = "illegal"
    UNMEASURED = "unmeasured"
    NO_VALIDATOR = "no_validator"


class GoldStatus(StrEnum):
    GOLD = "gold"
    NO_GOLD = "no_gold"


class DetClass(StrEnum):
    """Determinism class of a kill after three re-judges (only DET_* are certified)."""

    DET_WA = "DET_WA"
    DET_RE = "DET_RE"
    NONDET = "NONDET"
    NOT_REPRODUCED = "NOT_REPRODUCED"

    @property
    def certifiable(self) -> bool:
        return self in (DetClass.DET_WA, DetClass.DET_RE)


class Stage(StrEnum):
    """Where in the chain a flag was withdrawn."""

    DETERMINISM = "determinism"
    CONSENSUS = "consensus"
    BRUTE = "brute"
    TOLERANCE = "tolerance"
    LEGALITY = "legality"


@dataclass(frozen=True)
class InputCase:
    """One input of an arm: its id in the arm (file name or ``seed-N``) and its content."""

    arm: str
    input_id: str
    data: bytes
    sha256: str = ""

    def __post_init__(self) -> None:
        if not self.sha256:
            object.__setattr__(self, "sha256", sha256_bytes(self.data))


@dataclass(frozen=True)
class Gold:
    """The consensus_oracle's answer on one input, and who formed it."""

    status: GoldStatus
    answer: bytes | None
    references: tuple[str, ...]  # the references whose outputs agree with the gold
    dissent: tuple[str, ...] = ()  # successful references that disagree
    failed: tuple[str, ...] = ()  # references that did not run successfully
    reason: str = ""

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.answer) if self.answer is not None else ""


def normalized(output: bytes) -> bytes:
    """Whitespace-normalized output: what "the same wrong output" compares."""
    return b" ".join(output.split())


@dataclass(frozen=True)
class Judged:
    """A submission's verdict on one input (the cell of the kill matrix).

    The output itself is kept only for a wrong answer of at most ``INLINE_OUTPUT`` bytes (the
    store keeps every output by ``output_sha256``); ``normalized_sha256`` is the sha256 of the
    whitespace-normalized output of a wrong answer, what the determinism stage compares.
    ``tle_first`` is set when this cell is the re-judge of a run that hit the wall-clock
    watchdog with its CPU time under the time limit (see :mod:`.judge`): both times are kept.
    """

    verdict: Verdict
    output: bytes = b""
    message: str = ""
    output_sha256: str = ""
    normalized_sha256: str = ""
    wall_time: float = 0.0  # of the run judged (seconds)
    cpu_time: float = 0.0
    tle_first: tuple[float, float] | None = None  # (wall, CPU) of a wall-clock TLE re-judged

    def __post_init__(self) -> None:
        if not self.output_sha256:
            object.__setattr__(self, "output_sha256", sha256_bytes(self.output))
        if not self.normalized_sha256 and self.verdict in WRONG_OUTPUT:
            object.__setattr__(self, "normalized_sha256", sha256_bytes(normalized(self.output)))


INLINE_OUTPUT = 64 * 1024


@dataclass(frozen=True)
class Flag:
    """A kill under examination: submission x input, with what each stage found."""

    problem: str
    submission: str
    input_sha256: str
    verdict: Verdict
    got: bytes  # the wrong output (empty for a crash: only its sha256 is kept)
    determinism: DetClass | None = None
    consensus: str = ""  # e.g. "3/5 agree with submission, 1/5 with gold"
    disputed: bool = False  # the consensus pool's majority sides with the submission
    brute: str = ""  # e.g. "confirms gold", "unfinished"
    withdrawn: Stage | None = None
    reason: str = ""
    got_sha256: str = ""

    def __post_init__(self) -> None:
        if not self.got_sha256:
            object.__setattr__(self, "got_sha256", sha256_bytes(self.got))


@dataclass(frozen=True)
class Retraction:
    """A withdrawn flag: kept with the stage that withdrew it and why, never deleted."""

    problem: str
    arm: str
    submission_id: str
    input_id: str
    input_sha256: str
    verdict: str
    stage: str
    reason: str
    output_head: str = ""  # the judged output's first 80 characters ("" for a crash)


@dataclass(frozen=True)
class LedgerRow:
    """One certified finding: everything needed to re-check it from scratch."""

    problem: str
    problem_dir: str
    arm: str
    pool: str
    submission_id: str
    submission_sha256: str
    official_verdict: str
    new_finding: bool
    input_id: str
    input_sha256: str
    validator: str
    validator_id: str
    legality: str
    legality_basis: str
    oracle_rule: str
    oracle_references: str
    expected_head: str
    expected_sha256: str
    got_head: str
    got_sha256: str
    verdict: str
    determinism: str
    consensus: str
    brute: str
    exit_status: str = ""  # the problem's rule: "judge" (non-zero exit = RE) or "ignore"
    compile_flags: str = ""  # the problem's [compile] table (compile_label), "default" if none

    @classmethod
    def columns(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]


@dataclass(frozen=True)
class Funnel:
    """Table 1 of the paper, per problem and arm, counted in submissions."""

    flagged: int = 0
    official_tle: int = 0
    reproducible: int = 0
    after_corrections: int = 0
    certified: int = 0
    new_findings: int = 0
    withdrawn_by: dict[str, int] = field(default_factory=dict)
    certified_by: dict[str, int] = field(default_factory=dict)  # legality basis -> certified

    def __add__(self, other: Funnel) -> Funnel:
        def added(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            out = dict(a)
            for k, v in b.items():
                out[k] = out.get(k, 0) + v
            return out

        return Funnel(
            self.flagged + other.flagged,
            self.official_tle + other.official_tle,
            self.reproducible + other.reproducible,
            self.after_corrections + other.after_corrections,
            self.certified + other.certified,
            self.new_findings + other.new_findings,
            added(self.withdrawn_by, other.withdrawn_by),
            added(self.certified_by, other.certified_by),
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "flagged": self.flagged,
            "official_tle": self.official_tle,
            "reproducible": self.reproducible,
            "after_corrections": self.after_corrections,
            "certified": self.certified,
            "new_findings": self.new_findings,
            "withdrawn_by": dict(sorted(self.withdrawn_by.items())),
            "certified_by": dict(sorted(self.certified_by.items())),
        }
