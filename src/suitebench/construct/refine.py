"""``build refine``: candidate refinement (TestSuiteBench Section 2.2, "Candidate Refinement").

The reference suite runs on every candidate mutant (the full kill matrix, through ``score``).
For a mutant with a target test t and the valid reference tests T, the unrelated killers are
T-bar = killers - {t}.  A mutant is kept only if (i) t kills it and (ii) at most 20% of the
other valid tests do (|T-bar| / (|T| - 1) <= 0.2).  Among the kept candidates of one section,
they are ranked by (target kills, |T-bar|, id) and the top 3 stay.  A mutant without a target
(an operator mutant) is kept if some valid test kills it and at most 20% of the valid tests
do; it is not capped per section.

The paper then has an agent rewrite candidates to shrink T-bar; here that step is the user's
(or a model's) between two runs of ``refine``.  A mutant whose added lines hard-code a literal
that appears in its target test (and not in the lines it replaces), each found by its
language's tokenizer (:mod:`suitebench.construct.literal_scan`), is *flagged*
``hardcodes_target_literal``: it may only differ on the target's inputs (paper, Figure 13).
A flagged mutant that would be kept is then checked by re-running its target with those
literals perturbed (:mod:`suitebench.construct.literals`): a ``literal_special_case`` (the
perturbed target passes on it) is dropped before the per-section ranking; a ``genuine_kill``
stays; ``not_applicable`` (no perturbation keeps the target valid) stays, marked for an audit.

The figures before and after are the paper's: the fraction of mutants killed by exactly their
target, and the mean |T-bar| as a fraction of the other tests.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from suitebench.construct.literal_scan import find_literals, language_for, literal_values
from suitebench.construct.literals import Flagged, LiteralCheck, LiteralOutcome, check_literals
from suitebench.construct.mutants import error_line
from suitebench.construct.prompts import test_source
from suitebench.construct.tomledit import drop_mutant_tables
from suitebench.construct.writing import prepare_target
from suitebench.model.instance import Instance, InstanceError, MutantSpec, load_instance
from suitebench.run.executor import Executor
from suitebench.run.store import Store
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

__all__ = ["MutantDecision", "RefineReport", "refine_instance", "refinement_figures"]

Progress = Callable[[int, int], None]
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_COMMON = {"0", "1", "-1", "2"}  # too common to mean anything


@dataclass
class MutantDecision:
    id: str
    section: str | None
    target: str | None
    status: str
    killed_by_target: bool
    killers: int
    unrelated: int
    unrelated_fraction: float | None
    kept: bool = False
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    hardcoded: list[str] = field(default_factory=list)  # target literals the diff adds
    literal_check: LiteralCheck | None = None


@dataclass
class RefineReport:
    instance: str
    max_unrelated: float
    keep_per_section: int
    literal_check: bool
    valid_tests: int
    before: dict[str, Any]
    after: dict[str, Any]
    mutants: list[MutantDecision]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def refinement_figures(decisions: list[MutantDecision]) -> dict[str, Any]:
    """The paper's refinement figures over a set of mutants with targets."""
    targeted = [d for d in decisions if d.target]
    fractions = [d.unrelated_fraction for d in targeted if d.unrelated_fraction is not None]
    return {
        "mutants": len(decisions),
        "with_target": len(targeted),
        "killed_by_target": sum(d.killed_by_target for d in targeted),
        "killed_exactly_by_target": (
            sum(d.killed_by_target and d.unrelated == 0 for d in targeted) / len(targeted)
            if targeted
            else None
        ),
        "mean_unrelated_fraction": statistics.fmean(fractions) if fractions else None,
        "killed": sum(d.killers > 0 for d in decisions),
        "hardcodes_target_literal": sum(bool(d.hardcoded) for d in decisions),
        **{
            str(outcome): sum(
                d.literal_check is not None and d.literal_check.outcome == outcome
                for d in decisions
            )
            for outcome in LiteralOutcome
        },
    }


def _meaningful(value: str) -> bool:
    """A literal that can say something of a test's input: not a ubiquitous number, and with
    a letter or digit (a separator such as ``" "`` or ``","`` is syntax, and no rename of it
    could tell a special case from the logic)."""
    return value not in _COMMON and any(c.isalnum() for c in value)


