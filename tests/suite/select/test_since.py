"""``--since REV``: the lines git says changed, the mutants on them, and what ``build mutants``
and ``score`` do with them, on the project of tests/suite/edit_series.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from suitebench.construct.mutants import write_mutants
from suitebench.model.instance import load_instance
from suitebench.suite.select.since import (
    EVERY_LINE,
    SinceError,
    changed_lines,
    mutant_lines,
    since_choice,
)

from ...cli_helpers import run_suitebench
from ..edit_series import changed_function, comment, commit, make_project


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_changed_lines_are_the_edits_lines(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop")
    comment(project)  # not committed: the working tree counts
    (project / "src/shop/extra.py").write_text("X = 1\n")  # untracked: every line
    changes = changed_lines(project / "src", "v1")
    cart = project / "src/shop/cart.py"
    # The two comment lines comment() adds, by their text in the edited file.
    assert changes.files["shop/cart.py"] == {
        _line_of(cart, "# Codes match exactly."),
        _line_of(cart, "# Round once"),
    }
    assert changes.files["shop/extra.py"] is EVERY_LINE
    assert set(changes.files) == {"shop/cart.py", "shop/extra.py"}
    commit(project, "comments")
    assert changed_lines(project / "src", "HEAD").files == {}


def test_bad_revision_and_no_git_are_one_line_errors(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop")
    with pytest.raises(SinceError, match="--since v9: not a revision git knows"):
        changed_lines(project / "src", "v9")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SinceError, match="needs the instance's source in a git work tree"):
        changed_lines(plain, "HEAD")


def test_mutants_on_changed_lines_are_chosen(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop")
    changed_function(project)  # two lines added to discount: the BULK code
    commit(project, "bulk")
    write_mutants(load_instance(project), cache_dir=tmp_path / "builds")
    instance = load_instance(project)
    choice = since_choice(instance, "v1", None)
    cart = project / "src/shop/cart.py"
    bulk = {_line_of(cart, '"BULK"'), _line_of(cart, "total * 9 / 10")}
    # By hand: a mutant is chosen iff its patch touches one of the two added lines.
    for m in instance.mutants:
        touched = mutant_lines(m.patch.read_bytes())
        assert touched is not None
        on = any(line in bulk for line in touched.get("shop/cart.py", set()))
        assert (m.id in choice.chosen) == on, m.description
    assert choice.chosen and choice.left_out
    assert choice.left_out_files == ["shop/cart.py", "shop/money.py"]
    # build mutants --since writes only those (the same sites, the same count).
    report = write_mutants(
        load_instance(project),
        cache_dir=tmp_path / "builds",
        since=changed_lines(cart.parent.parent, "v1"),
    )
    assert len(report.mutants) == len(choice.chosen)
    assert all(r.line in bulk for r in report.mutants)
    # money.py has sites, none on a changed line; cart.py has both kinds.
    assert report.since is not None and report.since["unchanged_files"] == ["shop/money.py"]


@pytest.mark.slow
def test_score_since_says_what_it_left_out(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop")
    write_mutants(load_instance(project), cache_dir=tmp_path / "builds")
    commit(project, "mutants")
    changed_function(project)
    commit(project, "bulk")
    write_mutants(load_instance(project), cache_dir=tmp_path / "builds")
    expected = since_choice(load_instance(project), "HEAD~1", None)
    out = tmp_path / "score"
    proc = run_suitebench(
        "score", project, "--since", "HEAD~1", "--out", out, store=tmp_path / "store.sqlite",
        module=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert [m["id"] for m in results["mutants"]] == expected.chosen
    since = results["since"]
    assert since["rev"] == "HEAD~1" and since["changed_files"] == ["shop/cart.py"]
    assert since["left_out"] == expected.left_out
    assert since["mutants_scored"] + since["mutants_left_out"] == len(
        load_instance(project).mutants
    )
    assert (
        f"{len(expected.chosen)} mutant(s) on changed lines in 1 changed file(s) scored; "
        f"{len(expected.left_out)} left out, not run" in proc.stdout
    )
