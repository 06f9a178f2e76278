"""Checkers: does an output answer the input as well as the gold does?

The built-ins follow testlib's standard checkers: ``exact`` (byte equality; equal tokens with
different spacing is a presentation error), ``lines`` (lcmp: line by line, tokens per line),
``tokens`` (wcmp: whitespace-separated tokens) and ``float:EPS`` (rcmp-style: numeric tokens
compared with testlib's ``doubleCompare``: absolute *or* relative error within EPS + 1e-15,
NaN matches only NaN, infinities must match in sign). ``icpc[:FLAGS]`` is the problem package
format's default output validator (Kattis, ICPC, DOMjudge): tokens compared case-insensitively
unless ``case_sensitive``; whitespace free unless ``space_change_sensitive``; with a
``float_tolerance`` / ``float_absolute_tolerance`` / ``float_relative_tolerance``, an answer
token that is a finite number accepts a number within the absolute *or* the relative
tolerance (no slack added, no NaN or infinity accepted). A custom checker program is called the
testlib way, ``checker input output answer``, sandboxed; exit 0 ok, 1 WA, 2 PE, 3 (or anything
else) fail. A checker program that fails (FAIL, a crash -- for a Python checker an uncaught
exception, whose exit status 1 would read as WA -- a time-out) is a harness error: the checker
counts its failures and keeps the first message (:attr:`Checker.failures`). Checkers live in
one registry so users can add their own.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from suitebench.audit.harness import crashed, run_message
from suitebench.audit.runs import AuditEngine, CheckSpec
from suitebench.model.problem import CheckerKind, CheckerSpec
from suitebench.run.limits import CHECKER
from suitebench.run.outcome import Status, sha256_bytes

__all__ = [
    "CHECKERS",
    "CheckResult",
    "CheckVerdict",
    "Checker",
    "double_compare",
    "icpc_compare",
    "make_checker",
]


class CheckVerdict(StrEnum):
    OK = "ok"
    WA = "wa"
    PE = "pe"
    FAIL = "fail"


@dataclass(frozen=True)
class CheckResult:
    verdict: CheckVerdict
    message: str = ""


CompareFn = Callable[[bytes, bytes], CheckResult]

_NUMBER = re.compile(
    rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)", re.IGNORECASE
)


def double_compare(expected: float, result: float, eps: float) -> bool:
    """testlib's ``doubleCompare``: absolute or relative error within ``eps`` (+1e-15)."""
    eps += 1e-15
    if math.isnan(expected):
        return math.isnan(result)
    if math.isinf(expected):
        return math.isinf(result) and (result > 0) == (expected > 0)
    if math.isnan(result) or math.isinf(result):
        return False
    if abs(result - expected) <= eps:
        return True
    lo = min(expected * (1.0 - eps), expected * (1.0 + eps))
    hi = max(expected * (1.0 - eps), expected * (1.0 + eps))
    return result + 1e-15 >= lo and result <= hi + 1e-15


def _exact(output: bytes, answer: bytes) -> CheckResult:
    if output == answer:
        return CheckResult(CheckVerdict.OK)
    if output.split() == answer.split():
        return CheckResult(CheckVerdict.PE, "same tokens, different whitespace")
    return CheckResult(CheckVerdict.WA, "output differs")


def _lines(output: bytes, answer: bytes) -> CheckResult:
    def rows(b: bytes) -> list[list[bytes]]:
        r = [line.split() for line in b.split(b"\n")]
        while r and not r[-1]:
            r.pop()
        return r

    got, want = rows(output), rows(answer)
    if got == want:
        return CheckResult(CheckVerdict.OK)
    if output.split() == answer.split():
        return CheckResult(CheckVerdict.PE, "same tokens, different lines")
    for i, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            return CheckResult(CheckVerdict.WA, f"line {i} differs")
    return CheckResult(CheckVerdict.WA, f"expected {len(want)} lines, got {len(got)}")


def _tokens(output: bytes, answer: bytes) -> CheckResult:
    got, want = output.split(), answer.split()
    if got == want:
        return CheckResult(CheckVerdict.OK)
    for i, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            return CheckResult(CheckVerdict.WA, f"token {i} differs")
    return CheckResult(CheckVerdict.WA, f"expected {len(want)} tokens, got {len(got)}")


