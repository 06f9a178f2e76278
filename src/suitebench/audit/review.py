"""Review sample: human adjudication of ledger rows, and the false-discovery rate it bounds.

The auditors paper backs its ledger with "a signed, human-adjudicated stratified sample": a
coverage layer "drawn at random within each problem, capped per problem and inverse-probability
weighted", whose overturn count bounds "the false-discovery rate at 1.87% (Wilson 95% upper)".
This module does the two mechanical halves of that protocol; the human does the middle.

1. :func:`review_sample` draws, per problem (the stratum), a uniform random sample of at most
   ``cap`` ledger rows (seeded, and independent of the order the ledger lists its rows in).
   Each sampled row carries its inverse-probability weight ``N_h / n_h``: it stands for that many
   rows of its problem, so the weights of the sample add up to the size of the ledger.
2. :func:`write_review_csv` exports the sample with an empty ``human_verdict`` column, to be
   filled with ``bug`` (the finding holds), ``not_bug`` (a false discovery) or ``unsure``.
3. :func:`fdr_from_review` reads the filled-in file back and returns the weighted
   false-discovery rate and its Wilson upper bound.

How weights enter the bound. The weighted rate is the Horvitz-Thompson estimate
``sum(w * false) / sum(w)`` of the share of false discoveries in the whole ledger. Unequal
weights make it noisier than a simple random sample of the same size, so the Wilson bound is
computed at Kish's effective sample size ``n_eff = (sum w)^2 / sum(w^2)`` with
``n_eff * rate`` "successes". With equal weights (every problem fully reviewed, or every
problem capped at the same share) ``n_eff`` is the number of reviewed rows and the bound is the
plain Wilson bound: 0 false of 202 gives the paper's 1.87%. The unweighted count and bound are
reported alongside. ``unsure`` verdicts count as false discoveries by default (a bound should
stay a bound); ``unsure="exclude"`` leaves them out and says how many were left out.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from suitebench.metrics.bootstrap import DEFAULT_SEED
from suitebench.metrics.wilson import wilson_upper

#: The paper's pre-registered coverage layer capped its draw at three rows per problem.
DEFAULT_CAP = 3

REQUIRED_COLUMNS = ("problem", "submission_id", "input_id")
#: Columns the review file adds in front of the ledger's own columns, and at the end.
SAMPLE_COLUMNS = ("review_id", "weight", "stratum_size", "stratum_sampled")
VERDICT_COLUMN = "human_verdict"
NOTE_COLUMN = "reviewer_note"


class HumanVerdict(StrEnum):
    """What a reviewer decided about one ledger row."""

    BUG = "bug"  # the certified finding holds: the submission is wrong on a legal input
    NOT_BUG = "not_bug"  # a false discovery (oracle wrong, input illegal, tolerance, ...)
    UNSURE = "unsure"


class UnsurePolicy(StrEnum):
    """How ``unsure`` verdicts enter the false-discovery rate."""

    AS_FALSE = "as_false"  # conservative: an unsure row counts as a false discovery
    EXCLUDE = "exclude"  # left out of numerator and denominator (reported as a count)


class ReviewError(ValueError):
    """A ledger or review file that cannot be used; the message names the file, row, column."""


@dataclass(frozen=True)
class SampledRow:
    """One ledger row drawn for review, with its inverse-probability weight."""

    review_id: str
    stratum: str
    weight: float
    stratum_size: int
    stratum_sampled: int
    row: Mapping[str, str]


@dataclass(frozen=True)
class ReviewSample:
    """A stratified, capped, seeded sample of a ledger."""

    rows: tuple[SampledRow, ...]
    cap: int
    seed: int
    stratum_key: str
    n_population: int
    columns: tuple[str, ...]

    @property
    def strata(self) -> dict[str, tuple[int, int]]:
        """Per stratum: (rows in the ledger, rows sampled)."""
        return {r.stratum: (r.stratum_size, r.stratum_sampled) for r in self.rows}


def _check_columns(rows: Sequence[Mapping[str, Any]], where: str) -> None:
    for i, row in enumerate(rows):
        missing = [c for c in REQUIRED_COLUMNS if c not in row or row[c] in (None, "")]
        if missing:
            raise ReviewError(
                f"{where}: row {i + 1} lacks required column(s) {', '.join(missing)} "
                f"(a ledger row needs {', '.join(REQUIRED_COLUMNS)})"
            )


def review_sample(
    ledger_rows: Iterable[Mapping[str, Any]],
    *,
    cap: int = DEFAULT_CAP,
    seed: int = DEFAULT_SEED,
    stratum_key: str = "problem",
) -> ReviewSample:
    """Draw up to ``cap`` rows per stratum uniformly at random, each with weight ``N_h/n_h``.

    ``ledger_rows`` are plain mappings (e.g. ``csv.DictReader`` rows of ``ledger.csv``) with at
    least ``problem``, ``submission_id`` and ``input_id``. Within a stratum rows are put in a
    canonical order (by submission and input id) before drawing, so the same ledger gives the
    same sample whatever order its rows come in; strata are drawn in sorted order from one
    generator seeded with ``seed``.
    """
    if cap < 1:
        raise ValueError(f"cap must be >= 1, got {cap}")
    rows = [dict(r) for r in ledger_rows]
    _check_columns(rows, "ledger")
    if rows and stratum_key not in rows[0]:
        raise ReviewError(f"ledger has no stratum column {stratum_key!r}")
    columns: list[str] = []
    for r in rows:
        for c in r:
            if c not in columns:
                columns.append(str(c))
    strata: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        strata.setdefault(str(r[stratum_key]), []).append(r)
    rng = np.random.default_rng(seed)
    out: list[SampledRow] = []
    for name in sorted(strata):
        members = sorted(strata[name], key=lambda r: (str(r["submission_id"]), str(r["input_id"])))
        size = len(members)
        take = min(cap, size)
        picked = sorted(rng.choice(size, size=take, replace=False).tolist())
        for j in picked:
            out.append(
                SampledRow(
                    review_id=f"R{len(out) + 1:04d}",
                    stratum=name,
                    weight=size / take,
                    stratum_size=size,
                    stratum_sampled=take,
                    row={str(k): "" if v is None else str(v) for k, v in members[j].items()},
                )
            )
    return ReviewSample(
        rows=tuple(out),
        cap=cap,
        seed=seed,
        stratum_key=stratum_key,
        n_population=len(rows),
        columns=tuple(columns),
    )


def read_ledger_csv(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Rows of a ledger CSV as plain dicts (checked for the required columns)."""
    p = Path(path)
    with p.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    _check_columns(rows, str(p))
    return rows


