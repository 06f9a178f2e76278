"""``build mutants --llm``: requirement-targeted mutants (TestSuiteBench Section 2.2,
"Candidate Construction").

For every (spec section, target test) pair chosen by ``build targets``, the model is asked for
a change of the reference implementation that violates that one requirement *at the logic
level* -- so that the target test fails -- without hard-coding the test's literals (the
paper's Figure 13 shows why: such a mutant only differs on the test's own inputs).  A reply is
kept only if it holds a unified diff that applies (``patch -p1 --fuzz=0``), changes the
program, hard-codes none of the target's literals and builds with the instance's recipe;
otherwise the model is told what was wrong and asked again, up to ``attempts`` times (the
paper's agents retry three times).  Every attempt and its outcome is recorded.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from suitebench.construct.mutants import error_line, source_files
from suitebench.construct.prompts import (
    ReplyFormatError,
    extract_diff,
    normalize_diff_paths,
    section_text,
    source_listing,
    test_source,
)
from suitebench.construct.refine import hardcoded_literals
from suitebench.construct.writing import REQUIREMENT, MutantRecord, prepare_target, write_generated
from suitebench.model.diffs import DiffError, read_diff
from suitebench.model.instance import Instance, MutantSpec
from suitebench.suite.execute.interpreter import suite_interpreter
from suitebench.suite.execute.patching import apply_patch
from suitebench.suite.execute.programs import Builder

__all__ = ["ChatModel", "RequirementMutantsReport", "requirement_mutants"]

Progress = Callable[[int, int], None]

SYSTEM = (
    "You are helping build a mutation-testing benchmark. You change a program so that it "
    "violates exactly one requirement of its specification, the way a plausible bug would."
)

PROMPT = """\
The specification section below states requirements of the program whose source follows.
The reference test `{target}` checks one of them. Write a mutant: a small change of the
source that violates this requirement of the section so that this test fails, while the
program still builds and everything else behaves as before.

Rules:
- Change the logic (a condition, a bound, an operation, a missed case), as a real bug would.
- Do not hard-code the test's inputs or expected values (its literals): the mutant must
  misbehave on other inputs of the same kind too.
- Reply with one unified diff in a ```diff block, paths relative to the source root with
  a/ and b/ prefixes (--- a/FILE, +++ b/FILE), exact context lines, no other changes.

## Specification section
{section}

## Target test
```python
{test}
```

## Source
{source}
"""


class ChatModel(Protocol):
    """What construction needs of a model client (``suitebench.llm.client.ModelClient``)."""

    model: str

    def chat(self, messages: Any, *, temperature: float = ..., max_tokens: int | None = ...,
             seed: int | None = ...) -> Any: ...  # fmt: skip


@dataclass
class RequirementMutantsReport:
    instance: str
    model: str
    pairs: int = 0
    mutants: list[MutantRecord] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    failed_pairs: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(
    diff: str, instance: Instance, builder: Builder, target_source: str, scratch: Path
) -> str | None:
    """None if the diff is a good mutant, else what is wrong with it (told to the model)."""
    patch = scratch / "candidate.diff"
    patch.write_text(diff, encoding="utf-8")
    tree = scratch / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(instance.source, tree)
    applied, output = apply_patch(tree, patch)
    if not applied:
        return f"the diff does not apply with patch -p1 --fuzz=0:\n{output.strip()[-1500:]}"
    changed = any(
        (tree / f).read_bytes() != (instance.source / f).read_bytes()
        for f in (p.relative_to(instance.source) for p in instance.source.rglob("*") if p.is_file())
        if (tree / f).is_file()
    )
    if not changed:
        return "the diff changes nothing"
    literals = hardcoded_literals(patch, target_source)
    if literals:
        return (
            "the change hard-codes literals of the target test ("
            + ", ".join(sorted(literals))
            + "); change the logic instead"
        )
    built = builder.mutant(MutantSpec(id="candidate", patch=patch))
    if not built.ok:
        return f"the mutant does not build: {error_line(built.message)}\n{built.message[-1500:]}"
    return None


def _ask_pair(
    instance: Instance,
    client: ChatModel,
    builder: Builder,
    report: RequirementMutantsReport,
    pair: tuple[str, str],
    spec: str,
    source: str,
    scratch: Path,
    *,
    attempts: int,
    seed: int | None,
    retryable: tuple[type[Exception], ...],
) -> tuple[MutantRecord, bytes] | None:
    """Ask for the mutant of one (section, target) pair, telling the model what is wrong with
    each unusable one, up to ``attempts``: the mutant and its diff, or None (each attempt and
    the pair's failure are recorded in the report)."""
    section, target = pair
    target_src = test_source(instance.root, target)
    messages: list[dict[str, str]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": PROMPT.format(
            target=target, section=section_text(spec, section) or f"## {section}\n",
            test=target_src, source=source)},
    ]  # fmt: skip
    problem: str | None = "no attempt"
    for attempt in range(1, attempts + 1):
        try:
            reply = client.chat(messages, seed=seed)
        except retryable as exc:
            problem = f"unusable reply: {exc}"
            report.attempts.append({"section": section, "target": target,
                                    "attempt": attempt, "problem": problem})  # fmt: skip
            continue
        try:
            diff = normalize_diff_paths(extract_diff(reply.text), instance.source)
            problem = _check(diff, instance, builder, target_src, scratch)
        except ReplyFormatError as exc:
            problem = str(exc)
        report.attempts.append(
            {"section": section, "target": target, "attempt": attempt,
             "problem": problem or ""}
        )  # fmt: skip
        if problem is None:
            changed_file, line = _first_change(diff)
            return (
                MutantRecord(
                    id="", patch="", file=changed_file, line=line,
                    operator="requirement",
                    description=f"{changed_file}:{line}: violates '{section}' "
                    f"(target {target})",
                    section=section, target=target,
                ),
                diff.encode("utf-8"),
            )  # fmt: skip
        messages += [
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": f"That mutant cannot be used: {problem}\n"
             "Reply with a corrected unified diff in a ```diff block."},
        ]  # fmt: skip
    if problem is not None:
        report.failed_pairs.append({"section": section, "target": target,
                                    "problem": problem})  # fmt: skip
    return None


