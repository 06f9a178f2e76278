"""Read the result directories that ``suitebench audit`` and ``suitebench score`` write.

A path given to ``suitebench report`` or ``suitebench compare`` is a result directory (it holds
``results.json``), a ``results.json`` itself, or a directory whose subdirectories hold result
directories (the demo's output, a benchmark's run): every ``results.json`` below it is read.
The kind of each result is told by its content, never by its name:

* an **audit** (input mode) has ``arms`` and ``problems``; next to it are ``ledger.csv``,
  ``retractions.csv`` and one ``<problem>/kills.npz`` per problem;
* a **score** (suite mode) has ``instance`` and ``mutants`` (a :class:`SuiteResult`), maybe
  with ``mutation-report.json`` beside it;
* an **implementation** (R of a candidate) has ``implementation``.

A malformed file is a :class:`~suitebench.model.errors.FormatError` naming the file, the field
and what was expected.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from suitebench.model.errors import FormatError
from suitebench.suite.result import ImplementationResult, SuiteResult

__all__ = [
    "AuditRun",
    "ImplementationRun",
    "ProblemMatrix",
    "Results",
    "ScoreRun",
    "find_result_files",
    "load_results",
]

#: Verdict names whose cells are logic kills (the audit's excl-TLE basis).
KILL_VERDICTS = frozenset({"WA", "PE", "RE", "MLE", "OLE"})


@dataclass(frozen=True)
class ProblemMatrix:
    """One problem's compact verdict matrix (``kills.npz``): submissions x all inputs."""

    verdicts: npt.NDArray[np.uint8]
    submissions: list[str]
    inputs: list[str]  # sha256 of every input, column order
    legality: list[str]
    verdict_names: list[str]
    arm_columns: dict[str, list[int]]  # arm -> its inputs' columns, in emission order
    arm_input_ids: dict[str, list[str]]

    def kill_codes(self) -> npt.NDArray[np.bool_]:
        kill = np.array([name in KILL_VERDICTS for name in self.verdict_names], dtype=bool)
        return kill

    def scored_columns(self, arm: str) -> list[int]:
        """The arm's inputs that carry a gold and are not illegal (its kill matrix's rows)."""
        skip = self.verdict_names.index("SKIP") if "SKIP" in self.verdict_names else -1
        out = []
        for c in self.arm_columns.get(arm, []):
            if self.legality[c] == "illegal":
                continue
            if self.verdicts.shape[0] and (self.verdicts[:, c] == skip).all():
                continue  # no gold: never judged
            out.append(c)
        return out

    def kill_matrix(self, arm: str) -> npt.NDArray[np.bool_]:
        """The arm's (scored inputs x submissions) bool kill matrix, in emission order."""
        cols = self.scored_columns(arm)
        kill = self.kill_codes()
        return kill[self.verdicts[:, cols]].T.reshape(len(cols), len(self.submissions))


@dataclass
class AuditRun:
    """An audit's result directory."""

    path: Path
    results: dict[str, Any]
    ledger: list[dict[str, str]]
    retractions: list[dict[str, str]]
    matrices: dict[str, ProblemMatrix]
    funnel_text: str = ""

    @property
    def label(self) -> str:
        return self.path.name

    @property
    def arms(self) -> list[str]:
        return list(self.results.get("arms", {}))

    @property
    def problems(self) -> list[str]:
        return list(self.results.get("problems", {}))


@dataclass
class ScoreRun:
    """A suite's score result directory."""

    path: Path
    result: SuiteResult
    mutation_report: Path | None
    is_reference: bool
    instance_root: Path | None

    @property
    def label(self) -> str:
        return self.path.name

    @property
    def suite_label(self) -> str:
        return "reference" if self.is_reference else Path(self.result.suite).name


@dataclass
class ImplementationRun:
    path: Path
    result: ImplementationResult

    @property
    def label(self) -> str:
        return self.path.name


@dataclass
class Results:
    """Every result read, by kind, in the order given."""

    audits: list[AuditRun] = field(default_factory=list)
    scores: list[ScoreRun] = field(default_factory=list)
    implementations: list[ImplementationRun] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.audits or self.scores or self.implementations)


