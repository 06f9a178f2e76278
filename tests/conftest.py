"""Fixtures shared by every test directory: a session-wide build cache and engines on fresh
stores."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from suitebench.audit.runs import Engine
from suitebench.run.executor import make_executor
from suitebench.run.store import Store


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Compiled programs are shared by all tests (builds are keyed by content hash)."""
    return tmp_path_factory.mktemp("builds")


@pytest.fixture
def make_engine(tmp_path: Path, build_cache: Path) -> Iterator[Callable[..., Engine]]:
    """Engines on a store in this test's directory (a new file per name: a fresh store)."""
    opened: list[tuple[Store, object]] = []

    def factory(name: str = "store.sqlite") -> Engine:
        store = Store(tmp_path / name)
        ex = make_executor(jobs=2)
        opened.append((store, ex))
        return Engine(store, ex, build_cache)

    yield factory
    for store, ex in opened:
        ex.close()  # type: ignore[attr-defined]
        store.close()
