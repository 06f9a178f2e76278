"""Near-clone clustering of sources: how many *distinct* findings does a ledger hold?

A ledger of 589 buggy submissions means little if they are 20 copies of five templates. The
auditors paper (App. C) answers with "per-problem single-linkage clustering over
comment-stripped source token 5-shingles at Jaccard >= 0.8, with identifiers left unchanged",
which "yields 578 near-clone-distinct clusters". This module implements exactly that, plus the
same Jaccard measure for comparing two input sets (e.g. an arm's inputs against the official
tests: the paper's leakage check).

Choices: comments are removed per language family (``//`` and ``/* */`` for C-like languages,
``#`` for Python and shell; a C ``#include`` is code, not a comment); string literals stay one
token each; whitespace never matters. A source with fewer than ``k`` tokens has the whole token
sequence as its single shingle, so identical tiny programs still cluster. Jaccard similarities
come from one sparse matrix product, so a problem with thousands of findings clusters in well
under a second.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import PurePath

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

DEFAULT_SHINGLE = 5
DEFAULT_THRESHOLD = 0.8

_HASH_COMMENT_LANGUAGES = {"python", "py", "shell", "sh", "bash"}
_EXTENSION_LANGUAGE = {".py": "python", ".sh": "shell"}

_C_LIKE = re.compile(
    r"""(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
      |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
      |(?P<token>[A-Za-z_]\w*|\d[\w.]*|\S)""",
    re.DOTALL | re.VERBOSE,
)
_HASH = re.compile(
    r"""(?P<string>\"\"\".*?(?:\"\"\"|\Z)|'''.*?(?:'''|\Z)
                  |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
      |(?P<comment>\#[^\n]*)
      |(?P<token>[A-Za-z_]\w*|\d[\w.]*|\S)""",
    re.DOTALL | re.VERBOSE,
)


def language_of(path: str | PurePath) -> str:
    """``python``/``shell`` for ``.py``/``.sh`` files, else the C-like family."""
    return _EXTENSION_LANGUAGE.get(PurePath(path).suffix.lower(), "c")


def tokens(source: str, language: str = "c") -> list[str]:
    """The comment-stripped token sequence of a source (identifiers unchanged)."""
    pattern = _HASH if language.lower() in _HASH_COMMENT_LANGUAGES else _C_LIKE
    out: list[str] = []
    for m in pattern.finditer(source):
        if m.lastgroup != "comment":
            out.append(m.group(0))
    return out


def shingles(
    source: str, language: str = "c", k: int = DEFAULT_SHINGLE
) -> frozenset[tuple[str, ...]]:
    """The set of ``k`` consecutive comment-stripped tokens (the paper's token 5-shingles)."""
    if k < 1:
        raise ValueError(f"shingle size must be >= 1, got {k}")
    toks = tokens(source, language)
    if not toks:
        return frozenset()
    if len(toks) < k:
        return frozenset({tuple(toks)})
    return frozenset(tuple(toks[i : i + k]) for i in range(len(toks) - k + 1))


def jaccard(a: Iterable[Hashable], b: Iterable[Hashable]) -> float:
    """|A and B| / |A or B|; two empty sets are identical (1.0)."""
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 1.0


def jaccard_matrix(sets: Sequence[frozenset[Hashable]]) -> np.ndarray:
    """Pairwise Jaccard similarities of many sets, via one sparse product."""
    n = len(sets)
    vocab: dict[Hashable, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, s in enumerate(sets):
        for item in s:
            rows.append(i)
            cols.append(vocab.setdefault(item, len(vocab)))
    m = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(n, max(len(vocab), 1))
    )
    inter = (m @ m.T).toarray()
    sizes = np.array([len(s) for s in sets], dtype=np.float64)
    union = sizes[:, None] + sizes[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return np.asarray(sim, dtype=np.float64)


def near_clone_clusters(
    sources: Mapping[str, str] | Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    k: int = DEFAULT_SHINGLE,
    language: str | Mapping[str, str] = "c",
) -> list[list[str]]:
    """Single-linkage clusters of sources whose shingle Jaccard is >= ``threshold``.

    ``sources`` maps an id (e.g. a submission id) to its text; a sequence is keyed by position.
    ``language`` is one language for all, or a mapping id -> language. Single linkage: two
    sources share a cluster when a chain of pairs, each at or above the threshold, joins them.
    Clusters (and ids within them) come back sorted, so the output is deterministic.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    items = (
        dict(sources)
        if isinstance(sources, Mapping)
        else {str(i): s for i, s in enumerate(sources)}
    )
    ids = sorted(items)
    if not ids:
        return []
    sets = [
        shingles(items[i], language if isinstance(language, str) else language.get(i, "c"), k)
        for i in ids
    ]
    adjacency = sparse.csr_matrix(jaccard_matrix(sets) >= threshold)
    _, labels = connected_components(adjacency, directed=False)
    groups: dict[int, list[str]] = {}
    for ident, lab in zip(ids, labels.tolist(), strict=True):
        groups.setdefault(lab, []).append(ident)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


def clusters_by_problem(
    findings: Iterable[tuple[str, str, str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    k: int = DEFAULT_SHINGLE,
    language: str = "c",
) -> dict[str, list[list[str]]]:
    """Per-problem near-clone clusters of ``(problem, submission_id, source)`` findings.

    The paper clusters within each problem only: two submissions of different problems are
    never clones of one another. ``sum(len(v) for v in result.values())`` is the number of
    near-clone-distinct findings.
    """
    per: dict[str, dict[str, str]] = {}
    for problem, sid, source in findings:
        per.setdefault(problem, {})[sid] = source
    return {
        p: near_clone_clusters(srcs, threshold=threshold, k=k, language=language)
        for p, srcs in sorted(per.items())
    }


@dataclass(frozen=True)
class SetOverlap:
    """How several killed sets overlap (TestSuiteBench Figure 12).

    ``regions`` maps every non-empty combination of set names (sorted, joined as a tuple) to
    the number of items in *exactly* those sets: the regions of a Venn diagram, which add up
    to the union. ``intersections`` maps every combination to the number of items in *all* of
    its sets (however many others hold them too). ``none`` counts the items of the universe
    that no set holds (the mutants no suite kills), ``None`` when no universe was given.
    """

    names: tuple[str, ...]
    sizes: dict[str, int]
    regions: dict[tuple[str, ...], int]
    intersections: dict[tuple[str, ...], int]
    union: int
    none: int | None
    universe: int | None

    def to_dict(self) -> dict[str, object]:
        return {
            "names": list(self.names),
            "sizes": dict(self.sizes),
            "regions": [{"sets": list(k), "count": v} for k, v in self.regions.items()],
            "intersections": [{"sets": list(k), "count": v} for k, v in self.intersections.items()],
            "union": self.union,
            "none": self.none,
            "universe": self.universe,
        }


MAX_OVERLAP_SETS = 10


def set_overlap(
    sets: Mapping[str, Iterable[Hashable]], universe: Iterable[Hashable] | None = None
) -> SetOverlap:
    """Every exclusive region and every intersection of named sets, their union and the rest.

    With ``universe`` (e.g. every scored mutant), items outside every set are counted in
    ``none``; an item of a set outside the universe is an error (a killed mutant that was never
    scored means the inputs are not from one run).
    """
    names = tuple(sets)
    if len(names) > MAX_OVERLAP_SETS:
        raise ValueError(f"at most {MAX_OVERLAP_SETS} sets, got {len(names)}")
    members = {n: set(sets[n]) for n in names}
    union: set[Hashable] = set().union(*members.values()) if names else set()
    uni = None if universe is None else set(universe)
    if uni is not None and not union <= uni:
        extra = sorted(map(str, union - uni))[:5]
        raise ValueError(f"items in a set but not in the universe: {extra}")
    combos = [c for r in range(1, len(names) + 1) for c in combinations(names, r)]
    membership: dict[Hashable, tuple[str, ...]] = {
        item: tuple(n for n in names if item in members[n]) for item in union
    }
    regions = dict.fromkeys(combos, 0)
    for combo in membership.values():
        regions[combo] += 1
    intersections = {c: len(set.intersection(*(members[n] for n in c))) for c in combos}
    return SetOverlap(
        names=names,
        sizes={n: len(members[n]) for n in names},
        regions=regions,
        intersections=intersections,
        union=len(union),
        none=None if uni is None else len(uni - union),
        universe=None if uni is None else len(uni),
    )


def normalize_whitespace(data: bytes) -> bytes:
    """An input with every run of whitespace made one space and the ends stripped."""
    return b" ".join(data.split())


@dataclass(frozen=True)
class InputOverlap:
    """How many of an arm's inputs also appear among the official tests (the leakage check).

    ``exact`` counts arm inputs byte-identical to some official input; ``normalized`` counts
    those equal after :func:`normalize_whitespace` (so a trailing newline or a changed line
    break does not hide a copy). Shares are over the arm's distinct inputs; ``jaccard_*`` is
    the Jaccard similarity of the two distinct-input sets.
    """

    arm_inputs: int
    official_inputs: int
    exact: int
    normalized: int
    jaccard_exact: float
    jaccard_normalized: float

    @property
    def exact_share(self) -> float:
        return self.exact / self.arm_inputs if self.arm_inputs else float("nan")

    @property
    def normalized_share(self) -> float:
        return self.normalized / self.arm_inputs if self.arm_inputs else float("nan")

    def to_dict(self) -> dict[str, object]:
        def j(x: float) -> float | None:
            return None if x != x else x

        return {
            "arm_inputs": self.arm_inputs,
            "official_inputs": self.official_inputs,
            "exact": self.exact,
            "exact_share": j(self.exact_share),
            "normalized": self.normalized,
            "normalized_share": j(self.normalized_share),
            "jaccard_exact": self.jaccard_exact,
            "jaccard_normalized": self.jaccard_normalized,
        }


def input_overlap(arm: Iterable[bytes], official: Iterable[bytes]) -> InputOverlap:
    """Overlap of an arm's inputs with the official tests, exact and whitespace-normalised."""
    a, o = set(arm), set(official)
    an = {normalize_whitespace(x) for x in a}
    on = {normalize_whitespace(x) for x in o}
    return InputOverlap(
        arm_inputs=len(a),
        official_inputs=len(o),
        exact=len(a & o),
        normalized=sum(normalize_whitespace(x) in on for x in a),
        jaccard_exact=jaccard(a, o),
        jaccard_normalized=jaccard(an, on),
    )
