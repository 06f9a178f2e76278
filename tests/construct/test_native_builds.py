"""Rust and Go mutants: only where the reference's build compiles (cargo's dependency files,
``go list``), built incrementally from the reference's build (cargo's ``target/``, Go's
``GOCACHE``) into the executables clean builds give, and trivially equivalent when their
program is the reference's. On ``histo`` (a cargo workspace) and ``topwords`` (a Go module),
``native_programs.py``.

The toolchains are needed: a machine without cargo or go fails these tests, naming
``scripts/bootstrap.sh`` (which installs Debian's ``cargo``, ``rustc`` and ``golang-go``).
"""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from suitebench.construct.mutants import (
    build_scope_of,
    generate_operator_mutants,
    mutation_sites,
)
from suitebench.model.instance import Instance, MutantSpec, load_instance
from suitebench.suite.execute.incremental_native import CargoBase, GoBase
from suitebench.suite.execute.programs import Builder, BuiltProgram

from .native_programs import (
    HISTO,
    HISTO_CASES,
    TOPWORDS,
    TOPWORDS_CASES,
    need,
    write_instance,
)


def _mutant(instance: Instance, tmp: Path, name: str, file: str, old: str, new: str) -> MutantSpec:
    """A one-line mutant of ``file`` (``old`` -> ``new`` on the one line holding ``old``)."""
    source = (instance.source / file).read_text()
    assert source.count(old) == 1, old
    diff = difflib.unified_diff(
        source.splitlines(keepends=True),
        source.replace(old, new).splitlines(keepends=True),
        f"a/{file}",
        f"b/{file}",
    )
    patch = tmp / f"{name}.diff"
    patch.write_text("".join(diff))
    return MutantSpec(id=name, patch=patch)


def _outcomes(built: BuiltProgram, cases: list[Any]) -> list[tuple[int, str]]:
    """Each case's exit status and output, on a built program (what the suite checks)."""
    assert built.executable is not None
    out = []
    for argv, stdin, _stdout, _status in cases:
        proc = subprocess.run(
            [built.executable, *argv], input=stdin.encode(), capture_output=True, timeout=30
        )
        out.append((proc.returncode, proc.stdout.decode()))
    return out


def _expected(cases: list[Any]) -> list[tuple[int, str]]:
    return [(status, stdout if status == 0 else "") for _argv, _stdin, stdout, status in cases]


# -- Rust ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def histo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Instance, Builder, Path]:
    need("cargo")
    root = tmp_path_factory.mktemp("histo")
    instance = load_instance(write_instance(root / "histo", "histo", HISTO, HISTO_CASES))
    return instance, Builder(instance, root / "builds"), root


def test_rust_sites_the_build_does_not_compile_are_left_out_by_reason(histo: Any) -> None:
    instance, builder, _ = histo
    scope = build_scope_of(builder)
    _, report = generate_operator_mutants(instance, build_scope=scope)
    assert report.build_recorded
    # By hand (native_programs.py): no `mod legacy`, examples are not built by `cargo build`,
    # and a Python script beside a cargo build.
    assert report.left_out_files == {
        "cli/src/legacy.rs": "not_compiled",
        "cli/examples/demo.rs": "not_compiled",
        "scripts/plot.py": "not_built",
    }
    assert scope.native_files == {"core/src/lib.rs", "cli/src/main.rs", "cli/src/parse.rs"}
    # core/src/lib.rs lines 50-59 are `#[cfg(test)] mod tests { ... }`: `cargo build` never
    # compiles them, so each site there is compiled_out, and none is a candidate.
    lib = "core/src/lib.rs"
    in_tests = [s for s in mutation_sites(lib, (instance.source / lib).read_bytes())]
    in_tests = [s for s in in_tests if 50 <= s.line <= 59]
    assert len(in_tests) >= 4  # -1, 10, -1, -11, 10, -2: their +1/-1 and more
    assert report.left_out["compiled_out"] == len(in_tests)
    candidates, _ = generate_operator_mutants(instance, build_scope=scope)
    assert not [s for s, _diff in candidates if s.file == lib and s.line >= 50]


