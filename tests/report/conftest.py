"""Real result directories, a real Chromium and the published Stryker packages, once a session.

The result directories come from running ``suitebench score`` and ``suitebench audit`` on the
bundled data, exactly as a user does. Chromium is Debian's ``chromium``: installed with apt-get
when it is missing and the tests run as root, else the browser tests are skipped saying why.
The mutation-testing-elements viewer and its report schema are fetched from the npm registry
with ``npm pack`` into a temporary directory (skipped, saying why, when npm is absent).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR, SUITES_DIR
from suitebench.report.browser import find_chromium

ENTRY = "import sys; from suitebench.cli.main import main; sys.argv[0] = 'suitebench'; main()"


def suitebench(store: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run the command line as a user does, in a child process."""
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass(frozen=True)
class RealResults:
    root: Path
    store: Path
    audit: Path  # maxsum and mean, arms handmade and random (+ official and samples)
    score_reference: Path  # wordfreq-py, its reference suite
    score_bad: Path  # wordfreq-py, the bundled bad suite
    score_rpn: Path  # rpn-c, its reference suite


@pytest.fixture(scope="session")
def real_results(tmp_path_factory: pytest.TempPathFactory) -> RealResults:
    root = tmp_path_factory.mktemp("results")
    store = root / "store" / "store.sqlite"
    res = RealResults(
        root,
        store,
        root / "audit",
        root / "scores" / "wordfreq-reference",
        root / "scores" / "wordfreq-bad",
        root / "scores" / "rpn-reference",
    )
    runs = [
        ("score", str(INSTANCES_DIR / "wordfreq-py"), "--out", str(res.score_reference)),
        (
            "score",
            str(INSTANCES_DIR / "wordfreq-py"),
            "--suite",
            str(SUITES_DIR / "bad-suite"),
            "--out",
            str(res.score_bad),
        ),
        ("score", str(INSTANCES_DIR / "rpn-c"), "--out", str(res.score_rpn)),
        (
            "audit",
            str(PROBLEMS_DIR / "maxsum"),
            str(PROBLEMS_DIR / "mean"),
            "--arm",
            "handmade=arms/handmade",
            "--arm",
            "random=generator@12",
            "--out",
            str(res.audit),
        ),
    ]
    for args in runs:
        proc = suitebench(store, *args)
        assert proc.returncode == 0, f"suitebench {' '.join(args)} failed:\n{proc.stderr}"
    return res


def _install_chromium() -> str | None:
    """apt-get install chromium, once: parallel test workers wait on one lock file (apt's own
    lock would make all but one fail)."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    lock = Path(tempfile.gettempdir()) / "suitebench-apt-chromium.lock"
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        if find_chromium() is not None:  # another worker installed it meanwhile
            return find_chromium()
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            if subprocess.run(cmd, capture_output=True, env=env, timeout=900).returncode != 0:
                return None
    return find_chromium()


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of Debian's chromium, installed when missing (as root)."""
    path = find_chromium() or _install_chromium()
    if path is None:
        pytest.skip(
            "no chromium on PATH and it cannot be installed here (needs root and apt-get): "
            "install Debian's `chromium` to run the browser tests"
        )
    return path


@dataclass(frozen=True)
class StrykerPackages:
    schema: Path  # mutation-testing-report-schema.json
    elements_js: Path  # the viewer's self-contained bundle (mutation-test-elements.js)


def _npm_pack(name: str, dest: Path) -> Path:
    proc = subprocess.run(
        ["npm", "pack", name, "--silent", "--pack-destination", str(dest)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=dest,
    )
    if proc.returncode != 0:
        pytest.fail(f"npm pack {name} failed:\n{proc.stderr}")
    tgz = dest / proc.stdout.strip().splitlines()[-1]
    out = dest / name
    with tarfile.open(tgz) as tar:
        tar.extractall(out, filter="data")
    return out / "package"


@pytest.fixture(scope="session")
def stryker_packages(tmp_path_factory: pytest.TempPathFactory) -> StrykerPackages:
    """The published report schema and viewer, from the npm registry."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: cannot fetch the published Stryker schema and viewer")
    dest = tmp_path_factory.mktemp("npm")
    schema_pkg = _npm_pack("mutation-testing-report-schema", dest)
    elements_pkg = _npm_pack("mutation-testing-elements", dest)
    schema = next(schema_pkg.rglob("mutation-testing-report-schema.json"))
    return StrykerPackages(schema, elements_pkg / "dist" / "mutation-test-elements.js")