def _hunks(diff: str) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """``(file, [(tag, line)])`` per hunk of a unified diff, the tag ``" "``, ``"+"`` or
    ``"-"``; the hunk header's counts say where it ends, so a removed ``-- x`` is a line."""
    path = old_path = ""
    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].split("\t", 1)[0].strip()
            name = name[2:] if name.startswith(("a/", "b/")) else name
            if line.startswith("--- "):
                old_path = name
            else:  # a deleted file's hunks are read in its old name's language
                path = old_path if name == "/dev/null" else name
        elif match := _HUNK.match(line):
            old, new = (int(n) if n is not None else 1 for n in match.groups())
            body: list[tuple[str, str]] = []
            while i < len(lines) and (old > 0 or new > 0):
                text = lines[i]
                i += 1
                if text.startswith("\\"):  # "\ No newline at end of file"
                    continue
                tag = text[:1] if text[:1] in ("+", "-") else " "
                old -= tag != "+"
                new -= tag != "-"
                body.append((tag, text[1:]))
            yield path, body


def _side(hunk: list[tuple[str, str]], language: str, tag: str) -> set[str]:
    """The values of the literals on the hunk's ``tag`` lines, tokenized with their context
    (the other side's lines left out), so a line is read as the code it is part of."""
    kept = [(t, line) for t, line in hunk if t in (" ", tag)]
    tags = [t for t, _ in kept]
    text = "".join(line + "\n" for _, line in kept)
    return {
        lit.value
        for lit in find_literals(text, language)
        if tag in tags[lit.first_line : lit.last_line + 1]
    }


def introduced_literals(diff: str) -> set[str]:
    """The literals a mutant introduces or changes: those on its added lines that its removed
    lines do not hold, each file read by its language's tokenizer."""
    added: set[str] = set()
    removed: set[str] = set()
    for path, hunk in _hunks(diff):
        language = language_for(path)
        added |= _side(hunk, language, "+")
        removed |= _side(hunk, language, "-")
    return {v for v in added - removed if _meaningful(v)}


def hardcoded_literals(patch: Path, target_source: str) -> set[str]:
    """Literals the mutant introduces that its target test also uses (the test is Python)."""
    diff = patch.read_text(encoding="utf-8", errors="replace")
    return introduced_literals(diff) & literal_values(target_source, "python")


def _judge(result: SuiteResult, instance: Instance, max_unrelated: float) -> list[MutantDecision]:
    """Each mutant on its own: the target kills it, few others do (before the ranking)."""
    valid = [t.id for t in result.tests if t.valid]
    others = max(1, len(valid) - 1)
    decisions: list[MutantDecision] = []
    specs = {m.id: m for m in instance.mutants}
    for m in result.mutants:
        killers = set(m.killed_by)
        by_target = m.target in killers if m.target else False
        unrelated = len(killers - {m.target}) if m.target else len(killers)
        denominator = others if m.target else max(1, len(valid))
        scored = m.status not in (MutantStatus.BUILD_ERROR, MutantStatus.CRASHED)
        decision = MutantDecision(
            id=m.id,
            section=m.section,
            target=m.target,
            status=str(m.status),
            killed_by_target=by_target,
            killers=len(killers),
            unrelated=unrelated,
            unrelated_fraction=unrelated / denominator if scored else None,
        )
        spec: MutantSpec = specs[m.id]
        if m.target:
            literals = hardcoded_literals(spec.patch, test_source(instance.root, m.target))
            if literals:
                decision.hardcoded = sorted(literals)
                decision.flags.append("hardcodes_target_literal: " + ", ".join(sorted(literals)))
        if not scored:
            lines = m.message.strip().splitlines()
            first = lines[0] if lines else "not scored"
            if "does not apply" not in first:
                first = error_line(m.message) or first
            decision.reason = f"{m.status}: {first}"
        elif m.target and m.target not in {t.id for t in result.tests}:
            decision.reason = f"target {m.target} is not a test of the reference suite"
        elif m.target and not by_target:
            decision.reason = "not killed by its target"
        elif not m.target and not killers:
            decision.reason = "no valid test kills it"
        elif unrelated / denominator > max_unrelated:
            decision.reason = (
                f"killed by {unrelated / denominator:.0%} of the "
                f"{'other ' if m.target else ''}tests (> {max_unrelated:.0%})"
            )
        else:
            decision.kept = True
        decisions.append(decision)
    return decisions


