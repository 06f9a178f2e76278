"""``build spec`` against a scripted model on 127.0.0.1: the draft (after a reply without
headings), then the refinement loop on the bundled Python package -- a buggy trial
implementation blamed on the spec's Measuring section, a malformed attribution reply, the
section revised, and a second iteration whose failures are all the generation's."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from suitebench.agents.fakeserver import FakeChatServer, Scripted
from suitebench.construct.spec import build_spec
from suitebench.llm.client import ModelClient, ModelReplyError
from suitebench.model.errors import FormatError
from suitebench.model.instance import load_instance
from suitebench.run.store import Store

BUNDLED = Path(__file__).parents[2] / "src" / "suitebench" / "data" / "instances"

DRAFT = """\
# intervals

## Intervals
An interval [lo, hi] holds every integer from lo to hi; `contains` tells if a value is in one.

## Parsing
`parse("1-3, 7")` reads ranges and single points separated by commas.

## Merging
`merge` sorts intervals and joins overlapping and adjacent ones.

## Measuring
`total_length` tells how many integers the intervals cover.

## Formatting
`format_intervals` writes points as `5` and ranges as `1-3`.
"""

REVISED = "## Measuring\nEach interval counts both of its ends: [1, 3] covers 3 integers.\n"

SUITE = """\
FILE: tests/test_trial.py
```python
from intervals import Interval, merge, total_length


def test_merge_joins():
    assert merge([Interval(1, 2), Interval(3, 4)]) == [Interval(1, 4)]


def test_length_guess():
    assert total_length([Interval(1, 3)]) == 2
```
"""


def _package(buggy: bool) -> str:
    root = BUNDLED / "intervals-pkg" / "src" / "intervals"
    parts = []
    for path in sorted(root.glob("*.py")):
        text = path.read_text()
        if buggy and path.name == "core.py":
            text = text.replace("hi - lo + 1 for", "hi - lo for")
        parts.append(f"FILE: intervals/{path.name}\n```python\n{text}```\n")
    return "\n".join(parts)


class Script:
    """Answers by task, keeping count, with one malformed reply for draft and attribution."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, request: dict[str, Any]) -> str | Scripted:
        task = request["messages"][1]["content"].splitlines()[0]
        n = self.calls[task] = self.calls.get(task, 0) + 1
        if task == "Task: draft the specification.":
            return "The program handles intervals." if n == 1 else "```markdown\n" + DRAFT + "```"
        if task == "Task: implement from the specification.":
            return _package(buggy=n == 1)
        if task == "Task: write a test suite from the specification.":
            return SUITE
        if task == "Task: attribute the failures.":
            if n == 1:
                return Scripted(body="{not json")  # not a chat completion at all
            if n == 2:
                return "Most failures are the generation's."  # not JSON
            ids = re.findall(r"^- id `([^`]+)`", request["messages"][1]["content"], re.M)
            return json.dumps(
                [{"id": i, "cause": "spec" if i.startswith("reference:") else "generation",
                  "sections": ["Measuring"], "why": "ends not said to count"} for i in ids]
            )  # fmt: skip
        if task == "Task: revise one section.":
            return REVISED
        raise AssertionError(task)


def test_draft_and_refinement_loop(tmp_path: Path) -> None:
    root = tmp_path / "inst"
    shutil.copytree(BUNDLED / "intervals-pkg", root)
    (root / "spec.md").unlink()
    toml = root / "instance.toml"
    toml.write_text(toml.read_text().replace('spec = "spec.md"\n', ""))
    store = Store(tmp_path / "s.sqlite")
    script = Script()
    with FakeChatServer(responder=script) as server:
        client = ModelClient("scripted", base_url=server.base_url, api_key="k", store=store,
                             max_retries=0)  # fmt: skip
        report = build_spec(load_instance(root), client, store=store, iterations=3,
                            retryable=(ModelReplyError,), cache_dir=tmp_path / "b")  # fmt: skip
    store.close()
    assert report.drafted and report.sections == 6
    first, second = report.iterations
    assert first["R"] < 1.0 and first["spec"] >= 1 and first["sections_revised"] == ["Measuring"]
    assert first["V"] == 0.5  # the trial suite's guess about lengths fails on the reference
    assert second["R"] == 1.0 and second["spec"] == 0 and second["spec_share"] == 0.0
    assert second["failures"] == second["generation"] > 0
    assert report.stopped == "fewer than 5% of the failures are the spec's"
    assert script.calls == {
        "Task: draft the specification.": 2,
        "Task: implement from the specification.": 2,
        "Task: write a test suite from the specification.": 2,
        "Task: attribute the failures.": 4,
        "Task: revise one section.": 1,
    }
    instance = load_instance(root)
    spec = instance.spec.read_text() if instance.spec else ""
    assert "counts both of its ends" in spec and "how many integers" not in spec
    assert "## Formatting" in spec and instance.spec_sections()[0] == "intervals"
    saved = json.loads((root / "spec-iterations" / "01" / "figures.json").read_text())
    assert saved["sections_revised"] == ["Measuring"]
    assert (root / "spec-iterations" / "02" / "spec.md").read_text().count(REVISED.strip()) == 1


def test_a_spec_without_headings_names_the_spec(tmp_path: Path) -> None:
    root = tmp_path / "inst"
    shutil.copytree(BUNDLED / "intervals-pkg", root)
    (root / "spec.md").write_text("Intervals are parsed, merged and measured.\n")
    store = Store(tmp_path / "s.sqlite")
    with FakeChatServer([]) as server:
        client = ModelClient("scripted", base_url=server.base_url, api_key="k", store=store)
        with pytest.raises(FormatError, match=r"spec\.md.*headings"):
            build_spec(load_instance(root), client, store=store, cache_dir=tmp_path / "b")
        assert server.requests == []
    store.close()
