"""random, cc-mutation and evalplus on the bundled problems: reproducible, legal, topped up."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.runs import AuditEngine
from suitebench.generate.arms import GenerateOptions, generate_arm
from suitebench.generate.mutation import parse_tokens, render_tokens
from suitebench.generate.records import GenerateError

from .conftest import BUNDLED, problem

MODEL_FREE = ("random", "cc-mutation", "evalplus")


def inputs_of(directory: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(directory.glob("*.in"))]


def validator_accepts(name: str, data: bytes) -> bool:
    """The problem's validator run directly (not through the engine that generated)."""
    validator = problem(name).validator
    assert validator is not None
    done = subprocess.run([sys.executable, str(validator)], input=data, capture_output=True)
    return done.returncode == 0


@pytest.mark.parametrize("arm", MODEL_FREE)
@pytest.mark.parametrize("name", BUNDLED)
def test_same_seed_same_bytes_and_only_legal_inputs(
    make_engine: Callable[..., AuditEngine], tmp_path: Path, arm: str, name: str
) -> None:
    opts = GenerateOptions(budget=12, seed=3)
    # Two fresh stores: the second run recomputes everything rather than reading the first's.
    a = generate_arm(arm, problem(name), make_engine("a.sqlite"), tmp_path / "a", opts)
    b = generate_arm(arm, problem(name), make_engine("b.sqlite"), tmp_path / "b", opts)
    first, second = inputs_of(tmp_path / "a"), inputs_of(tmp_path / "b")
    assert first and first == second
    assert [f["sha256"] for f in a.log["inputs"]] == [f["sha256"] for f in b.log["inputs"]]
    assert all(validator_accepts(name, d) for d in first)
    assert len(set(first)) == len(first)  # no duplicates
    log = json.loads((tmp_path / "a" / "generate.json").read_text())
    assert log["arm"] == arm and log["seed"] == 3 and log["budget"] == 12
    assert log["kept"] == len(first)
    dropped = sum(log["dropped"].values())
    assert log["tried"] == log["kept"] + dropped + log["beyond_budget"]
    assert [f["file"] for f in log["inputs"]] == [f"{n:03d}.in" for n in range(1, len(first) + 1)]


@pytest.mark.parametrize("arm", MODEL_FREE)
def test_another_seed_gives_other_inputs(
    make_engine: Callable[..., AuditEngine], tmp_path: Path, arm: str
) -> None:
    engine = make_engine()
    generate_arm(arm, problem("maxsum"), engine, tmp_path / "s1", GenerateOptions(10, seed=1))
    generate_arm(arm, problem("maxsum"), engine, tmp_path / "s2", GenerateOptions(10, seed=2))
    assert inputs_of(tmp_path / "s1") != inputs_of(tmp_path / "s2")


def test_top_up_drops_illegal_mutants_and_says_why(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    res = generate_arm(
        "cc-mutation", problem("maxsum"), make_engine(), tmp_path / "o", GenerateOptions(25)
    )
    log = res.log
    assert log["kept"] == 25 and log["reached_budget"]
    assert log["dropped"].get("illegal", 0) > 0  # mutants break the format, the gate saw it
    illegal = [d for d in log["drops"] if d["reason"] == "illegal"]
    assert illegal and all(d["detail"] for d in illegal)  # the validator's complaint is kept
    assert all(d["origin"].startswith("mutation of ") for d in log["drops"])


def test_the_attempt_cap_ends_a_starved_arm_honestly(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    # divsum's inputs are one number: mutation soon repeats itself and cannot reach 40.
    opts = GenerateOptions(40, max_attempts=60)
    res = generate_arm("cc-mutation", problem("divsum"), make_engine(), tmp_path / "o", opts)
    log = res.log
    assert not log["reached_budget"] and log["attempt_cap_hit"]
    assert log["tried"] == 60 and log["kept"] < 40
    assert log["dropped"]["duplicate"] > 0
    assert len(inputs_of(tmp_path / "o")) == log["kept"]


def test_a_rerun_into_the_same_directory_replaces_the_old_inputs(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    out = tmp_path / "o"
    generate_arm("random", problem("maxsum"), engine, out, GenerateOptions(15))
    (out / "notes.txt").write_text("mine")
    generate_arm("random", problem("maxsum"), engine, out, GenerateOptions(5))
    assert len(inputs_of(out)) == 5 and (out / "notes.txt").read_text() == "mine"


def test_random_seed_zero_is_the_audits_generator_sweep(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    from suitebench.audit.arms import arm_from_generator

    engine = make_engine()
    p = problem("maxsum")
    generate_arm("random", p, engine, tmp_path / "o", GenerateOptions(6, seed=0))
    assert p.generator is not None
    swept = arm_from_generator("g", p.generator, 6, engine)
    assert inputs_of(tmp_path / "o") == [c.data for c in swept.inputs]


def test_arms_that_cannot_run_say_why(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    with pytest.raises(GenerateError, match="unknown arm"):
        generate_arm("fuzz", problem("maxsum"), engine, tmp_path / "o", GenerateOptions(5))
    with pytest.raises(GenerateError, match="needs a model"):
        generate_arm("llm-single", problem("maxsum"), engine, tmp_path / "o", GenerateOptions(5))
    with pytest.raises(GenerateError, match="--mix"):
        generate_arm("mixture", problem("maxsum"), engine, tmp_path / "o", GenerateOptions(5))


def test_tokens_round_trip_to_the_strict_layout() -> None:
    assert render_tokens(parse_tokens(b"3\n1  2\t3 \n")) == b"3\n1 2 3\n"


def test_a_starved_mixture_component_leaves_the_budget_to_the_others(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    # On divsum the mutation arms soon only repeat themselves; each component has its own
    # share of the attempts, so the generator fills what they cannot.
    opts = GenerateOptions(50, mix=("random", "cc-mutation", "evalplus"))
    res = generate_arm("mixture", problem("divsum"), make_engine(), tmp_path / "o", opts)
    log = res.log
    assert log["reached_budget"] and log["kept"] == 50
    assert log["tried"] <= opts.attempt_cap
    origins = [i["origin"] for i in log["inputs"]]
    assert origins[-1].startswith("generator seed")  # the tail is the generator's
    assert any(o.startswith("mutation of") for o in origins)
