"""Shared fixtures: no proxy or model variables, the bundled problems, recorded replies (the
build cache and engines on fresh stores come from the top-level conftest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.agents.fakeserver import ISOLATING_ENV
from suitebench.data import PROBLEMS_DIR
from suitebench.model.problem import Problem, load_problem

REPLIES = Path(__file__).parent / "replies"
BUNDLED = ("maxsum", "divsum", "mean")


@pytest.fixture(autouse=True)
def _no_proxy_no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ISOLATING_ENV:
        monkeypatch.delenv(var, raising=False)


def problem(name: str) -> Problem:
    return load_problem(PROBLEMS_DIR / name)


def reply(name: str) -> str:
    return (REPLIES / name).read_text(encoding="utf-8")
