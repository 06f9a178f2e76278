"""Shared helpers: the project's problems and edited copies of them (the build cache and
engines on fresh stores come from the top-level conftest)."""

from __future__ import annotations

import shutil
from pathlib import Path

from suitebench.data import PROBLEMS_DIR

PROBLEMS = PROBLEMS_DIR


def copy_problem(tmp_path: Path, name: str, **replace: str) -> Path:
    """A copy of a fixture problem with ``problem.toml`` lines replaced (``old=new`` pairs
    given as keyword arguments whose values are ``"old|new"``)."""
    dst = tmp_path / f"variant-{name}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(PROBLEMS / name, dst)
    toml = dst / "problem.toml"
    text = toml.read_text()
    for spec in replace.values():
        old, new = spec.split("|", 1)
        assert old in text, old
        text = text.replace(old, new)
    toml.write_text(text)
    return dst
