"""``build mutants --llm`` against a scripted OpenAI-compatible server on 127.0.0.1: good
diffs are kept, and replies without a diff, diffs that do not apply, that hard-code the
target's literals, that do not build, and bodies that are not completions are each retried
and, when attempts run out, reported."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from suitebench.agents.fakeserver import FakeChatServer, Scripted
from suitebench.construct.llm_mutants import requirement_mutants
from suitebench.llm.client import ModelClient, ModelReplyError
from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.score import score_suite

BUNDLED = Path(__file__).parents[2] / "src" / "suitebench" / "data" / "instances"
MERGE = "tests/test_merge.py::test_merge_joins_adjacent_intervals"
LENGTH = "tests/test_measure_format.py::test_total_length_counts_both_ends"
REVERSED = "tests/test_parse.py::test_parse_rejects_reversed_interval"
TARGETS = {"Merging": [MERGE], "Measuring": [LENGTH], "Parsing": [REVERSED]}

STALE = """\
```diff
--- a/intervals/core.py
+++ b/intervals/core.py
@@ -16,3 +16,3 @@
     ordered = sorted(intervals, reverse=True)
-    merged = []
+    merged = [None]
```
"""


def _diff(root: Path, rel: str, old: str, new: str) -> str:
    """A real unified diff of one replacement in one source file, in a ```diff block."""
    before = (root / "src" / rel).read_text()
    assert old in before
    after = before.replace(old, new, 1)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
    )
    return "```diff\n" + "".join(lines) + "```\n"


def _hardcoded(root: Path) -> str:
    # Only the target's own input misbehaves: total_length([Interval(5, 5)]) == 0.
    return _diff(
        root,
        "intervals/core.py",
        "    return sum(hi - lo + 1 for lo, hi in merge(intervals))",
        "    items = list(intervals)\n    if items == [Interval(5, 5)]:\n        return 0\n"
        "    return sum(hi - lo + 1 for lo, hi in merge(items))",
    )


def _syntax_error(root: Path, junk: str) -> str:
    return _diff(root, "intervals/text.py", "from __future__ import annotations",
                 f"from __future__ import annotations {junk}")  # fmt: skip


def _without_prefixes(diff: str) -> str:
    return diff.replace("--- a/", "--- ").replace("+++ b/", "+++ ")


def _instance(tmp_path: Path) -> Path:
    root = tmp_path / "inst"
    shutil.copytree(BUNDLED / "intervals-pkg", root)
    return root


def test_requirement_mutants_with_malformed_replies(tmp_path: Path) -> None:
    root = _instance(tmp_path)
    good_merge = (root / "mutants" / "p01.diff").read_text()
    good_length = (root / "mutants" / "p04.diff").read_text()
    replies = [
        # Merging: no diff at all, then a stale diff, then a good one without a/ b/ prefixes.
        "I would change the merge condition.",
        STALE,
        "Here it is:\n```diff\n" + _without_prefixes(good_merge) + "```\n",
        # Measuring: a body that is not a completion, a hard-coded literal, then a good one.
        Scripted(body="<html>gateway</html>"),
        _hardcoded(root),
        "```diff\n" + good_length + "```",
        # Parsing: three mutants that do not compile: the pair fails.
        _syntax_error(root, "("),
        _syntax_error(root, "[["),
        _syntax_error(root, ")"),
    ]
    store = Store(tmp_path / "s.sqlite")
    with FakeChatServer(replies) as server:
        client = ModelClient("scripted", base_url=server.base_url, api_key="k", store=store,
                             max_retries=0)  # fmt: skip
        report = requirement_mutants(
            load_instance(root), client, TARGETS, cache_dir=tmp_path / "b",
            retryable=(ModelReplyError,),
        )  # fmt: skip
        requests = list(server.requests)
    problems = [
        (a["target"], a["problem"].splitlines()[0] if a["problem"] else "") for a in report.attempts
    ]
    assert problems[0] == (
        MERGE,
        "expected a unified diff in a ```diff block (--- a/FILE, +++ b/FILE)",
    )
    assert problems[1][1].startswith("the diff does not apply")
    assert problems[2] == (MERGE, "")
    assert problems[3][1].startswith("unusable reply: ")
    assert (
        problems[4][1]
        == "the change hard-codes literals of the target test (5); change the logic instead"
    )
    assert problems[5] == (LENGTH, "")
    assert all(p[1].startswith("the mutant does not build") for p in problems[6:])
    assert report.failed_pairs == [
        {"section": "Parsing", "target": REVERSED, "problem": report.attempts[-1]["problem"]}
    ]
    # The model was told what was wrong, in the same conversation.
    retry = requests[1]["messages"]
    assert retry[-1]["content"].startswith("That mutant cannot be used: expected a unified diff")
    assert "test_merge_joins_adjacent_intervals" in requests[0]["messages"][1]["content"]

    instance = load_instance(root)
    generated = [m for m in instance.mutants if m.id.startswith("rq")]
    assert [(m.section, m.target) for m in generated] == [("Merging", MERGE), ("Measuring", LENGTH)]
    assert generated[0].patch.read_text() == good_merge  # prefixes restored
    result = score_suite(instance, store=store, cache_dir=tmp_path / "b",
                         mutant_ids=[m.id for m in generated])  # fmt: skip
    store.close()
    for m in result.mutants:
        assert m.target in m.killed_by


def test_cli_llm_mutants_from_targets_file(tmp_path: Path) -> None:
    root = _instance(tmp_path)
    good = (root / "mutants" / "p01.diff").read_text()
    (tmp_path / "targets.json").write_text(json.dumps({"targets": {"Merging": [MERGE]}}))
    exe = Path(sys.executable).parent / "suitebench"
    with FakeChatServer(["```diff\n" + good + "```"]) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        proc = subprocess.run(
            [str(exe), "--store", str(tmp_path / "s.sqlite"), "--json", "build", "mutants",
             str(root), "--llm", "--model", "scripted", "--targets", str(tmp_path / "targets.json"),
             "--out", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [m["target"] for m in data["mutants"]] == [MERGE]
    assert data["usage"]["calls"] == 1
    assert load_instance(tmp_path / "out").mutant("rq0001").section == "Merging"
    # A targets file naming an unknown test is an error naming the file.
    (tmp_path / "bad.json").write_text(json.dumps({"targets": {"Merging": ["tests/x.py::nope"]}}))
    bad = subprocess.run(
        [str(exe), "build", "mutants", str(root), "--llm", "--model", "m", "--targets",
         str(tmp_path / "bad.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "bad.json" in bad.stderr and "unknown test" in bad.stderr
