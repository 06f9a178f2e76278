"""Untrusted code never runs unsandboxed by accident.

Where neither bwrap nor unshare works, the plain backend (rlimits only) would let a hostile suite
or submission rewrite reference solutions, write in the user's home and reach local servers. So
it runs only when asked for by name: the library's runs that name no backend are
``sandbox_error``, and every command that runs programs exits 2 before any work, saying what to
install, unless given ``--backend plain`` or ``--allow-unsandboxed`` (then the results say so).

This machine has bwrap; "nothing isolates here" is made real by hiding ``bwrap`` and
``unshare`` from ``PATH`` (in-process for the library, a directory of links to every other
command for the command line's child processes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.audit.runs import AuditEngine
from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR
from suitebench.run import layout, sandbox
from suitebench.run.executor import LocalExecutor
from suitebench.run.outcome import Backend, Status
from suitebench.run.store import Store

EXE = Path(sys.executable).with_name("suitebench")
HIDDEN = ("bwrap", "unshare")


@pytest.fixture
def nothing_isolates(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process finds neither bwrap nor unshare (the probes are asked afresh)."""
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(sandbox.BACKEND_ENV, raising=False)
    layout.probe.cache_clear()
    try:
        yield
    finally:
        monkeypatch.undo()
        layout.probe.cache_clear()


@pytest.fixture(scope="module")
def bare_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH holding every command of this machine but bwrap and unshare."""
    bin_dir = tmp_path_factory.mktemp("bin-without-sandboxes")
    for d in os.environ.get("PATH", layout.DEFAULT_PATH).split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            link = bin_dir / name
            if name in HIDDEN or link.exists() or link.is_symlink():
                continue
            target = Path(d, name)
            if target.is_file() and os.access(target, os.X_OK):
                link.symlink_to(target)
    return str(bin_dir)


def cli(bare_path: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != sandbox.BACKEND_ENV}
    env["PATH"] = bare_path
    return subprocess.run(
        [str(EXE), "--store", str(cwd / "store.sqlite"), "-j", "2", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def assert_refused(proc: subprocess.CompletedProcess[str], tmp_path: Path) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert "bubblewrap" in message and "apt-get install bubblewrap" in message, message
    assert "--backend plain" in message and "--allow-unsandboxed" in message, message
    assert "bwrap not found on PATH" in message, message
    # Refused before any work: no store opened, no output written.
    assert sorted(p.name for p in tmp_path.iterdir()) == [], list(tmp_path.iterdir())


# -- the library ----------------------------------------------------------------------------------


def test_a_run_naming_no_backend_refuses_plain(tmp_path: Path, nothing_isolates: None) -> None:
    marker = tmp_path / "ran"
    refused = sandbox.run(["/bin/sh", "-c", f": > {marker}"], cwd=tmp_path)
    assert refused.status is Status.SANDBOX_ERROR, refused
    assert "apt-get install bubblewrap" in refused.message and "--backend plain" in refused.message
    assert not marker.exists()
    with sandbox.Session(["/bin/sh", "-c", f": > {marker}"], cwd=tmp_path) as session:
        assert session.run(b"").status is Status.SANDBOX_ERROR
    assert not marker.exists()

    ran = sandbox.run(["/bin/sh", "-c", f": > {marker}"], cwd=tmp_path, backend=Backend.PLAIN)
    assert ran.status is Status.OK and ran.backend is Backend.PLAIN, ran
    assert marker.exists()


def test_plain_named_for_the_process_runs(
    tmp_path: Path, nothing_isolates: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$SUITEBENCH_BACKEND`` is asking by name: what a command line hands its workers."""
    monkeypatch.setenv(sandbox.BACKEND_ENV, "plain")
    out = sandbox.run(["/bin/echo", "hi"], cwd=tmp_path)
    assert out.status is Status.OK and out.stdout == b"hi\n" and out.backend is Backend.PLAIN
    assert sandbox.detect_backend() is Backend.PLAIN
    monkeypatch.setenv(sandbox.BACKEND_ENV, "bwrap")
    out = sandbox.run(["/bin/echo", "hi"], cwd=tmp_path)
    assert out.status is Status.SANDBOX_ERROR and "bwrap not found" in out.message, out
    monkeypatch.setenv(sandbox.BACKEND_ENV, "plian")
    out = sandbox.run(["/bin/echo", "hi"], cwd=tmp_path)
    assert out.status is Status.SANDBOX_ERROR and "'plian' is not a backend" in out.message


