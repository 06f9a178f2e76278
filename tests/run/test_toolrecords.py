"""Reading what a Rust or Go build compiled from the toolchain's own records: cargo's
dependency files, ``go version -m``, ``go list -deps -json``, a Go program's build ID. The
inputs are written here as the tools write them (copied from real output, names shortened)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from suitebench.run.toolrecords import (
    cargo_units,
    go_build_id,
    go_build_settings,
    go_list_argv,
    go_listed_files,
    without_go_build_id,
)


def test_cargo_units_read_sources_outputs_and_fingerprints(tmp_path: Path) -> None:
    built_at = "/store/ab12/tree"  # where the tree was built: the dependency files say so
    deps = tmp_path / "target" / "release" / "deps"
    deps.mkdir(parents=True)
    (tmp_path / "target/release/.fingerprint/my-tool-9f8e7d").mkdir(parents=True)
    # rustc's layout: one rule per output naming every source, then an empty rule per source;
    # a space in a name is escaped; the registry's file is outside the tree.
    (deps / "my_tool-9f8e7d.d").write_text(
        f"{built_at}/target/release/deps/my_tool-9f8e7d: src/main.rs src/two\\ words.rs "
        "/usr/share/cargo/registry/libc-0.2.139/src/lib.rs\n\n"
        f"{built_at}/target/release/deps/my_tool-9f8e7d.d: src/main.rs src/two\\ words.rs "
        "/usr/share/cargo/registry/libc-0.2.139/src/lib.rs\n\n"
        "src/main.rs:\nsrc/two\\ words.rs:\n\n# env-dep:CARGO_PKG_NAME=my-tool\n"
    )
    (unit,) = cargo_units(tmp_path, built_at)
    assert unit.sources == ("src/main.rs", "src/two words.rs")
    assert unit.outputs == ("target/release/deps/my_tool-9f8e7d",)
    assert unit.fingerprint == "target/release/.fingerprint/my-tool-9f8e7d"
    assert unit.is_executable  # an output without an extension: a linked program


def test_go_version_m_gives_the_main_package_and_settings() -> None:
    text = (
        "executable: go1.19.8\n"
        "\tpath\tgithub.com/itchyny/gojq/cmd/gojq\n"
        "\tmod\tgithub.com/itchyny/gojq\t(devel)\t\n"
        "\tdep\tgopkg.in/yaml.v3\tv3.0.1\n"
        "\tbuild\t-compiler=gc\n"
        "\tbuild\t-tags=netgo,osusergo\n"
        "\tbuild\t-trimpath=true\n"
        "\tbuild\tCGO_ENABLED=0\n"
        "\tbuild\tGOOS=linux\n"
    )
    found = go_build_settings(text)
    assert found is not None
    main, settings = found
    assert main == "github.com/itchyny/gojq/cmd/gojq"
    argv, env = go_list_argv("/usr/bin/go", main, settings)
    assert argv == ["/usr/bin/go", "list", "-deps", "-json", "-tags=netgo,osusergo", "--", main]
    assert env == {"CGO_ENABLED": "0", "GOOS": "linux"}
    assert go_build_settings("not a Go program\n") is None


def test_go_list_files_are_those_of_packages_in_the_tree(tmp_path: Path) -> None:
    packages = [
        {"Dir": "/usr/lib/go-1.19/src/fmt", "GoFiles": ["print.go"]},  # the standard library
        {"Dir": str(tmp_path / "vendor/x/y"), "GoFiles": ["y.go"], "CgoFiles": ["c.go"]},
        {"Dir": str(tmp_path), "GoFiles": ["main.go"], "IgnoredGoFiles": ["w_windows.go"]},
    ]
    stream = "\n".join(json.dumps(p, indent="\t") for p in packages)  # as go list prints
    assert go_listed_files(stream, tmp_path) == ["main.go", "vendor/x/y/c.go", "vendor/x/y/y.go"]


def test_a_go_build_id_is_zeroed_wherever_it_occurs() -> None:
    build_id = b"mcH91Ia9n3ZuOxSa6zxb/JaOJhS6gPAJqtb_tzhm5/jNyBZoXqPFyQsOM4CsXQ/XuC6LTsNPwJrk5Ax"
    # the ELF note (name "Go", type 4, the ID as its description) and a second copy in the text
    note = struct.pack("<III", 4, len(build_id), 4) + b"Go\0\0" + build_id
    one = b"\x7fELF....." + note + b"code-A" + build_id + b"tail"
    other_id = build_id[:-4] + b"ZZZZ"
    two = one.replace(build_id, other_id)
    assert go_build_id(one) == build_id
    assert one != two and without_go_build_id(one) == without_go_build_id(two)
    # A real difference of code stays one.
    three = two.replace(b"code-A", b"code-B")
    assert without_go_build_id(one) != without_go_build_id(three)
    assert without_go_build_id(b"\x7fELF no Go here") is None
