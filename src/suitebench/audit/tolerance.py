"""Tolerance: a wrong answer that matches the gold within a float tolerance is withdrawn.

Exact or token comparison flags a correct floating-point answer printed with other digits; the
paper removed such "floating-point artifacts" from its ledger. The tolerance is the problem's
``tolerance`` (default 1e-6) under testlib's doubleCompare.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from suitebench.audit.checkers import double_compare
from suitebench.audit.records import DetClass, Flag, Stage

__all__ = ["tolerance_stage", "within_tolerance"]

_INT = re.compile(rb"[+-]?\d+")
_FLOAT = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)", re.I)


def within_tolerance(got: bytes, gold: bytes, tolerance: float) -> bool:
    """Same tokens, except floating-point tokens that agree within ``tolerance``.

    Integer tokens must match exactly: an integer answer that is off by one is a bug however
    large it is, never a floating-point artifact. At least one float token must differ.
    """
    a, b = got.split(), gold.split()
    if len(a) != len(b) or a == b:
        return False
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        if _INT.fullmatch(x) and _INT.fullmatch(y):
            return False
        if not (_FLOAT.fullmatch(x) and _FLOAT.fullmatch(y)):
            return False
        if not double_compare(float(y), float(x), tolerance):
            return False
    return True


def tolerance_stage(
    flags: Sequence[Flag], golds: Mapping[str, bytes], tolerance: float
) -> list[Flag]:
    out = []
    for f in flags:
        if (
            f.withdrawn is None
            and f.determinism is DetClass.DET_WA
            and within_tolerance(f.got, golds[f.input_sha256], tolerance)
        ):
            f = dataclasses.replace(
                f,
                withdrawn=Stage.TOLERANCE,
                reason=f"output matches the gold within {tolerance:g} (a floating-point artifact)",
            )
        out.append(f)
    return out
