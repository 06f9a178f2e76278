"""What a Rust or Go build compiled, read from the toolchain's own records.

* **cargo** writes, for every unit it compiles, a dependency file (``target/<profile>/deps/
  <crate>-<hash>.d``, make's syntax): its outputs, and every source file rustc read for it --
  the modules ``mod`` named, ``include_str!``'d files -- relative to the workspace root for the
  workspace's own crates, absolute for the others. Its fingerprint is
  ``target/<profile>/.fingerprint/<package>-<hash>/``, the same hash.
* **Go** writes into every program the import path of its main package and the build's settings
  (``go version -m``: ``path``, ``build -tags=...``, ``build CGO_ENABLED=0``); ``go list -deps
  -json`` on that package names, for every package the program is linked from, the files
  compiled into it under those settings (``GoFiles``, ``CgoFiles``, ...): build tags honoured,
  ``_test.go`` files out.  A Go program also carries a build ID, a hash of the inputs of its
  build (sources included): two programs of the same code differ there and only there.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GO_RECORD",
    "CargoUnit",
    "cargo_units",
    "go_build_settings",
    "go_listed_files",
    "without_go_build_id",
]

GO_RECORD = "gobuild.json"  # beside a recorded Go build's tree, in its cache entry
_GO_FILE_LISTS = ("GoFiles", "CgoFiles", "CFiles", "CXXFiles", "HFiles", "SFiles", "MFiles")


@dataclass(frozen=True)
class CargoUnit:
    """One unit cargo compiled: its dependency file, outputs and sources (paths relative to
    the built tree; sources outside it -- the standard library, a registry -- left out) and
    its fingerprint directory (None when not found)."""

    dep_file: str
    outputs: tuple[str, ...]
    sources: tuple[str, ...]
    fingerprint: str | None

    @property
    def is_executable(self) -> bool:
        """A linked program (a bin, a build script), not a library: an output without an
        extension."""
        return any("." not in os.path.basename(o) for o in self.outputs)


def _split_make_words(text: str) -> list[str]:
    """The words of a make rule's side (``\\ `` is a space inside a name)."""
    return [w.replace("\0", " ") for w in text.replace("\\ ", "\0").split()]


def _parse_dep_file(text: str) -> tuple[list[str], list[str]]:
    """The targets and prerequisites of a dependency file's rules (rustc writes one rule per
    output, each naming every source, then an empty rule per source)."""
    targets: list[str] = []
    sources: dict[str, None] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        at = re.search(r"(?<!\\):( |$)", line)
        if at is None:
            continue
        prerequisites = _split_make_words(line[at.end() :])
        if prerequisites:
            targets += _split_make_words(line[: at.start()])
            sources.update(dict.fromkeys(prerequisites))
    return targets, list(sources)


def _relative(path: str, base: Path, tree: Path, built_at: str) -> str | None:
    """``path`` (as a dependency file names it) relative to the tree, or None when outside."""
    if os.path.isabs(path):
        if built_at and (path == built_at or path.startswith(built_at.rstrip("/") + "/")):
            path = str(tree) + path[len(built_at.rstrip("/")) :]
        full = os.path.normpath(path)
    else:
        full = os.path.normpath(os.path.join(base, path))
    rel = os.path.relpath(full, tree)
    return None if rel.startswith("..") else rel


