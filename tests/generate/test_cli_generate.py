"""``suitebench generate`` as a user runs it: a real process, real files, a real store."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from suitebench.agents.fakeserver import ISOLATING_ENV, FakeChatServer
from suitebench.data import PROBLEMS_DIR

from ..cli_helpers import run_suitebench
from .conftest import reply

MAXSUM = PROBLEMS_DIR / "maxsum"


def run_cli(
    tmp_path: Path, *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line; a string argument is split on spaces, a path is one argument."""
    argv = [a for x in args for a in (x.split() if isinstance(x, str) else [str(x)])]
    base = {k: v for k, v in os.environ.items() if k not in ISOLATING_ENV}
    return run_suitebench(
        *argv, store=tmp_path / "s.sqlite", timeout=300, cwd=tmp_path, env={**base, **(env or {})}
    )


def test_generate_writes_numbered_inputs_and_the_log(tmp_path: Path) -> None:
    mean = PROBLEMS_DIR / "mean"
    done = run_cli(tmp_path, "--json generate evalplus", mean, "--budget 7 --seed 9 --out arm")
    assert done.returncode == 0, done.stderr
    assert "evalplus on mean: 7/7 legal inputs kept" in done.stderr  # --json holds stdout
    files = sorted(p.name for p in (tmp_path / "arm").iterdir())
    assert files == [f"{n:03d}.in" for n in range(1, 8)] + ["generate.json"]
    log = json.loads(done.stdout)
    assert log == json.loads((tmp_path / "arm" / "generate.json").read_text())
    assert log["seed"] == 9 and log["kept"] == 7 and log["usage"] is None


def test_model_arm_through_the_cli_with_env_endpoint(tmp_path: Path) -> None:
    args = "--budget 5 --model tiny --max-calls 1 --out"
    with FakeChatServer([reply("01-well-formed.txt")], models=["tiny"]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        done = run_cli(tmp_path, "generate llm-single", MAXSUM, args, "a", env=env)
        assert done.returncode == 0, done.stderr
        assert "model tiny: 1 call(s), 0 from the store" in done.stdout
        assert "cost unknown" in done.stdout  # "tiny" has no price
    # again, with the server gone and no key: from the store
    url = server.base_url
    again = run_cli(tmp_path, "generate llm-single", MAXSUM, args, "b --base-url", url)
    assert again.returncode == 0, again.stderr
    assert "1 from the store" in again.stdout
    assert [p.read_bytes() for p in sorted((tmp_path / "a").glob("*.in"))] == [
        p.read_bytes() for p in sorted((tmp_path / "b").glob("*.in"))
    ]


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "generate llm-single", MAXSUM, "--budget 5 --out o")
    assert done.returncode == 2 and "no model given" in done.stderr
    done = run_cli(tmp_path, "generate fuzz", MAXSUM, "--budget 5 --out o")
    assert done.returncode == 1 and "unknown arm 'fuzz'" in done.stderr
    done = run_cli(tmp_path, "generate random", tmp_path / "nowhere", "--budget 5 --out o")
    assert done.returncode == 2 and "problem.toml" in done.stderr
