"""Target selection (TestSuiteBench Appendix B.2): the min-cost max-flow, checked against
networkx on random bigraphs, plus the capacities, the tie-break and the bad-input errors."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from suitebench.construct.targets import select_targets, targets_for_instance
from suitebench.model.errors import FormatError
from suitebench.model.instance import load_instance

BUNDLED = Path(__file__).parents[2] / "src" / "suitebench" / "data" / "instances"


def _networkx(links: dict[str, list[str]], per_section: int) -> tuple[int, int]:
    graph = nx.DiGraph()
    for test, sections in links.items():
        for s in set(sections):
            graph.add_edge("source", ("s", s), capacity=per_section, weight=0)
            graph.add_edge(("s", s), ("t", test), capacity=1, weight=len(set(sections)))
        graph.add_edge(("t", test), "sink", capacity=1, weight=0)
    flow = nx.max_flow_min_cost(graph, "source", "sink")
    return nx.cost_of_flow(graph, flow), sum(flow["source"].values())


def _random_bigraph(rng: random.Random) -> tuple[dict[str, list[str]], int]:
    sections = [f"S{i}" for i in range(rng.randint(1, 9))]
    links = {}
    for j in range(rng.randint(1, 45)):
        # Skewed degrees, as in real suites: most tests assert one section, a few many.
        k = min(len(sections), rng.choice([1, 1, 1, 2, 2, 3, 5]))
        links[f"tests/test_{rng.randint(0, 5)}.py::t{j:03d}"] = rng.sample(sections, k)
    return links, rng.randint(1, 6)


@pytest.mark.parametrize("seed", range(6))
def test_same_cost_and_cardinality_as_networkx(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        links, per_section = _random_bigraph(rng)
        ours = select_targets(links, per_section=per_section)
        assert (ours.cost, ours.selected) == _networkx(links, per_section), links
        # And it is a feasible flow: capacities hold, every pair is an edge of the bigraph.
        used = [t for chosen in ours.targets.values() for t in chosen]
        assert len(used) == len(set(used))
        for section, chosen in ours.targets.items():
            assert len(chosen) <= per_section
            assert all(section in links[t] for t in chosen)


def test_section_specific_tests_are_preferred_and_ties_go_to_the_smaller_id() -> None:
    links = {
        "t/a.py::shared": ["Parse", "Merge", "Format"],
        "t/a.py::z_parse": ["Parse"],
        "t/a.py::b_parse": ["Parse"],
        "t/a.py::a_parse": ["Parse"],
        "t/a.py::m_merge": ["Merge"],
    }
    got = select_targets(links, ["Parse", "Merge", "Format", "Empty"], per_section=2)
    assert got.targets == {
        "Parse": ["t/a.py::a_parse", "t/a.py::b_parse"],
        "Merge": ["t/a.py::m_merge", "t/a.py::shared"],
        "Format": [],
        "Empty": [],
    }
    assert got.cost == 1 + 1 + 1 + 3


def test_maximum_flow_comes_before_cost() -> None:
    # The cheap test t1 could go to A only; taking it must not block A's only other test.
    links = {"x::t1": ["A"], "x::t2": ["A", "B"], "x::t3": ["B", "C"], "x::t4": ["C", "D"]}
    got = select_targets(links, per_section=1)
    assert got.selected == 4
    assert got.targets == {"A": ["x::t1"], "B": ["x::t2"], "C": ["x::t3"], "D": ["x::t4"]}


def test_capacity_per_section_and_zero() -> None:
    links = {f"x::t{i}": ["A"] for i in range(10)}
    assert select_targets(links, per_section=6).targets["A"] == [f"x::t{i}" for i in range(6)]
    assert select_targets(links, per_section=0).selected == 0


def _instance_with_map(tmp_path: Path, map_text: str, spec: str | None = None) -> Path:
    root = tmp_path / "inst"
    shutil.copytree(BUNDLED / "intervals-pkg", root)
    (root / "sections.toml").write_text(map_text)
    toml = root / "instance.toml"
    toml.write_text(
        toml.read_text().replace(
            'tests = "tests/"', 'tests = "tests/"\nsections_map = "sections.toml"'
        )
    )
    if spec is not None:
        (root / "spec.md").write_text(spec)
    return root


GOOD_MAP = """\
"tests/test_merge.py::test_merge_sorts_its_input" = ["Merging"]
"tests/test_merge.py::test_merge_joins_adjacent_intervals" = ["Merging", "Intervals"]
"tests/test_parse.py::test_parse_empty_text" = ["Parsing"]
"""


def test_instance_targets_and_cli(tmp_path: Path) -> None:
    root = _instance_with_map(tmp_path, GOOD_MAP)
    got = targets_for_instance(load_instance(root), per_section=1)
    assert got.targets["Merging"] == ["tests/test_merge.py::test_merge_sorts_its_input"]
    assert got.targets["Intervals"] == ["tests/test_merge.py::test_merge_joins_adjacent_intervals"]
    exe = Path(sys.executable).parent / "suitebench"
    out = tmp_path / "targets.json"
    proc = subprocess.run(
        [str(exe), "build", "targets", str(root), "--per-section", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["targets"] == got.targets


def test_map_naming_an_unknown_test_names_the_map_file(tmp_path: Path) -> None:
    root = _instance_with_map(
        tmp_path, GOOD_MAP + '"tests/test_parse.py::test_nope" = ["Parsing"]\n'
    )
    with pytest.raises(FormatError, match=r"sections\.toml.*unknown test.*test_nope"):
        targets_for_instance(load_instance(root))
    exe = Path(sys.executable).parent / "suitebench"
    proc = subprocess.run(
        [str(exe), "build", "targets", str(root), "--out", str(tmp_path / "t.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "sections.toml" in proc.stderr and "test_nope" in proc.stderr
    assert not (tmp_path / "t.json").exists()


def test_map_naming_an_unknown_section_is_an_error(tmp_path: Path) -> None:
    root = _instance_with_map(tmp_path, '"tests/test_parse.py::test_parse_empty_text" = ["Nope"]\n')
    with pytest.raises(FormatError, match=r"sections\.toml.*unknown section 'Nope'"):
        targets_for_instance(load_instance(root))


def test_spec_without_headings_names_the_spec(tmp_path: Path) -> None:
    root = _instance_with_map(tmp_path, GOOD_MAP, spec="Just prose, no headings.\n")
    with pytest.raises(FormatError, match=r"spec\.md.*headings"):
        targets_for_instance(load_instance(root))


def test_llm_infers_an_editable_map_when_there_is_none(tmp_path: Path) -> None:
    import os

    from suitebench.agents.fakeserver import FakeChatServer
    from suitebench.construct.stats import test_functions

    root = tmp_path / "inst"
    shutil.copytree(BUNDLED / "intervals-pkg", root)
    ids = test_functions(root / "tests")
    good = {t: ["Merging"] if "merge" in t else ["Parsing", "Formatting"] for t in ids}
    replies = [
        json.dumps({"tests/test_parse.py::test_invented": ["Parsing"]}),  # unknown test
        json.dumps({ids[0]: ["Nope"]}),  # unknown section
        "```json\n" + json.dumps(good) + "\n```",
    ]
    exe = Path(sys.executable).parent / "suitebench"
    with FakeChatServer(replies) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        proc = subprocess.run(
            [str(exe), "--store", str(tmp_path / "s.sqlite"), "build", "targets", str(root),
             "--llm", "--model", "scripted", "--per-section", "2",
             "--out", str(tmp_path / "t.json")],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        retries = [r["messages"][-1]["content"] for r in server.requests[1:]]
    assert proc.returncode == 0, proc.stderr
    assert "unknown test ids" in retries[0] and "unknown sections ['Nope']" in retries[1]
    instance = load_instance(root)
    assert instance.sections_map == good
    assert (root / "sections.toml").read_text().startswith("# test id -> the spec sections")
    targets = json.loads((tmp_path / "t.json").read_text())["targets"]
    assert len(targets["Merging"]) == 2 and targets["Measuring"] == []