def float_compare(eps: float) -> CompareFn:
    """``float:EPS``: numeric tokens by :func:`double_compare`, other tokens exactly."""

    def compare(output: bytes, answer: bytes) -> CheckResult:
        got, want = output.split(), answer.split()
        if len(got) != len(want):
            return CheckResult(CheckVerdict.WA, f"expected {len(want)} tokens, got {len(got)}")
        for i, (g, w) in enumerate(zip(got, want, strict=True), start=1):
            if _NUMBER.fullmatch(w):
                if not _NUMBER.fullmatch(g):
                    return CheckResult(CheckVerdict.PE, f"token {i}: expected a number")
                if not double_compare(float(w), float(g), eps):
                    return CheckResult(CheckVerdict.WA, f"token {i}: {g!r} vs {w!r}")
            elif g != w:
                return CheckResult(CheckVerdict.WA, f"token {i} differs")
        return CheckResult(CheckVerdict.OK)

    return compare


_FLOAT_TOKEN = re.compile(
    rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*"
    rb"|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)"
)
_SPACE_OR_TOKEN = re.compile(rb"\s+|\S+")


def _icpc_float(token: bytes) -> float | None:
    """The token as the default output validator reads a number (``sscanf("%lf")`` taking the
    whole token, finite), or None."""
    if not _FLOAT_TOKEN.fullmatch(token):
        return None
    text = token.decode("ascii")
    try:
        value = float.fromhex(text) if "x" in text.lower() else float(text)
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def icpc_compare(spec: CheckerSpec) -> CompareFn:
    """``icpc[:FLAGS]``: the problem package format's default output validator
    (problemtools' ``default_validator``), its flags from ``spec``."""
    abs_tol, rel_tol = spec.float_absolute_tolerance, spec.float_relative_tolerance
    floats = abs_tol is not None or rel_tol is not None
    fold = not spec.case_sensitive

    def token_ok(i: int, g: bytes, w: bytes) -> CheckResult | None:
        want = _icpc_float(w) if floats else None
        if want is not None:
            got = _icpc_float(g)
            if got is None:
                return CheckResult(CheckVerdict.WA, f"token {i}: expected a number")
            diff = abs(want - got)
            if not (
                (abs_tol is not None and diff <= abs_tol)
                or (rel_tol is not None and diff <= rel_tol * abs(want))
            ):
                return CheckResult(CheckVerdict.WA, f"token {i}: {g!r} vs {w!r}")
            return None
        if (g.lower() != w.lower()) if fold else (g != w):
            return CheckResult(CheckVerdict.WA, f"token {i} differs")
        return None

    def compare(output: bytes, answer: bytes) -> CheckResult:
        if spec.space_change_sensitive:
            got, want = _SPACE_OR_TOKEN.findall(output), _SPACE_OR_TOKEN.findall(answer)
            for i, (g, w) in enumerate(zip(got, want, strict=False), start=1):
                if g.isspace() or w.isspace():
                    if g != w:
                        return CheckResult(CheckVerdict.WA, f"whitespace differs at part {i}")
                    continue
                bad = token_ok(i, g, w)
                if bad is not None:
                    return bad
            if len(got) != len(want):
                return CheckResult(CheckVerdict.WA, "output and answer end differently")
            return CheckResult(CheckVerdict.OK)
        got, want = output.split(), answer.split()
        for i, (g, w) in enumerate(zip(got, want, strict=False), start=1):
            bad = token_ok(i, g, w)
            if bad is not None:
                return bad
        if len(got) != len(want):
            return CheckResult(CheckVerdict.WA, f"expected {len(want)} tokens, got {len(got)}")
        return CheckResult(CheckVerdict.OK)

    return compare


#: Registry of the built-in comparisons by checker kind (``float`` takes EPS).
CHECKERS: dict[CheckerKind, Callable[[CheckerSpec], CompareFn]] = {
    CheckerKind.EXACT: lambda spec: _exact,
    CheckerKind.LINES: lambda spec: _lines,
    CheckerKind.TOKENS: lambda spec: _tokens,
    CheckerKind.FLOAT: lambda spec: float_compare(spec.eps or 0.0),
    CheckerKind.ICPC: icpc_compare,
}

