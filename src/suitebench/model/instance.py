"""Suite-mode benchmark instances: ``instance.toml`` plus the files it names.

An instance is what TestSuiteBench evaluates a test suite against: a natural-language spec whose
markdown headings are the *sections*, a reference implementation (the source directory and a
build recipe that leaves ``./executable``), a reference pytest suite, an optional test-to-section
map (the bigraph), and *mutants* -- unified diffs against the source, each violating one section
and targeted by one test.  A ``kind = "python"`` instance has a package directory as the program
under test instead of an executable.

Loading is strict: an unknown key, a missing file or a wrong type raises ``InstanceError`` naming
the file, the field and what was expected, because a silently half-read instance would yield a
mutation_score nobody can trace.
"""

from __future__ import annotations

import os
import re
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from suitebench.model.diffs import content_digest
from suitebench.model.errors import ID_RE, FormatError

__all__ = [
    "Instance",
    "InstanceError",
    "InstanceKind",
    "MutantSpec",
    "load_instance",
    "spec_sections_from_markdown",
]


_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")


class InstanceError(FormatError):
    """A malformed instance: names the file, the field and what was expected."""


class InstanceKind(StrEnum):
    """What the program under test is: a built executable or an importable package."""

    CLI = "cli"
    PYTHON = "python"


class MutantSpec(BaseModel):
    """One mutant: a unified diff against the reference source, applied with ``patch -p1``.

    ``section`` is the spec requirement the mutant violates and ``target`` the test that was
    meant to kill it (the paper's mutant-to-test assignment); both feed the per-section
    mutation_score.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    patch: Path = Field(description="absolute path of the unified diff")
    section: str | None = None
    target: str | None = None
    description: str = ""
    operator: str | None = None
    # Equivalent to the reference, so out of M's denominator: "tce" (``build mutants`` found
    # its compiled code the reference's) or "declared" (the instance's ``[[equivalent]]``
    # list, with the user's reason in ``equivalent_reason``).
    equivalent: Literal["tce", "declared"] | None = None
    equivalent_reason: str = ""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not ID_RE.match(value):
            raise ValueError("letters, digits, '_', '-', '.' (used in file names)")
        return value


class Instance(BaseModel):
    """A suite-mode benchmark instance with every path resolved to an absolute path.

    ``build`` is either a script path inside the source directory's copy (e.g. ``build.sh``) or
    a shell command; either way it runs in a fresh copy of the source and must leave
    ``./executable``.  For ``kind = "python"`` no build runs unless one is given; ``package``
    names the package directory inside ``source`` that the suite imports.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: InstanceKind = InstanceKind.CLI
    root: Path
    spec: Path | None = None
    build: str | None = None
    source: Path
    tests: Path
    package: str | None = None
    sections_map: dict[str, list[str]] = Field(default_factory=dict)
    mutants: tuple[MutantSpec, ...] = ()
    description: str = ""
    # The project's pytest configuration (pytest.ini, pyproject.toml, tox.ini, setup.cfg) to
    # carry into the suite's runs; None: found in the source root of a package, if it has one.
    pytest_config: Path | None = None
    # Files and directories the tests read beside them (README.md, docs/): copied next to
    # ``tests/`` in every run's working directory, read-only.
    beside: tuple[Path, ...] = ()
    # The interpreter the suite runs on (a project venv's ``bin/python``, with the project's
    # test dependencies and pytest); None: suitebench's own.
    python: Path | None = None
    # Mutants declared equivalent by id alone (no ``digest``): a rebuild that renumbers the
    # mutants would move the declaration to another mutant, which ``score`` warns of.
    equivalent_unkeyed: tuple[str, ...] = ()

    def spec_sections(self) -> list[str]:
        """The spec's sections: its markdown headings, in order of appearance."""
        if self.spec is None or not self.spec.is_file():
            return []
        return spec_sections_from_markdown(self.spec.read_text(encoding="utf-8"))

    def mutant(self, mutant_id: str) -> MutantSpec:
        """The mutant with this id (KeyError if there is none)."""
        for mutant in self.mutants:
            if mutant.id == mutant_id:
                return mutant
        raise KeyError(mutant_id)

    def build_script(self) -> Path | None:
        """The build recipe as a file inside the source, if ``build`` names one."""
        if self.build is None:
            return None
        candidate = self.source / self.build
        return candidate if candidate.is_file() else None

    def package_dir(self) -> Path | None:
        """For ``kind = "python"``: the package directory the suite imports."""
        if self.package is None:
            return None
        return self.source / self.package


