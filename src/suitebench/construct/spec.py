"""``build spec``: draft a specification from the reference tests, then refine it
(TestSuiteBench Sections 2.1 and 2.3).

**Draft.** The model reads the reference suite and writes a markdown spec describing every
tested behaviour, one heading per section, at most 50 sections.

**Refinement loop.** Each iteration (the paper's "Trial Generations", "Error Attribution" and
"Specification Refinement"):

1. a trial implementation and a trial suite are generated from the spec alone (one model
   call each; the agent harness can take this over);
2. the implementation runs against the reference suite (R and the reference tests it fails)
   and the trial suite against the reference and the mutants (its invalid tests, the mutants
   it leaves alive) -- all through ``score``;
3. the model attributes every failure either to the spec (underspecified, ambiguous,
   contradictory with the reference tests) or to the generation, naming the sections at fault;
4. each section blamed is revised by the model, given its failures and the reference tests.

The loop stops when fewer than 5% of the failures are the spec's, or after ``iterations``.
Every iteration's figures and spec are saved under ``spec-iterations/NN/``.  A reply of the
wrong shape is retried with the problem stated (``attempts``); what cannot be read after that
is recorded, never guessed.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from suitebench.construct.llm_mutants import ChatModel
from suitebench.construct.prompts import (
    NoUsableReply,
    ReplyFormatError,
    ask,
    extract_files,
    extract_json,
    extract_markdown,
    section_text,
    test_source,
    tests_listing,
)
from suitebench.construct.writing import prepare_target
from suitebench.model.instance import (
    Instance,
    InstanceKind,
    load_instance,
    spec_sections_from_markdown,
)
from suitebench.run.executor import Executor
from suitebench.run.store import Store
from suitebench.suite.implementation import score_implementation
from suitebench.suite.score import score_suite

__all__ = ["SpecReport", "build_spec", "draft_spec"]

Progress = Callable[[int, int], None]
SYSTEM = "You write precise software specifications and the code and tests that follow them."

DRAFT = """\
Task: draft the specification.
Below is the reference test suite of a program. Write its specification: describe every
behaviour these tests check, explicitly (inputs, outputs, formats, exit codes, error messages,
edge cases), so that someone could write the program and its tests from the specification
alone. Do not mention the tests themselves. Use markdown with one `## ` heading per section,
at most {max_sections} sections. Reply with the markdown document only.

{program}

{tests}
"""

IMPLEMENT = """\
Task: implement from the specification.
Write the program this specification describes. {how}
Reply with every file as a line `FILE: <path>` followed by a fenced code block.

{spec}
"""

TEST = """\
Task: write a test suite from the specification.
Write a pytest suite for the program this specification describes. {how}
Reply with every file as a line `FILE: tests/<name>.py` followed by a fenced code block.

{spec}
"""

ATTRIBUTE = """\
Task: attribute the failures.
A trial implementation and a trial test suite were written from the specification below.
These failures were observed. For each one, decide whether its cause is the specification
(underspecified, ambiguous, or contradicting the reference tests) or the generation (the
implementation or the test got wrong what the specification says clearly).
Reply with a JSON list, one object per failure:
[{{"id": "<failure id>", "cause": "spec" or "generation", "sections": ["<section>"], "why": "..."}}]

## Failures
{failures}

## Specification
{spec}
"""

REVISE = """\
Task: revise one section.
The section below caused these failures. Fix it: correct what contradicts the reference
tests and add the missing details, from the reference tests shown. Reply with the revised
section only, in markdown, starting with its heading line `{heading}`.

## Section
{section}

## Failures attributed to it
{failures}

