"""Read ProgramBench task directories as suite-mode instances, without conversion.

TestSuiteBench builds its instances from ProgramBench tasks: a repository whose ``build.sh``
leaves ``./executable`` in the repository root, test *branches* under
``tests/<branch>/eval/tests/*.py`` that call ``./executable`` through ``subprocess``, and a
``tests.json`` that lists, per branch, the test ids and the ``ignored_tests`` with their reasons
(``gold_fail``, ``gold_flaky``, ``dummy_pass``, ``slow_or_hang``, ...).  The paper refines the
reference suite by dropping exactly such tests (Section 2.1), so an ignored test is excluded
from scoring here too -- and its reasons are kept, because a test silently missing from the
validity denominator is the classic harness bug.

``tests.json`` files in the wild carry trailing commas; strict JSON parsers reject them, so they
are tolerated here (and nothing else is).

Test ids: ProgramBench names a test by the JUnit ``classname.name`` of a run from the branch
directory (``eval.tests.test_lookup.TestComments.test_hash_lines_ignored``); suite mode copies a
suite to ``tests/`` in the working directory and names tests by pytest node id
(``tests/test_lookup.py::TestComments::test_hash_lines_ignored``).  Both forms are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field

from suitebench.model.instance import Instance, InstanceError, InstanceKind, MutantSpec

__all__ = [
    "SUITE_DIRNAME",
    "ProgramBenchInstance",
    "branch_note",
    "default_branch",
    "ignored_branches",
    "is_programbench_task",
    "load_programbench_task",
    "load_programbench_tasks",
    "node_id_to_programbench_id",
    "programbench_branches",
    "programbench_id_to_node_id",
    "read_tests_json",
]

SUITE_DIRNAME = "tests"
"""Where suite mode puts a suite in the working directory; node ids start with it."""

_EVAL_PREFIX = "eval.tests."
_BUILD = "build.sh"
_TESTS_JSON = "tests.json"
_MANIFESTS = ("operators.json", "requirements.json")  # written by `build mutants`


class ProgramBenchInstance(Instance):
    """A suite-mode instance read from one branch of a ProgramBench task.

    ``expected_tests`` is every test ``tests.json`` lists for the branch (node ids, ignored ones
    included; empty without ``tests.json``: then the suite is whatever pytest collects),
    ``ignored_tests`` maps the excluded ones to their reasons, and ``programbench_ids`` maps
    node ids back to ProgramBench's dotted ids for reporting.
    """

    branch: str
    expected_tests: tuple[str, ...] = ()
    ignored_tests: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    programbench_ids: dict[str, str] = Field(default_factory=dict)

    def scored_tests(self) -> tuple[str, ...]:
        """The reference suite after refinement: listed tests minus the ignored ones."""
        return tuple(t for t in self.expected_tests if t not in self.ignored_tests)


def _strip_trailing_commas(text: str) -> str:
    """Drop commas that directly precede ``}`` or ``]`` (outside strings), nothing else."""
    out: list[str] = []
    in_string = False
    escaped = False
    pending_comma = -1  # index in ``out`` of a comma that may turn out to be trailing
    for char in text:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char in " \t\r\n":
            out.append(char)
            continue
        if char in "}]" and pending_comma >= 0:
            out[pending_comma] = ""
        pending_comma = -1
        if char == ",":
            pending_comma = len(out)
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out)


def read_tests_json(path: Path | str) -> dict[str, Any]:
    """``tests.json`` as a dict, tolerating trailing commas; InstanceError on anything else."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(path, "<file>", f"expected a readable UTF-8 file ({exc})") from exc
    try:
        data = json.loads(_strip_trailing_commas(text))
    except json.JSONDecodeError as exc:
        raise InstanceError(path, "<file>", f"expected JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("branches"), dict):
        raise InstanceError(path, "branches", "expected an object of branch name -> branch")
    return data


def is_programbench_task(path: Path | str) -> bool:
    """Whether ``path`` looks like a ProgramBench task: ``build.sh`` and ``tests/``, with a
    ``tests.json`` or, as some tasks are published, only a branch of ``eval/tests/*.py``.

    A directory with an ``instance.toml`` is an instance, whatever else it holds."""
    path = Path(path)
    if not path.is_dir() or (path / "instance.toml").is_file() or not (path / "tests").is_dir():
        return False
    if (path / _TESTS_JSON).is_file():
        return True
    return (path / _BUILD).is_file() and bool(_branch_dirs(path))


def _branch_dirs(root: Path) -> list[str]:
    """Branches on disk: ``tests/<branch>/eval/tests`` holding a ``*.py``, in sorted order."""
    return sorted(
        d.name
        for d in (root / "tests").iterdir()
        if d.is_dir() and any((d / "eval" / "tests").glob("*.py"))
    )


def _manifest_mutants(root: Path) -> tuple[MutantSpec, ...]:
    """Mutants ``build mutants`` wrote into the task: the task has no ``instance.toml`` to list
    them in, so its manifests under ``mutants/`` are the list (a missing diff is an error)."""
    mutants: list[MutantSpec] = []
    for name in _MANIFESTS:
        file = root / "mutants" / name
        if not file.is_file():
            continue
        try:
            records = json.loads(file.read_text(encoding="utf-8")).get("mutants", [])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as exc:
            raise InstanceError(file, "<file>", f"expected a mutants manifest ({exc})") from exc
        for index, record in enumerate(records):
            patch = root / str(record.get("patch", ""))
            if not patch.is_file():
                raise InstanceError(
                    file,
                    f"mutants[{index}].patch",
                    f"expected an existing file, {patch} is not one",
                )
            mutants.append(
                MutantSpec(
                    id=record["id"],
                    patch=patch,
                    section=record.get("section"),
                    target=record.get("target"),
                    description=record.get("description", ""),
                    operator=record.get("operator"),
                )
            )
    return tuple(mutants)


def _branch_entry(file: Path, data: dict[str, Any], branch: str) -> dict[str, Any]:
    entry = data["branches"].get(branch)
    if not isinstance(entry, dict):
        raise InstanceError(file, f"branches.{branch}", "expected an object (no such branch?)")
    return entry


def ignored_branches(task_dir: Path | str) -> dict[str, str]:
    """Branches ``tests.json`` marks ``ignored``, with their ``ignore_reason`` (none without
    a ``tests.json``: nothing marks them)."""
    file = Path(task_dir) / _TESTS_JSON
    if not file.is_file():
        return {}
    data = read_tests_json(file)
    return {
        name: str(entry.get("ignore_reason", ""))
        for name, entry in data["branches"].items()
        if isinstance(entry, dict) and entry.get("ignored")
    }


def programbench_branches(task_dir: Path | str) -> list[str]:
    """The branches to score: those of ``tests.json`` not marked ``ignored``, in file order;
    without ``tests.json``, every ``tests/<branch>/eval/tests`` on disk, in sorted order."""
    root = Path(task_dir)
    if not (root / _TESTS_JSON).is_file():
        return _branch_dirs(root)
    return _active_branches(read_tests_json(root / _TESTS_JSON))


def _active_branches(data: dict[str, Any]) -> list[str]:
    return [
        name
        for name, entry in data["branches"].items()
        if isinstance(entry, dict) and not entry.get("ignored")
    ]


def programbench_id_to_node_id(programbench_id: str, suite_dir: Path | str) -> str:
    """``eval.tests.mod.Class.test[p]`` -> ``tests/mod.py::Class::test[p]``.

    Node ids relative to the branch directory (``eval/tests/mod.py::test``) are accepted too.

    The module part is found by looking for the longest dotted prefix that names a ``.py`` file
    under ``suite_dir`` (test modules may sit in sub-packages); a parameter id in brackets may
    itself contain dots and is kept whole.  ValueError if no file matches.
    """
    if programbench_id.startswith("eval/tests/") and "::" in programbench_id:
        # Some task files list pytest node ids instead of the JUnit form.
        file, _, test_names = programbench_id.partition("::")
        relative = file[len("eval/tests/") :]
        if not (Path(suite_dir) / relative).is_file():
            raise ValueError(f"no test module under {suite_dir} for {programbench_id!r}")
        return f"{SUITE_DIRNAME}/{relative}::{test_names}"
    if not programbench_id.startswith(_EVAL_PREFIX):
        raise ValueError(f"expected an id starting with {_EVAL_PREFIX!r}: {programbench_id!r}")
    rest = programbench_id[len(_EVAL_PREFIX) :]
    bracket = rest.find("[")
    head, params = (rest, "") if bracket < 0 else (rest[:bracket], rest[bracket:])
    parts = head.split(".")
    suite = Path(suite_dir)
    for cut in range(len(parts) - 1, 0, -1):
        module = Path(*parts[:cut]).with_suffix(".py")
        if (suite / module).is_file():
            names = parts[cut:]
            names[-1] += params
            return "::".join([f"{SUITE_DIRNAME}/{module.as_posix()}", *names])
    raise ValueError(f"no test module under {suite} for {programbench_id!r}")


def node_id_to_programbench_id(node_id: str) -> str:
    """``tests/mod.py::Class::test[p]`` -> ``eval.tests.mod.Class.test[p]`` (JUnit form)."""
    file, _, names = node_id.partition("::")
    if not file.startswith(f"{SUITE_DIRNAME}/") or not file.endswith(".py"):
        raise ValueError(f"expected a node id under {SUITE_DIRNAME}/: {node_id!r}")
    module = file[len(SUITE_DIRNAME) + 1 : -3].replace("/", ".")
    return ".".join([_EVAL_PREFIX + module, *names.split("::")]) if names else module


def _string_list(file: Path, field: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InstanceError(file, field, "expected a list of test id strings")
    return list(value)


def _ignored(file: Path, where: str, value: Any) -> dict[str, tuple[str, ...]]:
    """``ignored_tests``: ``[{name, reasons: [{id}, ...]}]`` -> ProgramBench id -> reasons."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise InstanceError(file, where, "expected a list of {name, reasons}")
    result: dict[str, tuple[str, ...]] = {}
    for index, item in enumerate(value):
        field = f"{where}[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise InstanceError(file, f"{field}.name", "expected an object with a string name")
        reasons = item.get("reasons", [])
        if not isinstance(reasons, list):
            raise InstanceError(file, f"{field}.reasons", "expected a list of {id}")
        ids: list[str] = []
        for reason in reasons:
            if isinstance(reason, dict) and isinstance(reason.get("id"), str):
                ids.append(reason["id"])
            elif isinstance(reason, str):
                ids.append(reason)
            else:
                raise InstanceError(file, f"{field}.reasons", "expected {id: string} entries")
        previous = result.get(item["name"], ())
        result[item["name"]] = previous + tuple(r for r in ids if r not in previous)
    return result


def load_programbench_task(task_dir: Path | str, branch: str | None = None) -> ProgramBenchInstance:
    """One branch of a ProgramBench task directory as a suite-mode instance.

    The task directory is the repository root: ``build.sh`` there must leave ``./executable``,
    and it is the instance's source.  ``branch`` defaults to the only branch not marked
    ``ignored``; with several, name one (or use :func:`load_programbench_tasks`).  An optional
    ``spec.md`` next to ``tests.json`` becomes the spec, as TestSuiteBench adds one.

    Tasks are also published without ``tests.json``: then every test collected under the
    branch's ``eval/tests`` is in the suite, none is ignored, and the branch defaults to the
    first on disk in sorted order (:func:`default_branch` says so when there are several).
    """
    root = Path(task_dir).resolve()
    file = root / _TESTS_JSON
    if not (root / _BUILD).is_file():
        raise InstanceError(root / _BUILD, "<file>", "expected build.sh leaving ./executable")
    if not file.is_file():
        return _load_without_tests_json(root, branch)
    data = read_tests_json(file)
    if branch is None:
        active = _active_branches(data)
        if len(active) != 1:
            raise InstanceError(
                file, "branches", f"expected exactly one branch not ignored, found {active}"
            )
        branch = active[0]
    entry = _branch_entry(file, data, branch)
    if entry.get("ignored"):
        reason = entry.get("ignore_reason") or "no reason given"
        raise InstanceError(file, f"branches.{branch}.ignored", f"branch is ignored ({reason})")
    suite = root / "tests" / branch / "eval" / "tests"
    if not suite.is_dir():
        raise InstanceError(file, f"branches.{branch}", f"expected the directory {suite}")

    listed = _string_list(file, f"branches.{branch}.tests", entry.get("tests", []))
    ignored = _ignored(file, f"branches.{branch}.ignored_tests", entry.get("ignored_tests"))
    to_node: dict[str, str] = {}
    for index, test in enumerate([*listed, *ignored]):
        if test in to_node:
            continue
        try:
            to_node[test] = programbench_id_to_node_id(test, suite)
        except ValueError as exc:
            field = (
                f"branches.{branch}.tests[{index}]"
                if index < len(listed)
                else f"branches.{branch}.ignored_tests"
            )
            raise InstanceError(file, field, str(exc)) from exc
    return _instance(
        root,
        branch,
        expected_tests=tuple(dict.fromkeys(to_node[t] for t in listed)),
        ignored_tests={to_node[t]: reasons for t, reasons in ignored.items()},
        programbench_ids={node: test for test, node in to_node.items()},
    )


def default_branch(task_dir: Path | str) -> tuple[str, list[str]]:
    """The branch a task without ``tests.json`` is read from, and every branch on disk: the
    only one, or the first in sorted order (callers name the others, so the choice is seen)."""
    root = Path(task_dir)
    branches = _branch_dirs(root)
    if not branches:
        raise InstanceError(
            root / "tests", "<dir>", "expected a test branch tests/<branch>/eval/tests/*.py"
        )
    return branches[0], branches


def branch_note(task_dir: Path | str) -> str | None:
    """What to tell the user when a task without ``tests.json`` has several branches and the
    first was read (None otherwise): the choice is never silent."""
    root = Path(task_dir)
    if (root / _TESTS_JSON).is_file():
        return None
    chosen, branches = default_branch(root)
    if len(branches) < 2:
        return None
    return (
        f"{root} has no tests.json and {len(branches)} test branches "
        f"({', '.join(branches)}): reading {chosen}, the first in sorted order"
    )


def _load_without_tests_json(root: Path, branch: str | None) -> ProgramBenchInstance:
    if branch is None:
        branch, _ = default_branch(root)
    suite = root / "tests" / branch / "eval" / "tests"
    if not suite.is_dir():
        raise InstanceError(
            root / "tests", branch, f"expected the directory {suite} (no tests.json, no branch)"
        )
    return _instance(root, branch)


def _instance(root: Path, branch: str, **tests: Any) -> ProgramBenchInstance:
    spec = root / "spec.md"
    return ProgramBenchInstance(
        name=root.name,
        kind=InstanceKind.CLI,
        root=root,
        spec=spec if spec.is_file() else None,
        build=_BUILD,
        source=root,
        tests=root / "tests" / branch / "eval" / "tests",
        mutants=_manifest_mutants(root),
        description=f"ProgramBench task {root.name}, test branch {branch}",
        branch=branch,
        **tests,
    )


def load_programbench_tasks(task_dir: Path | str) -> list[ProgramBenchInstance]:
    """Every branch of a task not marked ``ignored``, one instance each."""
    return [load_programbench_task(task_dir, b) for b in programbench_branches(task_dir)]
