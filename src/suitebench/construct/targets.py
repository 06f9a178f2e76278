"""Mutant targets: which reference tests each spec section's mutants aim at (TestSuiteBench
Section 2.2 and Appendix B.2).

The paper's flow network: source -> section (capacity ``per_section``, 6), section -> test
(capacity 1, cost d(t) = the number of sections linked to t), test -> sink (capacity 1); a
min-cost max-flow picks the targets, preferring section-specific tests and breaking remaining
ties by test id.

Because the cost of an edge depends on its test only, a flow's cost is the sum of d(t) over
the tests it uses, and the sets of tests a flow can use are the independent sets of a
transversal matroid (sections as ``per_section`` slots each).  The matroid greedy algorithm
is therefore exact: take tests in order of (d(t), test id) and keep each one that an
augmenting path can still place.  It yields a maximum flow of minimum cost, and among those
the one whose tests come first in that order, which is the paper's tie-break.  A failed
search proves every section it visited full for good (their tests cannot leave them), so
those sections are never searched again; that keeps 50 sections x 13,000 tests well under a
second.  ``tests/construct/test_targets.py`` checks cost and cardinality against networkx's
``max_flow_min_cost`` on random graphs.
"""

from __future__ import annotations

import ast
import tomllib
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.model.errors import FormatError
from suitebench.model.instance import Instance, InstanceError

__all__ = [
    "TargetSelection",
    "check_sections_map",
    "infer_sections_map",
    "read_targets",
    "select_targets",
    "spec_sections_or_error",
    "targets_for_instance",
    "write_sections_map",
]


@dataclass(frozen=True)
class TargetSelection:
    """The chosen targets: section -> test ids (sorted), plus the flow's figures."""

    targets: dict[str, list[str]]
    per_section: int
    cost: int
    edges: int

    @property
    def selected(self) -> int:
        return sum(len(v) for v in self.targets.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "targets": self.targets,
            "per_section": self.per_section,
            "selected": self.selected,
            "cost": self.cost,
            "edges": self.edges,
        }


def _bigraph(
    links: Mapping[str, Iterable[str]], sections: Iterable[str] | None
) -> tuple[list[str], dict[str, list[str]]]:
    """The sections in order (``sections`` first, then those ``links`` names) and each test's
    sections without repeats."""
    adjacency: dict[str, list[str]] = {}
    order: list[str] = list(dict.fromkeys(sections)) if sections is not None else []
    known = set(order)
    for test, linked in links.items():
        unique = list(dict.fromkeys(linked))
        adjacency[test] = unique
        for name in unique:
            if name not in known:
                known.add(name)
                order.append(name)
    return order, adjacency


def _free_section(
    test: str,
    starts: list[int],
    adj: Mapping[str, list[str]],
    index: Mapping[str, int],
    holders: list[list[str]],
    load: list[int],
    dead: list[bool],
    per_section: int,
) -> tuple[dict[int, str], int]:
    """BFS over sections along alternating paths: test -> section -> a test it holds ->
    another section of that test ... until a section with a free slot. Returns the test
    each section was reached from and the free section (-1 when there is none)."""
    parent_test: dict[int, str] = {}
    queue: deque[int] = deque()
    for s in starts:
        if s not in parent_test:
            parent_test[s] = test
            queue.append(s)
    while queue:
        s = queue.popleft()
        if load[s] < per_section:
            return parent_test, s
        for held in holders[s]:
            for nxt_name in adj[held]:
                nxt = index[nxt_name]
                if not dead[nxt] and nxt not in parent_test:
                    parent_test[nxt] = held
                    queue.append(nxt)
    return parent_test, -1


def _augment(
    s: int, parent_test: Mapping[int, str], match: dict[str, int], holders: list[list[str]]
) -> None:
    """Shift the tests along the path found back from the free section ``s``: each takes
    the section it was reached through, and the new test gets a slot."""
    while True:
        mover = parent_test[s]
        previous = match.get(mover)
        match[mover] = s
        holders[s].append(mover)
        if previous is None:
            break
        holders[previous].remove(mover)
        s = previous


