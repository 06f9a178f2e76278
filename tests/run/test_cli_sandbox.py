"""``suitebench sandbox`` and ``suitebench doctor`` as a user calls them: real processes."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from suitebench.run import sandbox
from suitebench.run.cgroups import usable_parent
from suitebench.run.outcome import Outcome

from ..cli_helpers import run_suitebench


def _cli(
    *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, CI="1")
    return run_suitebench(*args, timeout=120, input=stdin, text=False, env=env, cwd=cwd)


def _json(*args: str, **kw: Any) -> dict[str, Any]:
    res = _cli("--json", *args, **kw)
    assert res.returncode == 0, res.stderr.decode()
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def test_sandbox_json_is_an_outcome_with_exact_bytes() -> None:
    d = _json("sandbox", "--", "sh", "-c", r"printf '\377ok'; echo oops >&2; exit 3")
    assert d["status"] == "runtime_error" and d["exit_code"] == 3
    assert base64.b64decode(d["stdout_b64"]) == b"\xffok"
    assert d["stderr_text"] == "oops\n"
    assert d["backend"] == str(sandbox.detect_backend())
    outcome = Outcome.from_dict(d)
    assert outcome.stdout == b"\xffok"


def test_sandbox_limits_from_flags() -> None:
    d = _json("sandbox", "--time", "1", "--", "sleep", "20")
    assert d["status"] == "timeout" and d["timeout_kind"] == "wall"
    assert d["limits"]["wall_time"] == 1.0
    o = _json("sandbox", "--output", "1", "--", "sh", "-c", "while :; do echo yyyyyyyy; done")
    assert o["status"] == "output_limit" and o["stdout_truncated"] is True
    assert len(base64.b64decode(o["stdout_b64"])) == 1024


def test_sandbox_memory_flag(tmp_path: Path) -> None:
    if usable_parent("memory") is None:
        pytest.skip("no writable memory cgroup: memory kills are not reported as such here")
    script = "x = []\nwhile True: x.append(bytearray(1 << 20))\n"
    (tmp_path / "hog.py").write_text(script)
    d = _json(
        "sandbox",
        "--memory",
        "48",
        "--cwd",
        str(tmp_path),
        "--",
        os.path.realpath(sys.executable),
        "-I",
        "hog.py",
    )
    assert d["status"] == "memory", d


def test_sandbox_stdin_file_and_pipe(tmp_path: Path) -> None:
    data = bytes(range(256)) * 100
    (tmp_path / "in.bin").write_bytes(data)
    d = _json("sandbox", "--stdin", str(tmp_path / "in.bin"), "--", "cat")
    assert base64.b64decode(d["stdout_b64"]) == data
    p = _json("sandbox", "--stdin", "-", "--", "wc", "-c", stdin=b"12345")
    assert p["stdout_text"].strip() == "5"


def test_sandbox_cwd_is_where_files_land(tmp_path: Path) -> None:
    d = _json("sandbox", "--cwd", str(tmp_path), "--", "sh", "-c", "echo made > out.txt")
    assert d["status"] == "ok"
    assert (tmp_path / "out.txt").read_text() == "made\n"


def test_sandbox_require_isolation_with_plain_refuses() -> None:
    d = _json("sandbox", "--backend", "plain", "--require-isolation", "--", "true")
    assert d["status"] == "sandbox_error" and "require_isolation" in d["message"]


def test_sandbox_human_output_on_stdout() -> None:
    res = _cli("sandbox", "--", "sh", "-c", "echo hello-from-inside")
    assert res.returncode == 0
    assert res.stderr == b""
    out = res.stdout.decode()
    assert "status" in out and "ok" in out and "hello-from-inside" in out


def test_sandbox_bad_stdin_file_is_a_clear_error(tmp_path: Path) -> None:
    res = _cli("sandbox", "--stdin", str(tmp_path / "missing"), "--", "cat")
    assert res.returncode == 2 and b"missing" in res.stderr


def test_doctor_json_reports_this_machine() -> None:
    d = _json("doctor")
    assert set(d["backends"]) == {"bwrap", "unshare", "plain"}
    assert d["backends"]["plain"]["available"] is True
    assert d["backends"][d["backend"]]["available"] is True
    assert d["backend"] == str(sandbox.detect_backend())
    tools = {t["name"]: t for t in d["tools"]}
    assert (tools["gcc"]["path"] is not None) == (shutil.which("gcc") is not None)
    assert tools["python"]["path"] == os.path.realpath(sys.executable)
    assert tools["python"]["version"].startswith("Python 3.")
    controllers = {c["controller"]: c for c in d["cgroups"]}
    assert set(controllers) == {"memory", "pids"}
    assert controllers["memory"]["writable"] == (usable_parent("memory") is not None)
    assert d["memory_limit_by"] == ("cgroup" if usable_parent("memory") else "RLIMIT_AS")


def test_doctor_human() -> None:
    res = _cli("doctor")
    assert res.returncode == 0
    out = res.stdout.decode()
    assert "bwrap" in out and "memory" in out and "gcc" in out


def test_sandbox_runs_a_command_found_through_a_version_manager_shim(fake_shims: Path) -> None:
    shims = fake_shims
    env = dict(os.environ, CI="1", PATH=f"{shims}:{os.environ['PATH']}")
    script = "greet a b; python3 -c 'import os; print(os.environ[\"FAKEENV\"])'"

    def cli(backend: str, *command: str) -> dict[str, Any]:
        args = ["--json", "sandbox", "--backend", backend, "--", *command]
        res = run_suitebench(*args, timeout=120, text=False, env=env)
        data: dict[str, Any] = json.loads(res.stdout)
        return data

    for backend in [str(b) for b, r in sandbox.available_backends().items() if r is None]:
        d = cli(backend, "sh", "-c", script)
        assert d["status"] == "ok", (backend, d)
        assert d["stdout_text"] == "hello from 9.9: a b\n9.9\n", (backend, d)
        assert cli(backend, "greet", "c")["stdout_text"] == "hello from 9.9: c\n", backend
        assert cli(backend, str(shims / "greet"))["stdout_text"] == "hello from 9.9: \n"


def test_sandbox_python3_runs_inside_as_it_runs_outside() -> None:
    """Where ``python3`` is a pyenv shim (it is on some machines), it used to exit 127."""
    outside = subprocess.run(
        ["python3", "-c", "import sys; print(sys.version)"], capture_output=True, check=True
    )
    d = _json("sandbox", "--", "python3", "-c", "import sys; print(sys.version)")
    assert d["status"] == "ok", d
    assert d["stdout_text"].encode() == outside.stdout


def test_sandbox_relative_program_is_the_callers(tmp_path: Path) -> None:
    (tmp_path / "hi.c").write_text('#include <stdio.h>\nint main(void){puts("hi there");}\n')
    subprocess.run(["gcc", "-o", str(tmp_path / "a.out"), str(tmp_path / "hi.c")], check=True)
    d = _json("sandbox", "--", "./a.out", cwd=tmp_path)
    assert d["status"] == "ok" and d["stdout_text"] == "hi there\n", d
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    d = _json("sandbox", "--cwd", str(elsewhere), "--", "./a.out", cwd=tmp_path)
    assert d["stdout_text"] == "hi there\n", d


def test_global_options_after_the_subcommand(tmp_path: Path) -> None:
    res = _cli("sandbox", "--json", "--", "sh", "-c", "echo inside")
    assert res.returncode == 0, res.stderr.decode()
    assert json.loads(res.stdout)["stdout_text"] == "inside\n"
    res = _cli("sandbox", "--time", "3", "--jobs", "2", "--json", "-j1", "--", "true")
    assert res.returncode == 0, res.stderr.decode()
    assert json.loads(res.stdout)["limits"]["wall_time"] == 3.0
    res = _cli("doctor", "--json", f"--store={tmp_path / 's.sqlite'}")
    assert res.returncode == 0 and "backends" in json.loads(res.stdout)
    # After the command (or --), --json belongs to the command.
    res = _cli("sandbox", "--json", "--", "echo", "--json")
    assert json.loads(res.stdout)["stdout_text"] == "--json\n"
    res = _cli("sandbox", "echo", "--json")
    assert res.stderr == b"" and "--json" in res.stdout.decode()
    assert not res.stdout.lstrip().startswith(b"{")  # the human table, not an outcome's JSON
