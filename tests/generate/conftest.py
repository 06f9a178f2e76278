"""Shared fixtures: engines on fresh stores, a session-wide build cache, the bundled problems."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from suitebench.audit.runs import Engine
from suitebench.data import PROBLEMS_DIR
from suitebench.model.problem import Problem, load_problem
from suitebench.run.executor import make_executor
from suitebench.run.store import Store

REPLIES = Path(__file__).parent / "replies"
BUNDLED = ("maxsum", "divsum", "mean")


@pytest.fixture(autouse=True)
def _no_proxy_no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "SUITEBENCH_MODEL",
        "SUITEBENCH_PRICES",
    ):
        monkeypatch.delenv(var, raising=False)


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


def problem(name: str) -> Problem:
    return load_problem(PROBLEMS_DIR / name)


def reply(name: str) -> str:
    return (REPLIES / name).read_text(encoding="utf-8")
