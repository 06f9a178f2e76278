"""Re-running a target test with its literals changed (TestSuiteBench Figure 13 and Section 2.4).

A mutant killed by its target only because it special-cases the target's inputs (``if code ==
404: return wrong``) is indistinguishable from a logic-level mutant by the single-test
criterion.  The paper tells them apart by running the test "on the same input with its
literals changed": renaming the domains or changing the port numbers exercises the same
requirement, yet the special-casing mutant then behaves like the reference.

For a mutant flagged ``hardcodes_target_literal`` (its diff adds a literal its target test
uses), the literals are *perturbed* in the target test's source -- every occurrence in the test
function, a consistent rename, so an expected value that echoes the input follows it.  The
occurrences are found by the tokenizer that found the literals
(:mod:`suitebench.construct.literal_scan`): the ``33`` of ``" ".join(["1"] * 33)`` is renamed,
a ``33`` in a comment or a name is not.

* an integer moves by 1, 2, 3 (and by 10^k, 2*10^k for its k trailing zeros), keeping its sign;
* a decimal moves by one unit of its last digit;
* a string gets one letter or digit changed to its neighbour (same class, same length);
* a new value never collides with text the test already holds.

A perturbation is **applicable** when the perturbed target still passes on the reference
(every reference run) and still kills every *control*: the mutants of the same target that the
original target kills and that hard-code none of its literals -- so the changed test still
exercises the requirement's logic.  Up to ``wanted`` (2) applicable perturbations are looked
for, at most ``max_tries`` (6) tried.  Then each flagged mutant is:

* ``literal_special_case``: the perturbed target passes on it under every applicable
  perturbation -- it only differs from the reference on the target's literals (dropped);
* ``genuine_kill``: some applicable perturbation of the target still kills it (kept);
* ``not_applicable``: no perturbation tried was applicable (kept, and said so: a hand audit).

Every run is sandboxed through :func:`suitebench.suite.score.score_suite` on a copy of the
reference suite holding only the target's file, perturbed, so runs are stored and reused.
"""

from __future__ import annotations

import ast
import re
import shutil
import string
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from suitebench.construct.literal_scan import LiteralKind, SourceLiteral, find_literals
from suitebench.construct.prompts import test_function
from suitebench.model.instance import Instance
from suitebench.run.executor import Executor
from suitebench.run.store import Store
from suitebench.suite.execute.runner import SUITE_DIRNAME
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

__all__ = [
    "LiteralCheck",
    "LiteralOutcome",
    "check_literals",
    "perturb_test_file",
    "perturbations",
]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_TEST_FILE = re.compile(r"(^test_.*|.*_test)\.py$")


class LiteralOutcome(StrEnum):
    LITERAL_SPECIAL_CASE = "literal_special_case"
    GENUINE_KILL = "genuine_kill"
    NOT_APPLICABLE = "not_applicable"


@dataclass
class LiteralCheck:
    """What re-running the target with perturbed literals said of one flagged mutant."""

    outcome: str
    literals: list[str]
    # each applicable perturbation tried (literal -> new value) and whether it killed the mutant
    perturbations: list[dict[str, str]] = field(default_factory=list)
    killed_under: list[bool] = field(default_factory=list)
    controls: list[str] = field(default_factory=list)
    tried: int = 0
    reason: str = ""


# -- perturbations (pure) -----------------------------------------------------------------------


def _token(literal: str) -> re.Pattern[str]:
    """Where a literal occurs in a string's text (and, to avoid collisions, in the test's text):
    a number as a whole word (``"404 client error"``), a string as itself."""
    if _NUMBER.fullmatch(literal):
        return re.compile(r"(?<![\w.])" + re.escape(literal) + r"(?![\w.])")
    return re.compile(re.escape(literal))


