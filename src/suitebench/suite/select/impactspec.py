"""What an import-time mutant's own run needs to choose its tests (:mod:`.inside.impact`):
the part every such mutant shares, worked out once from the coverage run, and each mutant's
own part, from its :class:`~suitebench.suite.select.selection.Selection`."""

from __future__ import annotations

from typing import Any

from suitebench.suite.inside.wire import ImpactReaders, ImpactSpec
from suitebench.suite.select.selection import Coverage, Selection

__all__ = ["impact_readers", "impact_spec"]


def impact_readers(
    coverage: Coverage, reference: dict[str, Any] | None, tests: list[str]
) -> ImpactReaders | None:
    """What every import-time mutant's run needs to choose its tests, shared by all of them
    (:func:`suitebench.suite.inside.probe.impact.choose`): the reference's fingerprint and collected
    tests, the tests (indices refer to them), ``readers`` (a global's name -> the tests whose
    code or covered functions name it) and ``always`` (the tests whose reads are unknown or by
    computed names).  None when import-time impact cannot be used: no fingerprint of the reference
    (its state could not be seen into), no names recorded; then every test runs."""
    if not reference or not coverage.test_names:
        return None
    fingerprint = reference.get("fingerprint")
    if not isinstance(fingerprint, dict):
        return None
    names = {key.split(":", 1)[1] for key in fingerprint}
    readers, always = coverage.readers(tests, names)
    writers, _, _, rank = coverage.state_links(tests)
    return {
        "reference": fingerprint,
        "collected": list(reference.get("collected", ())),
        "tests": tests,
        "readers": {name: sorted(found) for name, found in readers.items()},
        "always": sorted(always),
        "writers": {str(i): sorted(names) for i, names in writers.items()},
        "rank": rank,
        "collection_reads": sorted(coverage.collection_reads() or ()),
        "collection_calls": sorted(coverage.suite_calls or ()),
        "suite": reference.get("suite"),
    }


def impact_spec(shared: ImpactReaders | None, selection: Selection) -> ImpactSpec | None:
    """One import-time mutant's spec: the shared part (:func:`impact_readers`) and ``base``,
    the tests that run anyway (its selection's ``import_time`` and the ``always`` ones)."""
    if shared is None or selection.import_time is None:
        return None
    index = {t: i for i, t in enumerate(shared["tests"])}
    base = {index[t] for t in selection.import_time if t in index}
    if selection.final:
        return {**shared, "base": sorted(base), "final": selection.reason}
    return {**shared, "base": sorted(base | set(shared["always"]))}