def select_targets(
    links: Mapping[str, Iterable[str]],
    sections: Iterable[str] | None = None,
    *,
    per_section: int = 6,
) -> TargetSelection:
    """Min-cost max-flow target selection on the bigraph ``links`` (test -> its sections).

    ``sections`` fixes the order and includes sections with no test (they get ``[]``);
    by default the sections named in ``links``.
    """
    if per_section < 0:
        raise ValueError("per_section must be >= 0")
    order, adjacency = _bigraph(links, sections)
    index = {s: i for i, s in enumerate(order)}
    degree = {t: len(ss) for t, ss in adjacency.items()}
    tests = sorted((t for t in adjacency if degree[t] > 0), key=lambda t: (degree[t], t))
    adj = {t: sorted(adjacency[t], key=index.__getitem__) for t in tests}

    load = [0] * len(order)
    holders: list[list[str]] = [[] for _ in order]  # tests matched to each section
    match: dict[str, int] = {}
    dead = [per_section == 0] * len(order)

    for test in tests:
        starts = [index[s] for s in adj[test] if not dead[index[s]]]
        if not starts:
            continue
        parents, free = _free_section(test, starts, adj, index, holders, load, dead, per_section)
        if free < 0:
            for s in parents:
                dead[s] = True  # full, and every test it holds can only move among these
            continue
        load[free] += 1
        _augment(free, parents, match, holders)

    targets: dict[str, list[str]] = {name: [] for name in order}
    for test, slot in match.items():
        targets[order[slot]].append(test)
    for chosen in targets.values():
        chosen.sort()
    cost = sum(degree[t] for t in match)
    edges = sum(len(v) for v in adj.values())
    return TargetSelection(targets=targets, per_section=per_section, cost=cost, edges=edges)


# -- reading an instance's bigraph ------------------------------------------------------------


def spec_sections_or_error(instance: Instance) -> list[str]:
    """The spec's sections (its markdown headings); a spec without one is an error."""
    if instance.spec is None:
        raise InstanceError(instance.root / "instance.toml", "spec", "expected a spec file")
    sections = instance.spec_sections()
    if not sections:
        raise FormatError(
            instance.spec, "<headings>", "expected markdown headings ('## Section'): none found"
        )
    return sections


def _map_file(instance: Instance) -> Path:
    """Where the sections_map was written: its own file, or instance.toml if inline."""
    toml = instance.root / "instance.toml"
    try:
        value = tomllib.loads(toml.read_text(encoding="utf-8")).get("sections_map")
    except (OSError, tomllib.TOMLDecodeError):
        return toml
    return (instance.root / value).resolve() if isinstance(value, str) else toml


def _defined_tests(path: Path) -> set[str]:
    """``name`` and ``Class::name`` of the test functions a pytest file defines (read, not
    imported: the reference suite is untrusted code)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(f"{node.name}::{item.name}")
    return names


def check_sections_map(instance: Instance, sections: list[str]) -> dict[str, list[str]]:
    """The instance's bigraph, checked: every test id must name a test function of the
    reference suite and every section a heading of the spec."""
    file = _map_file(instance)
    if not instance.sections_map:
        raise InstanceError(
            file, "sections_map", "expected a map of test id -> [spec sections] (none given)"
        )
    known_sections = set(sections)
    defined: dict[Path, set[str]] = {}
    for test_id, linked in instance.sections_map.items():
        path_text, _, name = test_id.partition("::")
        path = (instance.root / path_text).resolve()
        if not name or not path.is_file():
            raise InstanceError(
                file, f"sections_map.{test_id}", "expected 'tests/<file>.py::<test>' of an "
                f"existing reference test file; {path_text} is not one",
            )  # fmt: skip
        if path not in defined:
            defined[path] = _defined_tests(path)
        if name.split("[", 1)[0] not in defined[path]:
            raise InstanceError(
                file, f"sections_map.{test_id}", f"unknown test: {path_text} defines no {name!r}"
            )
        for section in linked:
            if section not in known_sections:
                raise InstanceError(
                    file,
                    f"sections_map.{test_id}",
                    f"unknown section {section!r}; the spec's headings are {sections}",
                )
    return dict(instance.sections_map)


def read_targets(path: Path, instance: Instance) -> dict[str, list[str]]:
    """A ``targets.json`` (``{"targets": {section: [test ids]}}``), checked against the spec's
    sections and the reference suite's tests; errors name the file."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise FormatError(path, "<file>", f"expected a targets JSON file ({exc})") from None
    targets = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(targets, dict) or not all(
        isinstance(v, list) and all(isinstance(t, str) for t in v) for v in targets.values()
    ):
        raise FormatError(path, "targets", "expected {section: [test ids]}")
    sections = spec_sections_or_error(instance)
    defined: dict[Path, set[str]] = {}
    for section, tests in targets.items():
        if section not in sections:
            raise FormatError(path, f"targets.{section}", f"unknown section; spec has {sections}")
        for test_id in tests:
            path_text, _, name = test_id.partition("::")
            file = (instance.root / path_text).resolve()
            if file not in defined:
                defined[file] = _defined_tests(file) if file.is_file() else set()
            if name.split("[", 1)[0] not in defined[file]:
                raise FormatError(path, f"targets.{section}", f"unknown test {test_id!r}")
    return {str(k): list(v) for k, v in targets.items()}


