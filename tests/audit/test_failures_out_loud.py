"""Failures said out loud, not only in results.json: references that never agree, submissions
that leave the pool, generators that ignore their seed, import's next commands, "legal" only
where a validator said so, and a funnel whose every line names its unit."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from pathlib import Path

from suitebench.audit.pipeline import format_funnel
from suitebench.audit.records import Funnel

from .conftest import copy_problem
from .test_cli_ledger import suitebench

HARNESS_ERROR_EXIT = 4  # README's exit statuses


def test_references_that_disagree_everywhere_are_a_harness_error(tmp_path: Path) -> None:
    """maxsum's Python reference prints its sum as a float (``5.0``) where the C and C++ ones
    print ``5``: under ``tokens`` they disagree on every input, so no input has a gold. That
    used to be an all-zero table and exit 0."""
    problem = copy_problem(tmp_path, "maxsum")
    ref = problem / "refs" / "ref2.py"
    ref.write_text(ref.read_text().replace("print(sum(a),", "print(float(sum(a)),"))
    inputs = {
        hashlib.sha256(p.read_bytes()).hexdigest()
        for d in ("tests", "samples")
        for p in (problem / d).glob("*.in")
    }
    proc = suitebench("audit", str(problem), "--out", str(tmp_path / "out"), store=tmp_path / "s")
    assert proc.returncode == HARNESS_ERROR_EXIT, proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("harness error:"))
    assert "maxsum: reference refs/ref1.c, refs/ref2.py, refs/ref3.cpp" in line, line
    assert f"no gold on any of {len(inputs)} inputs" in line
    assert "references disagree" in line


ARGV_GEN = """\
import sys

print(1)
print(int(sys.argv[-1]) + int(sys.argv[1]))
"""
CONST_GEN = "print(1)\nprint(7)\n"
BROKEN_C = "int main(void) { return undeclared; }\n"


def test_pool_leavers_and_seedless_generators_are_named(tmp_path: Path) -> None:
    """A submission that does not build leaves the pool: named on stderr with the compiler's
    reason and counted in the table's ``left`` column; so does one in a language this judge
    has no toolchain for (``.hs``), with that reason (it used to end the audit in a
    traceback): 2 left. A generator reading its seed from argv
    (testlib's way, with an argument of its own before it) gives 4 inputs for 4 seeds
    (1 + 0, ..., 1 + 3 with the argument 1); one ignoring its seed gives 1 and is named."""
    problem = copy_problem(tmp_path, "maxsum")
    (problem / "submissions" / "accepted" / "broken.c").write_text(BROKEN_C)
    (problem / "submissions" / "accepted" / "echo.hs").write_text("main = interact id\n")
    (tmp_path / "argv_gen.py").write_text(ARGV_GEN)
    (tmp_path / "const_gen.py").write_text(CONST_GEN)
    proc = suitebench(
        "audit",
        str(problem),
        "--arm",
        f"byargv={tmp_path / 'argv_gen.py'} 1@4",
        "--arm",
        f"const={tmp_path / 'const_gen.py'}@4",
        "--out",
        str(tmp_path / "out"),
        store=tmp_path / "s",
    )
    assert proc.returncode == 0, proc.stderr
    err = "".join(proc.stderr.split())  # the console wraps long lines, paths too
    assert "maxsum:submissionsubmissions/accepted/broken.cleftthepoolaccepted" in err
    assert "undeclared" in err
    assert "submissionsubmissions/accepted/echo.hsleftthepoolaccepted" in err
    assert "unknownlanguageforextension'.hs'" in err
    assert "const_gen.py@4):thegeneratorgavethesameinputforeveryseed" in err
    assert "argv_gen.py1@4):thegeneratorgavethesameinput" not in err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    arms = results["problems"]["maxsum"]["arms"]
    assert arms["byargv"]["counts"]["inputs"] == 4 and arms["const"]["counts"]["inputs"] == 1
    header = next(ln for ln in proc.stdout.splitlines() if "cov@1" in ln)
    assert header.rstrip("┃│ ").endswith("left")
    row = next(ln for ln in proc.stdout.splitlines() if "official" in ln)
    assert re.split(r"[│┃]", row)[-2].strip() == "2"


def test_next_commands_run_on_what_was_written(tmp_path: Path) -> None:
    importlib.import_module("suitebench.cli.main")  # first: the command modules import it
    from suitebench.cli.import_ import next_commands

    """Problem ``a`` has a rejected pool and generated inputs, ``b`` only an accepted pool and
    an empty generated folder: one command each, never ``--pool rejected`` for ``b`` (the
    audit refuses a problem without that pool) nor the empty arm for it."""
    written = [
        {"id": "a", "pools": {"accepted": 2, "rejected": 1}, "tests": {"generated": 5}},
        {"id": "b", "pools": {"accepted": 1}, "tests": {"official": 2, "generated": 0}},
    ]
    out = tmp_path / "problems"
    assert next_commands(out, written) == [
        f"suitebench audit {out / 'a'} --pool rejected --out audit-out"
        " --arm generated=arms/generated",
        f"suitebench audit {out / 'b'} --pool accepted --out audit-out",
    ]
    both = [dict(written[0], id="c"), written[0]]
    assert next_commands(out, both) == [
        f"suitebench audit {out}/*/problem.toml --pool rejected --out audit-out"
        " --arm generated=arms/generated"
    ]


def test_generate_without_a_validator_does_not_say_legal(tmp_path: Path) -> None:
    problem = copy_problem(tmp_path, "mean", v='validator = "validator.py"\n|')
    proc = suitebench(
        "generate",
        "random",
        str(problem),
        "--budget",
        "3",
        "--out",
        str(tmp_path / "gen"),
        store=tmp_path / "s",
    )
    assert proc.returncode == 0, proc.stderr
    assert "random on mean: 3/3 inputs kept (no validator: legality unchecked)" in proc.stdout
    assert "legal inputs kept" not in proc.stdout


def test_every_funnel_line_names_its_unit() -> None:
    text = format_funnel({"hand": Funnel(9, 1, 8, 8, 8, 7, {"determinism": 2}, {"validator": 8})})
    lines = text.splitlines()
    assert lines[0] == "arm hand"
    assert all("submissions" in ln or "flags" in ln for ln in lines[1:]), lines
    assert lines[1].split() == ["flagged", "9", "submissions"]
    assert lines[-1].endswith("withdrawn flags (submission x input) by stage: determinism 2")
