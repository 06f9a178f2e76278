"""``suitebench CMD ... > out.txt`` keeps what the command is run for.

Without ``--json`` every command's human output (tables, summaries, the figures) goes to
stdout, so redirecting stdout to a file keeps it; errors, warnings and progress bars stay on
stderr. Each test runs the real command line with its stdout on a real file, one per command
family (``audit`` and ``compare`` have theirs beside their other tests).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR

from .cli_helpers import run_suitebench


def to_file(tmp_path: Path, *args: str, timeout: float = 600) -> tuple[str, str]:
    """Run ``suitebench --store S ARGS > out.txt``: the file's text and stderr's."""
    target = tmp_path / "out.txt"
    with target.open("w") as fh:
        done = run_suitebench(
            *args,
            store=tmp_path / "s.sqlite",
            timeout=timeout,
            stdout=fh,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            env=dict(os.environ, CI="1"),
        )
    assert done.returncode == 0, done.stderr
    return target.read_text(), done.stderr


def test_doctor_tables_go_to_the_file(tmp_path: Path) -> None:
    text, err = to_file(tmp_path, "doctor")
    for title in ("isolation", "cgroups", "toolchains"):
        assert title in text, text
    assert "memory limit by:" in text and err == ""


def test_sandbox_outcome_goes_to_the_file(tmp_path: Path) -> None:
    text, err = to_file(tmp_path, "sandbox", "--", "sh", "-c", "echo from-inside")
    assert "status" in text and "from-inside" in text and err == ""


@pytest.mark.slow
def test_score_and_report_summaries_go_to_the_file(tmp_path: Path) -> None:
    instance = str(INSTANCES_DIR / "wordfreq-py")
    out = tmp_path / "scored"
    text, err = to_file(tmp_path, "score", instance, "--mutant", "m01", "--out", str(out))
    result = json.loads((out / "results.json").read_text())
    assert f"V = {100 * result['validity']:.1f}%" in text, text
    assert "1 killed" in text and f"results in {out}" in text  # m01: killed, counted
    assert "V = " not in err
    text, err = to_file(tmp_path, "report", str(out), "--out", str(tmp_path / "r.html"))
    assert f"report written to {tmp_path / 'r.html'}" in text and "1 suite score(s)" in text
    assert "report written" not in err


def test_build_stats_table_goes_to_the_file(tmp_path: Path) -> None:
    text, err = to_file(tmp_path, "build", "stats", str(INSTANCES_DIR / "rpn-c"))
    assert "1 instance(s)" in text and "Median" in text and "# Lines" in text
    assert "Median" not in err


@pytest.mark.slow
def test_generate_summary_goes_to_the_file(tmp_path: Path) -> None:
    args = ["generate", "random", str(PROBLEMS_DIR / "mean"), "--budget", "3"]
    text, err = to_file(tmp_path, *args, "--out", str(tmp_path / "arm"))
    log = json.loads((tmp_path / "arm" / "generate.json").read_text())
    assert f"random on mean: {log['kept']}/3 legal inputs kept" in text, text
    assert f"inputs and generate.json in {tmp_path / 'arm'}" in text
    assert "legal inputs kept" not in err


def test_agent_trajectories_table_goes_to_the_file(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "one"
    run.mkdir(parents=True)
    record = {"transcript_format": "text", "held_out": [], "rounds": [{"round": 0}]}
    (run / "agent.json").write_text(json.dumps(record))
    (run / "actions.jsonl").write_text(json.dumps({"command": "cat spec.md"}) + "\n")
    text, err = to_file(tmp_path, "agent", "trajectories", str(run))
    assert "1 runs: 0 with executable creation" in text, text
    assert "actions" in text and err == ""


def test_review_fdr_estimate_goes_to_the_file(tmp_path: Path) -> None:
    review = tmp_path / "review-sample.csv"
    with review.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["row", "weight", "human_verdict"])
        w.writeheader()
        w.writerows(
            [
                {"row": 1, "weight": 1.0, "human_verdict": "bug"},
                {"row": 2, "weight": 1.0, "human_verdict": "not_bug"},
            ]
        )
    text, err = to_file(tmp_path, "review-fdr", str(review))
    assert "weighted FDR          0.5000" in text, text
    assert err == ""


@pytest.mark.parametrize(
    ("args", "human"),
    [
        (("build", "stats", str(INSTANCES_DIR / "rpn-c"), "--json"), "Median"),
        (("doctor", "--json"), "isolation"),
        (("sandbox", "--json", "--", "sh", "-c", "echo from-inside"), "from-inside"),
    ],
)
def test_json_means_the_same_for_every_command(
    tmp_path: Path, args: tuple[str, ...], human: str
) -> None:
    """``--json`` anywhere on the line (after a ``build`` step too): the JSON alone on stdout,
    the human output on stderr."""
    text, err = to_file(tmp_path, *args)
    json.loads(text)  # the whole of stdout is one JSON document
    assert human in err, err
