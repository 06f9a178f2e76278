"""Lay out an agent's workspace for a task, and list what it must never see.

* ``suite`` (TestSuiteBench): ``spec.md``, the brief, an empty ``tests/`` (for a ProgramBench
  task ``eval/tests/``, its workspace's layout); with
  ``with_executable`` (the paper's ablation) also the built reference as ``./executable`` (a
  Python-package instance gets the reference package directory instead).
* ``inputs`` (Auditors, Appendix D.1): ``docs/statement.txt``, ``docs/ref.<ext>`` (the first
  reference, as the paper shows the first of its references), the brief, ``scripts/`` with
  ``eval_hack.py``, ``write_generator.py``, ``gen_wrongs.py`` (disabled for ``--no-wrongs``),
  and ``workspace/{final,hacks,wrongs}/``.
* ``code``: ``spec.md`` and the brief; the agent writes ``build.sh`` (or the package).

Everything is copied, never linked: the workspace is the only writable directory the agent
has, and nothing in it points back at the instance or problem.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from suitebench.agents import briefs
from suitebench.model.instance import Instance, InstanceKind
from suitebench.model.problem import CheckerKind, Problem
from suitebench.suite.execute.workspaces import is_workspace_suite

TOOLS_DIR = Path(__file__).resolve().with_name("tools")
AGENT_DIR = ".suitebench-agent"  # inside the workspace: where presets write their trajectory
BRIEF_FILES = ("AGENTS.md", "CLAUDE.md")
_PROBE_CAP = 400  # held-out files probed per run


class Task(StrEnum):
    SUITE = "suite"
    INPUTS = "inputs"
    CODE = "code"


class WorkspaceError(ValueError):
    """The workspace cannot be laid out (names the path and why)."""


@dataclass
class Workspace:
    root: Path
    task: Task
    brief: str
    held_out: list[Path] = field(default_factory=list)  # roots the agent must not see
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def brief_path(self) -> Path:
        return self.root / BRIEF_FILES[0]

    def write_brief(self, text: str) -> None:
        self.brief = text
        for name in BRIEF_FILES:
            (self.root / name).write_text(text, encoding="utf-8")
        open_tree(self.root)


def open_tree(root: Path) -> None:
    """Let the agent (possibly an unprivileged uid in the sandbox) write everywhere in it.

    Also run after the agent, on what it left: a link is never followed and a file with a
    second link is left alone, since making it writable would change a file outside the tree
    that shares its inode."""
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o777)
        for name in filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                continue
            mode = stat.S_IMODE(st.st_mode)
            p.chmod(mode | 0o666 | (0o111 if mode & 0o100 else 0))
        for name in dirnames:
            d = Path(dirpath) / name
            if not d.is_symlink():
                d.chmod(0o777)


def _fresh(root: Path) -> Path:
    if root.exists() and any(root.iterdir()):
        raise WorkspaceError(f"{root}: the workspace directory exists and is not empty")
    root.mkdir(parents=True, exist_ok=True)
    (root / AGENT_DIR).mkdir()
    return root


def _fresh_with_spec(instance: Instance, root: Path) -> None:
    """A fresh workspace holding the instance's spec (the one thing every task starts from)."""
    if instance.spec is None or not instance.spec.is_file():
        raise WorkspaceError(f"instance {instance.name}: no spec to give the agent")
    _fresh(root)
    shutil.copyfile(instance.spec, root / "spec.md")


def check_apart(out: Path, held_out: list[Path]) -> None:
    """The output directory must not lie inside anything held out, nor contain it."""
    out = out.resolve()
    for h in held_out:
        h = h.resolve()
        if h == out or h in out.parents or out in h.parents:
            raise WorkspaceError(
                f"{out}: the output directory overlaps {h}, which the agent must not see"
            )


def suite_workspace(
    instance: Instance,
    root: Path,
    *,
    time_limit: float,
    with_executable: bool = False,
    reference_dir: Path | None = None,
    held_out_extra: list[Path] | None = None,
) -> Workspace:
    """``reference_dir`` is the built reference tree (needed for ``with_executable``).  A
    ProgramBench task's agent writes ``eval/tests/`` (and what its tests read under ``eval/``),
    the workspace its tests are run in (:mod:`suitebench.suite.execute.workspaces`)."""
    _fresh_with_spec(instance, root)
    workspace = uses_workspaces(instance)
    (root / ("eval/tests" if workspace else "tests")).mkdir(parents=True)
    package = instance.package if instance.kind is InstanceKind.PYTHON else None
    if with_executable:
        if reference_dir is None:
            raise WorkspaceError("with_executable needs the built reference")
        if package:
            shutil.copytree(reference_dir / package, root / package)
        else:
            shutil.copy2(reference_dir / "executable", root / "executable")
    ws = Workspace(root, Task.SUITE, "", _instance_held_out(instance, held_out_extra))
    ws.write_brief(
        briefs.suite_brief(
            instance.name,
            python_package=package,
            with_executable=with_executable,
            time_limit=time_limit,
            workspace=workspace,
        )
    )
    return ws