def test_choose_backend_is_the_one_decision(nothing_isolates: None) -> None:
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
        sandbox.choose_backend()
    with pytest.raises(sandbox.SandboxUnavailable, match="bwrap not found on PATH"):
        sandbox.choose_backend(Backend.BWRAP)
    assert sandbox.choose_backend(Backend.PLAIN) is Backend.PLAIN
    assert sandbox.choose_backend(None, allow_unsandboxed=True) is Backend.PLAIN
    assert sandbox.describe_environment()["refusal"].startswith("no sandbox backend isolates")


def test_an_audit_engine_naming_no_backend_refuses_plain(
    tmp_path: Path, nothing_isolates: None
) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        executor = LocalExecutor(jobs=1)
        try:
            with pytest.raises(sandbox.SandboxUnavailable, match="--allow-unsandboxed"):
                AuditEngine(store, executor, tmp_path / "builds")
            engine = AuditEngine(store, executor, tmp_path / "builds", backend=Backend.PLAIN)
            assert engine.backend is Backend.PLAIN
        finally:
            executor.close()


def test_where_bwrap_works_nothing_changes(tmp_path: Path) -> None:
    if sandbox.available_backends()[Backend.BWRAP] is not None:
        pytest.skip("bwrap does not work here")
    assert sandbox.choose_backend() is Backend.BWRAP
    assert sandbox.describe_environment()["refusal"] == ""
    assert sandbox.run(["/bin/true"], cwd=tmp_path).backend is Backend.BWRAP


# -- the command line -----------------------------------------------------------------------------


def test_score_and_audit_refuse_before_any_work(tmp_path: Path, bare_path: str) -> None:
    score = tmp_path / "score"
    score.mkdir()
    assert_refused(
        cli(bare_path, score, "score", str(INSTANCES_DIR / "rpn-c"), "--out", "o"), score
    )
    audit = tmp_path / "audit"
    audit.mkdir()
    mean = PROBLEMS_DIR / "mean"
    proc = cli(bare_path, audit, "audit", str(mean), "--arm", f"hand={mean / 'arms/handmade'}")
    assert_refused(proc, audit)


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "random", str(PROBLEMS_DIR / "mean"), "--budget", "3", "--out", "o"],
        ["build", "refine", str(INSTANCES_DIR / "rpn-c"), "--out", "o"],
        ["build", "mutants", str(INSTANCES_DIR / "rpn-c"), "--out", "o"],
        [
            "agent",
            "run",
            "suite",
            str(INSTANCES_DIR / "rpn-c"),
            "--out",
            "o",
            "--agent-cmd",
            "true",
        ],
        ["demo", "--out", "o"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_every_command_that_runs_programs_refuses(
    tmp_path: Path, bare_path: str, args: list[str]
) -> None:
    assert_refused(cli(bare_path, tmp_path, *args), tmp_path)


def test_score_with_backend_plain_runs_and_says_so(tmp_path: Path, bare_path: str) -> None:
    proc = cli(
        bare_path,
        tmp_path,
        "score",
        str(INSTANCES_DIR / "rpn-c"),
        "--backend",
        "plain",
        "--mutant",
        "c01",
        "--reference-runs",
        "1",
        "--out",
        "o",
    )
    assert proc.returncode == 0, proc.stderr
    assert "without network or pid isolation (rlimits only)" in proc.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["backend"] == "plain"
    assert results["counts"]["valid"] == results["counts"]["tests"] > 0  # it really ran
    assert results["counts"]["build_errors"] == 0


def test_audit_allowed_unsandboxed_runs_and_says_so(tmp_path: Path, bare_path: str) -> None:
    mean = PROBLEMS_DIR / "mean"
    arm = f"hand={mean / 'arms/handmade'}"
    proc = cli(bare_path, tmp_path, "audit", str(mean), "--arm", arm, "--allow-unsandboxed")
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "audit-out" / "results.json").read_text())
    assert results["backend"] == "plain" and results["unsandboxed"] is True
    assert results["harness_errors"] == [] and results["certified"] > 0  # it really ran