## Reference tests
{tests}
"""


@dataclass
class SpecReport:
    instance: str
    model: str
    drafted: bool
    sections: int = 0
    iterations: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    spec: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SpecError = NoUsableReply  # the model gave no usable reply after every attempt


def _ask(client: ChatModel, prompt: str, parse: Callable[[str], Any], **kw: Any) -> Any:
    return ask(client, prompt, parse, system=SYSTEM, **kw)


def _spec_parser(max_sections: int) -> Callable[[str], str]:
    def parse(text: str) -> str:
        markdown = extract_markdown(text)
        sections = spec_sections_from_markdown(markdown)
        if not sections:
            raise ReplyFormatError("expected markdown with `## ` section headings, found none")
        if len(sections) > max_sections:
            raise ReplyFormatError(f"expected at most {max_sections} sections, got {len(sections)}")
        return markdown if markdown.endswith("\n") else markdown + "\n"

    return parse


def _program_hint(instance: Instance) -> str:
    if instance.kind is InstanceKind.PYTHON:
        return f"The program is a Python package named `{instance.package}`; tests import it."
    return "The program is a command-line tool; tests run it as `./executable`."


def draft_spec(
    instance: Instance,
    client: ChatModel,
    *,
    max_sections: int = 50,
    attempts: int = 3,
    retryable: tuple[type[Exception], ...] = (),
) -> str:
    """A first spec from the reference tests (at most ``max_sections`` sections)."""
    prompt = DRAFT.format(
        max_sections=max_sections, program=_program_hint(instance), tests=tests_listing(instance)
    )
    result: str = _ask(client, prompt, _spec_parser(max_sections), attempts=attempts,
                       retryable=retryable, what="the draft spec")  # fmt: skip
    return result


def _write_files(files: dict[str, str], root: Path, strip: str = "") -> None:
    for name, text in files.items():
        rel = name[len(strip) :] if strip and name.startswith(strip) else name
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _attribution_parser(ids: set[str]) -> Callable[[str], list[dict[str, Any]]]:
    def parse(text: str) -> list[dict[str, Any]]:
        data = extract_json(text)
        if not isinstance(data, list):
            raise ReplyFormatError("expected a JSON list of {id, cause, sections, why}")
        out = []
        for item in data:
            if not isinstance(item, dict) or item.get("cause") not in ("spec", "generation"):
                raise ReplyFormatError('expected objects with "cause": "spec" or "generation"')
            if item.get("id") not in ids:
                raise ReplyFormatError(f"unknown failure id {item.get('id')!r}")
            sections = item.get("sections", [])
            if not isinstance(sections, list):
                raise ReplyFormatError('expected "sections" to be a list of section names')
            out.append(
                {
                    "id": item["id"],
                    "cause": item["cause"],
                    "sections": [str(s) for s in sections],
                    "why": str(item.get("why", "")),
                }
            )
        return out

    return parse


def _revision_parser(heading: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        markdown = extract_markdown(text).strip("\n") + "\n"
        if not markdown.lstrip().startswith(heading):
            raise ReplyFormatError(f"expected the section to start with `{heading}`")
        return markdown

    return parse


def _heading_line(spec: str, section: str) -> str:
    block = section_text(spec, section)
    return block.splitlines()[0].strip() if block else f"## {section}"


def build_spec(
    instance: Instance,
    client: ChatModel,
    *,
    store: Store,
    out: Path | None = None,
    iterations: int = 3,
    threshold: float = 0.05,
    max_sections: int = 50,
    attempts: int = 3,
    redraft: bool = False,
    retryable: tuple[type[Exception], ...] = (),
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
) -> SpecReport:
    """Draft the spec if the instance has none (or ``redraft``), then run the refinement
    loop; write ``spec.md`` and ``spec-iterations/`` into the instance (or ``out``)."""
    target = prepare_target(instance, out)
    ask: dict[str, Any] = {"attempts": attempts, "retryable": retryable}
    drafted = instance.spec is None or redraft
    spec = _starting_spec(instance, client, drafted, max_sections, ask)
    report = SpecReport(instance=instance.name, model=client.model, drafted=drafted)
    history = target / "spec-iterations"
    shutil.rmtree(history, ignore_errors=True)
    runs: dict[str, Any] = {"store": store, "cache_dir": cache_dir, "executor": executor}
    for number in range(1, iterations + 1):
        work = history / f"{number:02d}"
        work.mkdir(parents=True)
        (work / "spec.md").write_text(spec, encoding="utf-8")
        figures: dict[str, Any] = {"iteration": number}
        failures: dict[str, str] = {}
        _trial_implementation(instance, client, spec, work, figures, failures, runs, ask)
        _trial_suite(instance, client, spec, work, figures, failures, runs, ask)
        blamed = _attribute(client, spec, figures, failures, ask)
        revised: list[str] = []
        if figures["spec_share"] >= threshold:
            spec = _revise(instance, client, spec, blamed, figures, failures, revised, ask)
        figures["sections_revised"] = revised
        (work / "figures.json").write_text(json.dumps(figures, indent=1) + "\n", "utf-8")
        report.iterations.append(figures)
        if progress is not None:
            progress(number, iterations)
        if figures["spec_share"] < threshold:
            report.stopped = f"fewer than {threshold:.0%} of the failures are the spec's"
            break
    else:
        report.stopped = f"iteration cap ({iterations})"
    _write_spec(instance, target, spec, report)
    return report


def _starting_spec(
    instance: Instance, client: ChatModel, drafted: bool, max_sections: int, ask: dict[str, Any]
) -> str:
    """The spec the loop starts from: a fresh draft, or the instance's own (which must have
    ``## `` headings)."""
    if drafted:
        return draft_spec(instance, client, max_sections=max_sections, **ask)
    assert instance.spec is not None
    spec = instance.spec.read_text(encoding="utf-8")
    if not spec_sections_from_markdown(spec):
        from suitebench.model.errors import FormatError

        raise FormatError(instance.spec, "<headings>", "expected markdown `## ` headings")
    return spec


