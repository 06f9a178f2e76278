"""What an arm produces: candidates, why some were dropped, and the log written as
``generate.json``.

Every arm is a stream of *candidates* in emission order. A candidate either carries an input
(``data``) or is already known to be dropped (``drop``: a generator run that crashed, an empty
output) -- failures are marked, never silently skipped, so ``tried`` always equals the kept
inputs plus the dropped ones plus any checked beyond the budget.
"""

from __future__ import annotations

import hashlib
import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from suitebench.run.outcome import sha256_bytes

__all__ = ["DROP_REASONS", "Candidate", "GenerateError", "GenerationLog", "derive_seed"]

# Why a candidate did not become an input (one name per reason across code, JSON and docs).
DROP_REASONS = (
    "duplicate",  # the same bytes were emitted before
    "empty",  # nothing but whitespace
    "generator_failed",  # a generator run crashed, timed out or printed too much
    "own_validator",  # llm-genval: the model's own validator rejected it
    "illegal",  # the problem's validator rejected it
    "unmeasured",  # the problem's validator could not decide (timeout, failed quality gate)
    "no_gold",  # the references do not agree on an answer (consensus_oracle)
)
MAX_DROP_DETAILS = 200


class GenerateError(ValueError):
    """An arm that cannot run on this problem (no generator, no seeds, no statement, ...)."""


def derive_seed(*parts: object) -> int:
    """A 31-bit seed from a seed and labels: independent streams for reps, components, calls.

    Stable across Python versions and machines (sha256 of the parts' reprs), unlike ``hash``.
    """
    h = hashlib.sha256(repr(parts).encode()).digest()
    return int(struct.unpack(">I", h[:4])[0] & 0x7FFFFFFF)


@dataclass(frozen=True)
class Candidate:
    """One emitted input (or a marked failure to produce one) and where it came from."""

    origin: str
    data: bytes = b""
    drop: str | None = None
    detail: str = ""

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.data)


@dataclass
class GenerationLog:
    """Counters shared by every stream of one arm (a mixture's components share one)."""

    max_attempts: int
    tried: int = 0
    legal: int = 0
    seen: set[str] = field(default_factory=set)
    dropped: Counter[str] = field(default_factory=Counter)
    drops: list[dict[str, str]] = field(default_factory=list)
    capped: bool = False

    def drop(self, reason: str, origin: str, detail: str = "") -> None:
        assert reason in DROP_REASONS, reason
        self.dropped[reason] += 1
        if len(self.drops) < MAX_DROP_DETAILS:
            self.drops.append({"origin": origin, "reason": reason, "detail": detail[:200]})

    def to_dict(self, kept: int) -> dict[str, Any]:
        return {
            "tried": self.tried,
            "kept": kept,
            "dropped": {r: self.dropped[r] for r in DROP_REASONS if self.dropped[r]},
            "beyond_budget": self.legal - kept,
            "attempt_cap_hit": self.capped,
            "drops": self.drops,
        }