def test_rust_incremental_builds_give_the_clean_builds_programs(histo: Any) -> None:
    instance, builder, root = histo
    clean = Builder(instance, root / "clean", incremental=False)
    lib, main, parse = "core/src/lib.rs", "cli/src/main.rs", "cli/src/parse.rs"
    mutants = {
        # the last bucket's upper end one too far: "0..9" becomes "0..11" (killed)
        "hi": (lib, "lo + self.width - 1", "lo + self.width + 1"),
        # --width 0 accepted: a division by zero panics, exit 101 instead of 2 (killed)
        "width": (parse, "Ok(w) if w > 0", "Ok(w) if w >= 0"),
        # the line number of an error message, on stderr: nothing the cases check (survives)
        "line": (main, "index + 1", "index + 2"),
    }
    base = builder.incremental_base()
    assert isinstance(base, CargoBase)
    for name, (file, old, new) in mutants.items():
        spec = _mutant(instance, root, name, file, old, new)
        a, b = clean.mutant(spec), builder.mutant(spec)
        assert a.ok and b.ok, (a.message, b.message)
        # rustc is deterministic for a workspace without vendored crates: the same bytes.
        assert Path(a.executable or "").read_bytes() == Path(b.executable or "").read_bytes()
        assert _outcomes(a, HISTO_CASES) == _outcomes(b, HISTO_CASES)
        assert base.same_objects(Path(b.directory), spec.patch.read_bytes()) is False
        # cargo's own log of the incremental build: the changed crate recompiled, the library
        # found fresh when only the command changed.
        log = (Path(b.directory) / "cargo.log").read_text()
        assert "Compiling histo v0.1.0" in log
        if file == lib:
            assert "Compiling histo-core v0.1.0" in log
        else:
            assert "Fresh histo-core v0.1.0" in log and "Compiling histo-core" not in log
    # The killed ones are killed, the survivor survives (the expected outputs: by hand).
    expected = _expected(HISTO_CASES)
    outcomes = {
        name: _outcomes(builder.mutant(_mutant(instance, root, name, *m)), HISTO_CASES)
        for name, m in mutants.items()
    }
    assert outcomes["hi"][0] == (0, "-10..1 1\n0..11 1\n10..21 2\nsum 31\n")
    assert outcomes["width"][4][0] == 101 and expected[4][0] == 2
    assert outcomes["line"] == expected


def test_rust_dead_and_test_only_code_is_trivially_equivalent(histo: Any) -> None:
    instance, builder, root = histo
    base = builder.incremental_base()
    assert isinstance(base, CargoBase)
    lib = "core/src/lib.rs"
    # `bar` is private and called by nothing; `mod tests` is #[cfg(test)]: neither reaches
    # the release binary, so the mutants' programs are the reference's bytes.
    for name, old, new in [
        ("bar", "len as usize * 2", "len as usize * 3"),
        ("cfgtest", "bucket_of(-11, 10), -2", "bucket_of(-11, 10), -3"),
    ]:
        spec = _mutant(instance, root, name, lib, old, new)
        built = builder.mutant(spec)
        assert built.ok, built.message
        assert base.same_objects(Path(built.directory), spec.patch.read_bytes()) is True


def test_rust_mutant_that_does_not_compile_hands_on_no_program(histo: Any) -> None:
    # build.sh has no `set -e`: after cargo fails, `cp target/release/histo executable` runs.
    # From the reference's target/ it must find nothing to copy, as from scratch.
    instance, builder, root = histo
    spec = _mutant(instance, root, "broken", "cli/src/parse.rs", "[] => Ok(10)", '[] => Ok("10")')
    assert not Builder(instance, root / "clean2", incremental=False).mutant(spec).ok
    built = builder.mutant(spec)
    assert not built.ok
    # (cargo's error is in cargo.log; the script's last command says what was missing)
    assert "cannot stat 'target/release/histo'" in built.message


def test_rust_change_of_a_file_no_unit_reads_is_built_from_scratch(histo: Any) -> None:
    _, builder, _ = histo
    base = builder.incremental_base()
    assert isinstance(base, CargoBase)
    manifest = b"--- a/cli/Cargo.toml\n+++ b/cli/Cargo.toml\n@@ -1 +1 @@\n-x\n+y\n"
    assert base.stale_objects(manifest) is None
    lib = b"--- a/core/src/lib.rs\n+++ b/core/src/lib.rs\n@@ -1 +1 @@\n-x\n+y\n"
    stale = base.stale_objects(lib)
    assert stale is not None
    # The library's fingerprint and outputs, the program, and ./executable.
    assert "executable" in stale and "target/release/histo" in stale
    assert any(s.startswith("target/release/.fingerprint/histo-core-") for s in stale)
    assert any(s.startswith("target/release/deps/libhisto_core-") for s in stale)


# -- Go --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def topwords(tmp_path_factory: pytest.TempPathFactory) -> tuple[Instance, Builder, Path]:
    need("go")
    root = tmp_path_factory.mktemp("topwords")
    instance = load_instance(write_instance(root / "tw", "topwords", TOPWORDS, TOPWORDS_CASES))
    return instance, Builder(instance, root / "builds"), root


