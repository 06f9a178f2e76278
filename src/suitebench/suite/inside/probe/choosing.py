"""Which collected tests a run takes, and in what order: a selection (the tests that reach a
mutant, in collected order) or ``--fast``'s order (likely killers first).  Shared by the
plugin (a run that collects for itself) and the collector (a batch collected once).  Standard
library and pytest only: it runs inside the sandbox.
"""

from __future__ import annotations

import json

import pytest


def order_items(items: list[pytest.Item], order: list[str]) -> list[pytest.Item]:
    """Only the listed node ids, in the listed order (``--fast``: likely killers first)."""
    by_id = {item.nodeid: item for item in items}
    return [by_id[nodeid] for nodeid in order if nodeid in by_id]


def select_items(items: list[pytest.Item], selected: list[str]) -> list[pytest.Item]:
    """Only the listed node ids, in collected order (the tests that reach a mutant)."""
    wanted = set(selected)
    return [item for item in items if item.nodeid in wanted]


def selected_names(path: str) -> dict[str, set[str]]:
    """Per test file, the names of the module-level tests (functions or classes) the node
    ids listed in the JSON file ``path`` select: what collection need build at all."""
    with open(path, encoding="utf-8") as fh:
        selected = json.load(fh)
    names: dict[str, set[str]] = {}
    for nodeid in selected:
        file, _, rest = nodeid.partition("::")
        names.setdefault(file, set()).add(rest.split("::", 1)[0].split("[", 1)[0])
    return names
