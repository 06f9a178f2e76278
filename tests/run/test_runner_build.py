"""The compiled runner is built once per machine, however many threads ask for it first.

On a fresh machine a score's pool asks for the runner from every thread at once; each
compiled to one temporary file named by the process, and the first to move it into place left
the others with none: "cannot build the C runner, using the Python one" (the slower runner, for
that whole process), as a first ``score`` on a new machine printed.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from suitebench.run import protocol


def test_threads_asking_at_once_get_one_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with caplog.at_level(logging.WARNING), ThreadPoolExecutor(8) as pool:
        built = list(pool.map(lambda _: protocol._compiled("_runner.c", "runner"), range(8)))
    assert None not in built, caplog.text
    assert len(set(built)) == 1 and built[0] is not None
    assert built[0].parent == tmp_path / "suitebench" and protocol.runner_starts(built[0])
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert [p.name for p in built[0].parent.iterdir()] == [built[0].name]  # no stray file
