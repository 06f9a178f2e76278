"""Operator mutants of a shell script: ProgramBench's calculator example is one, and a task
whose program is a script must get mutants like any other (needs ``tree-sitter-bash``, the
``build`` extra)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_bash")

from suitebench.construct.mutants import mutation_sites, write_mutants
from suitebench.model.instance import load_instance

# A calculator with a real off-by-one kept in (``-gt 3`` should be ``-ge 3``: three operands
# are refused); strings, comments and echoed words must never change.
CALC = """#!/bin/bash
# keep: a + b -gt 1 && c
usage() { echo "usage: calc A OP B (2 + 3)"; exit 2; }
if [ "$#" -gt 3 ] || [ -z "$1" ]; then usage; fi
a=$1 op=$2 b=$3
case "$op" in
  +) echo $((a + b)) ;;
  -) echo $((a - b)) ;;
  x) echo $((a * b)) ;;
  *) usage ;;
esac
if [[ $a == 0 ]] && (( b < 10 )); then echo small; fi
echo 5
exit 0
"""


def _sites() -> dict[tuple[int, str], str]:
    sites = mutation_sites("calc.sh", CALC.encode())
    return {(s.line, s.description.split(": ", 1)[1]): s.operator for s in sites}


def test_shell_operators_mutate_tests_arithmetic_lists_conditions_and_commands() -> None:
    sites = _sites()
    # By hand, line by line: 4: -gt -> -ge / -le, -z -> -n, || -> &&, the if negated.
    assert sites[(4, "'-gt' -> '-ge'")] == "relational"
    assert sites[(4, "'-gt' -> '-le'")] == "relational"
    assert sites[(4, "'-z' -> '-n'")] == "relational"
    assert sites[(4, "'||' -> '&&'")] == "logical"
    assert sites[(4, "integer 3 -> 4")] == "constant"
    assert (4, 'condition \'[ "$#" -gt 3 ] || [ -z "$1" ]\' negated') in sites
    # 7-9: the arithmetic of $(( )), as in C.
    assert sites[(7, "'+' -> '-'")] == "arithmetic"
    assert sites[(9, "'*' -> '/'")] == "arithmetic"
    # 12: [[ == ]] compares strings, (( < )) numbers.
    assert sites[(12, "'==' -> '!='")] == "relational"
    assert sites[(12, "'<' -> '<='")] == "relational"
    # 14: exit's status counts; 13: echo 5 prints a word, which is not a number to change.
    assert sites[(14, "integer 0 -> 1")] == "constant"
    assert not any(line == 13 and "integer" in what for line, what in sites)
    # A command statement becomes ':'.
    assert (13, "command 'echo 5' replaced by ':'") in sites
    # The comment on line 2 and the usage string are never touched.
    assert not any(line == 2 for line, _ in sites)
    for site in mutation_sites("calc.sh", CALC.encode()):
        mutated = site.mutated(CALC.encode()).decode()
        assert "# keep: a + b -gt 1 && c" in mutated
        if site.operator != "delete_statement":  # (deleting the echo takes its string)
            assert '"usage: calc A OP B (2 + 3)"' in mutated
        check = subprocess.run(["bash", "-n"], input=mutated, text=True, capture_output=True)
        assert check.returncode == 0, (site.description, check.stderr)


def test_a_script_task_gets_mutants_and_its_build_script_none(tmp_path: Path) -> None:
    src = tmp_path / "calc" / "src"
    src.mkdir(parents=True)
    (src / "calc.sh").write_text(CALC)
    (src / "build.sh").write_text("#!/bin/sh\ncp calc.sh executable && chmod +x executable\n")
    (tmp_path / "calc" / "tests").mkdir()
    (tmp_path / "calc" / "tests" / "test_calc.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "calc" / "instance.toml").write_text(
        'name = "calc"\nsource = "src/"\nbuild = "build.sh"\ntests = "tests/"\n'
    )
    report = write_mutants(load_instance(tmp_path / "calc"), cache_dir=tmp_path / "builds")
    assert report.mutants and {m.file for m in report.mutants} == {"calc.sh"}
    assert not report.build_errors
    # No C build: nothing is left out for what the build compiles.
    assert report.left_out == {} and not report.build_recorded
