"""Small real instances written into tmp_path: a C CLI and a Python package, each with mutants.

``stats`` is a C command-line tool (sum with overflow detection, max, clamp); its mutants carry
real bug patterns: a dropped overflow check, an off-by-one loop bound, a missed empty-input
case, an equivalent tie-break change (survives by construction), a patch that does not apply
and one that does not compile.  ``intervals`` is a Python package with the same idea.
"""

from __future__ import annotations

import difflib
import socket
import subprocess
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.executor import LocalExecutor
from suitebench.run.store import Store
from suitebench.suite.execute import jobs
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.result import SuiteResult
from suitebench.suite.score import score_suite

from ..cli_helpers import run_suitebench

STATS_C = textwrap.dedent(
    """\
    #include <limits.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    static int cmd_sum(int n, char **v) {
        long long total = 0;
        for (int i = 0; i < n; i++) {
            long long x = atoll(v[i]);
            if ((x > 0 && total > LLONG_MAX - x) || (x < 0 && total < LLONG_MIN - x)) {
                puts("overflow");
                return 2;
            }
            total += x;
        }
        printf("%lld\\n", total);
        return 0;
    }

    static int cmd_max(int n, char **v) {
        if (n == 0) {
            puts("empty");
            return 1;
        }
        long long best = atoll(v[0]);
        for (int i = 1; i < n; i++) {
            long long x = atoll(v[i]);
            if (x > best) best = x;
        }
        printf("%lld\\n", best);
        return 0;
    }

    static int cmd_clamp(char **v) {
        long long x = atoll(v[0]), lo = atoll(v[1]), hi = atoll(v[2]);
        if (x < lo) x = lo;
        if (x > hi) x = hi;
        printf("%lld\\n", x);
        return 0;
    }

    int main(int argc, char **argv) {
        if (argc < 2) { fputs("usage: stats sum|max|clamp ...\\n", stderr); return 64; }
        if (strcmp(argv[1], "sum") == 0) return cmd_sum(argc - 2, argv + 2);
        if (strcmp(argv[1], "max") == 0) return cmd_max(argc - 2, argv + 2);
        if (strcmp(argv[1], "clamp") == 0 && argc == 5) return cmd_clamp(argv + 2);
        fputs("unknown command\\n", stderr);
        return 64;
    }
    """
)

STATS_SPEC = """\
# stats

## Sum
`stats sum N...` prints the sum; if it does not fit in 64 bits it prints `overflow`, exit 2.

## Max
`stats max N...` prints the largest number; with no numbers it prints `empty`, exit 1.

## Clamp
`stats clamp X LO HI` prints X limited to [LO, HI].
"""

STATS_TESTS = {
    "test_sum.py": """\
import subprocess


def run(*args):
    proc = subprocess.run(["./executable", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout.strip()


def test_sum_small():
    assert run("sum", "2", "3", "4") == (0, "9")


def test_sum_overflow():
    assert run("sum", "9223372036854775807", "1") == (2, "overflow")


def test_sum_negative_overflow():
    assert run("sum", "-9223372036854775807", "-5") == (2, "overflow")
""",
    "test_max.py": """\
import os
import subprocess


def run(*args):
    exe = os.environ["SUITEBENCH_EXECUTABLE"]
    proc = subprocess.run([exe, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout.strip()


def test_max_first():
    assert run("max", "9", "1", "2") == (0, "9")


def test_max_last():
    assert run("max", "1", "2", "9") == (0, "9")


def test_max_empty():
    assert run("max") == (1, "empty")
""",
    "test_clamp.py": """\
import subprocess


def clamp(x, lo, hi):
    out = subprocess.run(["./executable", "clamp", str(x), str(lo), str(hi)],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_clamp_inside():
    assert clamp(5, 1, 10) == 5


def test_clamp_low():
    assert clamp(-3, 1, 10) == 1


def test_clamp_at_bound():
    assert clamp(1, 1, 10) == 1
""",
}