def _numbers(literal: str) -> list[str]:
    if "." in literal:
        decimals = len(literal.split(".", 1)[1])
        unit = 10**-decimals
        value = float(literal)
        steps = [1, -1, 2, -2]
        out = [f"{value + s * unit:.{decimals}f}" for s in steps]
        return [v for v in out if not value >= 0 or not v.startswith("-")]
    value = int(literal)
    trailing = len(literal.lstrip("-")) - len(literal.lstrip("-").rstrip("0"))
    deltas = [1, -1, 2, -2, 3, -3]
    for k in range(1, min(trailing, 6) + 1):
        deltas += [10**k, -(10**k), 2 * 10**k, -2 * 10**k]
    out = [str(value + d) for d in deltas]
    return [v for v in out if value < 0 or not v.startswith("-")]


def _neighbour(char: str, step: int) -> str:
    for alphabet in (string.ascii_lowercase, string.ascii_uppercase, string.digits):
        if char in alphabet:
            return alphabet[(alphabet.index(char) + step) % len(alphabet)]
    return char


def _strings(literal: str) -> list[str]:
    positions = [i for i, c in enumerate(literal) if c.isascii() and c.isalnum()]
    if not positions:
        return []
    chosen = list(dict.fromkeys([positions[0], positions[-1], positions[len(positions) // 2]]))
    out: list[str] = []
    for step in (1, -1):
        for i in chosen:
            out.append(literal[:i] + _neighbour(literal[i], step) + literal[i + 1 :])
    return out


def perturbations(literal: str, avoid: str = "") -> list[str]:
    """Candidate new values for ``literal``, nearest first; none occurs in ``avoid`` (the test's
    text), so a rename never merges two of the test's values."""
    raw = _numbers(literal) if _NUMBER.fullmatch(literal) else _strings(literal)
    return [
        v for v in dict.fromkeys(raw) if v != literal and not (avoid and _token(v).search(avoid))
    ]


def _function_lines(text: str, test_id: str) -> tuple[int, int] | None:
    """0-based [start, end) line range of the test function a node id names."""
    try:
        node = test_function(ast.parse(text), test_id)
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    return node.lineno - 1, node.end_lineno or node.lineno


def _rename(body: str, mapping: dict[str, str]) -> str:
    """``body`` with its literals renamed, found by the tokenizer that found them in the test
    (:mod:`suitebench.construct.literal_scan`): a number token whose value is a key is
    rewritten; inside a string a key is renamed where it occurs (a number as a whole word,
    ``"404 client error"``), so an expected value that echoes the input follows it.  Comments
    and names stay as they are."""
    # One pass per string, longest literals first: a literal inside another ("site1" in
    # "site1.test") or inside a value just written is never renamed twice.
    ordered = sorted(mapping, key=len, reverse=True)
    pattern = re.compile("|".join(f"(?:{_token(lit).pattern})" for lit in ordered))
    spans: dict[tuple[int, int], list[SourceLiteral]] = {}
    for lit in find_literals(body, "python"):
        spans.setdefault((lit.start, lit.end), []).append(lit)
    out: list[str] = []
    done = 0
    for (start, end), found in sorted(spans.items()):
        written = body[start:end]
        if any(lit.kind is LiteralKind.STRING for lit in found):
            new = pattern.sub(lambda m: mapping[m.group(0)], written)
            plain = len(found) == 1 and written[:1] in "'\"" and written[-1:] in "'\""
            if new == written and plain and found[0].value in mapping:
                new = repr(mapping[found[0].value])  # spelt with escapes: "a\tb"
        elif found[0].value in mapping:
            new = mapping[found[0].value]
        else:
            continue
        out += [body[done:start], new]
        done = end
    return "".join(out) + body[done:]


def perturb_test_file(text: str, test_id: str, mapping: dict[str, str]) -> str | None:
    """The test file with every occurrence of each literal in the target test function renamed
    (its other tests untouched), or None when the function is not found or nothing changes."""
    span = _function_lines(text, test_id)
    if span is None:
        return None
    lines = text.splitlines(keepends=True)
    body = "".join(lines[span[0] : span[1]])
    changed = _rename(body, mapping)
    if changed == body:
        return None
    return "".join(lines[: span[0]]) + changed + "".join(lines[span[1] :])


def _candidate_mappings(literals: list[str], body: str) -> Iterable[dict[str, str]]:
    """All literals changed together, nearest values first; then each literal alone."""
    options = {lit: perturbations(lit, body) for lit in literals}
    depth = max((len(v) for v in options.values()), default=0)
    for i in range(depth):
        together = {lit: vals[i] for lit, vals in options.items() if i < len(vals)}
        if len(together) == len(literals) and len(set(together.values())) == len(together):
            yield together
    if len(literals) > 1:
        for i in range(depth):
            for lit, vals in options.items():
                if i < len(vals):
                    yield {lit: vals[i]}


# -- the re-run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flagged:
    """A mutant to check: its id, target and the target's literals its diff hard-codes."""

    mutant: str
    target: str
    literals: tuple[str, ...]


def _suite_file(instance: Instance, test_id: str) -> Path:
    rel = test_id.split("::", 1)[0]
    prefix = SUITE_DIRNAME + "/"
    return instance.tests / (rel[len(prefix) :] if rel.startswith(prefix) else rel)


def _perturbed_suite(instance: Instance, test_id: str, text: str, into: Path) -> Path:
    """A copy of the reference suite with only the target's test file (perturbed): helpers and
    conftest files stay, the other test files go (they cannot change the target's outcome)."""
    suite = into / "suite"
    target_file = _suite_file(instance, test_id)
    rel = target_file.relative_to(instance.tests)
    shutil.copytree(instance.tests, suite, ignore=shutil.ignore_patterns("__pycache__"))
    for path in suite.rglob("*.py"):
        if _TEST_FILE.match(path.name) and path.relative_to(suite) != rel:
            path.unlink()
    (suite / rel).write_text(text, encoding="utf-8")
    return suite


def _describe(mapping: dict[str, str]) -> str:
    return ", ".join(f"{k} -> {v}" for k, v in mapping.items())


def check_literals(
    instance: Instance,
    flagged: list[Flagged],
    controls: dict[str, list[str]],
    *,
    store: Store,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    wanted: int = 2,
    max_tries: int = 6,
) -> dict[str, LiteralCheck]:
    """Classify each flagged mutant by re-running its target with perturbed literals.

    ``controls`` maps a target test to the mutants it kills that hard-code none of its literals.
    Mutants sharing a target and literals share their runs.
    """
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for f in flagged:
        groups.setdefault((f.target, tuple(sorted(f.literals))), []).append(f.mutant)
    checks: dict[str, LiteralCheck] = {}
    for (target, literals), members in groups.items():
        found = _check_group(
            instance,
            target,
            list(literals),
            members,
            controls.get(target, []),
            store=store,
            cache_dir=cache_dir,
            executor=executor,
            wanted=wanted,
            max_tries=max_tries,
        )
        checks.update(found)
    return checks


def _check_group(
    instance: Instance,
    target: str,
    literals: list[str],
    members: list[str],
    controls: list[str],
    *,
    store: Store,
    cache_dir: Path | None,
    executor: Executor | None,
    wanted: int,
    max_tries: int,
) -> dict[str, LiteralCheck]:
    """The checks of the mutants sharing a target and literals: up to ``wanted`` perturbations
    that keep the target valid (and killing its controls), each re-run once for them all."""

    def verdict(outcome: LiteralOutcome, reason: str, tried: int = 0) -> dict[str, LiteralCheck]:
        return {
            m: LiteralCheck(str(outcome), literals, controls=controls, tried=tried, reason=reason)
            for m in members
        }

    path = _suite_file(instance, target)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return verdict(LiteralOutcome.NOT_APPLICABLE, f"cannot read the target's file: {exc}")
    span = _function_lines(text, target)
    if span is None:
        return verdict(LiteralOutcome.NOT_APPLICABLE, f"no test function {target} in {path.name}")
    body = "".join(text.splitlines(keepends=True)[span[0] : span[1]])
    applied: list[tuple[dict[str, str], dict[str, bool]]] = []
    rejected: dict[str, list[str]] = {}  # why -> the perturbations rejected for it
    tried = 0
    runs: dict[str, Any] = {"store": store, "cache_dir": cache_dir, "executor": executor}
    for mapping in _candidate_mappings(literals, body):
        if tried >= max_tries or len(applied) >= wanted:
            break
        perturbed = perturb_test_file(text, target, mapping)
        if perturbed is None:
            continue
        tried += 1
        kills, why = _run_perturbed(instance, target, perturbed, members, controls, runs)
        if kills is None:
            rejected.setdefault(why, []).append(_describe(mapping))
            continue
        applied.append((mapping, kills))
    if not applied:
        return verdict(
            LiteralOutcome.NOT_APPLICABLE, _none_kept(literals, controls, rejected), tried
        )
    return _member_checks(literals, members, controls, applied, tried)


def _run_perturbed(
    instance: Instance,
    target: str,
    perturbed: str,
    members: list[str],
    controls: list[str],
    runs: dict[str, Any],
) -> tuple[dict[str, bool] | None, str]:
    """Score the target's perturbed file on the controls and the members: which members the
    target kills, or None and why the perturbation is rejected (the target is invalid, no
    longer kills a control, or pytest crashed on a member)."""
    with tempfile.TemporaryDirectory(prefix="suitebench-literals-") as tmp:
        suite = _perturbed_suite(instance, target, perturbed, Path(tmp))
        result = score_suite(
            instance,
            suite,
            **runs,
            mutant_ids=[*controls, *members],
            all_tests=True,
        )
    test = next((t for t in result.tests if t.id == target), None)
    rows = {m.id: m for m in result.mutants}
    if test is None or not test.valid:
        how = "is not collected" if test is None else "fails on the reference"
        return None, f"the target {how}"
    alive = [c for c in controls if target not in rows[c].killed_by]
    if alive:
        return None, f"the target no longer kills {', '.join(alive)}"
    crashed = [m for m in members if rows[m].status is MutantStatus.CRASHED]
    if crashed:
        return None, f"pytest crashed on {', '.join(crashed)}"
    return {m: target in rows[m].killed_by for m in members}, ""


def _none_kept(literals: list[str], controls: list[str], rejected: dict[str, list[str]]) -> str:
    """Why no perturbation could be used: each rejection with the perturbations it hit."""
    why = (
        "; ".join(f"with {' / '.join(tries)} {how}" for how, tries in rejected.items())
        if rejected
        else "there is no perturbation of it to try"
    )
    need = "passing on the reference" + (f" and killing {', '.join(controls)}" if controls else "")
    return f"no perturbation of {', '.join(literals)} keeps the target {need}: {why}"


def _member_checks(
    literals: list[str],
    members: list[str],
    controls: list[str],
    applied: list[tuple[dict[str, str], dict[str, bool]]],
    tried: int,
) -> dict[str, LiteralCheck]:
    """Each member's check from the perturbations applied: a genuine kill when the target
    still kills it under one of them, a literal special case when it passes under all."""
    checks: dict[str, LiteralCheck] = {}
    kills_controls = f" and kills {', '.join(controls)}" if controls else ""
    for m in members:
        killed = [kills[m] for _, kills in applied]
        tried_text = ", then ".join(_describe(mapping) for mapping, _ in applied)
        if any(killed):
            outcome = LiteralOutcome.GENUINE_KILL
            which = next(_describe(mp) for mp, kills in applied if kills[m])
            reason = (
                f"the target with {which} still kills it "
                f"(and still passes on the reference{kills_controls})"
            )
        else:
            outcome = LiteralOutcome.LITERAL_SPECIAL_CASE
            reason = (
                f"the target with {tried_text} passes on it, as on the reference"
                + (f", while still killing {', '.join(controls)}" if controls else "")
                + ": it only differs from the reference on the target's literals"
            )
        checks[m] = LiteralCheck(
            str(outcome),
            literals,
            perturbations=[mapping for mapping, _ in applied],
            killed_under=killed,
            controls=controls,
            tried=tried,
            reason=reason,
        )
    return checks
