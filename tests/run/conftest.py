"""Shared fixtures of the run tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.run import protocol, sandbox
from suitebench.run.outcome import Backend


@pytest.fixture
def fake_shims(tmp_path: Path) -> Path:
    """A pyenv-like version manager in a home directory only its owner can enter; returns its
    ``shims/`` directory, whose ``greet`` and ``python3`` exec the manager, which runs version
    9.9's real ones (``python3`` is this interpreter with ``FAKEENV=9.9`` set)."""
    home = tmp_path / "home"
    root = home / ".fakeenv"
    for d in ("libexec", "shims", "versions/9.9/bin"):
        (root / d).mkdir(parents=True)
    manager = root / "libexec" / "fakeenv"
    manager.write_text(
        "#!/bin/sh\n"
        'root="$(dirname "$(dirname "$0")")"\n'
        'case "$1" in\n'
        '  which) echo "$root/versions/9.9/bin/$2" ;;\n'
        '  prefix) echo "$root/versions/9.9" ;;\n'
        '  exec) shift; prog="$1"; shift; exec "$root/versions/9.9/bin/$prog" "$@" ;;\n'
        "esac\n"
    )
    real_python = os.path.realpath(sys.executable)
    scripts = {
        "versions/9.9/bin/greet": '#!/bin/sh\necho "hello from 9.9: $*"\n',
        "versions/9.9/bin/python3": f'#!/bin/sh\nFAKEENV=9.9 exec {real_python} "$@"\n',
    }
    for name in ("greet", "python3"):
        # pyenv's shim, word for word but for the manager's path.
        scripts[f"shims/{name}"] = (
            "#!/usr/bin/env bash\nset -e\n"
            'program="${0##*/}"\n'
            f'exec "{manager}" exec "$program" "$@"\n'
        )
    for rel, text in scripts.items():
        (root / rel).write_text(text)
        (root / rel).chmod(0o755)
    manager.chmod(0o755)
    home.chmod(0o700)
    return root / "shims"


def _backend_params() -> list[object]:
    """Every backend with the C runner (and unshare's C layout builder), and with the Python
    fallbacks of both."""
    out = []
    available = sandbox.available_backends()
    combos = [(b, "c") for b in Backend] + [(b, "python") for b in Backend]
    for b, runner in combos:
        reason = available[b]
        marks = [] if reason is None else [pytest.mark.skip(reason=f"{b}: {reason}")]
        out.append(pytest.param((b, runner), id=f"{b}-{runner}", marks=marks))
    return out


@pytest.fixture(params=_backend_params())
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    name, runner = request.param
    monkeypatch.setenv("SUITEBENCH_RUNNER", runner)
    protocol.c_runner.cache_clear()
    protocol.mount_helper.cache_clear()
    if runner == "c" and protocol.c_runner() is None:
        pytest.skip("no C compiler for the C runner")
    yield Backend(name)
    monkeypatch.undo()
    protocol.c_runner.cache_clear()
    protocol.mount_helper.cache_clear()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d