def _mutate(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def unified_diff(name: str, before: str, after: str) -> str:
    """A git-style diff (a/ b/ prefixes, applied with -p1)."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


STATS_MUTANTS = [
    # (id, section, target, description, old, new)
    (
        "sum_no_overflow_check",
        "Sum",
        "tests/test_sum.py::test_sum_overflow",
        "overflow check dropped",
        "if ((x > 0 && total > LLONG_MAX - x) || (x < 0 && total < LLONG_MIN - x)) {",
        "if (0) {",
    ),
    (
        "sum_neg_overflow",
        "Sum",
        "tests/test_sum.py::test_sum_negative_overflow",
        "negative overflow not detected",
        " || (x < 0 && total < LLONG_MIN - x)",
        "",
    ),
    (
        "max_off_by_one",
        "Max",
        "tests/test_max.py::test_max_last",
        "loop stops one element early",
        "for (int i = 1; i < n; i++)",
        "for (int i = 1; i < n - 1; i++)",
    ),
    (
        "max_empty",
        "Max",
        "tests/test_max.py::test_max_empty",
        "empty input not special-cased",
        '        puts("empty");\n        return 1;',
        '        puts("0");\n        return 0;',
    ),
    (
        "clamp_tie_equivalent",
        "Clamp",
        "tests/test_clamp.py::test_clamp_at_bound",
        "x <= lo: same value on a tie (an equivalent mutant)",
        "if (x < lo) x = lo;",
        "if (x <= lo) x = lo;",
    ),
    (
        "clamp_swapped",
        "Clamp",
        "tests/test_clamp.py::test_clamp_low",
        "lower bound ignored",
        "if (x < lo) x = lo;",
        "if (x < lo) x = x;",
    ),
    (
        "does_not_compile",
        "Clamp",
        None,
        "a mutant that does not build",
        'printf("%lld\\n", x);',
        'printf("%lld\\n", x)',
    ),
]


def write_instance(
    root: Path,
    *,
    name: str,
    source_files: dict[str, str],
    build: str | None,
    spec: str,
    tests: dict[str, str],
    mutants: list[tuple[str, str | None, str | None, str, str, str]],
    mutated_file: str,
    kind: str = "cli",
    package: str | None = None,
    extra_patches: dict[str, str] | None = None,
) -> Path:
    """Write an instance directory; returns the path of instance.toml."""
    (root / "src").mkdir(parents=True)
    for rel, text in source_files.items():
        path = root / "src" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "tests").mkdir()
    for rel, text in tests.items():
        (root / "tests" / rel).write_text(text)
    (root / "spec.md").write_text(spec)
    (root / "mutants").mkdir()
    lines = [f'name = "{name}"', f'kind = "{kind}"', 'spec = "spec.md"', 'source = "src"']
    lines.append('tests = "tests"')
    if build is not None:
        lines.append(f"build = {build!r}")
    if package is not None:
        lines.append(f'package = "{package}"')
    original = source_files[mutated_file]
    for mid, section, target, description, old, new in mutants:
        diff = unified_diff(mutated_file, original, _mutate(original, old, new))
        (root / "mutants" / f"{mid}.diff").write_text(diff)
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
        if section:
            lines.append(f'section = "{section}"')
        if target:
            lines.append(f'target = "{target}"')
        lines.append(f'description = "{description}"')
    for mid, diff in (extra_patches or {}).items():
        (root / "mutants" / f"{mid}.diff").write_text(diff)
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
        lines.append('section = "Sum"')
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root / "instance.toml"


def write_python_instance(
    root: Path,
    *,
    name: str,
    source: dict[str, str],
    tests: dict[str, str],
    spec: str,
    mutants: list[tuple[str, str, str, str]],
) -> Path:
    """A ``kind = "python"`` instance of package ``name`` under ``root``: its source files and
    test files, and a mutant per ``(id, file, old, new)`` (``old`` must occur once in the file);
    returns the path of instance.toml."""
    for rel, text in source.items():
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(text)
    (root / "tests").mkdir(parents=True)
    for rel, text in tests.items():
        (root / "tests" / rel).write_text(text)
    (root / "mutants").mkdir()
    (root / "spec.md").write_text(spec)
    lines = [f'name = "{name}"', 'kind = "python"', f'package = "{name}"', 'spec = "spec.md"']
    lines += ['source = "src"', 'tests = "tests"']
    for mid, rel, old, new in mutants:
        original = source[rel]
        assert original.count(old) == 1, (mid, old)
        diff = unified_diff(rel, original, original.replace(old, new))
        (root / "mutants" / f"{mid}.diff").write_text(diff)
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root / "instance.toml"


STALE_PATCH = """\
--- a/stats.c
+++ b/stats.c
@@ -1,3 +1,3 @@
 #include <limits.h>
-#include <stdio.h>
+#include <stdint.h>
 #include <stlib.h>
"""


@pytest.fixture
def stats_instance(tmp_path: Path) -> Path:
    """The C ``stats`` instance: 9 tests, 8 mutants (6 build, 1 stale patch, 1 compile error).

    Built at ``-O0``: ``clamp_tie_equivalent`` is an equivalent mutant the compiler cannot
    see, one that survives every suite.  At ``-O1`` gcc gives it the reference's very bytes,
    and trivial compiler equivalence lists it as equivalent, out of M
    (:func:`test_stats_at_o1_lists_the_tie_as_equivalent`)."""
    return write_instance(
        tmp_path / "stats",
        name="stats",
        source_files={"stats.c": STATS_C, "build.sh": "gcc -O0 -o executable stats.c\n"},
        build=None,
        spec=STATS_SPEC,
        tests=STATS_TESTS,
        mutants=STATS_MUTANTS,
        mutated_file="stats.c",
        extra_patches={"stale_patch": STALE_PATCH},
    )


INTERVALS_INIT = '''\
"""Closed integer intervals."""


def merge(intervals):
    """Merge overlapping or touching closed intervals; returns them sorted."""
    result = []
    for lo, hi in sorted(intervals):
        if result and lo <= result[-1][1] + 1:
            result[-1] = (result[-1][0], max(result[-1][1], hi))
        else:
            result.append((lo, hi))
    return result


def total_length(intervals):
    """Number of integers covered."""
    return sum(hi - lo + 1 for lo, hi in merge(intervals))
'''

INTERVALS_TESTS = {
    "test_merge.py": """\
from intervals import merge, total_length


def test_merge_overlap():
    assert merge([(5, 8), (1, 6)]) == [(1, 8)]


def test_merge_touching():
    assert merge([(1, 2), (3, 4)]) == [(1, 4)]


def test_merge_nested():
    assert merge([(1, 10), (2, 3)]) == [(1, 10)]


def test_total_length():
    assert total_length([(1, 3), (10, 10)]) == 4


def test_empty():
    assert merge([]) == []
""",
}

INTERVALS_MUTANTS = [
    (
        "touching_not_merged",
        "Merge",
        "tests/test_merge.py::test_merge_touching",
        "off-by-one: touching intervals stay apart",
        "lo <= result[-1][1] + 1",
        "lo <= result[-1][1]",
    ),
    (
        "nested_shrinks",
        "Merge",
        "tests/test_merge.py::test_merge_nested",
        "max() dropped: a nested interval shrinks the outer one",
        "max(result[-1][1], hi)",
        "hi",
    ),
    (
        "length_off_by_one",
        "Length",
        "tests/test_merge.py::test_total_length",
        "closed interval length off by one",
        "hi - lo + 1",
        "hi - lo",
    ),
    (
        "import_error",
        "Length",
        None,
        "the module raises on import",
        '"""Closed integer intervals."""\n',
        '"""Closed integer intervals."""\nraise ImportError("broken")\n',
    ),
]

INTERVALS_SPEC = "# intervals\n\n## Merge\nMerging.\n\n## Length\nLength.\n"


@pytest.fixture
def intervals_instance(tmp_path: Path) -> Path:
    """The Python-package ``intervals`` instance: 5 tests, 4 mutants (one breaks the import)."""
    return write_instance(
        tmp_path / "intervals",
        name="intervals",
        source_files={"intervals/__init__.py": INTERVALS_INIT},
        build=None,
        spec=INTERVALS_SPEC,
        tests=INTERVALS_TESTS,
        mutants=INTERVALS_MUTANTS,
        mutated_file="intervals/__init__.py",
        kind="python",
        package="intervals",
    )


MakeInstance = Callable[..., Path]


@pytest.fixture
def loopback_server() -> Iterator[tuple[str, int]]:
    """A TCP service on the host's 127.0.0.1 that reads a request (if any) and answers "ok".

    A test that needs the network reaches for it: it is reachable from the host, never from a
    sandbox, whose network namespace has a loopback of its own.
    """
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(0.5)
                try:
                    conn.recv(4096)
                except OSError:
                    pass  # a client that sends nothing still gets its answer
                try:
                    conn.sendall(b"ok")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()
    stop.set()
    thread.join(timeout=5)
    server.close()


def keep_batches(monkeypatch: pytest.MonkeyPatch, under: Path, prefix: str = "batch") -> list[Path]:
    """From now on every batch a score runs keeps its workspace (its spec, XML, event logs and
    notes) at ``under/<prefix><n>``; returns the list the paths are added to."""
    kept: list[Path] = []
    real = getattr(jobs.run_batched, "real", jobs.run_batched)

    def keep(*args: Any, **kwargs: Any) -> Any:
        kept.append(under / f"{prefix}{len(kept)}")
        return real(*args, **kwargs, workspace=kept[-1])

    keep.real = real  # type: ignore[attr-defined]
    monkeypatch.setattr(jobs, "run_batched", keep)
    return kept


SELECTION_LIMITS = SuiteLimits(per_test=5.0, per_program=300.0)


def score_in_store(instance_toml: Path, tmp_path: Path, **options: Any) -> SuiteResult:
    """Score an instance in a fresh store under ``tmp_path`` (builds in ``tmp_path/builds``),
    with ``score_suite``'s ``options``; the store is closed whatever happens."""
    store = Store(tmp_path / "store.sqlite")
    try:
        return score_suite(
            load_instance(instance_toml), store=store, cache_dir=tmp_path / "builds", **options
        )
    finally:
        store.close()


def score_selected_and_full(
    instance_toml: Path,
    tmp_path: Path,
    *,
    engine: Engine = Engine.BATCHED,
    executor: LocalExecutor | None = None,
) -> tuple[SuiteResult, SuiteResult]:
    """Score an instance with coverage-guided selection and with every test on every mutant
    (fresh stores, shared build cache; ``executor``: the workers, default the machine's),
    assert the two kill matrices are the same, and return both (selected, full)."""
    results = []
    for all_tests in (False, True):
        store = Store(tmp_path / f"store-{all_tests}-{engine}" / "store.sqlite")
        try:
            results.append(
                score_suite(
                    load_instance(instance_toml),
                    store=store,
                    cache_dir=tmp_path / "builds",
                    engine=engine,
                    limits=SELECTION_LIMITS,
                    all_tests=all_tests,
                    executor=executor,
                )
            )
        finally:
            store.close()
    selected, full = results
    assert full.test_selection == "all"
    assert selected.kill_matrix() == full.kill_matrix()
    assert [(m.id, m.status, m.killed_by) for m in selected.mutants] == [
        (m.id, m.status, m.killed_by) for m in full.mutants
    ]
    assert selected.mutation_score == full.mutation_score
    assert selected.kill_matrix(), "an empty matrix proves nothing"
    return selected, full


def suitebench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line as a user runs it, in a child process, on a store in ``tmp_path``."""
    return run_suitebench(*args, store=tmp_path / "s.sqlite", timeout=600)


# A version comparer laid out as semver 3.0.2 is: doctest pages in docs/, helpers on the
# tests' pythonpath (tests/suite/execute/test_config_paths.py, endtoend/test_doctest_folders.py).
VERCMP_SETUP_CFG = """\
[tool:pytest]
testpaths = tests docs
pythonpath = src tests
addopts =
    --import-mode=importlib
    --doctest-glob='*.rst'
    --doctest-report ndiff
"""

VERCMP_SOURCE = '''\
def _parts(version):
    return [int(p) for p in version.split(".")]


def compare(a, b):
    """-1, 0 or 1 as version ``a`` is older than, the same as or newer than ``b``."""
    x, y = _parts(a), _parts(b)
    width = max(len(x), len(y))
    x += [0] * (width - len(x))
    y += [0] * (width - len(y))
    return (x > y) - (x < y)
'''


def plain_runner(root: Path, executor: LocalExecutor | None, overlap: int) -> jobs.SuiteRuns:
    """A plain-engine runner on an empty suite under ``root``, with its store there: for
    tests of its scheduling, whose runs are replaced."""
    (root / "suite").mkdir()
    return jobs.SuiteRuns(
        root / "suite",
        kind="cli",
        store=Store(root / "store.sqlite"),
        executor=executor,
        engine=Engine.PLAIN,
        limits=SuiteLimits(),
        backend=None,
        batch_size=1,
        overlap=overlap,
    )
