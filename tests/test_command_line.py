"""The ``suitebench`` command line imports only the command it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from suitebench.cli.main import requested_command

EXE = Path(sys.executable).parent / "suitebench"


def test_the_command_is_the_first_word_after_the_global_options() -> None:
    assert requested_command(["score", "inst", "--json"]) == "score"
    assert requested_command(["--json", "-j", "2", "--store", "s.sqlite", "build", "mutants"]) == (
        "build"
    )
    assert requested_command(["-j2", "--store=s.sqlite", "doctor"]) == "doctor"
    assert requested_command(["--help"]) is None
    assert requested_command([]) is None


def test_a_command_does_not_pay_for_the_others_and_help_lists_them_all() -> None:
    probe = (
        "import sys; sys.argv = ['suitebench', 'score', '--help']\n"
        "import suitebench.cli.main\n"
        "heavy = ('scipy', 'suitebench.audit.chain', 'suitebench.cli.audit')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    shown = subprocess.run([str(EXE), "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("audit", "score", "build", "demo", "review-fdr", "compare", "agent"):
        assert command in shown, command
    module = subprocess.run(
        [sys.executable, "-m", "suitebench", "--json", "score", "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "Usage" in module.stdout and "score" in module.stdout
