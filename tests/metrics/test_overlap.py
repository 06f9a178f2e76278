"""Near-clone clustering: comment-stripped token 5-shingles, Jaccard >= 0.8, single linkage."""

from __future__ import annotations

import random

import numpy as np
import pytest

from suitebench.metrics.overlap import (
    clusters_by_problem,
    jaccard,
    jaccard_matrix,
    language_of,
    near_clone_clusters,
    shingles,
    tokens,
)

SOLUTION = """#include <bits/stdc++.h>
using namespace std;
// prefix sums, answer queries [l, r]
int main() {
    int n, q;
    scanf("%d %d", &n, &q);
    vector<long long> pre(n + 1, 0);
    for (int i = 0; i < n; i++) {
        long long a;
        scanf("%lld", &a);
        pre[i + 1] = pre[i] + a;
    }
    while (q--) {
        int l, r;
        scanf("%d %d", &l, &r);
        printf("%lld\\n", pre[r] - pre[l - 1]);
    }
    return 0;
}
"""

# the same program with other comments and layout: a clone
RECOMMENTED = SOLUTION.replace("// prefix sums, answer queries [l, r]", "/* fast io */").replace(
    "    ", "\t"
)
# the classic overflow bug: int prefix sums (one token changed): still a near clone
OVERFLOW = SOLUTION.replace("vector<long long> pre", "vector<int> pre")
# a different approach to the same problem: not a clone
NAIVE = """#include <cstdio>
int a[200005];
int main() {
    int n, q; scanf("%d%d", &n, &q);
    for (int i = 1; i <= n; ++i) scanf("%d", a + i);
    for (; q > 0; --q) {
        int l, r; scanf("%d%d", &l, &r);
        long long s = 0;
        for (int i = l; i <= r; ++i) s += a[i];
        printf("%lld\\n", s);
    }
}
"""


def test_comments_are_stripped_but_code_and_strings_kept() -> None:
    toks = tokens(SOLUTION)
    assert "prefix" not in toks and "sums" not in toks
    assert toks[:3] == ["#", "include", "<"]  # a C preprocessor line is code
    assert '"%d %d"' in toks  # a string literal is one token
    py = tokens('x = "#not a comment"  # a comment\nprint(x)  # another\n', "python")
    assert py == ["x", "=", '"#not a comment"', "print", "(", "x", ")"]
    assert language_of("sol.py") == "python" and language_of("sol.cpp") == "c"


def test_shingles_and_jaccard() -> None:
    assert shingles(SOLUTION) == shingles(RECOMMENTED)
    assert shingles("a b", k=5) == frozenset({("a", "b")})
    assert shingles("") == frozenset()
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    assert jaccard(set(), set()) == 1.0
    with pytest.raises(ValueError):
        shingles("x", k=0)


def test_matrix_equals_pairwise_jaccard() -> None:
    rng = random.Random(5)
    sets = [frozenset(rng.sample(range(30), rng.randint(0, 12))) for _ in range(15)]
    m = jaccard_matrix(sets)
    for i in range(15):
        for j in range(15):
            assert m[i, j] == pytest.approx(jaccard(sets[i], sets[j]))


def test_clones_cluster_and_a_different_solution_does_not() -> None:
    assert jaccard(shingles(SOLUTION), shingles(OVERFLOW)) >= 0.8
    assert jaccard(shingles(SOLUTION), shingles(NAIVE)) < 0.8
    clusters = near_clone_clusters({"s1": SOLUTION, "s2": RECOMMENTED, "s3": OVERFLOW, "s4": NAIVE})
    assert clusters == [["s1", "s2", "s3"], ["s4"]]


def test_single_linkage_chains() -> None:
    base = [f"v{i}" for i in range(120)]

    def variant(*changed: range) -> str:
        return " ".join(f"w{i}" if any(i in r for r in changed) else t for i, t in enumerate(base))

    # b edits one block of a, c edits a second block of b
    a, b, c = variant(), variant(range(100, 106)), variant(range(100, 106), range(20, 26))
    sa, sb, sc = shingles(a), shingles(b), shingles(c)
    # preconditions of the chain: a~b and b~c at >= 0.8, but a and c are not near clones
    assert jaccard(sa, sb) >= 0.8 and jaccard(sb, sc) >= 0.8 and jaccard(sa, sc) < 0.8
    assert near_clone_clusters([a, b, c]) == [["0", "1", "2"]]
    assert near_clone_clusters([a, c]) == [["0"], ["1"]]
    assert near_clone_clusters([a, c], threshold=float(np.nextafter(0.0, 1.0))) == [["0", "1"]]


def test_clusters_never_cross_problems() -> None:
    out = clusters_by_problem(
        [
            ("abc101_d", "x1", SOLUTION),
            ("abc101_d", "x2", OVERFLOW),
            ("abc102_d", "y1", SOLUTION),
        ]
    )
    assert out == {"abc101_d": [["x1", "x2"]], "abc102_d": [["y1"]]}
    assert sum(len(v) for v in out.values()) == 2  # near-clone-distinct findings
