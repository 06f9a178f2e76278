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

from suitebench.model.instance import (
    TCE_REASON,
    Instance,
    InstanceError,
    InstanceKind,
    MutantSpec,
)

__all__ = [
    "SUITE_DIRNAME",
    "ProgramBenchInstance",
    "branch_of",
    "build_script_of",
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
_BUILDS = (_BUILD, "compile.sh")  # ProgramBench's published submissions build with compile.sh
_TESTS_JSON = "tests.json"
_MANIFESTS = ("operators.json", "requirements.json")  # written by `build mutants`


class ProgramBenchInstance(Instance):
    """A suite-mode instance read from a ProgramBench task: every branch not ignored, together
    (or the one named with ``--branch``), as ProgramBench scores a task.

    ``tests`` is the task's ``tests/`` directory and ``branches`` the branches scored; a run
    lays each out as a workspace (:mod:`suitebench.suite.execute.workspaces`), so node ids carry the
    branch: ``tests/<branch>/eval/tests/test_x.py::Class::test``.  ``expected_tests`` is every
    test ``tests.json`` lists for those branches (node ids, ignored ones included; empty
    without ``tests.json``: then the suite is whatever pytest collects), ``ignored_tests`` maps
    the excluded ones to their reasons, and ``programbench_ids`` maps node ids back to
    ProgramBench's dotted ids (``eval.tests.test_x.Class.test``, the branch being the node id's
    second part) for reporting.
    """

    branches: tuple[str, ...]
    expected_tests: tuple[str, ...] = ()
    ignored_tests: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    programbench_ids: dict[str, str] = Field(default_factory=dict)

    @property
    def branch(self) -> str:
        """The branch, when one is scored (else ValueError: say which)."""
        if len(self.branches) != 1:
            raise ValueError(f"{self.name} scores {len(self.branches)} branches")
        return self.branches[0]

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
    return build_script_of(path) is not None and bool(_branch_dirs(path))


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
                    equivalent="tce" if record.get("equivalent") == "tce" else None,
                    equivalent_reason=TCE_REASON if record.get("equivalent") == "tce" else "",
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


def _node_prefix(branch: str | None) -> str:
    """Where a branch's test files sit in the suite a run collects (:data:`SUITE_DIRNAME`)."""
    return f"{SUITE_DIRNAME}/" if branch is None else f"{SUITE_DIRNAME}/{branch}/eval/tests/"


def programbench_id_to_node_id(
    programbench_id: str, suite_dir: Path | str, branch: str | None = None
) -> str:
    """``eval.tests.mod.Class.test[p]`` of ``branch`` ->
    ``tests/<branch>/eval/tests/mod.py::Class::test[p]`` (``tests/mod.py::...`` without one).

    Node ids relative to the workspace (``eval/tests/mod.py::test``) are accepted too.

    The module part is found by looking for the longest dotted prefix that names a ``.py`` file
    under ``suite_dir`` (the branch's ``eval/tests``; test modules may sit in sub-packages); a
    parameter id in brackets may itself contain dots and is kept whole.  ValueError if no file
    matches.
    """
    prefix = _node_prefix(branch)
    if programbench_id.startswith("eval/tests/") and "::" in programbench_id:
        # Some task files list pytest node ids instead of the JUnit form.
        file, _, test_names = programbench_id.partition("::")
        relative = file[len("eval/tests/") :]
        if not (Path(suite_dir) / relative).is_file():
            raise ValueError(f"no test module under {suite_dir} for {programbench_id!r}")
        return f"{prefix}{relative}::{test_names}"
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
            return "::".join([f"{prefix}{module.as_posix()}", *names])
    raise ValueError(f"no test module under {suite} for {programbench_id!r}")


def node_id_to_programbench_id(node_id: str) -> str:
    """``tests/<branch>/eval/tests/mod.py::Class::test[p]`` (or ``tests/mod.py::...``) ->
    ``eval.tests.mod.Class.test[p]``: the JUnit name ProgramBench's ``eval/run.sh`` gives it
    (the branch is :func:`branch_of`)."""
    file, _, names = node_id.partition("::")
    if not file.startswith(f"{SUITE_DIRNAME}/") or not file.endswith(".py"):
        raise ValueError(f"expected a node id under {SUITE_DIRNAME}/: {node_id!r}")
    branch = branch_of(node_id)
    start = len(_node_prefix(branch))
    module = file[start:-3].replace("/", ".")
    return ".".join([_EVAL_PREFIX + module, *names.split("::")]) if names else module


def branch_of(node_id: str) -> str | None:
    """The branch a workspace test's node id carries (``tests/<branch>/eval/tests/...``)."""
    parts = node_id.partition("::")[0].split("/")
    if len(parts) > 4 and parts[0] == SUITE_DIRNAME and parts[2:4] == ["eval", "tests"]:
        return parts[1]
    return None


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
    """A ProgramBench task directory as a suite-mode instance: every branch not ignored,
    together, as ProgramBench scores it, or only ``branch``.

    The task directory is the repository root: ``build.sh`` (or ``compile.sh``) there must
    leave ``./executable``, and it is the instance's source.  An optional ``spec.md`` next to
    ``tests.json`` becomes the spec, as TestSuiteBench adds one.  A branch not in the task is
    an error naming the branches there are; an ignored one, an error giving its reason.

    Tasks are also published without ``tests.json``: then every branch on disk is scored,
    every test collected under its ``eval/tests`` is in the suite and none is ignored.
    """
    root = Path(task_dir).resolve()
    file = root / _TESTS_JSON
    build = build_script_of(root)
    if build is None:
        raise InstanceError(root / _BUILD, "<file>", "expected build.sh leaving ./executable")
    if not file.is_file():
        return _load_without_tests_json(root, branch, build)
    data = read_tests_json(file)
    active = _active_branches(data)
    if branch is None:
        if not active:
            raise InstanceError(file, "branches", "expected a branch not ignored, found none")
        chosen = active
    else:
        entry = data["branches"].get(branch)
        if not isinstance(entry, dict):
            raise InstanceError(
                file, f"branches.{branch}", f"no such branch; the branches are {_choices(data)}"
            )
        if entry.get("ignored"):
            reason = entry.get("ignore_reason") or "no reason given"
            raise InstanceError(
                file,
                f"branches.{branch}.ignored",
                f"branch is ignored ({reason}); the branches not ignored are {active}",
            )
        chosen = [branch]
    expected: list[str] = []
    ignored_ids: dict[str, tuple[str, ...]] = {}
    pb_ids: dict[str, str] = {}
    for name in chosen:
        listed, ignored, ids = _branch_tests(root, file, data, name)
        expected.extend(listed)
        ignored_ids.update(ignored)
        pb_ids.update(ids)
    return _instance(
        root,
        tuple(chosen),
        build,
        expected_tests=tuple(dict.fromkeys(expected)),
        ignored_tests=ignored_ids,
        programbench_ids=pb_ids,
    )


def _choices(data: dict[str, Any]) -> str:
    ignored = [n for n, e in data["branches"].items() if isinstance(e, dict) and e.get("ignored")]
    return f"{_active_branches(data)} (ignored: {ignored})"


def _branch_tests(
    root: Path, file: Path, data: dict[str, Any], branch: str
) -> tuple[list[str], dict[str, tuple[str, ...]], dict[str, str]]:
    """One branch's listed tests and ignored tests as node ids, and node id -> dotted id."""
    entry = _branch_entry(file, data, branch)
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
            to_node[test] = programbench_id_to_node_id(test, suite, branch)
        except ValueError as exc:
            field = (
                f"branches.{branch}.tests[{index}]"
                if index < len(listed)
                else f"branches.{branch}.ignored_tests"
            )
            raise InstanceError(file, field, str(exc)) from exc
    return (
        [to_node[t] for t in listed],
        {to_node[t]: reasons for t, reasons in ignored.items()},
        {node: test for test, node in to_node.items()},
    )


def build_script_of(root: Path) -> str | None:
    """The task's build script: ``build.sh``, or ``compile.sh`` as ProgramBench's published
    submissions name it; None if there is neither."""
    for name in _BUILDS:
        if (root / name).is_file():
            return name
    return None


def _load_without_tests_json(root: Path, branch: str | None, build: str) -> ProgramBenchInstance:
    on_disk = _branch_dirs(root)
    if not on_disk:
        raise InstanceError(
            root / "tests", "<dir>", "expected a test branch tests/<branch>/eval/tests/*.py"
        )
    if branch is not None and branch not in on_disk:
        raise InstanceError(
            root / "tests",
            branch,
            f"no such branch (no tests.json); the branches on disk are {on_disk}",
        )
    return _instance(root, tuple(on_disk if branch is None else [branch]), build)


def _instance(
    root: Path, branches: tuple[str, ...], build: str, **tests: Any
) -> ProgramBenchInstance:
    spec = root / "spec.md"
    return ProgramBenchInstance(
        name=root.name,
        kind=InstanceKind.CLI,
        root=root,
        spec=spec if spec.is_file() else None,
        build=build,
        source=root,
        tests=root / "tests",
        mutants=_manifest_mutants(root),
        description=f"ProgramBench task {root.name}, test branches {', '.join(branches)}",
        branches=branches,
        **tests,
    )


def load_programbench_tasks(task_dir: Path | str) -> list[ProgramBenchInstance]:
    """Every branch of a task not marked ``ignored``, one instance each."""
    return [load_programbench_task(task_dir, b) for b in programbench_branches(task_dir)]
