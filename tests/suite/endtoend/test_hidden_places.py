"""A store, build cache or temporary directory where the sandbox puts its own (``/dev/shm``,
a tmpfs a user may reach for to go faster): the programs' trees would be bound where the
sandbox's private ``/dev`` hides them, every test would fail to import the package, and the
score would print V = 0 as if the suite were broken.  Refused up front, saying why."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from tests.cli_helpers import run_suitebench

from suitebench.run.layout import HiddenPath, build_layout


@pytest.fixture
def in_dev_shm() -> Path:
    place = Path("/dev/shm") / f"suitebench-test-{uuid.uuid4().hex[:8]}"
    place.mkdir()
    yield place
    shutil.rmtree(place, ignore_errors=True)


def test_a_store_in_dev_shm_is_refused_before_a_build(
    intervals_instance: Path, in_dev_shm: Path, tmp_path: Path
) -> None:
    proc = run_suitebench(
        "score", intervals_instance, "--out", tmp_path / "out", store=in_dev_shm / "s.sqlite"
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert f"{in_dev_shm / 'builds'} lies in /dev" in said
    assert not (in_dev_shm / "builds").exists()  # refused before anything was built
    assert not (tmp_path / "out" / "results.json").exists()  # and no V = 0 written


def test_a_temporary_directory_in_dev_shm_is_refused(
    intervals_instance: Path, in_dev_shm: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "TMPDIR": str(in_dev_shm)}
    proc = run_suitebench(
        "score", intervals_instance, "--out", tmp_path / "out", store=tmp_path / "s.sqlite", env=env
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert f"{in_dev_shm}/" in said and "lies in /dev" in said
    assert "Traceback" not in said
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_device_may_still_be_bound_but_no_directory_under_dev_or_proc(tmp_path: Path) -> None:
    build_layout(tmp_path, [Path("/dev/null")], [])  # a device node: no refusal
    link = tmp_path / "store-dir"
    link.symlink_to("/dev/shm")  # a store reached through a link is where the link goes
    for hidden in (Path("/dev/shm"), Path("/proc/sys"), Path("/dev/shm/not-made-yet"), link):
        with pytest.raises(HiddenPath, match="which the sandbox replaces with its own"):
            build_layout(tmp_path, [hidden], [])
