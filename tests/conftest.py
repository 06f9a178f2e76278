"""Fixtures shared by every test directory: no model credentials from the caller, a
session-wide build cache and engines on fresh stores."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from suitebench.audit.runs import AuditEngine
from suitebench.run.executor import make_executor
from suitebench.run.store import Store


@pytest.fixture(autouse=True)
def _no_model_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a hosted model API: the caller's OpenAI and Anthropic keys and base
    URLs are cleared for every test, so a client left without an explicit loopback endpoint
    fails for want of a key instead of calling out."""
    for var in list(os.environ):
        if var.startswith(("OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(var)


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Compiled programs are shared by all tests (builds are keyed by content hash)."""
    return tmp_path_factory.mktemp("builds")


@pytest.fixture
def make_engine(tmp_path: Path, build_cache: Path) -> Iterator[Callable[..., AuditEngine]]:
    """Engines on a store in this test's directory (a new file per name: a fresh store)."""
    opened: list[tuple[Store, object]] = []

    def factory(name: str = "store.sqlite") -> AuditEngine:
        store = Store(tmp_path / name)
        ex = make_executor(jobs=2)
        opened.append((store, ex))
        return AuditEngine(store, ex, build_cache)

    yield factory
    for store, ex in opened:
        ex.close()  # type: ignore[attr-defined]
        store.close()
