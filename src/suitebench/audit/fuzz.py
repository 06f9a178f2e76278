"""Validator fuzz: does the legality gate reject structurally malformed inputs?

The certification chain admits a killing input only if the problem's validator accepts it, so a
validator that accepts a malformed input can buy a false kill. The auditors paper audits its
gate "structurally (trailing-token, truncation, and non-numeric mutations to official legal
inputs: 0 false accepts)" and notes that "validator misclassification is one-directional: only
false accepts could produce false kills; over-strictness merely under-counts".

This module takes each official input, derives structurally altered variants of it (a trailing
token, a truncation, a non-numeric field, a missing line, an extra line), drops duplicates and
variants byte-identical to any official input, and runs the validator (sandboxed, input on
stdin, exit 0 = legal) on each. Every variant it accepts is reported.

How to read the report. A variant is *structurally* altered, not *proven* illegal: on some
formats an alteration is legal by accident (dropping the last line of a file whose line count is
free, duplicating a line of a list without a declared length). So an accepted variant is a
*candidate* false accept: look at its kind, its detail and its preview, and decide against the
statement. A validator that rejects an official input is reported too (``originals_rejected``):
it fails the quality gate, and its rejections of variants prove nothing (a validator that
rejects everything would otherwise look perfect). Runs that end in a timeout, a crash by signal
or a harness failure are ``error``: they keep the input out of scoring, so they are not false
accepts, but a validator that cannot finish on malformed input deserves a look.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from suitebench.run import sandbox
from suitebench.run.limits import VALIDATOR
from suitebench.run.outcome import Limits, Outcome, Status
from suitebench.run.toolchain import Built, Program, build

Progress = Callable[[int, int], None]

#: Limits for a validator run: validators read one input and exit, quickly.
VALIDATOR_LIMITS = VALIDATOR  # the table's (suitebench.run.limits)

_CHUNK = 32  # stdins per run_batch call

_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_TOKEN = re.compile(rb"\S+")


class VariantKind(StrEnum):
    """The structural alterations the paper's fuzz taxonomy names (plus missing/extra line)."""

    TRAILING_TOKEN = "trailing_token"
    TRUNCATION = "truncation"
    NON_NUMERIC = "non_numeric"
    MISSING_LINE = "missing_line"
    EXTRA_LINE = "extra_line"
    KNOWN_ILLEGAL = "known_illegal"  # supplied by the user: format-valid but illegal inputs


class FuzzVerdict(StrEnum):
    """What the validator said about a variant (or an official input)."""

    ACCEPTED = "accepted"  # exit 0: the validator calls it legal
    REJECTED = "rejected"  # exited non-zero: the validator calls it illegal
    ERROR = "error"  # timeout, signal, memory, output limit or harness failure


@dataclass(frozen=True)
class Variant:
    """One structurally altered copy of an official input."""

    kind: VariantKind
    detail: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def _lines(data: bytes) -> tuple[list[bytes], bool]:
    """Split into lines; remember whether the file ended with a newline."""
    ends_nl = data.endswith(b"\n")
    body = data[:-1] if ends_nl else data
    return body.split(b"\n"), ends_nl


def _join(lines: list[bytes], ends_nl: bool) -> bytes:
    out = b"\n".join(lines)
    return out + b"\n" if ends_nl and lines else out


