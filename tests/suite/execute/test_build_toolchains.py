"""A build script gets the toolchains its tree needs, read-only, and nothing else of the home
directory they live in: a Rust instance built with ``cargo`` builds and scores; a build script
calling ``python3`` works whatever ``python3`` is on the caller's PATH (a pyenv shim too)."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.program import Language
from suitebench.run.recipes import available, compiler
from suitebench.run.store import Store
from suitebench.run.tree import needed_toolchains
from suitebench.suite.execute.programs import Builder
from suitebench.suite.result import MutantStatus
from suitebench.suite.score import score_suite

from ..conftest import write_instance

# uniqc: `uniq -c` -- each run of equal adjacent lines as "COUNT LINE".
MAIN_RS = textwrap.dedent(
    """\
    use std::io::{self, BufRead, Write};

    fn main() {
        let stdin = io::stdin();
        let mut out = io::BufWriter::new(io::stdout().lock());
        let mut current: Option<String> = None;
        let mut count: u64 = 0;
        for line in stdin.lock().lines() {
            let line = line.expect("input is not UTF-8");
            if current.as_deref() == Some(line.as_str()) {
                count += 1;
                continue;
            }
            if let Some(previous) = current.take() {
                writeln!(out, "{} {}", count, previous).unwrap();
            }
            current = Some(line);
            count = 1;
        }
        if let Some(previous) = current {
            writeln!(out, "{} {}", count, previous).unwrap();
        }
    }
    """
)

CARGO_TOML = textwrap.dedent(
    """\
    [package]
    name = "uniqc"
    version = "0.1.0"
    edition = "2021"

    [[bin]]
    name = "uniqc"
    path = "src/main.rs"
    """
)

TESTS_PY = textwrap.dedent(
    """\
    import subprocess


    def run(text):
        done = subprocess.run(
            ["./executable"], input=text, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


    def test_runs_are_counted():
        assert run("a\\na\\nb\\n") == "2 a\\n1 b\\n"


    def test_last_run_is_printed():
        assert run("x\\ny\\ny\\ny\\n") == "1 x\\n3 y\\n"


    def test_non_adjacent_lines_are_separate_runs():
        assert run("a\\nb\\na\\n") == "1 a\\n1 b\\n1 a\\n"


    def test_empty_input_prints_nothing():
        assert run("") == ""
    """
)

SPEC = "# uniqc\n\n## Counting\n\nEach run of equal adjacent lines is printed once as COUNT LINE.\n"


def _rust_instance(root: Path, build_sh: str) -> Path:
    write_instance(
        root,
        name="uniqc",
        source_files={"Cargo.toml": CARGO_TOML, "src/main.rs": MAIN_RS, "build.sh": build_sh},
        build="build.sh",
        spec=SPEC,
        tests={"test_uniqc.py": TESTS_PY},
        mutants=[
            # The classic: the run still open at the end of the input is never printed.
            (
                "r01",
                "Counting",
                "tests/test_uniqc.py::test_last_run_is_printed",
                "the last run is not flushed",
                '    if let Some(previous) = current {\n        writeln!(out, "{} {}", count, '
                "previous).unwrap();\n    }\n",
                "",
            )
        ],
        mutated_file="src/main.rs",
    )
    return root


def test_a_rust_tree_needs_the_rust_toolchain(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    (tree / "src").mkdir(parents=True)
    (tree / "build.sh").write_text("gcc -o executable main.c\n")
    assert needed_toolchains(tree, "build.sh") == []
    (tree / "build.sh").write_text("#!/bin/sh\nrustc -O -o executable main.rs\n")
    assert needed_toolchains(tree, "build.sh") == [Language.RUST]
    (tree / "build.sh").write_text("make\n")
    (tree / "Cargo.toml").write_text(CARGO_TOML)
    assert needed_toolchains(tree, "build.sh") == [Language.RUST]
    (tree / "main.go").write_text("package main\n")
    assert needed_toolchains(tree, "build.sh") == [Language.RUST, Language.GO]


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["cargo", "rustc"])
def test_a_rust_instance_builds_and_scores(tmp_path: Path, tool: str) -> None:
    ok, why = available(Language.RUST)
    if not ok:
        pytest.skip(f"no Rust toolchain installed: {why}")
    rustc = compiler(Language.RUST)
    assert rustc is not None
    sysroot = Path(rustc).parent.parent  # ~/.rustup/toolchains/stable-...
    # The build lists what it sees of the directories the toolchain sits in.
    probe = "".join(
        f'ls -A "{d}" > seen-{n}.txt 2>&1 || true\n'
        for n, d in enumerate((sysroot.parent, sysroot.parent.parent, Path.home()))
    )
    build = {
        "cargo": "cargo build --release --offline --quiet\ncp target/release/uniqc executable\n",
        "rustc": "rustc -O --edition 2021 -o executable src/main.rs\n",
    }[tool]
    root = _rust_instance(tmp_path / "inst", "#!/bin/sh\nset -eu\n" + probe + build)
    instance = load_instance(root)
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(instance, store=store, cache_dir=tmp_path / "builds")
    store.close()
    assert result.counts.valid == 4 == result.counts.tests
    (mutant,) = result.mutants
    assert mutant.status is MutantStatus.KILLED
    # Every test with input kills it (the last run is always lost); the empty input does not.
    assert sorted(mutant.killed_by) == [
        "tests/test_uniqc.py::test_last_run_is_printed",
        "tests/test_uniqc.py::test_non_adjacent_lines_are_separate_runs",
        "tests/test_uniqc.py::test_runs_are_counted",
    ]
    reference = Builder(instance, tmp_path / "builds").reference()
    assert reference.ok, reference.message
    built = Path(reference.directory)
    # Only the toolchain itself: not its siblings, not ~/.cargo, not the rest of the home.
    seen = [(built / f"seen-{n}.txt").read_text().split() for n in range(3)]
    assert seen[0] == [sysroot.name]
    assert seen[1] == [sysroot.parent.name]
    # (the home shows the toolchain and what every sandbox shows: the suite's interpreter)
    assert sysroot.parent.parent.name in seen[2] and ".cargo" not in seen[2]
    assert set(seen[2]) < {p.name for p in Path.home().iterdir()}
    assert not (built / ".suitebench-scratch").exists()  # the toolchain's caches are gone
    # The real rustc ran: the rustup toolchain's own bin/, not the proxy in ~/.cargo/bin.
    assert ".cargo" not in Path(rustc).parts


PY_BUILD_SH = textwrap.dedent(
    """\
    #!/bin/sh
    set -eu
    python3 gen.py > executable
    chmod +x executable
    """
)

GEN_PY = textwrap.dedent(
    """\
    # Generates the program: a shell script that sums its arguments.
    import sys
    print("#!/bin/sh")
    print("# generated by Python %d.%d" % sys.version_info[:2])
    print('total=0; for x in "$@"; do total=$((total + x)); done; echo "$total"')
    """
)

SUM_TESTS = textwrap.dedent(
    """\
    import subprocess


    def run(*args):
        return subprocess.run(["./executable", *args], capture_output=True, text=True).stdout


    def test_sum():
        assert run("2", "40") == "42\\n"


    def test_no_arguments_sum_to_zero():
        assert run() == "0\\n"
    """
)


def _python_built_instance(root: Path) -> Path:
    write_instance(
        root,
        name="gensum",
        source_files={"gen.py": GEN_PY, "build.sh": PY_BUILD_SH},
        build="build.sh",
        spec="# gensum\n\n## Sum\n\nPrints the sum of its arguments.\n",
        tests={"test_sum.py": SUM_TESTS},
        mutants=[
            ("g01", "Sum", "tests/test_sum.py::test_sum", "subtracts", "total + x", "total - x"),
        ],
        mutated_file="gen.py",
    )
    return root


def _score_python_built(tmp_path: Path) -> str:
    instance = load_instance(_python_built_instance(tmp_path / "inst"))
    store = Store(tmp_path / "store.sqlite")
    result = score_suite(instance, store=store, cache_dir=tmp_path / "builds")
    store.close()
    assert result.counts.valid == 2
    assert result.mutants[0].killed_by == ["tests/test_sum.py::test_sum"]
    reference = Builder(instance, tmp_path / "builds").reference()
    return (Path(reference.directory) / "executable").read_text()


def test_a_build_script_calling_python3(tmp_path: Path) -> None:
    here = "{}.{}".format(*sys.version_info[:2])
    assert f"# generated by Python {here}\n" in _score_python_built(tmp_path)


def test_a_build_script_calling_python3_with_a_pyenv_shim_first_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's PATH is the suite's, not the caller's: a version manager's shim first on
    the caller's PATH (whose manager lives in a home directory the sandbox hides) changes
    nothing; ``python3`` is the suite's interpreter."""
    shims = tmp_path / "home" / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    manager = tmp_path / "home" / ".pyenv" / "libexec" / "pyenv"
    manager.parent.mkdir(parents=True)
    manager.write_text('#!/bin/sh\necho "the shim ran" >&2\nexit 1\n')
    manager.chmod(0o755)
    shim = shims / "python3"
    shim.write_text(
        '#!/usr/bin/env bash\nset -e\nprogram="${0##*/}"\n'
        f'exec "{manager}" exec "$program" "$@"\n'
    )
    shim.chmod(0o755)
    (tmp_path / "home").chmod(0o700)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    assert shutil.which("python3") == str(shim)
    here = "{}.{}".format(*sys.version_info[:2])
    assert f"# generated by Python {here}\n" in _score_python_built(tmp_path)