def targets_for_instance(instance: Instance, *, per_section: int = 6) -> TargetSelection:
    sections = spec_sections_or_error(instance)
    links = check_sections_map(instance, sections)
    return select_targets(links, sections, per_section=per_section)


# -- a bigraph inferred by a model ------------------------------------------------------------

INFER = """\
Task: map the reference tests to the specification's sections.
For every reference test below, name the sections of the specification whose requirements it
checks (one or more, by their exact heading text). Reply with one JSON object mapping each test
id to a list of section names, for every test id listed.

## Sections
{sections}

## Test ids
{ids}

## Reference tests
{tests}
"""


def infer_sections_map(
    instance: Instance,
    client: Any,
    *,
    attempts: int = 3,
    retryable: tuple[type[Exception], ...] = (),
) -> dict[str, list[str]]:
    """Ask the model for the bigraph (test id -> sections) when the instance has none."""
    from suitebench.construct.prompts import ReplyFormatError, ask, extract_json, tests_listing
    from suitebench.construct.stats import test_functions

    sections = spec_sections_or_error(instance)
    ids = test_functions(instance.tests)

    def parse(text: str) -> dict[str, list[str]]:
        data = extract_json(text)
        if not isinstance(data, dict):
            raise ReplyFormatError("expected a JSON object {test id: [sections]}")
        unknown_tests = sorted(set(data) - set(ids))
        if unknown_tests:
            raise ReplyFormatError(f"unknown test ids {unknown_tests[:5]}")
        out: dict[str, list[str]] = {}
        for test, linked in data.items():
            if not isinstance(linked, list) or not all(isinstance(s, str) for s in linked):
                raise ReplyFormatError(f"expected a list of section names for {test}")
            bad = sorted(set(linked) - set(sections))
            if bad:
                raise ReplyFormatError(f"unknown sections {bad[:5]}; the sections are {sections}")
            out[test] = list(dict.fromkeys(linked))
        return out

    prompt = INFER.format(
        sections="\n".join(f"- {s}" for s in sections),
        ids="\n".join(ids),
        tests=tests_listing(instance),
    )
    result: dict[str, list[str]] = ask(
        client, prompt, parse, attempts=attempts, retryable=retryable, what="the sections map"
    )
    return result


def write_sections_map(instance: Instance, links: dict[str, list[str]], name: str) -> Path:
    """Write the map as an editable TOML file and point ``instance.toml`` at it."""
    import json

    from suitebench.construct.tomledit import has_key, insert_after_key

    path = instance.root / name
    lines = [f"{json.dumps(test)} = {json.dumps(sections)}" for test, sections in links.items()]
    path.write_text(
        "# test id -> the spec sections it checks (inferred by a model: review and edit)\n"
        + "\n".join(lines)
        + "\n",
        encoding="utf-8",
    )
    toml = instance.root / "instance.toml"
    text = toml.read_text(encoding="utf-8")
    if has_key(text, "sections_map"):
        raise InstanceError(toml, "sections_map", "already set: edit that map instead")
    text = insert_after_key(text, "tests", f"sections_map = {json.dumps(name)}")
    toml.write_text(text, encoding="utf-8")
    return path