def _rank(decisions: list[MutantDecision], keep: int) -> None:
    """The top ``keep`` of each section's kept candidates stay."""
    by_section: dict[str, list[MutantDecision]] = {}
    for d in decisions:
        if d.kept and d.target and d.section:
            by_section.setdefault(d.section, []).append(d)
    for members in by_section.values():
        members.sort(key=lambda d: (not d.killed_by_target, d.unrelated, d.id))
        for d in members[keep:]:
            d.kept = False
            d.reason = f"not in its section's top {keep} (by target kill, unrelated killers)"


def _check_literals(
    decisions: list[MutantDecision],
    instance: Instance,
    *,
    store: Store,
    cache_dir: Path | None,
    executor: Executor | None,
    max_tries: int,
) -> None:
    """Re-run the targets of the flagged mutants still kept, with their literals perturbed; the
    unflagged mutants each target kills are the controls the perturbed target must still kill."""
    flagged = [
        Flagged(d.id, d.target, tuple(d.hardcoded))
        for d in decisions
        if d.kept and d.target and d.hardcoded
    ]
    if not flagged:
        return
    controls: dict[str, list[str]] = {}
    for d in decisions:
        if d.target and d.killed_by_target and not d.hardcoded and d.unrelated_fraction is not None:
            controls.setdefault(d.target, []).append(d.id)
    checks = check_literals(
        instance,
        flagged,
        controls,
        store=store,
        cache_dir=cache_dir,
        executor=executor,
        max_tries=max_tries,
    )
    for d in decisions:
        check = checks.get(d.id)
        if check is None:
            continue
        d.literal_check = check
        if check.outcome == LiteralOutcome.LITERAL_SPECIAL_CASE:
            d.kept = False
            d.reason = f"{check.outcome}: {check.reason}"
        elif check.outcome == LiteralOutcome.NOT_APPLICABLE:
            d.reason = f"{check.outcome} (kept, for a hand audit): {check.reason}"
        else:
            d.reason = f"{check.outcome}: {check.reason}"


def refine_instance(
    instance: Instance,
    *,
    store: Store,
    out: Path | None = None,
    max_unrelated: float = 0.2,
    keep_per_section: int = 3,
    literal_check: bool = True,
    literal_tries: int = 6,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
) -> RefineReport:
    """Score every candidate with the reference suite, decide, and drop the rejected mutants
    from ``instance.toml`` (of ``out``, a copy, if given); ``refine.json`` records it all.
    ``literal_check=False`` only flags literal hard-coding, without the perturbed re-runs;
    ``literal_tries`` caps the perturbations tried per target."""
    if not instance.mutants:
        raise InstanceError(
            instance.root / "instance.toml", "mutants", "expected candidate mutants to refine"
        )
    result = score_suite(
        instance, store=store, cache_dir=cache_dir, executor=executor, progress=progress
    )
    decisions = _judge(result, instance, max_unrelated)
    if literal_check:
        _check_literals(
            decisions,
            instance,
            store=store,
            cache_dir=cache_dir,
            executor=executor,
            max_tries=literal_tries,
        )
    _rank(decisions, keep_per_section)
    report = RefineReport(
        instance=instance.name,
        max_unrelated=max_unrelated,
        keep_per_section=keep_per_section,
        literal_check=literal_check,
        valid_tests=result.counts.valid,
        before=refinement_figures(decisions),
        after=refinement_figures([d for d in decisions if d.kept]),
        mutants=decisions,
    )
    target = prepare_target(instance, out)
    toml = target / "instance.toml"
    dropped = {d.id for d in decisions if not d.kept}
    toml.write_text(drop_mutant_tables(toml.read_text(encoding="utf-8"), dropped), "utf-8")
    left = {m.id for m in load_instance(target).mutants}
    assert left == {d.id for d in decisions if d.kept}, "instance.toml edit lost a mutant"
    (target / "refine.json").write_text(json.dumps(report.to_dict(), indent=1) + "\n", "utf-8")
    return report
