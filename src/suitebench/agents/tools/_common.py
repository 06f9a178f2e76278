"""Shared by the workspace tools: build a program once, run it under a time limit, compare.

Standard library only (the tools run on the agent's side of the sandbox). The problem's limits
and checker come from ``scripts/problem.json``, written by the harness.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "workspace" / ".build"
CONFIG = json.loads((ROOT / "scripts" / "problem.json").read_text(encoding="utf-8"))


def build(source: Path) -> tuple[list[str] | None, str]:
    """How to run ``source`` (built once, cached by content), or None and the compiler's words."""
    suffix = source.suffix
    if suffix == ".py":
        return [sys.executable, str(source)], ""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    BUILD.mkdir(parents=True, exist_ok=True)
    binary = BUILD / f"{source.stem}-{digest}"
    if binary.exists():
        return [str(binary)], ""
    if suffix == ".c":
        cmd = ["gcc", "-O2", "-std=gnu17", "-o", str(binary), str(source), "-lm"]
    elif suffix in (".cc", ".cpp", ".cxx"):
        cmd = ["g++", "-O2", "-std=gnu++17", "-o", str(binary), str(source), "-lm"]
    else:
        return None, f"{source}: unknown language (expected .c, .cpp or .py)"
    if shutil.which(cmd[0]) is None:
        return None, f"{cmd[0]} is not installed"
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        return None, res.stderr[-2000:]
    return [str(binary)], ""


def run(argv: list[str], stdin: bytes, time_limit: float | None = None) -> tuple[str, bytes]:
    """('ok' | 'RE' | 'TLE', stdout) of one run."""
    limit = time_limit if time_limit is not None else float(CONFIG["time_limit"])
    try:
        res = subprocess.run(argv, input=stdin, capture_output=True, timeout=limit + 0.5)
    except subprocess.TimeoutExpired:
        return "TLE", b""
    return ("ok" if res.returncode == 0 else "RE"), res.stdout


def same(expected: bytes, got: bytes) -> bool:
    """The problem's checker, for the built-in kinds (a custom checker compares tokens)."""
    kind = str(CONFIG.get("checker", "tokens"))
    if kind == "exact":
        return expected == got
    if kind == "lines":
        return [x.rstrip() for x in expected.decode(errors="replace").rstrip().splitlines()] == [
            x.rstrip() for x in got.decode(errors="replace").rstrip().splitlines()
        ]
    a, b = expected.split(), got.split()
    if kind.startswith("float:"):
        eps = float(kind.split(":", 1)[1])
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            try:
                fx, fy = float(x), float(y)
            except ValueError:
                if x != y:
                    return False
                continue
            if abs(fx - fy) > eps * max(1.0, abs(fx)) + 1e-15:
                return False
        return True
    return a == b


def reference() -> Path:
    refs = sorted((ROOT / "docs").glob("ref.*"))
    if not refs:
        sys.exit("docs/ref.* is missing")
    return refs[0]


def wrongs() -> list[Path]:
    d = ROOT / "workspace" / "wrongs"
    return (
        sorted(p for p in d.glob("*") if p.suffix in (".c", ".cc", ".cpp", ".py"))
        if d.is_dir()
        else []
    )


os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
