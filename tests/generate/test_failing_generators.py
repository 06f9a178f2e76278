"""A generator that fails is named on stderr, with its seed and reason, by ``generate`` and by
``audit``'s GEN@SEEDS arms.

Before, a generator that printed forever or crashed was only counted (``failed_seeds`` in the
audit's results.json, ``generator_failed`` among generate.json's drops) and the terminal said
nothing.  The generator here is the bundled ``mean`` problem's, made to fail as a careless one
does: seed 0 prints forever (``while True`` around its output), seed 1 raises on an input it did
not expect.  Worked out from the program: of seeds 0..3, seeds 0 and 1 fail -- 0 by the output
limit (64 MiB for a generator's run), 1 as a runtime error whose last stderr line is the
ValueError -- and seeds 2 and 3 give the two inputs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from suitebench.data import PROBLEMS_DIR

from .test_cli_generate import run_cli

FAILING_GEN = """\
import random
import sys

seed = int(sys.stdin.read().split()[0])
if seed == 0:
    while True:  # never stops printing
        sys.stdout.write("1 " * 65536)
if seed == 1:
    raise ValueError(f"no input for seed {seed}")
rng = random.Random(seed)
n = rng.randint(1, 6)
print(n)
print(" ".join(str(rng.randint(-9, 9)) for _ in range(n)))
"""


def _mean_with_a_failing_generator(tmp_path: Path) -> Path:
    problem = tmp_path / "mean"
    shutil.copytree(PROBLEMS_DIR / "mean", problem)
    (problem / "gen.py").write_text(FAILING_GEN)
    return problem


def test_generate_names_each_failed_seed_on_stderr(tmp_path: Path) -> None:
    problem = _mean_with_a_failing_generator(tmp_path)
    done = run_cli(tmp_path, "generate random", problem, "--budget 2 --seed 0 --out arm")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "random on mean (gen.py): the generator failed on 2 seed(s)" in err, err
    assert "generator seed 0: output_limit" in err
    assert "generator seed 1: runtime_error: ValueError: no input for seed 1" in err
    log = json.loads((tmp_path / "arm" / "generate.json").read_text())
    assert log["kept"] == 2 and log["dropped"]["generator_failed"] == 2


def test_audit_names_each_failed_seed_of_a_generator_arm(tmp_path: Path) -> None:
    problem = _mean_with_a_failing_generator(tmp_path)
    done = run_cli(tmp_path, "audit", problem, "--arm g=generator@4 --out audit")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "mean: arm g (" in err and "the generator failed on 2 seed(s)" in err, err
    assert "seed 0: output_limit" in err
    assert "seed 1: runtime_error: ValueError: no input for seed 1" in err
    results = json.loads((tmp_path / "audit" / "results.json").read_text())
    counts = results["problems"]["mean"]["arms"]["g"]["counts"]
    assert counts["failed_seeds"] == 2 and counts["inputs"] == 2