def uses_workspaces(instance: Instance) -> bool:
    """Whether the instance's suite runs in ProgramBench's workspaces: a task read as it is
    published, or an instance ``build init`` made of one."""
    return getattr(instance, "branches", None) is not None or is_workspace_suite(instance.tests)


def code_workspace(
    instance: Instance,
    root: Path,
    *,
    time_limit: float,
    held_out_extra: list[Path] | None = None,
) -> Workspace:
    _fresh_with_spec(instance, root)
    package = instance.package if instance.kind is InstanceKind.PYTHON else None
    ws = Workspace(root, Task.CODE, "", _instance_held_out(instance, held_out_extra))
    ws.write_brief(briefs.code_brief(instance.name, python_package=package, time_limit=time_limit))
    return ws


def inputs_workspace(
    problem: Problem,
    root: Path,
    *,
    time_limit: float,
    budget: int = 50,
    wrongs: bool = True,
    held_out_extra: list[Path] | None = None,
) -> Workspace:
    if problem.statement is None or not problem.statement.is_file():
        raise WorkspaceError(f"problem {problem.id}: no statement to give the agent")
    if not problem.references:
        raise WorkspaceError(f"problem {problem.id}: no reference solution to give the agent")
    ref = problem.references[0]
    if not ref.is_file():
        raise WorkspaceError(f"problem {problem.id}: reference {ref} is not a single source file")
    _fresh(root)
    docs = root / "docs"
    docs.mkdir()
    shutil.copyfile(problem.statement, docs / "statement.txt")
    ref_name = f"ref{ref.suffix}"
    shutil.copyfile(ref, docs / ref_name)
    scripts = root / "scripts"
    scripts.mkdir()
    for tool in ("_common.py", "eval_hack.py", "write_generator.py", "gen_wrongs.py"):
        shutil.copyfile(TOOLS_DIR / tool, scripts / tool)
    if not wrongs:
        text = (scripts / "gen_wrongs.py").read_text(encoding="utf-8")
        text = text.replace("DISABLED = False", "DISABLED = True", 1)
        (scripts / "gen_wrongs.py").write_text(text, encoding="utf-8")
    checker = problem.checker.label()
    if problem.checker.kind is CheckerKind.PROGRAM:
        checker = "tokens"  # the workspace tools approximate a custom checker by tokens
    config = {
        "time_limit": problem.time_limit,
        "memory_limit": problem.memory_limit,
        "checker": checker,
    }
    (scripts / "problem.json").write_text(json.dumps(config) + "\n", encoding="utf-8")
    for d in ("final", "hacks", "wrongs"):
        (root / "workspace" / d).mkdir(parents=True)
    held = [*_problem_held_out(problem), *(held_out_extra or [])]
    ws = Workspace(root, Task.INPUTS, "", held, {"ref": ref_name})
    ws.write_brief(
        briefs.inputs_brief(
            problem.id,
            ref=ref_name,
            time_limit=problem.time_limit,
            memory_limit=problem.memory_limit,
            budget=budget,
            wrongs=wrongs,
            task_time=time_limit,
        )
    )
    return ws


def _instance_held_out(instance: Instance, extra: list[Path] | None) -> list[Path]:
    held = [instance.root, instance.tests, instance.source]
    held += [m.patch for m in instance.mutants]
    return [*dict.fromkeys(held), *(extra or [])]


def _problem_held_out(problem: Problem) -> list[Path]:
    """The problem directory and every file it names, wherever the globs reached: pools,
    official tests, references, brute-force solutions, validator, checker, generator."""
    named: list[Path] = [problem.root, *problem.references, *problem.brute, *problem.official]
    named += [p for pool in problem.pools.values() for p in pool]
    named += [p for p in (problem.validator, problem.generator, problem.checker.program) if p]
    return list(dict.fromkeys(named))


# What every sandbox shows read-only anyway: a link from a held-out tree into these names a
# system file, not held-out material.
_SYSTEM_DIRS = tuple(
    Path(d) for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/proc", "/dev")
)


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def held_out_files(
    roots: list[Path], cap: int = _PROBE_CAP, *, links_out: bool = True
) -> list[Path]:
    """Concrete files under the held-out roots to probe for visibility (each root itself too).

    A root is the material itself and is taken where it resolves. A link met while walking a
    root is not material by being there: it counts (as its target) when its target lies inside
    a root, or, with ``links_out``, anywhere outside the system's directories; never a link to
    a system file (``/etc/passwd``). The user's tree is walked with ``links_out=False``: only
    what it holds is the user's."""
    real_roots = [Path(os.path.realpath(r)) for r in roots]
    out: list[Path] = []
    for root in real_roots:
        if root.is_file():
            out.append(root)
        elif root.is_dir():
            out.append(root)
            for dirpath, _dirs, files in os.walk(root):
                for f in sorted(files):
                    p = Path(dirpath) / f
                    if p.is_symlink():
                        real = Path(os.path.realpath(p))
                        if _under(real, real_roots) or (
                            links_out and not _under(real, list(_SYSTEM_DIRS))
                        ):
                            out.append(real)
                    else:
                        out.append(p)
                if len(out) >= cap:
                    break
        if len(out) >= cap:
            break
    return list(dict.fromkeys(out))[:cap]
