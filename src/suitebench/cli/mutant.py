"""``suitebench show MUTANT`` and ``suitebench apply MUTANT``: one mutant of a score, read and
tried (mutmut's ``show`` and ``apply``, cosmic-ray's ``apply``).

Both read a score's ``results.json`` (``--results``; by default the last score, kept beside the
store), which carries each mutant's diff as scored: what is shown or applied is the mutant the
figures are about, even if the instance's mutants were rebuilt since.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.markup import escape

from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli._survivors import last_score_path, reached_line, where
from suitebench.cli.main import OPTIONS
from suitebench.suite.execute.patching import apply_patch
from suitebench.suite.result import MutantResult, SuiteResult

_out = HumanConsole(soft_wrap=True)
_err = error_console(soft_wrap=True)

_RESULTS_HELP = (
    "results.json of a score, or the directory holding it (default: the last score, kept "
    "beside the store)."
)


def _fail(message: str, code: int = 2) -> typer.Exit:
    _err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(code)


def _read(results: Path | None) -> tuple[Path, SuiteResult]:
    path = results if results is not None else last_score_path(OPTIONS.store)
    path = path / "results.json" if path.is_dir() else path
    if not path.is_file():
        hint = "" if results is not None else " (no score yet with this store: give --results)"
        raise _fail(f"{path}: no results.json{hint}")
    try:
        return path, SuiteResult.read(path)
    except (ValidationError, ValueError, OSError) as exc:
        first = str(exc).splitlines()[0]
        raise _fail(f"{path}: not a suite score's results.json ({first})") from None


def _mutant(result: SuiteResult, path: Path, mutant_id: str) -> MutantResult:
    for m in result.mutants:
        if m.id == mutant_id:
            return m
    ids = ", ".join(m.id for m in result.mutants[:8])
    more = " ..." if len(result.mutants) > 8 else ""
    raise _fail(f"{path}: no mutant {mutant_id!r} (mutants: {ids}{more})")


def _diff(result: SuiteResult, m: MutantResult) -> str:
    """The diff as scored; in results written before diffs were kept, read from its path."""
    if m.diff:
        return m.diff
    patch = Path(m.patch)
    if not patch.is_absolute() and result.instance_dir:
        patch = Path(result.instance_dir) / patch
    try:
        return patch.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def show(
    mutant_id: str = typer.Argument(..., help="The mutant's id (op0020, c05, ...)."),
    results: Path | None = typer.Option(None, "--results", help=_RESULTS_HELP),
) -> None:
    """Print one mutant of a score: where it is, its status, its diff, the tests that killed
    it with their failure messages, or the tests that reached it and passed."""
    path, result = _read(results)
    m = _mutant(result, path, mutant_id)
    if OPTIONS.json:
        sys.stdout.write(json.dumps(m.model_dump(mode="json"), indent=1) + "\n")
    style = {"killed": "green", "timeout": "green", "survived": "red"}.get(str(m.status), "yellow")
    _out.print(
        f"[bold]{escape(m.id)}[/bold]  [{style}]{m.status}[/{style}]  {escape(where(m))}"
        + (f"  operator {escape(m.operator)}" if m.operator else "")
        + (f"  section {escape(m.section)}" if m.section else ""),
        highlight=False,
    )
    if m.description:
        _out.print(escape(m.description), highlight=False)
    diff = _diff(result, m)
    _out.print(escape(diff.rstrip("\n")) if diff else "(no diff recorded)", highlight=False)
    if m.status.detected:
        _out.print(f"killed by {len(m.killed_by)} test(s):", highlight=False)
        for test in m.killed_by:
            why = m.kill_messages.get(test, "")
            _out.print(f"  {escape(test)}" + (f": {escape(why)}" if why else ""), highlight=False)
    else:
        _out.print(reached_line(m, shown=len(m.covered_by or [])), highlight=False)
    if m.message:  # the run's own message: a build error's compiler output, a lost run's
        _out.print(f"message: {escape(m.message[-2000:])}", highlight=False)


def _default_tree(result: SuiteResult) -> Path | None:
    """Where the mutant's paths land in the project: the source root ``build init`` copied
    from (``init.json``: a Python project's package root, else the repository itself), never
    the instance's copy of it (that is the reference every score runs); without ``init.json``
    the instance's own source root (an instance.toml written at the project's root scores the
    project's files themselves)."""
    if not result.instance_dir:
        return None
    root = Path(result.instance_dir)
    if (root / "init.json").is_file():
        try:
            init = json.loads((root / "init.json").read_text(encoding="utf-8"))
            source = init.get("python_project", {}).get("source") or init.get("repository")
        except (OSError, ValueError, AttributeError):
            source = None
        return Path(source) if source else None
    from suitebench.model.instance import InstanceError, load_instance

    try:
        return load_instance(root).source
    except InstanceError:
        return None


def _git_dirty(tree: Path) -> list[str] | None:
    """The changed files of the git working tree holding ``tree`` (None: not in one)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return [line for line in proc.stdout.splitlines() if line.strip()]


def apply(
    mutant_id: str = typer.Argument(..., help="The mutant's id."),
    results: Path | None = typer.Option(None, "--results", help=_RESULTS_HELP),
    to: Path | None = typer.Option(
        None,
        "--to",
        help="The source root the mutant's paths are relative to (default: the project's "
        "source root build init copied, from the instance's init.json).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Write even where the git working tree has changes, or is not a git tree.",
    ),
) -> None:
    """Write one mutant into a working tree, to see it fail (or not) under your own tools.
    Refuses a git working tree with uncommitted changes (or a tree not under git) unless
    --force: `git checkout -- .` then undoes it."""
    path, result = _read(results)
    m = _mutant(result, path, mutant_id)
    tree = to if to is not None else _default_tree(result)
    if tree is None or not tree.is_dir():
        raise _fail(f"{tree or '?'}: no source tree to apply {mutant_id} to (give --to DIR)")
    dirty = _git_dirty(tree)
    if dirty is None and not force:
        raise _fail(f"{tree}: not in a git working tree, nothing would undo it (--force writes)")
    if dirty and not force:
        shown = ", ".join(line[3:] for line in dirty[:5])
        raise _fail(f"{tree}: the git working tree has uncommitted changes ({shown}); commit or "
                    "stash them, or --force")  # fmt: skip
    diff = _diff(result, m)
    if not diff:
        raise _fail(f"{mutant_id}: no diff recorded in {path}")
    with tempfile.NamedTemporaryFile("w", suffix=".diff", encoding="utf-8") as fh:
        fh.write(diff)
        fh.flush()
        applied, output = apply_patch(tree, Path(fh.name))
    if not applied:
        first = output.strip().splitlines()[:3]
        raise _fail(f"{mutant_id} does not apply to {tree}: {' '.join(first)}", 1)
    _out.print(
        f"applied {escape(m.id)} ({m.status}) to {escape(str(tree))}: {escape(where(m))}",
        highlight=False,
    )
    if dirty is not None:
        _out.print(f"undo with: git -C {escape(str(tree))} checkout -- .", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("apply")(apply)