def write_review_csv(sample: ReviewSample, path: str | os.PathLike[str]) -> Path:
    """Write the sample for adjudication: weights first, ledger columns, empty verdict last."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    ledger_cols = [c for c in sample.columns if c not in (*SAMPLE_COLUMNS, VERDICT_COLUMN)]
    header = [*SAMPLE_COLUMNS, *ledger_cols, VERDICT_COLUMN, NOTE_COLUMN]
    with p.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in sample.rows:
            w.writerow(
                [
                    r.review_id,
                    repr(r.weight),
                    r.stratum_size,
                    r.stratum_sampled,
                    *(r.row.get(c, "") for c in ledger_cols),
                    "",
                    "",
                ]
            )
    return p


@dataclass(frozen=True)
class FdrEstimate:
    """The false-discovery rate of a ledger, estimated from its adjudicated review sample."""

    n_reviewed: int  # rows whose verdict entered the estimate
    n_false: int  # not_bug (+ unsure under AS_FALSE) among them
    n_bug: int
    n_unsure: int
    n_excluded: int  # unsure rows left out under EXCLUDE, blank rows under allow_blank
    fdr: float  # weighted (Horvitz-Thompson) estimate
    n_effective: float  # Kish effective sample size of the weights
    upper: float  # Wilson upper bound at n_effective
    unweighted_fdr: float
    unweighted_upper: float
    confidence: float
    unsure_policy: UnsurePolicy

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["unsure_policy"] = str(self.unsure_policy)
        return d


def fdr_from_review(
    path: str | os.PathLike[str],
    *,
    confidence: float = 0.95,
    unsure: UnsurePolicy | str = UnsurePolicy.AS_FALSE,
    allow_blank: bool = False,
) -> FdrEstimate:
    """Read a filled-in review CSV; return the weighted FDR and its Wilson upper bound.

    Every row needs a ``human_verdict`` of ``bug``, ``not_bug`` or ``unsure`` (case and
    surrounding spaces ignored); a blank verdict is an error naming the rows, unless
    ``allow_blank`` (then blank rows are excluded and counted). The bound is the two-sided
    ``confidence`` Wilson upper end, the paper's "Wilson 95% upper", at the effective sample
    size of the weights (see the module docstring).
    """
    policy = UnsurePolicy(unsure)
    p = Path(path)
    rows = _review_rows(p)
    weights: list[float] = []
    false_flags: list[bool] = []
    n_bug = n_unsure = n_excluded = 0
    blank: list[int] = []
    for line, row in enumerate(rows, start=2):  # line 1 is the header
        raw = (row.get(VERDICT_COLUMN) or "").strip().lower()
        if not raw:
            blank.append(line)
            continue
        verdict, w = _adjudicated(p, line, raw, row.get("weight"))
        if verdict is HumanVerdict.UNSURE:
            n_unsure += 1
            if policy is UnsurePolicy.EXCLUDE:
                n_excluded += 1
                continue
        if verdict is HumanVerdict.BUG:
            n_bug += 1
        weights.append(w)
        false_flags.append(verdict is not HumanVerdict.BUG)
    if blank and not allow_blank:
        shown = ", ".join(map(str, blank[:10])) + (" ..." if len(blank) > 10 else "")
        raise ReviewError(f"{p}: {len(blank)} row(s) without a {VERDICT_COLUMN}: line {shown}")
    n_excluded += len(blank)
    if not weights:
        raise ReviewError(f"{p}: no adjudicated row to estimate a false-discovery rate from")
    return _estimate(weights, false_flags, n_bug, n_unsure, n_excluded, confidence, policy)


def _review_rows(p: Path) -> list[dict[str, str]]:
    """The rows of a review CSV, which must have the verdict and weight columns."""
    with p.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        for col in (VERDICT_COLUMN, "weight"):
            if col not in fields:
                raise ReviewError(f"{p}: no {col!r} column (is this a review file?)")
        return list(reader)


def _adjudicated(p: Path, line: int, raw: str, weight: str | None) -> tuple[HumanVerdict, float]:
    """One filled-in row's verdict and weight, or the error naming its line."""
    try:
        verdict = HumanVerdict(raw)
    except ValueError:
        allowed = ", ".join(v.value for v in HumanVerdict)
        raise ReviewError(
            f"{p}: line {line}: {VERDICT_COLUMN} is {raw!r}; expected one of {allowed}"
        ) from None
    try:
        w = float(weight or "")
    except ValueError:
        raise ReviewError(f"{p}: line {line}: weight {weight!r} is not a number") from None
    if not (w > 0 and math.isfinite(w)):
        raise ReviewError(f"{p}: line {line}: weight must be positive, got {w}")
    return verdict, w


def _estimate(
    weights: list[float],
    false_flags: list[bool],
    n_bug: int,
    n_unsure: int,
    n_excluded: int,
    confidence: float,
    policy: UnsurePolicy,
) -> FdrEstimate:
    """The weighted FDR, its Wilson upper bound at the weights' effective sample size, and
    the unweighted figures beside them."""
    n = len(weights)
    wa = np.asarray(weights, dtype=np.float64)
    fa = np.asarray(false_flags, dtype=np.float64)
    fdr = float(np.sum(wa * fa) / np.sum(wa))
    n_eff = float(np.sum(wa) ** 2 / np.sum(wa * wa))
    x_eff = min(fdr * n_eff, n_eff)
    n_false = int(fa.sum())
    return FdrEstimate(
        n_reviewed=n,
        n_false=n_false,
        n_bug=n_bug,
        n_unsure=n_unsure,
        n_excluded=n_excluded,
        fdr=fdr,
        n_effective=n_eff,
        upper=wilson_upper(x_eff, n_eff, confidence),
        unweighted_fdr=n_false / n,
        unweighted_upper=wilson_upper(n_false, n, confidence),
        confidence=confidence,
        unsure_policy=policy,
    )
