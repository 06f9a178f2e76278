"""Shared fixtures: the user's tree in a fresh directory and a scoring context on its store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.agents.scoring import ScoreContext
from suitebench.run.store import Store


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's tree is tmp_path: data copied in, held out from the agent."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def ctx(home: Path) -> Iterator[ScoreContext]:
    store = Store(home / ".suitebench" / "store.sqlite")
    yield ScoreContext(store, home / ".suitebench" / "builds")
    store.close()
