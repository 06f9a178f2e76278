"""Runs in one sandbox session do not see each other: each starts from a fresh work folder.

A verdict must not depend on what ran before it in its chunk (chunks depend on ``--jobs`` and
timing), so a probe that leaves a marker in its work folder (``$HOME`` there too) and one that
looks for it must give, run after run in one session, what separate sandboxes give. Checked
on every backend, with the C and the Python runner, and through the audit's own chunk runner.
"""

from __future__ import annotations

import sys
from pathlib import Path

from suitebench.audit.runs import chunk_job
from suitebench.run import sandbox
from suitebench.run.outcome import Backend, Limits, Status
from suitebench.run.store import decode_blob

# Leaves a marker (a file, a directory holding one, a link, a file under $HOME) and reports
# what it found on arrival.
PROBE = (
    'found=""; for f in probe_marker probe_dir probe_link "$HOME/.probe_home"; do '
    '[ -e "$f" ] || [ -L "$f" ] && found="$found $f"; done; '
    'echo "found:$found"; '
    "echo x > probe_marker; mkdir -p probe_dir; echo y > probe_dir/f; chmod 000 probe_dir; "
    'ln -s /etc/passwd probe_link; echo z > "$HOME/.probe_home"'
)


def test_each_run_of_a_session_starts_with_the_work_dir_it_started_with(
    work: Path, backend: Backend
) -> None:
    (work / "given.txt").write_text("the caller's file\n")
    script = f"cat given.txt; {PROBE}"
    outs = sandbox.run_batch(["sh", "-c", script], [b""] * 4, cwd=work, backend=backend)
    assert [o.status for o in outs] == [Status.OK] * 4, outs
    expected = b"the caller's file\nfound:\n"
    assert [o.stdout for o in outs] == [expected] * 4
    # The caller's own entry is kept, and the last run's files stay for the caller to read.
    assert (work / "given.txt").read_text() == "the caller's file\n"
    assert (work / "probe_marker").read_text() == "x\n"
    assert (work / "probe_link").is_symlink()
    assert Path("/etc/passwd").exists()  # the link was unlinked, never followed


def test_a_removed_marker_does_not_take_the_callers_files(work: Path, backend: Backend) -> None:
    """What the work dir held at the start is the caller's: cleaning never removes it."""
    (work / "keep").mkdir()
    (work / "keep" / "data").write_text("1\n")
    outs = sandbox.run_batch(
        ["sh", "-c", "cat keep/data; touch new_$RANDOM"], [b"", b"", b""], cwd=work, backend=backend
    )
    assert [o.stdout for o in outs] == [b"1\n"] * 3, outs
    assert len(list(work.glob("new_*"))) == 1


def test_an_audit_chunk_judges_each_run_as_a_fresh_sandbox_would(tmp_path: Path) -> None:
    """The audit's chunk runner (one session per chunk of inputs) gives each input the verdict
    a run of its own would: a probe submission never finds what its earlier run left."""
    prog = tmp_path / "probe.py"
    prog.write_text(
        "import os, sys\n"
        "seen = os.path.exists('probe_marker') or os.path.exists(os.path.expanduser('~/.m'))\n"
        "open('probe_marker', 'w').write('x')\n"
        "open(os.path.expanduser('~/.m'), 'w').write('x')\n"
        "print(int(sys.stdin.read()) * 2 + (1000 if seen else 0))\n"
    )
    payload = {
        "limits": Limits(wall_time=5).to_dict(),
        "argv": [sys.executable, str(prog)],
        "ro_binds": [str(tmp_path)],
        "mode": "stdin",
        "stdins": [f"{i}\n".encode() for i in range(6)],
        "handback": False,
    }
    result = chunk_job(payload)
    blobs = {sha: decode_blob(codec, data) for sha, codec, _, data in result["blobs"]}
    assert [r["status"] for r in result["outcomes"]] == ["ok"] * 6, result["outcomes"]
    outputs = [blobs[r["stdout_sha256"]] for r in result["outcomes"]]
    assert outputs == [f"{2 * i}\n".encode() for i in range(6)]
