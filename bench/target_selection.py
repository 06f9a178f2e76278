"""Target selection (TestSuiteBench Appendix B.2): our matroid-greedy min-cost max-flow vs
networkx's ``max_flow_min_cost`` on the same bigraph, side by side in one run.

    python bench/target_selection.py [--sections 50] [--tests 13000 300] [--per-section 6]

The bigraph is random but shaped like a large real suite: most tests assert one section, a
few assert many.  13,000 tests is the largest suite in the paper (most sections then fill up
with single-section tests); 300 tests is a contended graph where the cost matters.  Both
solvers must agree on the flow's cardinality and cost; the script
prints both times and the ratio.  Timings are rough on a shared machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import networkx as nx

from suitebench.construct.targets import select_targets


def bigraph(sections: int, tests: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    names = [f"Section {i:02d}" for i in range(sections)]
    weights = [1.0 / (i + 1) for i in range(sections)]  # some sections are tested far more
    links: dict[str, list[str]] = {}
    for j in range(tests):
        k = min(sections, rng.choice([1, 1, 1, 1, 2, 2, 3, 4, 8]))
        chosen: set[str] = set()
        while len(chosen) < k:
            chosen.add(rng.choices(names, weights)[0])
        links[f"tests/test_{j % 97:02d}.py::test_{j:05d}"] = sorted(chosen)
    return links


def networkx_flow(links: dict[str, list[str]], per_section: int) -> tuple[int, int]:
    graph = nx.DiGraph()
    for test, sections in links.items():
        for s in sections:
            graph.add_edge("source", ("s", s), capacity=per_section, weight=0)
            graph.add_edge(("s", s), ("t", test), capacity=1, weight=len(sections))
        graph.add_edge(("t", test), "sink", capacity=1, weight=0)
    flow = nx.max_flow_min_cost(graph, "source", "sink")
    return nx.cost_of_flow(graph, flow), sum(flow["source"].values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sections", type=int, default=50)
    ap.add_argument("--tests", type=int, nargs="+", default=[13000, 300])
    ap.add_argument("--per-section", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    ok = True
    for tests in args.tests:
        ok &= compare(args.sections, tests, args.per_section, args.seed)
    if not ok:
        raise SystemExit(1)


def compare(sections: int, tests: int, per_section: int, seed: int) -> bool:
    links = bigraph(sections, tests, seed)
    edges = sum(len(v) for v in links.values())
    print(f"bigraph: {sections} sections, {tests} tests, {edges} edges, "
          f"{per_section} per section")  # fmt: skip

    start = time.perf_counter()
    ours = select_targets(links, per_section=per_section)
    ours_s = time.perf_counter() - start
    print(f"suitebench  {ours_s:9.3f} s   selected {ours.selected}, cost {ours.cost}")

    start = time.perf_counter()
    cost, flow = networkx_flow(links, per_section)
    nx_s = time.perf_counter() - start
    print(f"networkx    {nx_s:9.3f} s   selected {flow}, cost {cost}")

    same = (ours.selected, ours.cost) == (flow, cost)
    print(f"same flow value and cost: {'yes' if same else 'NO'}")
    print(f"speed-up: {nx_s / max(ours_s, 1e-9):.0f}x")
    return same


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("target_selection", main))
