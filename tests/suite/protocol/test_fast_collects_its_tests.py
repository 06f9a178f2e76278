"""``--fast`` runs a mutant whose tests are known before its run as a selected run: it
collects only those tests' files and functions.

semver 3.0.2's suite configures pytest anew for each mutant (its conftest imports the
package), and each ``--fast`` run collected all 328 tests and the package's doctest modules to
run a test or two: ``--fast`` took longer than the full matrix, whose selected runs collect
only what they run.  The shop suite (:mod:`tests.suite.inside.test_hotpatch`) has body-only
mutants (tests known from coverage) and import-time ones (the run chooses its tests after
import, so it must collect them all).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.score import score_suite

from ..inside.test_hotpatch import write_shop


def test_a_fast_run_with_known_tests_selects_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Any] = []
    real = SuiteRuns.run

    def run(self: SuiteRuns, requests: Any, *args: Any, **kwargs: Any) -> Any:
        asked.extend(target for _, target in requests)
        return real(self, requests, *args, **kwargs)

    monkeypatch.setattr(SuiteRuns, "run", run)
    toml = write_shop(tmp_path / "shop")
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score_suite(
            load_instance(toml), store=store, cache_dir=tmp_path / "builds", fast=True
        )
    finally:
        store.close()
    by_id = {m.id: m for m in result.mutants}
    ordered = [t for t in asked if t.order is not None]
    assert ordered, asked
    for target in ordered:
        if target.impact is None:  # its tests known from coverage
            assert target.select is not None and set(target.select) == set(target.order)
        else:  # an import-time change: its run chooses among every test
            assert target.select is None
    # both kinds were asked for, and the verdicts are --fast's (test_hotpatch's full matrix)
    assert {t.impact is None for t in ordered} == {True, False}
    killed = {m for m in by_id if by_id[m].status == "killed"}
    assert killed == {"boundary", "wrapper", "size", "default", "tax", "doc"}