def _trial_implementation(
    instance: Instance,
    client: ChatModel,
    spec: str,
    work: Path,
    figures: dict[str, Any],
    failures: dict[str, str],
    runs: dict[str, Any],
    ask: dict[str, Any],
) -> None:
    """Generate a trial implementation from the spec and run the reference suite on it:
    its R into ``figures``, each reference test it fails into ``failures``."""
    how_impl = (
        f"Write the package directory `{instance.package}/` (paths like "
        f"`{instance.package}/__init__.py`)."
        if instance.kind is InstanceKind.PYTHON
        else "Include a `build.sh` that builds it and leaves `./executable` in its directory."
    )
    try:
        files = _ask(client, IMPLEMENT.format(how=how_impl, spec=spec), extract_files,
                     what="the trial implementation", **ask)  # fmt: skip
        _write_files(files, work / "implementation")
        impl = score_implementation(instance, work / "implementation", **runs)
        figures["R"] = impl.reference_pass_rate
        for test in impl.failing:
            failures[f"reference:{test}"] = (
                f"reference test {test} fails on the trial implementation "
                f"(build {impl.build_status})\n{test_source(instance.root, test)}"
            )
    except SpecError as exc:
        figures["implementation_error"] = str(exc)


def _trial_suite(
    instance: Instance,
    client: ChatModel,
    spec: str,
    work: Path,
    figures: dict[str, Any],
    failures: dict[str, str],
    runs: dict[str, Any],
    ask: dict[str, Any],
) -> None:
    """Generate a trial suite from the spec and score it: its V and M into ``figures``, each
    invalid test and each mutant it leaves alive into ``failures``."""
    try:
        files = _ask(client, TEST.format(how=_program_hint(instance), spec=spec), extract_files,
                     what="the trial suite", **ask)  # fmt: skip
        _write_files(files, work / "suite", strip="tests/")
        suite = score_suite(instance, work / "suite", **runs)
        figures["V"] = suite.validity
        figures["M"] = suite.mutation_score
        for t in suite.tests:
            if not t.valid:
                failures[f"generated:{t.id}"] = (
                    f"generated test {t.id} fails on the reference "
                    f"({'/'.join(str(s) for s in t.reference)})"
                )
        for m in suite.mutants:
            if str(m.status) == "survived":
                failures[f"mutant:{m.id}"] = (
                    f"mutant {m.id} ({m.section or 'no section'}: {m.description}) survives "
                    "the trial suite"
                )
    except SpecError as exc:
        figures["suite_error"] = str(exc)