def cargo_units(tree: Path, built_at: str = "") -> list[CargoUnit]:
    """The units of every cargo build whose target directory lies in ``tree`` (each
    ``target/`` beside a ``Cargo.toml``); ``built_at``: where the tree was when it was built,
    as the dependency files name it (default: where it is)."""
    tree = Path(tree)
    built_at = built_at or str(tree)
    units: list[CargoUnit] = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        here = Path(dirpath)
        if here.name != "deps" or not any(p.name == "target" for p in here.parents):
            continue
        workspace = next(p.parent for p in here.parents if p.name == "target")
        fingerprints = here.parent / ".fingerprint"
        for name in sorted(f for f in filenames if f.endswith(".d")):
            try:
                text = (here / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            targets, sources = _parse_dep_file(text)
            outputs = [_relative(t, workspace, tree, built_at) for t in targets]
            rel_sources = [_relative(s, workspace, tree, built_at) for s in sources]
            digest = name[:-2].rsplit("-", 1)[-1]
            found = sorted(fingerprints.glob(f"*-{digest}")) if fingerprints.is_dir() else []
            units.append(
                CargoUnit(
                    dep_file=os.path.relpath(here / name, tree),
                    outputs=tuple(o for o in outputs if o is not None and not o.endswith(".d")),
                    sources=tuple(s for s in rel_sources if s is not None),
                    fingerprint=os.path.relpath(found[0], tree) if found else None,
                )
            )
    return units


def go_build_settings(version_m: str) -> tuple[str, dict[str, str]] | None:
    """The main package's import path and the build settings ``go version -m`` printed for a
    program (None: not a Go program with build information)."""
    main = ""
    settings: dict[str, str] = {}
    for line in version_m.splitlines():
        fields = line.strip().split("\t")
        if len(fields) >= 2 and fields[0] == "path":
            main = fields[1]
        elif len(fields) >= 2 and fields[0] == "build" and "=" in fields[1]:
            key, _, value = fields[1].partition("=")
            settings[key] = value
    return (main, settings) if main else None


def go_listed_files(go_list_json: str, tree: Path) -> list[str]:
    """The files (relative to ``tree``) compiled into the packages ``go list -deps -json``
    printed whose directories lie in the tree (the module's own, and ``vendor/``'s)."""
    decoder = json.JSONDecoder()
    files: set[str] = set()
    text, at = go_list_json, 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        package, at = decoder.raw_decode(text, at)
        directory = package.get("Dir") or ""
        rel = os.path.relpath(directory, tree) if directory else ".."
        if rel.startswith(".."):
            continue
        for key in _GO_FILE_LISTS:
            for name in package.get(key) or []:
                files.add(os.path.normpath(os.path.join(rel, name)))
    return sorted(files)


# Where a Go program keeps its build ID: an ELF note (name "Go", type 4) or, elsewhere, a
# text marker (both as ``go tool buildid`` reads them).
_GO_NOTE = re.compile(rb"\x04\x00\x00\x00(.{4})\x04\x00\x00\x00Go\x00\x00", re.DOTALL)
_GO_TEXT = re.compile(rb'\xff Go build ID: "([^"\n]{1,400})"\n \xff')


def go_build_id(data: bytes) -> bytes | None:
    """A Go program's build ID (None: none found)."""
    note = _GO_NOTE.search(data)
    if note is not None:
        size = int.from_bytes(note.group(1), "little")
        if 0 < size <= 400:
            return data[note.end() : note.end() + size]
    text = _GO_TEXT.search(data)
    return None if text is None else text.group(1)


def without_go_build_id(data: bytes) -> bytes | None:
    """A Go program's bytes with every occurrence of its build ID zeroed (as ``go tool buildid
    -w`` finds them to rewrite them), or None when it has none."""
    build_id = go_build_id(data)
    if build_id is None:
        return None
    return data.replace(build_id, b"\0" * len(build_id))


def go_module_dir(tree: Path, module: str) -> Path:
    """The directory of the tree's ``go.mod`` declaring ``module`` (the tree when none does)."""
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in ("vendor", ".git", "testdata"))
        if "go.mod" in filenames:
            text = Path(dirpath, "go.mod").read_text(encoding="utf-8", errors="replace")
            found = re.search(r"(?m)^module\s+\"?([^\s\"]+)", text)
            if found is not None and found.group(1) == module:
                return Path(dirpath)
    return tree


def go_list_argv(go: str, main: str, settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """``go list`` of the packages a program is linked from, under its build's settings: the
    command and the environment it adds."""
    argv = [go, "list", "-deps", "-json"]
    if settings.get("-tags"):
        argv.append(f"-tags={settings['-tags']}")
    if settings.get("-mod"):
        argv.append(f"-mod={settings['-mod']}")
    env = {k: v for k, v in settings.items() if k in ("CGO_ENABLED", "GOOS", "GOARCH")}
    return [*argv, "--", main], env


def go_main_module(version_m: str) -> str:
    """The main module's path in ``go version -m``'s output (``mod`` line)."""
    for line in version_m.splitlines():
        fields = line.strip().split("\t")
        if len(fields) >= 2 and fields[0] == "mod":
            return fields[1]
    return ""
