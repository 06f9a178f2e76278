"""A parametrized test's position: the same test in a mutant's collection as in the reference's.

pytest names a parametrized test by its parameters' values (``test_format[day0-%Y%m%d-2024]``
for a ``date`` and two strings).  A program whose values the suite parametrizes with (a format
string a date library exports, say) has mutants that change those values: collected against
such a mutant, the same test of the suite has another name.  A run of it would then leave the
reference's name without an outcome, and its failures under the other name would be nobody's:
a mutant a plain ``pytest`` run fails would be scored survived.

The test is the same when it is the same function with the same parameter indices (pytest's
``callspec.indices``: each argument's place in its ``parametrize`` list, or its parametrized
fixture's ``params``).  The reference's first run records each parametrized test's position
(:func:`positions`); a mutant's run gets them back as ``position -> the reference's name``, and
gives every test collected at a known position the reference's name before anything reads it
(:func:`rename`).  A test at a position the reference has not (a list the program makes grew
longer) keeps its own name: it is none of the reference's tests.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest


def position(item: pytest.Item) -> str | None:
    """``item``'s position (None: it is not parametrized)."""
    callspec = getattr(item, "callspec", None)
    indices = getattr(callspec, "indices", None)
    if not isinstance(indices, dict) or not indices:
        return None
    parent = item.parent.nodeid if item.parent is not None else ""
    name = getattr(item, "originalname", None) or item.name.partition("[")[0]
    where = ",".join(f"{arg}={index}" for arg, index in sorted(indices.items()))
    return f"{parent}::{name}[{where}]"


def positions(items: list[pytest.Item]) -> dict[str, str]:
    """Each parametrized test's position by its name, where no other test shares it."""
    seen: dict[str, str | None] = {}
    for item in items:
        where = position(item)
        if where is not None:
            seen[where] = None if where in seen else item.nodeid
    return {nodeid: where for where, nodeid in seen.items() if nodeid is not None}


def rename(item: pytest.Item, reference: dict[str, str]) -> None:
    """Give ``item``, just collected, the reference's name for its position (``reference``:
    position -> the reference's name), where it has one."""
    where = position(item)
    name = reference.get(where) if where is not None else None
    if name is not None and name != item.nodeid:
        _name(item, name)


def untangle(items: list[pytest.Item], reference: dict[str, str]) -> None:
    """After :func:`rename`: a test left with its own name that a renamed test now has is
    told apart by its position."""
    mapped = [(item, position(item)) for item in items]
    taken = {item.nodeid for item, where in mapped if where is not None and where in reference}
    for item, where in mapped:
        if (where is None or where not in reference) and item.nodeid in taken:
            _name(item, f"{item.nodeid}@{where or 'mutant'}")


def _name(item: Any, nodeid: str) -> None:
    """Name ``item`` ``nodeid`` (its parent's id, then its function's name and parameters):
    pytest 9 keeps a node's id as a structured ``_id``, earlier releases as ``_nodeid``.  A
    pytest keeping it otherwise leaves the test its own name."""
    prefix = f"{item.parent.nodeid}::" if item.parent is not None else ""
    if not nodeid.startswith(prefix):
        return
    name = nodeid[len(prefix) :]
    ident = getattr(item, "_id", None)
    before = (item.name, ident, getattr(item, "_nodeid", None))
    function, bracket, params = name.partition("[")
    structured = dataclasses.is_dataclass(ident) and hasattr(ident, "params")
    if structured:
        if not bracket or not params.endswith("]"):
            return
        item._id = dataclasses.replace(ident, params=params[:-1])  # type: ignore[type-var]
    elif isinstance(before[2], str):
        item._nodeid = nodeid
    else:
        return
    item.name = name
    if item.nodeid != nodeid or not function:  # not as this pytest names a node: as it was
        item.name = before[0]
        if structured:
            item._id = ident
        else:
            item._nodeid = before[2]
