"""Equivalent mutants leave M's denominator and are listed with their reason: a Python mutant
compiling to the reference's bytecode (found by ``score`` whoever wrote the mutant), and the
instance's own ``[[equivalent]]`` list, keyed by what each mutant changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from suitebench.model.diffs import content_digest
from suitebench.model.instance import InstanceError, load_instance
from suitebench.run.store import Store
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ...cli_helpers import run_suitebench
from ..conftest import write_python_instance

RANGES = '''\
"""Clamping and percentages."""


def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def percent(part, whole):
    return (100 * part) // whole
'''

TESTS = {
    "test_ranges.py": """\
from ranges import clamp, percent


def test_clamp_low():
    assert clamp(-3, 0, 10) == 0


def test_clamp_high():
    assert clamp(12, 0, 10) == 10


def test_percent():
    assert percent(1, 4) == 25
""",
}

MUTANTS = [
    # Same tree: (100 * part) // whole is 100 * part // whole. Equivalent by its bytecode.
    ("paren", "ranges/__init__.py", "(100 * part) // whole", "100 * part // whole"),
    # x >= hi returns hi on a tie, and hi is x then: equivalent, but other bytecode; declared.
    ("tie", "ranges/__init__.py", "if x > hi:", "if x >= hi:"),
    # clamp(-3, 0, 10) returns -3: test_clamp_low kills it.
    ("low", "ranges/__init__.py", "        return lo", "        return x"),
    # A changed docstring is other bytecode: scored, and no test reads it: it survives.
    ("doc", "ranges/__init__.py", "Clamp x into [lo, hi].", "Clamp x into (lo, hi)."),
    # percent(1, 4) is 2: test_percent kills it.
    ("ten", "ranges/__init__.py", "(100 * part)", "(10 * part)"),
]


def _instance(root: Path, declarations: str = "") -> Path:
    toml = write_python_instance(
        root,
        name="ranges",
        source={"ranges/__init__.py": RANGES},
        tests=TESTS,
        spec="# ranges\n",
        mutants=MUTANTS,
    )
    if declarations:
        toml.write_text(toml.read_text() + "\n" + declarations)
    return toml


def _digest(root: Path, mutant_id: str) -> str:
    return content_digest((root / "mutants" / f"{mutant_id}.diff").read_bytes())


def _tie_declared(root: Path) -> str:
    return (
        "[[equivalent]]\n"
        'id = "tie"\n'
        'reason = "on a tie hi is x"\n'
        f'digest = "{_digest(root, "tie")}"\n'
    )


def test_equivalent_mutants_leave_the_denominator_with_their_reasons(tmp_path: Path) -> None:
    root = tmp_path / "ranges"
    _instance(root)
    text = (root / "instance.toml").read_text() + _tie_declared(root)
    # A stale mark (as if build mutants had found "low" equivalent before the source changed)
    # is checked again, not trusted: low is other bytecode, and scored.
    text = text.replace(
        'patch = "mutants/low.diff"\n', 'patch = "mutants/low.diff"\nequivalent = "tce"\n'
    )
    (root / "instance.toml").write_text(text)
    assert load_instance(root).mutant("low").equivalent == "tce"
    result = score_suite(load_instance(root), store=Store(tmp_path / "s" / "store.sqlite"))
    by_id = {m.id: m for m in result.mutants}
    # By hand: paren (bytecode) and tie (declared) are equivalent; of the other three, low
    # and ten are killed and doc survives: M = 2/3 (it would be 2/5 with the equivalents in).
    assert by_id["paren"].status is MutantStatus.EQUIVALENT
    assert by_id["paren"].equivalent == "tce"
    assert "bytecode" in by_id["paren"].message
    assert by_id["tie"].status is MutantStatus.EQUIVALENT
    assert by_id["tie"].equivalent == "declared"
    assert by_id["tie"].message == "on a tie hi is x"
    assert by_id["doc"].status is MutantStatus.SURVIVED
    assert by_id["low"].status is MutantStatus.KILLED
    assert by_id["ten"].status is MutantStatus.KILLED
    assert result.counts.mutants == 5 and result.counts.equivalent == 2
    assert result.counts.scored == 3 and result.counts.killed == 2
    assert result.mutation_score == pytest.approx(2 / 3)
    # Not run: no row in the matrix; in the instance's order among the others.
    assert by_id["paren"].outcomes == {} and by_id["tie"].outcomes == {}
    assert [m.id for m in result.mutants] == ["paren", "tie", "low", "doc", "ten"]


def test_a_declaration_follows_its_mutant_when_the_mutants_are_renumbered(tmp_path: Path) -> None:
    root = tmp_path / "ranges"
    _instance(root)
    declaration = _tie_declared(root)
    # A rebuild gives the ids out anew: "tie"'s change is now called "doc", and the other way.
    text = (root / "instance.toml").read_text()
    text = text.replace("mutants/tie.diff", "mutants/TMP").replace(
        "mutants/doc.diff", "mutants/tie.diff"
    )
    text = text.replace("mutants/TMP", "mutants/doc.diff")
    (root / "instance.toml").write_text(text + declaration)
    instance = load_instance(root)
    # The declaration names "tie", but the change it was made for is now mutant "doc".
    assert instance.mutant("doc").equivalent == "declared"
    assert instance.mutant("tie").equivalent is None
    assert instance.equivalent_unkeyed == ()


def test_a_declaration_whose_mutant_is_gone_is_an_error_naming_the_file(tmp_path: Path) -> None:
    root = tmp_path / "ranges"
    _instance(root)
    declaration = _tie_declared(root)
    # The "tie" change is gone (the source moved on; its id now names another change).
    (root / "mutants" / "tie.diff").write_text(
        (root / "mutants" / "tie.diff").read_text().replace("if x >= hi:", "if x != hi:")
    )
    (root / "instance.toml").write_text((root / "instance.toml").read_text() + declaration)
    with pytest.raises(InstanceError) as err:
        load_instance(root)
    message = str(err.value)
    assert "instance.toml" in message and "equivalent[0].digest" in message
    assert "'tie'" in message


def test_an_unknown_id_is_an_error_and_an_unkeyed_one_is_noted(tmp_path: Path) -> None:
    root = tmp_path / "ranges"
    _instance(root, '[[equivalent]]\nid = "nosuch"\nreason = "r"\n')
    with pytest.raises(InstanceError, match=r"instance\.toml.*equivalent\[0\]\.id.*'nosuch'"):
        load_instance(root)
    other = tmp_path / "other"
    _instance(other, '[[equivalent]]\nid = "tie"\nreason = "on a tie hi is x"\n')
    instance = load_instance(other)
    assert instance.mutant("tie").equivalent == "declared"
    assert instance.equivalent_unkeyed == ("tie",)
    no_reason = tmp_path / "no_reason"
    _instance(no_reason, '[[equivalent]]\nid = "tie"\n')
    with pytest.raises(InstanceError, match=r"equivalent\[0\]\.reason"):
        load_instance(no_reason)


def test_the_console_the_results_and_the_report_list_them(tmp_path: Path) -> None:
    root = tmp_path / "ranges"
    _instance(root, '[[equivalent]]\nid = "tie"\nreason = "on a tie hi is x"\n')
    out = tmp_path / "out"
    proc = run_suitebench(
        "score",
        root,
        "--out",
        out,
        module=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(
        r"M = 66\.7% \(2/3 killed, 0 build errors, 0 crashed, 2 equivalent\)", proc.stdout
    )
    assert "2 equivalent mutant(s) (not counted for M):" in proc.stdout
    assert re.search(r"paren\s+\[tce\] compiles to the reference's bytecode", proc.stdout)
    assert re.search(r"tie\s+\[declared\] on a tie hi is x", proc.stdout)
    # Declared by id alone: the console says which digest keeps it to this mutant.
    assert f'[[equivalent]] tie has no digest; add digest = "{_digest(root, "tie")}"' in (
        proc.stderr
    )
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["equivalent"] == 2 and results["counts"]["scored"] == 3
    statuses = {m["id"]: (m["status"], m["equivalent"]) for m in results["mutants"]}
    assert statuses["paren"] == ("equivalent", "tce")
    assert statuses["tie"] == ("equivalent", "declared")
    report = json.loads((out / "mutation-report.json").read_text())
    ignored = [
        m["statusReason"]
        for f in report["files"].values()
        for m in f["mutants"]
        if m["status"] == "Ignored"
    ]
    assert sorted(ignored) == [
        "compiles to the reference's bytecode, line numbers aside (TCE)",
        "on a tie hi is x",
    ]
    html = tmp_path / "report.html"
    proc = run_suitebench(
        "report",
        out,
        "-o",
        html,
        module=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "<h4>Equivalent mutants (not counted in M), with the reason</h4>" in page
    assert "<li><b>tie</b> [declared] on a tie hi is x</li>" in page


def test_build_mutants_runs_again_over_a_declaration_of_one_of_its_mutants(
    tmp_path: Path,
) -> None:
    from suitebench.construct.mutants import write_mutants

    root = tmp_path / "ranges"
    _instance(root)
    first = write_mutants(load_instance(root), cache_dir=tmp_path / "builds")
    tie = next(m for m in first.mutants if m.description.endswith("'>' -> '>='"))
    digest = content_digest((root / tie.patch).read_bytes())
    toml = root / "instance.toml"
    toml.write_text(
        toml.read_text()
        + f'\n[[equivalent]]\nid = "{tie.id}"\nreason = "on a tie hi is x"\ndigest = "{digest}"\n'
    )
    # The declaration names a generated id; a re-run must not take it for a hand-written
    # mutant of that name, and the declaration still holds after it.
    second = write_mutants(load_instance(root), cache_dir=tmp_path / "builds")
    assert [m.id for m in second.mutants] == [m.id for m in first.mutants]
    assert load_instance(root).mutant(tie.id).equivalent == "declared"