def test_go_sites_the_build_does_not_compile_are_left_out_by_reason(topwords: Any) -> None:
    instance, builder, _ = topwords
    scope = build_scope_of(builder)
    _, report = generate_operator_mutants(instance, build_scope=scope)
    assert report.build_recorded
    # By hand: a windows-only file, a test, a package nothing imports, a `tools` build tag,
    # a generated table, and a Python script.
    assert report.left_out_files == {
        "internal/count/count_windows.go": "not_compiled",
        "internal/count/count_test.go": "not_compiled",
        "internal/legacy/legacy.go": "not_compiled",
        "tools/tools.go": "not_compiled",
        "internal/count/stopwords.go": "generated",
        "scripts/plot.py": "not_built",
    }
    files = {"main.go", "debug.go", "internal/count/count.go", "internal/count/stopwords.go"}
    assert scope.native_files == files


def _compiled(built: BuiltProgram) -> set[str]:
    """The packages `go build -v` compiled (it names those it did not find in its cache)."""
    log = (Path(built.directory) / "go.log").read_text()
    return {line.strip() for line in log.splitlines() if line.strip()}


def test_go_incremental_builds_give_the_clean_builds_programs(topwords: Any) -> None:
    instance, builder, root = topwords
    clean = Builder(instance, root / "clean", incremental=False)
    base = builder.incremental_base()
    assert isinstance(base, GoBase)
    mutants = {
        # ties in reverse alphabetical order: "2 b\n2 a\n1 c\n" (killed)
        "ties": (
            "internal/count/count.go",
            "entries[i].Word < entries[j].Word",
            "entries[i].Word > entries[j].Word",
        ),
        # -n 1 refused: exit 2 on the second case (killed)
        "n": ("main.go", "if *n < 1 ||", "if *n <= 1 ||"),
    }
    for name, (file, old, new) in mutants.items():
        spec = _mutant(instance, root, name, file, old, new)
        a, b = clean.mutant(spec), builder.mutant(spec)
        assert a.ok and b.ok, (a.message, b.message)
        # -trimpath: the same bytes, build ID included (the same inputs).
        assert Path(a.executable or "").read_bytes() == Path(b.executable or "").read_bytes()
        assert _outcomes(a, TOPWORDS_CASES) == _outcomes(b, TOPWORDS_CASES)
        assert base.same_objects(Path(b.directory), spec.patch.read_bytes()) is False
        # The clean build compiled the standard library too; the incremental one only the
        # changed package and the command importing it.
        assert "runtime" in _compiled(a)
        changed = {"ties": {"example.com/topwords/internal/count"}, "n": set()}[name]
        assert _compiled(b) == changed | {"example.com/topwords"}
    ties = builder.mutant(_mutant(instance, root, "ties", *mutants["ties"]))
    assert _outcomes(ties, TOPWORDS_CASES)[0] == (0, "2 b\n2 a\n1 c\n")
    n = builder.mutant(_mutant(instance, root, "n", *mutants["n"]))
    assert _outcomes(n, TOPWORDS_CASES)[1][0] == 2
    assert _expected(TOPWORDS_CASES)[1] == (0, "2 the\n")


def test_go_dead_code_is_trivially_equivalent(topwords: Any) -> None:
    instance, builder, root = topwords
    base = builder.incremental_base()
    assert isinstance(base, GoBase)
    # dumpCounts is called by nothing: the linker drops it, and the program is the
    # reference's but for its build ID (a hash of the inputs, debug.go's bytes among them).
    spec = _mutant(instance, root, "dead", "debug.go", "e.Count*1", "e.Count*2")
    built = builder.mutant(spec)
    assert built.ok, built.message
    assert Path(built.executable or "").read_bytes() != (base.tree / "executable").read_bytes()
    assert base.same_objects(Path(built.directory), spec.patch.read_bytes()) is True


def test_go_mutant_that_does_not_compile_is_a_build_error(topwords: Any) -> None:
    # Built once, with the reference's cache (a failure there is the compiler's: Go keys its
    # cache by content), not retried from scratch.
    instance, builder, root = topwords
    spec = _mutant(instance, root, "broken", "main.go", "os.Exit(2)", 'os.Exit("2")')
    built = builder.mutant(spec)
    assert not built.ok
    assert built.message.startswith("build failed (exit code")


def test_go_without_trimpath_builds_mutants_from_scratch(tmp_path: Path) -> None:
    # Without -trimpath Go keys the module's packages by their directory, each build's own:
    # the reference's cache would give nothing, and its programs name their directories, so
    # no mutant is ever byte for byte the reference. What the build compiles is still read.
    need("go")
    files = {**TOPWORDS, "build.sh": "go build -v -o executable . > go.log 2>&1\n"}
    instance = load_instance(write_instance(tmp_path / "tw", "topwords", files, TOPWORDS_CASES))
    builder = Builder(instance, tmp_path / "builds")
    assert builder.incremental_base() is None
    scope = build_scope_of(builder)
    files_built = {"main.go", "debug.go", "internal/count/count.go", "internal/count/stopwords.go"}
    assert scope.native_files == files_built