def requirement_mutants(
    instance: Instance,
    client: ChatModel,
    targets: dict[str, list[str]],
    *,
    cache_dir: Path,
    out: Path | None = None,
    attempts: int = 3,
    seed: int | None = 0,
    retryable: tuple[type[Exception], ...] = (),
    progress: Progress | None = None,
) -> RequirementMutantsReport:
    """Ask for one mutant per (section, target test) pair; write the good ones.

    ``retryable``: exceptions of the client that spend one attempt instead of ending the run
    (a reply that is not a chat completion: the CLI passes ``ModelReplyError``).
    """
    spec = instance.spec.read_text(encoding="utf-8") if instance.spec is not None else ""
    files = source_files(instance)
    source = source_listing(instance, files)
    builder = Builder(instance, cache_dir, python=suite_interpreter(instance))
    reference = builder.reference()
    if not reference.ok:
        raise RuntimeError(
            f"{instance.source}: the reference does not build:\n{reference.message[-2000:]}"
        )
    pairs = [(s, t) for s, tests in targets.items() for t in tests]
    report = RequirementMutantsReport(instance=instance.name, model=client.model, pairs=len(pairs))
    kept: list[tuple[MutantRecord, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="suitebench-llm-mutants-") as tmp:
        for done, (section, target) in enumerate(pairs):
            record = _ask_pair(
                instance, client, builder, report, (section, target), spec, source, Path(tmp),
                attempts=attempts, seed=seed, retryable=retryable,
            )  # fmt: skip
            if record is not None:
                kept.append(record)
            if progress is not None:
                progress(done + 1, len(pairs))
    target_dir = prepare_target(instance, out)
    manifest = report.to_dict()
    report.mutants = write_generated(target_dir, REQUIREMENT, kept, manifest)
    return report


def _first_change(diff: str) -> tuple[str, int]:
    """The file a diff changes first (its new name, ``b/`` dropped; "?" if none) and the new
    file's line number of the diff's first added or removed line (0 if none)."""
    try:
        files = read_diff(diff).files
    except DiffError:
        return "?", 0
    name = files[0].new_name[2:] if files else "?"
    for file in files:
        for hunk in file.hunks:
            line_no = hunk.new_start
            for line in hunk.lines:
                if line.tag in "+-":
                    return name, line_no
                if line.tag == " ":
                    line_no += 1
    return name, 0
