"""``build hygiene`` on a small package whose reference suite has every kind of bad test: one
that fails, one too slow, one that needs the network (a server on this machine's loopback,
unreachable from the sandbox's own network namespace), and a spec quoting a source location."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.construct.hygiene import (
    classify_reference_runs,
    drop_sections,
    remove_tests,
    scrub_error_locations,
)
from suitebench.construct.tomledit import drop_map_entries
from suitebench.model.instance import load_instance
from suitebench.suite.records import TestStatus

SPEC = """\
# greet

## Greeting
`greet(name)` returns `Hello, <name>!`.

## Remote
`fetch()` reads the greeting of the day from the greeting server.

### Remote errors
A dropped connection raises.

## Errors
An empty name panics: `panicked at src/main.rs:24:40: empty name` (see greet.py:3).
"""

CORE = textwrap.dedent(
    """\
    def greet(name):
        if not name:
            raise ValueError("empty name")
        return "Hello, " + name + "!"
    """
)


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.sendall(b"hi\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    server.close()


def _instance(tmp_path: Path, port: int) -> Path:
    root = tmp_path / "greet"
    (root / "src" / "greet").mkdir(parents=True)
    (root / "src" / "greet" / "__init__.py").write_text(CORE)
    (root / "tests").mkdir()
    (root / "tests" / "test_greet.py").write_text(
        textwrap.dedent(
            f"""\
            import socket
            import time

            from greet import greet


            def test_greets_by_name():
                assert greet("Ada") == "Hello, Ada!"


            def test_wrong_expectation():
                assert greet("Ada") == "Hi, Ada!"


            def test_too_slow():
                time.sleep(4)


            class TestRemote:
                def test_fetch_from_server(self):
                    with socket.create_connection(("127.0.0.1", {port}), timeout=2) as s:
                        assert s.recv(3) == b"hi\\n"


            def test_empty_name_raises():
                try:
                    greet("")
                except ValueError:
                    return
                raise AssertionError("no error")
            """
        )
    )
    (root / "spec.md").write_text(SPEC)
    (root / "sections.toml").write_text(
        '"tests/test_greet.py::test_greets_by_name" = ["Greeting"]\n'
        '"tests/test_greet.py::test_wrong_expectation" = ["Greeting"]\n'
        '"tests/test_greet.py::TestRemote::test_fetch_from_server" = ["Remote"]\n'
        '"tests/test_greet.py::test_empty_name_raises" = ["Errors"]\n'
    )
    (root / "instance.toml").write_text(
        'name = "greet"\nkind = "python"\npackage = "greet"\nspec = "spec.md"\n'
        'source = "src/"\ntests = "tests/"\nsections_map = "sections.toml"\n'
    )
    return root


@pytest.mark.slow
def test_hygiene_drops_bad_tests_and_cleans_the_spec(tmp_path: Path, loopback_server: int) -> None:
    root = _instance(tmp_path, loopback_server)
    exe = Path(sys.executable).parent / "suitebench"
    proc = subprocess.run(
        [str(exe), "--store", str(tmp_path / "s.sqlite"), "--json", "build", "hygiene",
         str(root), "--out", str(tmp_path / "clean"), "--per-test-timeout", "1.5"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    reasons = {d["id"]: d["reason"] for d in report["dropped"]}
    assert reasons == {
        "tests/test_greet.py::test_wrong_expectation": "fails",
        "tests/test_greet.py::test_too_slow": "timeout",
        "tests/test_greet.py::TestRemote::test_fetch_from_server": "network",
    }
    clean = load_instance(tmp_path / "clean")
    suite = (clean.tests / "test_greet.py").read_text()
    assert "def test_greets_by_name" in suite and "def test_empty_name_raises" in suite
    assert "test_wrong_expectation" not in suite and "test_too_slow" not in suite
    assert "test_fetch_from_server" not in suite and "class TestRemote" in suite
    assert set(clean.sections_map) == {
        "tests/test_greet.py::test_greets_by_name",
        "tests/test_greet.py::test_empty_name_raises",
    }
    spec = clean.spec.read_text() if clean.spec else ""
    assert "## Remote" not in spec and "Remote errors" not in spec  # only its test went
    assert "## Greeting" in spec  # one of its two tests is left
    assert "panicked at <error location>: empty name" in spec
    assert "(see <error location>)" in spec
    assert report["sections_dropped"] == ["Remote"]
    # The original instance is untouched.
    assert "test_too_slow" in (root / "tests" / "test_greet.py").read_text()


def test_classification_of_reference_runs() -> None:
    P, F, T, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.TIMEOUT, TestStatus.SKIPPED
    got = classify_reference_runs(
        {"a": [P, P, P], "b": [P, F, P], "c": [F, F, F], "d": [T, T, T], "e": [T, P, P],
         "f": [S, S, S], "g": [S, P, S]},
        2.0,
        {"f": "Skipped: needs a terminal"},
    )  # fmt: skip
    assert {k: v[0] for k, v in got.items()} == {
        "b": "flaky", "c": "fails", "d": "timeout", "e": "flaky", "f": "skipped", "g": "flaky",
    }  # fmt: skip
    assert got["f"][1] == "skipped in every run (3): Skipped: needs a terminal"


def test_error_locations_and_section_drop_on_text() -> None:
    text, changes = scrub_error_locations(
        "thread 'main' panicked at src/main.rs:24:40:\nsee pkg/mod.go:7, not 1.5:3\n"
    )
    assert text == "thread 'main' panicked at <error location>:\nsee <error location>, not 1.5:3\n"
    assert [c["line"] for c in changes] == [1, 2]
    body, gone = drop_sections("# A\nx\n## B\ny\n```\n# not a heading\n```\n## C\nz\n", {"B"})
    assert body == "# A\nx\n## C\nz\n" and gone == ["B"]


def test_dropping_map_entries_keeps_the_rest_byte_for_byte() -> None:
    text = (
        'name = "x"  # mine\n\n[sections_map]\n"t/a.py::x" = ["A"]  # why\n'
        '"t/a.py::y" = [\n  "B",\n  "C",\n]\n# keep me\n\'t/a.py::z\' = ["C"]\n'
    )
    out, removed = drop_map_entries(text, {"t/a.py::y", "t/a.py::z", "t/a.py::gone"})
    assert removed == ["t/a.py::y", "t/a.py::z"]
    assert out == 'name = "x"  # mine\n\n[sections_map]\n"t/a.py::x" = ["A"]  # why\n# keep me\n'


def test_a_file_that_does_not_collect_is_dropped_with_its_error() -> None:
    """A file whose import fails is one unit (nothing names its tests): dropped as ``fails``,
    its collection error the detail, and removed whole by remove_tests."""
    error = [TestStatus.ERROR] * 3
    verdicts = classify_reference_runs(
        {"tests/test_means.py": error, "tests/test_x.py::test_a": error},
        10.0,
        {
            "tests/test_means.py": "FileNotFoundError: eval/fixtures/means.txt",
            "tests/test_x.py::test_a": "AssertionError: 1 != 2",
        },
    )
    assert verdicts == {
        "tests/test_means.py": (
            "fails",
            "the file does not collect: FileNotFoundError: eval/fixtures/means.txt",
        ),
        "tests/test_x.py::test_a": (
            "fails",
            "error/error/error on the reference in every run: AssertionError: 1 != 2",
        ),
    }


def test_remove_tests_removes_a_file_given_by_its_own_id(tmp_path: Path) -> None:
    suite = tmp_path / "tests"
    (suite / "b1" / "eval" / "tests").mkdir(parents=True)
    broken = suite / "b1" / "eval" / "tests" / "test_means.py"
    broken.write_text("import nothing_here\n")
    changed, missing = remove_tests(
        suite, {"tests/b1/eval/tests/test_means.py", "tests/b1/eval/tests/test_gone.py"}
    )
    assert changed == [broken] and not broken.exists()
    assert missing == ["tests/b1/eval/tests/test_gone.py"]