def find_result_files(path: Path) -> list[Path]:
    """``results.json`` files named by ``path`` (a file, a result dir, or a dir of them)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FormatError(path, "path", "an existing result directory or results.json")
    own = path / "results.json"
    if own.is_file():
        return [own]
    found = sorted(path.rglob("results.json"))
    if not found:
        raise FormatError(path, "results.json", "a results.json in it or below it")
    return found


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(path, "(file)", f"a readable UTF-8 file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise FormatError(path, "(file)", f"valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise FormatError(path, "(top level)", "a JSON object")
    return data


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return [dict(r) for r in csv.DictReader(fh)]


def _read_matrix(path: Path) -> ProblemMatrix:
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise FormatError(path, "(file)", f"a readable kills.npz ({exc})") from None
    for key in ("verdicts", "submissions", "inputs", "legality", "verdict_names"):
        if key not in arrays:
            raise FormatError(path, key, "an array of the audit's kill matrix")
    arms = {k[4:]: v for k, v in arrays.items() if k.startswith("arm_") and not k.endswith("_ids")}
    return ProblemMatrix(
        verdicts=np.asarray(arrays["verdicts"], dtype=np.uint8),
        submissions=[str(s) for s in arrays["submissions"]],
        inputs=[str(s) for s in arrays["inputs"]],
        legality=[str(s) for s in arrays["legality"]],
        verdict_names=[str(s) for s in arrays["verdict_names"]],
        arm_columns={a: [int(i) for i in v] for a, v in arms.items()},
        arm_input_ids={a: [str(s) for s in arrays.get(f"arm_{a}_ids", [])] for a in arms},
    )


def _audit(path: Path, data: dict[str, Any]) -> AuditRun:
    base = path.parent
    problems = data.get("problems")
    if not isinstance(problems, dict) or not isinstance(data.get("arms"), dict):
        raise FormatError(path, "arms/problems", "JSON objects")
    matrices = {}
    for pid in problems:
        npz = base / pid / "kills.npz"
        if not npz.is_file():
            raise FormatError(path, f"problems.{pid}", f"its kill matrix at {npz} (missing)")
        matrices[pid] = _read_matrix(npz)
    funnel = base / "funnel.txt"
    return AuditRun(
        path=base,
        results=data,
        ledger=_read_csv(base / "ledger.csv"),
        retractions=_read_csv(base / "retractions.csv"),
        matrices=matrices,
        funnel_text=funnel.read_text(encoding="utf-8") if funnel.is_file() else "",
    )


def _instance_root(result: SuiteResult) -> Path | None:
    """The instance directory: ``instance_dir``, or in older results (absolute patch paths)
    from a mutant's patch path (``<root>/mutants/x.diff``)."""
    if result.instance_dir:
        return Path(result.instance_dir)
    for m in result.mutants:
        if m.patch:
            p = Path(m.patch)
            return p.parent.parent if p.parent.name == "mutants" else p.parent
    return None


def _score(path: Path, data: dict[str, Any]) -> ScoreRun:
    try:
        result = SuiteResult.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise FormatError(path, where, err["msg"]) from None
    root = _instance_root(result)
    suite = Path(result.suite)
    is_ref = root is not None and (suite == root or root in suite.parents)
    report = path.parent / "mutation-report.json"
    return ScoreRun(path.parent, result, report if report.is_file() else None, is_ref, root)


def _implementation(path: Path, data: dict[str, Any]) -> ImplementationRun:
    try:
        return ImplementationRun(path.parent, ImplementationResult.model_validate(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise FormatError(path, where, err["msg"]) from None


def load_results(paths: list[Path]) -> Results:
    """Read every result under ``paths`` (see the module doc for what a path may be)."""
    out = Results()
    seen: set[Path] = set()
    for given in paths:
        for file in find_result_files(given):
            real = file.resolve()
            if real in seen:
                continue
            seen.add(real)
            data = _read_json(file)
            if "arms" in data and "problems" in data:
                out.audits.append(_audit(file, data))
            elif "implementation" in data:
                out.implementations.append(_implementation(file, data))
            elif "instance" in data and "mutants" in data:
                out.scores.append(_score(file, data))
            else:
                raise FormatError(
                    file,
                    "(top level)",
                    "an audit (arms, problems), score (instance, mutants) or implementation result",
                )
    return out