_EXIT = {0: CheckVerdict.OK, 1: CheckVerdict.WA, 2: CheckVerdict.PE}

#: Limits of one call of a checker program.
CHECKER_LIMITS = CHECKER  # the table's (suitebench.run.limits)


class Checker:
    """One problem's checker: built-in comparisons run here, checker programs run sandboxed."""

    def __init__(self, spec: CheckerSpec, engine: AuditEngine | None = None) -> None:
        self.spec = spec
        self.engine = engine
        self._compare: CompareFn | None = None
        self._agree: dict[tuple[str, str, str], bool] = {}
        self.failures = 0  # calls of the checker program that failed (FAIL, crash, time-out)
        self.first_failure = ""
        self._lock = threading.Lock()
        if spec.kind is CheckerKind.PROGRAM:
            if engine is None or spec.program is None:
                raise ValueError("a checker program needs an engine to run on")
            self.built = engine.build(spec.program)
        else:
            self._compare = CHECKERS[spec.kind](spec)

    @property
    def builtin(self) -> bool:
        """A built-in comparison (runs here, accepts identical bytes), not a checker program."""
        return self._compare is not None

    @property
    def label(self) -> str:
        return self.spec.label()

    @property
    def program_id(self) -> str:
        return self.built.program_id if self.spec.kind is CheckerKind.PROGRAM else self.label

    def check_many(self, items: Sequence[tuple[bytes, bytes, bytes]]) -> list[CheckResult]:
        """Verdicts of ``(input, output, answer)`` triples, in order."""
        if self._compare is not None:
            cmp = self._compare
            return [cmp(out, ans) for _, out, ans in items]
        if not items:
            return []
        if not self.built.ok:
            msg = f"checker program did not build: {self.built.message[:200]}"
            for _ in items:
                self._failed(msg)
            return [CheckResult(CheckVerdict.FAIL, msg) for _ in items]
        assert self.engine is not None
        specs = [CheckSpec(self.built, i, o, a, CHECKER_LIMITS) for i, o, a in items]
        results: list[CheckResult] = []
        for oc in self.engine.check(specs):
            err = oc.stderr_text()
            if oc.status is Status.OK:
                results.append(CheckResult(CheckVerdict.OK, err[:200]))
            elif (
                oc.status is Status.RUNTIME_ERROR
                and oc.exit_code in _EXIT
                and not crashed(self.built, oc.status, err)
            ):
                results.append(CheckResult(_EXIT[oc.exit_code], err[:200]))
            else:
                why = run_message(
                    oc.status, oc.exit_code, oc.outcome.signal, oc.outcome.wall_time, err
                )
                self._failed(why)
                results.append(CheckResult(CheckVerdict.FAIL, f"checker {why}"))
        return results

    def _failed(self, message: str) -> None:
        with self._lock:
            if not self.failures:
                self.first_failure = message
            self.failures += 1

    def agree_many(self, items: Sequence[tuple[bytes, bytes, bytes]]) -> list[bool]:
        """Whether each output is accepted against the other as answer (identical bytes agree).

        Answers are remembered, so a stage can :meth:`prefetch` every comparison it will ask
        for in one batch (one round of checker-program runs instead of one per flag).
        """
        if self._compare is not None:  # built-ins are cheaper to run than to remember
            cmp = self._compare
            return [o == a or cmp(o, a).verdict is CheckVerdict.OK for _, o, a in items]
        keys = [(sha256_bytes(i), sha256_bytes(o), sha256_bytes(a)) for i, o, a in items]
        todo = {
            k: it
            for k, it in zip(keys, items, strict=True)
            if it[1] != it[2] and k not in self._agree
        }
        results = self.check_many(list(todo.values()))
        for k, r in zip(todo, results, strict=True):
            self._agree[k] = r.verdict is CheckVerdict.OK
        return [it[1] == it[2] or self._agree[k] for k, it in zip(keys, items, strict=True)]

    def prefetch(self, items: Sequence[tuple[bytes, bytes, bytes]]) -> None:
        """Decide many comparisons at once; later :meth:`agree_many` calls are look-ups."""
        self.agree_many(items)


def make_checker(spec: CheckerSpec, engine: AuditEngine | None = None) -> Checker:
    return Checker(spec, engine)