def _attribute(
    client: ChatModel,
    spec: str,
    figures: dict[str, Any],
    failures: dict[str, str],
    ask: dict[str, Any],
) -> list[dict[str, Any]]:
    """Have the model attribute each failure to the spec or to the generation; the counts
    and the verdicts go into ``figures``; returns the verdicts that blame the spec."""
    figures["failures"] = len(failures)
    verdicts: list[dict[str, Any]] = []
    if failures:
        listing = "\n".join(f"- id `{k}`: {v}" for k, v in failures.items())
        try:
            verdicts = _ask(client, ATTRIBUTE.format(failures=listing, spec=spec),
                            _attribution_parser(set(failures)), what="the attribution",
                            **ask)  # fmt: skip
        except SpecError as exc:
            figures["attribution_error"] = str(exc)
    blamed = [v for v in verdicts if v["cause"] == "spec"]
    figures["spec"] = len(blamed)
    figures["generation"] = sum(v["cause"] == "generation" for v in verdicts)
    figures["unattributed"] = len(failures) - len(verdicts)
    figures["spec_share"] = len(blamed) / len(failures) if failures else 0.0
    figures["attribution"] = verdicts
    return blamed


def _revise(
    instance: Instance,
    client: ChatModel,
    spec: str,
    blamed: list[dict[str, Any]],
    figures: dict[str, Any],
    failures: dict[str, str],
    revised: list[str],
    ask: dict[str, Any],
) -> str:
    """Have the model revise each section the spec's failures blame, given those failures
    and the reference tests mapped to it; returns the revised spec, the sections revised
    appended to ``revised`` (a revision that cannot be read is recorded in ``figures``)."""
    sections = spec_sections_from_markdown(spec)
    by_section: dict[str, list[str]] = {}
    for v in blamed:
        for s in v["sections"]:
            if s in sections:
                by_section.setdefault(s, []).append(f"- {failures[v['id']]}\n  ({v['why']})")
    for section, lines in by_section.items():
        heading = _heading_line(spec, section)
        tests = [t for t, ss in instance.sections_map.items() if section in ss][:8]
        shown = "\n\n".join(test_source(instance.root, t) for t in tests) or "(none mapped)"
        try:
            new = _ask(client, REVISE.format(heading=heading,
                       section=section_text(spec, section), failures="\n".join(lines),
                       tests=shown), _revision_parser(heading),
                       what=f"the revision of {section!r}", **ask)  # fmt: skip
        except SpecError as exc:
            figures.setdefault("revision_errors", []).append(str(exc))
            continue
        spec = spec.replace(section_text(spec, section), new.rstrip("\n") + "\n\n", 1)
        revised.append(section)
    return spec


def _write_spec(instance: Instance, target: Path, spec: str, report: SpecReport) -> None:
    """Write the final spec into the target (naming it in ``instance.toml`` when new), check
    the instance still loads, and save the report next to the iterations."""
    spec = re.sub(r"\n{3,}", "\n\n", spec)
    rel = instance.spec.relative_to(instance.root).as_posix() if instance.spec else "spec.md"
    (target / rel).write_text(spec, encoding="utf-8")
    if instance.spec is None:
        _add_spec_key(target / "instance.toml", rel)
    load_instance(target)
    report.spec = str(target / rel)
    report.sections = len(spec_sections_from_markdown(spec))
    (target / "spec-iterations" / "report.json").write_text(
        json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8"
    )


def _add_spec_key(toml: Path, rel: str) -> None:
    text = toml.read_text(encoding="utf-8")
    line = f"spec = {json.dumps(rel)}"
    text = re.sub(r"^(name\s*=.*)$", lambda m: m.group(1) + "\n" + line, text, count=1, flags=re.M)
    toml.write_text(text, encoding="utf-8")