def spec_sections_from_markdown(text: str) -> list[str]:
    """Markdown headings (ATX style, outside fenced code), stripped, duplicates kept once."""
    sections: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _HEADING_RE.match(line)
        if match:
            title = match.group(2).strip()
            if title and title not in sections:
                sections.append(title)
    return sections


_TOP_KEYS = {
    "name",
    "kind",
    "spec",
    "build",
    "source",
    "tests",
    "package",
    "sections_map",
    "mutants",
    "description",
    "pytest_config",
    "beside",
    "python",
    "equivalent",
}
_MUTANT_KEYS = {"id", "patch", "section", "target", "description", "operator", "equivalent"}
_EQUIVALENT_KEYS = {"id", "reason", "digest"}


def _expect_str(file: Path, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InstanceError(file, field, f"expected a non-empty string, got {value!r}")
    return value


def _resolve(file: Path, root: Path, field: str, value: Any, *, directory: bool) -> Path:
    text = _expect_str(file, field, value)
    path = (root / text).resolve()
    if directory and not path.is_dir():
        raise InstanceError(file, field, f"expected an existing directory, {path} is not one")
    if not directory and not path.is_file():
        raise InstanceError(file, field, f"expected an existing file, {path} is not one")
    return path


def _load_sections_map(file: Path, root: Path, value: Any) -> dict[str, list[str]]:
    """Either an inline table ``{test_id = [sections]}`` or a TOML file of the same shape."""
    if isinstance(value, str):
        map_file = _resolve(file, root, "sections_map", value, directory=False)
        try:
            data: Any = tomllib.loads(map_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InstanceError(map_file, "sections_map", f"expected valid TOML ({exc})") from exc
        file = map_file
        if isinstance(data, dict) and set(data) == {"tests"} and isinstance(data["tests"], dict):
            data = data["tests"]
    else:
        data = value
    if not isinstance(data, dict):
        raise InstanceError(file, "sections_map", "expected a table of test id -> [sections]")
    result: dict[str, list[str]] = {}
    for test_id, sections in data.items():
        if isinstance(sections, str):
            sections = [sections]
        if not isinstance(sections, list) or not all(isinstance(s, str) for s in sections):
            raise InstanceError(
                file, f"sections_map.{test_id}", "expected a section name or list of names"
            )
        result[str(test_id)] = list(sections)
    return result


def _check_table(
    file: Path, where: str, entry: Any, allowed: set[str], required: tuple[str, ...]
) -> None:
    """``entry`` (at ``where`` in ``file``) is a table of ``allowed`` keys holding ``required``:
    else an :class:`InstanceError` naming the field."""
    if not isinstance(entry, dict):
        raise InstanceError(file, where, "expected a table")
    unknown = set(entry) - set(allowed)
    if unknown:
        raise InstanceError(
            file, f"{where}.{sorted(unknown)[0]}", f"unknown key; allowed: {sorted(allowed)}"
        )
    for key in required:
        if key not in entry:
            raise InstanceError(file, f"{where}.{key}", "required key is missing")


def _load_mutants(file: Path, root: Path, value: Any) -> list[MutantSpec]:
    if not isinstance(value, list):
        raise InstanceError(file, "mutants", "expected an array of tables [[mutants]]")
    mutants: list[MutantSpec] = []
    seen: set[str] = set()
    for index, entry in enumerate(value):
        where = f"mutants[{index}]"
        _check_table(file, where, entry, _MUTANT_KEYS, ("id", "patch"))
        mutant_id = _expect_str(file, f"{where}.id", entry["id"])
        if mutant_id in seen:
            raise InstanceError(file, f"{where}.id", f"expected a unique id, {mutant_id!r} repeats")
        seen.add(mutant_id)
        patch = _resolve(file, root, f"{where}.patch", entry["patch"], directory=False)
        for optional in ("section", "target", "description", "operator"):
            if optional in entry and not isinstance(entry[optional], str):
                raise InstanceError(file, f"{where}.{optional}", "expected a string")
        if entry.get("equivalent", "tce") != "tce":
            raise InstanceError(
                file,
                f"{where}.equivalent",
                'expected "tce" (written by build mutants); declare an equivalent mutant in '
                "[[equivalent]] with its reason",
            )
        try:
            mutants.append(
                MutantSpec(
                    id=mutant_id,
                    patch=patch,
                    section=entry.get("section"),
                    target=entry.get("target"),
                    description=entry.get("description", ""),
                    operator=entry.get("operator"),
                    equivalent=entry.get("equivalent"),
                    equivalent_reason=TCE_REASON if "equivalent" in entry else "",
                )
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InstanceError(file, f"{where}.id", str(err.get("msg", exc))) from exc
    return mutants


TCE_REASON = "compiles to the reference's code (trivial compiler equivalence)"


def _declare_equivalent(
    file: Path, value: Any, mutants: list[MutantSpec]
) -> tuple[list[MutantSpec], tuple[str, ...]]:
    """The mutants with the ``[[equivalent]]`` declarations applied, and the ids declared
    without a ``digest``.  A declaration names a mutant by ``id`` and, with ``digest``, by
    what it changes (:func:`~suitebench.model.diffs.content_digest`): when the mutant of
    that id changes something else (the mutants were rebuilt and renumbered), the mutant
    with that digest is the one meant; when none has it, the declaration is an error."""
    if not isinstance(value, list):
        raise InstanceError(file, "equivalent", "expected an array of tables [[equivalent]]")
    by_id = {m.id: m for m in mutants}
    digests: dict[str, str] = {}

    def digest_of(mutant: MutantSpec) -> str:
        if mutant.id not in digests:
            digests[mutant.id] = content_digest(mutant.patch.read_bytes())
        return digests[mutant.id]

    declared: dict[str, str] = {}
    unkeyed: list[str] = []
    for index, entry in enumerate(value):
        where = f"equivalent[{index}]"
        _check_table(file, where, entry, _EQUIVALENT_KEYS, ("id", "reason"))
        mutant_id = _expect_str(file, f"{where}.id", entry["id"])
        reason = _expect_str(file, f"{where}.reason", entry["reason"])
        digest = entry.get("digest")
        if digest is None:
            if mutant_id not in by_id:
                raise InstanceError(
                    file, f"{where}.id", f"no mutant {mutant_id!r} in this instance"
                )
            unkeyed.append(mutant_id)
        else:
            digest = _expect_str(file, f"{where}.digest", digest)
            mine = by_id.get(mutant_id)
            if mine is None or digest_of(mine) != digest:
                moved = [m.id for m in mutants if digest_of(m) == digest]
                if not moved:
                    now = "" if mine is None else f" (its digest is now {digest_of(mine)!r})"
                    raise InstanceError(
                        file,
                        f"{where}.digest",
                        f"no mutant changes what {mutant_id!r} did when declared equivalent"
                        f"{now}: the mutants were rebuilt; check the mutant again and update "
                        "or remove the declaration",
                    )
                mutant_id = moved[0]
        declared[mutant_id] = reason
    updated = [
        m.model_copy(update={"equivalent": "declared", "equivalent_reason": declared[m.id]})
        if m.id in declared
        else m
        for m in mutants
    ]
    return updated, tuple(unkeyed)


_RESERVED_BESIDE = {"tests", "executable", "pytest.ini"}


def _load_beside(
    file: Path, root: Path, value: Any, package: Path | None, mutants: list[MutantSpec]
) -> tuple[Path, ...]:
    """``beside``: paths the tests read next to ``tests/``, each shown under its own name.  An
    entry holding the instance itself, a mutant's patch or the package under test would show
    the tests what is held out from them (or shadow the mutant on ``sys.path``): refused."""
    if not isinstance(value, list):
        raise InstanceError(file, "beside", "expected an array of paths (files or directories)")
    paths: list[Path] = []
    for index, entry in enumerate(value):
        where = f"beside[{index}]"
        text = _expect_str(file, where, entry)
        path = (root / text).resolve()
        if not path.exists():
            raise InstanceError(file, where, f"expected an existing file or directory, {path}")
        if path.name in _RESERVED_BESIDE or path.name in {p.name for p in paths}:
            raise InstanceError(
                file, where, f"expected a unique name other than {sorted(_RESERVED_BESIDE)}"
            )
        held = [root, *(m.patch for m in mutants), *([package] if package else [])]
        for inner in held:
            if inner == path or path in inner.parents:
                raise InstanceError(
                    file, where, f"expected a path not holding {inner} (held out from the tests)"
                )
        paths.append(path)
    return tuple(paths)


def _read_instance_toml(path: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The ``instance.toml`` at ``path`` (or in the directory), its directory and its keys,
    checked for unknown and missing ones."""
    file = path / "instance.toml" if path.is_dir() else path
    if not file.is_file():
        raise InstanceError(
            file,
            "<file>",
            "expected an instance.toml file (or a ProgramBench task: build.sh and "
            "tests/<branch>/eval/tests/*.py)",
        )
    root = file.parent.resolve()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InstanceError(file, "<file>", f"expected valid TOML ({exc})") from exc

    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise InstanceError(file, sorted(unknown)[0], f"unknown key; allowed: {sorted(_TOP_KEYS)}")
    for required in ("name", "source", "tests"):
        if required not in data:
            raise InstanceError(file, required, "required key is missing")
    return file, root, data


def _build_and_package(
    file: Path, data: dict[str, Any], source: Path, kind: InstanceKind
) -> tuple[str | None, str | None]:
    """The build script (``build.sh`` by default when the source holds one) and the package
    directory, each required by its kind."""
    build: str | None
    if "build" in data:
        build = _expect_str(file, "build", data["build"])
    elif (source / "build.sh").is_file():
        build = "build.sh"
    else:
        build = None
    package: str | None = None
    if "package" in data:
        package = _expect_str(file, "package", data["package"])
        if not (source / package).is_dir():
            raise InstanceError(
                file, "package", f"expected a package directory inside source, {package!r}"
            )
    if kind is InstanceKind.PYTHON and package is None:
        raise InstanceError(file, "package", 'required for kind = "python" (the package dir)')
    if kind is InstanceKind.CLI and build is None:
        raise InstanceError(file, "build", 'required for kind = "cli" (or a build.sh in source)')
    return build, package


def _python(file: Path, root: Path, data: dict[str, Any]) -> Path | None:
    """The interpreter the instance names, if any, which must be a file."""
    python = None
    if "python" in data:
        # Not resolved: a venv's bin/python is a link whose own place says which venv it is.
        text = _expect_str(file, "python", data["python"])
        python = Path(os.path.normpath(root / Path(text).expanduser()))
        if not python.is_file():
            raise InstanceError(file, "python", f"expected an interpreter, {python} is no file")
    return python


def load_instance(path: Path | str) -> Instance:
    """Read ``instance.toml`` (or a directory holding one) strictly.

    Paths are relative to the file's directory and must exist.  ``build`` defaults to
    ``build.sh`` when the source holds one (the ProgramBench convention).
    """
    file, root, data = _read_instance_toml(Path(path))
    name = _expect_str(file, "name", data["name"])
    kind_text = data.get("kind", "cli")
    try:
        kind = InstanceKind(kind_text)
    except ValueError:
        raise InstanceError(
            file, "kind", f'expected "cli" or "python", got {kind_text!r}'
        ) from None
    source = _resolve(file, root, "source", data["source"], directory=True)
    tests = _resolve(file, root, "tests", data["tests"], directory=True)
    spec = _resolve(file, root, "spec", data["spec"], directory=False) if "spec" in data else None

    build, package = _build_and_package(file, data, source, kind)
    sections_map = (
        _load_sections_map(file, root, data["sections_map"]) if "sections_map" in data else {}
    )
    mutants = _load_mutants(file, root, data.get("mutants", []))
    mutants, unkeyed = _declare_equivalent(file, data.get("equivalent", []), mutants)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise InstanceError(file, "description", "expected a string")
    pytest_config = (
        _resolve(file, root, "pytest_config", data["pytest_config"], directory=False)
        if "pytest_config" in data
        else None
    )
    python = _python(file, root, data)
    package_path = source / package if package is not None else None
    beside = _load_beside(file, root, data.get("beside", []), package_path, mutants)
    return Instance(
        name=name,
        kind=kind,
        root=root,
        spec=spec,
        build=build,
        source=source,
        tests=tests,
        package=package,
        sections_map=sections_map,
        mutants=tuple(mutants),
        description=description,
        pytest_config=pytest_config,
        beside=beside,
        python=python,
        equivalent_unkeyed=unkeyed,
    )