def structural_variants(data: bytes) -> list[Variant]:
    """The structurally altered variants of one input, in a fixed order (no dedupe yet).

    * trailing_token: ``" 0"`` appended to the last line, and to the first line;
    * truncation: the last token removed, and the file cut to half its bytes;
    * non_numeric: the first numeric token replaced by ``x``, the last by ``1a`` (a
      ``scanf("%d")`` reads the ``1`` and stops: the classic sloppy-C accept);
    * missing_line: the first line dropped, and the last non-empty line dropped;
    * extra_line: the last non-empty line duplicated.

    A variant that cannot be formed (a one-line file has no "other" line to drop, an input
    without numbers has no numeric field) is not produced.
    """
    out: list[Variant] = []
    if not data.strip():
        return out  # nothing to alter; the quality gate checks the empty input itself
    lines, ends_nl = _lines(data)
    nonempty = [i for i, ln in enumerate(lines) if ln.strip()]

    def add(kind: VariantKind, detail: str, new: bytes) -> None:
        out.append(Variant(kind, detail, new))

    # trailing tokens
    if lines:
        last = list(lines)
        last[-1] = last[-1] + b" 0"
        add(VariantKind.TRAILING_TOKEN, "appended ' 0' to the last line", _join(last, ends_nl))
        if len(lines) > 1:
            first = list(lines)
            first[0] = first[0] + b" 0"
            add(
                VariantKind.TRAILING_TOKEN,
                "appended ' 0' to the first line",
                _join(first, ends_nl),
            )
    # truncation
    tokens = list(_TOKEN.finditer(data))
    if tokens:
        t = tokens[-1]
        start = t.start()
        while start > 0 and data[start - 1 : start] in (b" ", b"\t"):
            start -= 1
        add(VariantKind.TRUNCATION, "removed the last token", data[:start] + data[t.end() :])
    if len(data) >= 2:
        add(VariantKind.TRUNCATION, "cut to the first half of its bytes", data[: len(data) // 2])
    # non-numeric fields
    numbers = [m for m in _NUMBER.finditer(data) if _is_whole_token(data, m.start(), m.end())]
    if numbers:
        f = numbers[0]
        add(
            VariantKind.NON_NUMERIC,
            "replaced the first number with 'x'",
            data[: f.start()] + b"x" + data[f.end() :],
        )
        lst = numbers[-1]
        add(
            VariantKind.NON_NUMERIC,
            "replaced the last number with '1a'",
            data[: lst.start()] + b"1a" + data[lst.end() :],
        )
    # missing and extra lines
    if len(nonempty) > 1:
        drop_first = [ln for i, ln in enumerate(lines) if i != nonempty[0]]
        add(VariantKind.MISSING_LINE, "dropped the first line", _join(drop_first, ends_nl))
        drop_last = [ln for i, ln in enumerate(lines) if i != nonempty[-1]]
        add(VariantKind.MISSING_LINE, "dropped the last line", _join(drop_last, ends_nl))
    if nonempty:
        extra = [*lines[: nonempty[-1] + 1], lines[nonempty[-1]], *lines[nonempty[-1] + 1 :]]
        add(VariantKind.EXTRA_LINE, "duplicated the last line", _join(extra, ends_nl))
    return out


def _is_whole_token(data: bytes, start: int, end: int) -> bool:
    before = data[start - 1 : start] if start > 0 else b" "
    after = data[end : end + 1] if end < len(data) else b" "
    return before.isspace() and after.isspace()


@dataclass(frozen=True)
class FuzzFinding:
    """One variant and the validator's verdict on it.

    ``data`` is kept for accepted variants only (what a user needs to reproduce the false
    accept); ``preview`` shows the first 80 characters of every variant.
    """

    kind: VariantKind
    detail: str
    source_index: int
    source_id: str
    sha256: str
    verdict: FuzzVerdict
    status: str
    exit_code: int | None
    preview: str
    data: bytes | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "detail": self.detail,
            "source_index": self.source_index,
            "source_id": self.source_id,
            "sha256": self.sha256,
            "verdict": str(self.verdict),
            "status": self.status,
            "exit_code": self.exit_code,
            "preview": self.preview,
        }


@dataclass(frozen=True)
class FuzzReport:
    """The validator fuzz of one problem: every variant's verdict plus the originals' check."""

    validator: str
    n_originals: int
    originals_rejected: tuple[str, ...]
    findings: tuple[FuzzFinding, ...]
    skipped_duplicates: int
    skipped_identical: int
    build_message: str = ""
    original_verdicts: tuple[tuple[str, FuzzVerdict], ...] = field(default=())

    @property
    def accepts(self) -> tuple[FuzzFinding, ...]:
        """Candidate false accepts: variants the validator called legal."""
        return tuple(f for f in self.findings if f.verdict is FuzzVerdict.ACCEPTED)

    @property
    def errors(self) -> tuple[FuzzFinding, ...]:
        return tuple(f for f in self.findings if f.verdict is FuzzVerdict.ERROR)

    @property
    def sound(self) -> bool:
        """No false accept, every official input accepted, and something was actually fuzzed."""
        return (
            not self.build_message
            and not self.originals_rejected
            and bool(self.findings)
            and not self.accepts
        )

    def by_kind(self) -> dict[str, dict[str, int]]:
        """Counts per variant kind and verdict (the paper's "per-track counts")."""
        out: dict[str, dict[str, int]] = {
            str(k): {str(v): 0 for v in FuzzVerdict} for k in VariantKind
        }
        for f in self.findings:
            out[str(f.kind)][str(f.verdict)] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "validator": self.validator,
            "n_originals": self.n_originals,
            "originals_rejected": list(self.originals_rejected),
            "n_variants": len(self.findings),
            "n_accepted": len(self.accepts),
            "n_errors": len(self.errors),
            "sound": self.sound,
            "skipped_duplicates": self.skipped_duplicates,
            "skipped_identical": self.skipped_identical,
            "build_message": self.build_message,
            "by_kind": self.by_kind(),
            "accepted": [f.to_dict() for f in self.accepts],
            "errors": [f.to_dict() for f in self.errors],
        }

    def write_accepts(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write each accepted variant to ``out_dir/<sha256>.in`` for a human to inspect."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        paths = []
        for f in self.accepts:
            if f.data is None:
                continue
            p = d / f"{f.sha256}.in"
            p.write_bytes(f.data)
            paths.append(p)
        return paths


def verdict_of(outcome: Outcome) -> FuzzVerdict:
    """Exit 0 accepts, a plain non-zero exit rejects; anything else is not a clean verdict."""
    if outcome.status is Status.OK:
        return FuzzVerdict.ACCEPTED
    if outcome.status is Status.RUNTIME_ERROR:
        return FuzzVerdict.REJECTED
    return FuzzVerdict.ERROR


def _preview(data: bytes, width: int = 80) -> str:
    text = data[:width].decode("utf-8", errors="replace")
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    return text + ("..." if len(data) > width else "")


def _resolve_validator(
    validator: Built | Program | Sequence[str], cache_dir: str | os.PathLike[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...], str, str]:
    """argv, ro_binds, a display name and a build error message (empty when it built)."""
    if isinstance(validator, Program):
        if cache_dir is None:
            raise ValueError("fuzz_validator needs cache_dir to build a validator Program")
        validator = build(validator, cache_dir=cache_dir)
    if isinstance(validator, Built):
        name = validator.program_id
        if not validator.ok:
            return (), (), name, validator.message or "validator did not build"
        return tuple(validator.argv), tuple(validator.ro_binds), name, ""
    argv = tuple(str(a) for a in validator)
    if not argv:
        raise ValueError("validator argv is empty")
    return argv, (), " ".join(argv), ""


def fuzz_validator(
    validator: Built | Program | Sequence[str],
    official_inputs: Sequence[bytes],
    *,
    cwd: str | os.PathLike[str],
    limits: Limits = VALIDATOR_LIMITS,
    input_ids: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    ro_binds: Sequence[str | os.PathLike[str]] = (),
    env: dict[str, str] | None = None,
    known_illegal: Sequence[bytes] = (),
    known_illegal_ids: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> FuzzReport:
    """Run the problem's validator on structural variants of its official inputs.

    ``validator`` is an argv (run as is), a :class:`Built` program, or a :class:`Program`
    (built into ``cache_dir``). ``official_inputs`` are the legal originals; ``input_ids``
    name them in the report (default ``official[i]``). Every run is sandboxed with ``cwd`` as
    its only writable directory. The originals are validated first: each one the validator
    rejects is listed in ``originals_rejected``. ``progress(done, total)`` counts steps: the
    originals, each official input's variants, the supplied track.

    ``known_illegal`` adds the paper's semantic track: inputs that are well formed but break a
    constraint (a duplicate in a permutation, a cycle in a tree), ideally written by someone who
    has not seen the validator. They are reported with kind ``known_illegal`` and
    ``source_index`` -1; unlike a structural variant, accepting one is a definite false accept.
    """
    ids = _names(input_ids, len(official_inputs), "official", "official inputs", "input ids")
    argv, built_binds, name, build_message = _resolve_validator(validator, cache_dir)
    if build_message:
        return FuzzReport(
            validator=name,
            n_originals=len(official_inputs),
            originals_rejected=(),
            findings=(),
            skipped_duplicates=0,
            skipped_identical=0,
            build_message=build_message,
        )
    k_ids = _names(known_illegal_ids, len(known_illegal), "known_illegal", "known-illegal inputs")
    originals = {hashlib.sha256(d).hexdigest() for d in official_inputs}
    for j, data in enumerate(known_illegal):
        if hashlib.sha256(data).hexdigest() in originals:
            raise ValueError(
                f"known-illegal input {k_ids[j]} is byte-identical to an official input"
            )
    run = _FuzzRun(
        argv, [*built_binds, *(str(b) for b in ro_binds)], Path(cwd), env, limits, originals
    )

    # Steps: the originals, then one per official input's variants, then the supplied track.
    # Variants are generated, run and dropped one official input at a time, so memory stays
    # bounded by one input's variants even for suites of large inputs.
    n = len(official_inputs)
    total = n + 2
    original_verdicts = tuple(
        (ids[i], verdict_of(o)) for i, o in enumerate(run.validate(official_inputs))
    )
    rejected = tuple(i for i, v in original_verdicts if v is not FuzzVerdict.ACCEPTED)
    if progress is not None:
        progress(1, total)
    for idx, data in enumerate(official_inputs):
        run.structural(idx, ids[idx], data)
        if progress is not None:
            progress(idx + 2, total)
    run.known_illegal(known_illegal, k_ids)
    if progress is not None:
        progress(total, total)
    return FuzzReport(
        validator=name,
        n_originals=n,
        originals_rejected=rejected,
        findings=tuple(run.findings),
        skipped_duplicates=run.duplicates,
        skipped_identical=run.identical,
        original_verdicts=original_verdicts,
    )


def _names(
    given: Sequence[str] | None, n: int, stem: str, what: str, ids: str = "ids"
) -> list[str]:
    """The ids of ``n`` inputs: as given (one each), else ``stem[i]``."""
    names = list(given) if given is not None else [f"{stem}[{i}]" for i in range(n)]
    if len(names) != n:
        raise ValueError(f"{len(names)} {ids} for {n} {what}")
    return names


@dataclass
class _FuzzRun:
    """One fuzz of a validator under way: how it is run, and what it found so far (inputs
    already seen are run once: a repeat is counted, an official input's twin skipped)."""

    argv: tuple[str, ...]
    binds: list[str]
    cwd: Path
    env: dict[str, str] | None
    limits: Limits
    originals: set[str]
    seen: set[str] = field(default_factory=set)
    duplicates: int = 0
    identical: int = 0
    findings: list[FuzzFinding] = field(default_factory=list)

    def validate(self, stdins: Sequence[bytes]) -> list[Outcome]:
        out: list[Outcome] = []
        for start in range(0, len(stdins), _CHUNK):
            out.extend(
                sandbox.run_batch(
                    list(self.argv),
                    stdins[start : start + _CHUNK],
                    cwd=self.cwd,
                    env=self.env,
                    limits=self.limits,
                    ro_binds=self.binds,
                )
            )
        return out

    def run_group(self, group: list[tuple[int, str, Variant]]) -> None:
        for (idx, source_id, v), out in zip(
            group, self.validate([v.data for _, _, v in group]), strict=True
        ):
            verdict = verdict_of(out)
            self.findings.append(
                FuzzFinding(
                    kind=v.kind,
                    detail=v.detail,
                    source_index=idx,
                    source_id=source_id,
                    sha256=v.sha256,
                    verdict=verdict,
                    status=str(out.status),
                    exit_code=out.exit_code,
                    preview=_preview(v.data),
                    data=v.data if verdict is FuzzVerdict.ACCEPTED else None,
                )
            )

    def structural(self, idx: int, source_id: str, data: bytes) -> None:
        """The structural variants of one official input, each new one run."""
        group: list[tuple[int, str, Variant]] = []
        for v in structural_variants(data):
            h = v.sha256
            if h in self.originals:
                self.identical += 1
            elif h in self.seen:
                self.duplicates += 1
            else:
                self.seen.add(h)
                group.append((idx, source_id, v))
        self.run_group(group)

    def known_illegal(self, inputs: Sequence[bytes], ids: Sequence[str]) -> None:
        """The supplied semantic track: inputs known to break a constraint."""
        group: list[tuple[int, str, Variant]] = []
        for j, data in enumerate(inputs):
            v = Variant(VariantKind.KNOWN_ILLEGAL, f"supplied as illegal: {ids[j]}", data)
            if v.sha256 in self.seen:
                self.duplicates += 1
                continue
            self.seen.add(v.sha256)
            group.append((-1, ids[j], v))
        self.run_group(group)
