"""Every arm, generated then audited, certifies at least one real bug of the bundled pools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.agents.fakeserver import FakeChatServer
from suitebench.audit.arms import ArmSource
from suitebench.audit.pipeline import run_audit
from suitebench.audit.runs import AuditEngine
from suitebench.generate.arms import GenerateOptions, generate_arm
from suitebench.llm.client import ModelClient

from .conftest import BUNDLED, problem, reply
from .test_llm_arms import GENVAL_GOOD


@pytest.mark.slow
def test_model_free_arms_kill_bundled_bugs(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    arms = {
        "random": GenerateOptions(20, seed=0),
        "cc-mutation": GenerateOptions(20, seed=0),
        "evalplus": GenerateOptions(20, seed=0),
        "mixture": GenerateOptions(20, seed=0, mix=("random", "cc-mutation", "evalplus")),
    }
    for arm, opts in arms.items():
        for name in BUNDLED:
            generate_arm(arm, problem(name), engine, tmp_path / arm / name, opts)
    sources = [ArmSource(arm, str(tmp_path / arm)) for arm in arms]
    result = run_audit([problem(n) for n in BUNDLED], sources, engine, out_dir=tmp_path / "audit")
    for arm in arms:
        assert result.results["arms"][arm]["certified"] >= 1, arm
    # The audit read exactly the generated inputs (generate.json is not one), and scores every
    # one of them: after top-up each is legal and has a gold.
    for a in result.audits:
        for arm in arms:
            files = list((tmp_path / arm / a.problem.id).glob("*.in"))
            assert len(a.arms[arm].arm.inputs) == len(files) > 0, (arm, a.problem.id)
            assert len(a.arms[arm].scored) == len(files), (arm, a.problem.id)


def test_model_arms_kill_bundled_bugs(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    script = [reply("01-well-formed.txt"), GENVAL_GOOD]
    with FakeChatServer(script) as server:
        client = ModelClient("m", base_url=server.base_url, api_key="k", store=engine.store)
        p = problem("maxsum")
        single = GenerateOptions(15, seed=0, max_calls=1)
        generate_arm("llm-single", p, engine, tmp_path / "single", single, client=client)
        generate_arm(
            "llm-genval", p, engine, tmp_path / "genval", GenerateOptions(6), client=client
        )
    sources = [
        ArmSource("single", str(tmp_path / "single")),
        ArmSource("genval", str(tmp_path / "genval")),
    ]
    result = run_audit([problem("maxsum")], sources, engine, out_dir=tmp_path / "audit")
    assert result.results["arms"]["single"]["certified"] >= 3  # n = 1, tie, overflow
    assert result.results["arms"]["genval"]["certified"] >= 1  # n = 1 inputs only
    (a,) = result.audits
    for arm in ("single", "genval"):  # every generated input is legal and has a gold
        files = list((tmp_path / arm).glob("*.in"))
        assert len(a.arms[arm].scored) == len(a.arms[arm].arm.inputs) == len(files) > 0
