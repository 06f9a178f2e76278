"""Programs: sources plus how to build them (:class:`Program`), and a built program
(:class:`Built`), described from a file or a directory (:func:`program_from_path`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from suitebench.run.jvm import config_dirs
from suitebench.run.outcome import Status


class Language(StrEnum):
    C = "c"
    CPP = "cpp"
    PYTHON = "python"
    SHELL = "shell"
    RUST = "rust"
    GO = "go"
    JAVA = "java"
    PYPY3 = "pypy3"  # Python 3 on PyPy: no extension of its own, chosen by a problem or a caller
    SCRIPT = "script"  # a directory with a build command (build.sh) that leaves ./executable


EXTENSIONS: dict[str, Language] = {
    ".c": Language.C,
    ".cc": Language.CPP,
    ".cpp": Language.CPP,
    ".cxx": Language.CPP,
    ".py": Language.PYTHON,
    ".rs": Language.RUST,
    ".go": Language.GO,
    ".sh": Language.SHELL,
    ".java": Language.JAVA,
}

# Source files of a language beyond its own extensions (PyPy runs Python files).
UNIT_EXTENSIONS: dict[Language, tuple[str, ...]] = {Language.PYPY3: (".py",)}

EXECUTABLE = "executable"

# The languages whose recipe runs a compiler, so that compile flags mean something.
COMPILED = (Language.C, Language.CPP, Language.RUST, Language.GO)
# The languages whose builds take a program's own compiler flags (Java's are added to javac's:
# a release, ``--release 8``).
FLAGGED = (*COMPILED, Language.JAVA)


class ToolchainError(ValueError):
    """The program description itself is wrong (no such file, unknown language)."""


@dataclass(frozen=True)
class Program:
    """Sources plus how to build them.

    ``root`` is the directory the sources live in; ``sources`` are paths relative to it (the
    files hashed and copied into the build). ``build_command`` (run in a copy of ``root``,
    must leave ``./executable``) makes it a build-script program. ``entry`` is the file that is
    run for interpreted languages. ``interpreter`` overrides the Python interpreter.
    ``compile_flags`` replaces the language's default compiler flags (C, C++: ``-O2
    -std=gnu17``/``-std=gnu++17 -pipe``; Rust: ``-O --edition 2021``; Go: none; Java: added
    to javac's own, a release such as ``--release 8``), e.g.
    ``("-O0", "-std=gnu99")`` for a benchmark judged by an old course judge; the flags are part
    of the program's identity and so of its build cache key.
    """

    language: Language
    root: Path
    sources: tuple[str, ...]
    build_command: tuple[str, ...] | None = None
    entry: str | None = None
    interpreter: str | None = None
    name: str = ""
    compile_flags: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.compile_flags is not None and self.language not in FLAGGED:
            raise ToolchainError(
                f"{self.root}: compile flags given for a {self.language} program "
                f"(only {', '.join(map(str, FLAGGED))} take compile flags)"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": str(self.language),
            "root": str(self.root),
            "sources": list(self.sources),
            "build_command": list(self.build_command) if self.build_command else None,
            "entry": self.entry,
            "interpreter": self.interpreter,
            "name": self.name,
            "compile_flags": None if self.compile_flags is None else list(self.compile_flags),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Program:
        return cls(
            language=Language(d["language"]),
            root=Path(d["root"]),
            sources=tuple(d["sources"]),
            build_command=tuple(d["build_command"]) if d.get("build_command") else None,
            entry=d.get("entry"),
            interpreter=d.get("interpreter"),
            name=d.get("name", ""),
            compile_flags=(None if d.get("compile_flags") is None else tuple(d["compile_flags"])),
        )


@dataclass(frozen=True)
class Built:
    """A built program: how to run it (``argv``, absolute paths) or why it did not build."""

    program_id: str
    status: Status
    argv: tuple[str, ...]
    workdir: Path
    message: str
    language: Language
    build_seconds: float = 0.0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def artifact(self) -> Path:
        return self.workdir / EXECUTABLE

    @property
    def ro_binds(self) -> tuple[str, ...]:
        """Paths a sandboxed run must be given read-only: the cache entry (the bubblewrap
        backend hides /tmp, where a cache may live), for Python and PyPy the interpreter's own
        installation (which may sit in a home directory the sandbox user cannot enter), for
        Java the JDK's configuration outside it (Debian's ``/etc/java-17-openjdk``)."""
        binds = [str(self.workdir)]
        if self.language in (Language.PYTHON, Language.PYPY3) and self.argv:
            binds.extend(interpreter_roots(self.argv[0]))
        if self.language is Language.JAVA:
            binds.extend(config_dirs())
        return tuple(dict.fromkeys(binds))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["status"] = str(self.status)
        d["language"] = str(self.language)
        d["workdir"] = str(self.workdir)
        d["argv"] = list(self.argv)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Built:
        return cls(
            program_id=d["program_id"],
            status=Status(d["status"]),
            argv=tuple(d["argv"]),
            workdir=Path(d["workdir"]),
            message=d.get("message", ""),
            language=Language(d["language"]),
            build_seconds=float(d.get("build_seconds", 0.0)),
            cached=bool(d.get("cached", False)),
        )


# -- describing programs ---------------------------------------------------------------------


def language_of(path: str | os.PathLike[str]) -> Language:
    ext = Path(path).suffix.lower()
    try:
        return EXTENSIONS[ext]
    except KeyError:
        known = " ".join(sorted(EXTENSIONS))
        raise ToolchainError(f"{path}: unknown language for extension {ext!r} ({known})") from None


def _dir_files(root: Path) -> tuple[str, ...]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in {".git", "__pycache__", ".pytest_cache"}
        )
        for f in sorted(filenames):
            full = Path(dirpath) / f
            if full.is_file():
                out.append(full.relative_to(root).as_posix())
    return tuple(sorted(out))


def source_units(language: Language, sources: Sequence[str]) -> tuple[str, ...]:
    """The files a recipe hands to the compiler (C/C++ translation units, Go files of the top
    directory without tests, Python modules, ...)."""
    exts = {e for e, lg in EXTENSIONS.items() if lg is language}
    exts.update(UNIT_EXTENSIONS.get(language, ()))
    units = tuple(s for s in sources if Path(s).suffix.lower() in exts)
    if not units and len(sources) == 1:
        units = tuple(sources)  # one file whose language was given explicitly
    if language is Language.GO:
        units = tuple(s for s in units if "/" not in s and not s.endswith("_test.go"))
    return units


def _dir_language(p: Path, files: Sequence[str]) -> Language:
    """The language of a directory given none: that of its files, which must be one."""
    langs = {EXTENSIONS[Path(f).suffix.lower()] for f in files if Path(f).suffix in EXTENSIONS}
    if len(langs) != 1:
        raise ToolchainError(
            f"{p}: cannot tell the language (found {sorted(map(str, langs)) or 'none'}); "
            "pass language= or add a build.sh"
        )
    return langs.pop()


def _dir_entry(p: Path, lang: Language, units: Sequence[str]) -> str | None:
    """The file a directory's program starts from: ``main.py``/``__main__.py`` (Python),
    ``main.sh`` (shell), ``main.rs`` (Rust), else its one unit; None where the language
    needs no entry."""
    entry: str | None = None
    if lang in (Language.PYTHON, Language.PYPY3):
        entry = next((f for f in ("main.py", "__main__.py") if f in units), None)
        if entry is None:
            if len(units) != 1:
                raise ToolchainError(f"{p}: a Python directory needs main.py or __main__.py")
            entry = units[0]
    elif lang is Language.SHELL:
        if len(units) != 1 and "main.sh" not in units:
            raise ToolchainError(f"{p}: a shell directory needs main.sh")
        entry = "main.sh" if "main.sh" in units else units[0]
    elif lang is Language.RUST:
        if len(units) != 1 and "main.rs" not in units:
            raise ToolchainError(f"{p}: a Rust directory needs main.rs (its crate root)")
        entry = "main.rs" if "main.rs" in units else units[0]
    return entry


def program_from_path(
    path: str | os.PathLike[str],
    language: Language | str | None = None,
    *,
    build_command: Sequence[str] | None = None,
    interpreter: str | None = None,
    compile_flags: Sequence[str] | None = None,
) -> Program:
    """A program from one source file or a directory.

    A file's language comes from its extension unless given. A directory with ``build.sh``
    (or an explicit ``build_command``) is a build-script program that must leave
    ``./executable``; any other directory needs a language (or files of exactly one known
    extension) and is built from all its files of that language (Python: ``main.py`` or
    ``__main__.py`` is run). ``compile_flags`` replaces the language's default compiler flags
    (see :class:`Program`); a program whose language takes no flags is a ``ToolchainError``.
    """
    flags = None if compile_flags is None else tuple(str(f) for f in compile_flags)
    p = Path(path).absolute()
    lang = Language(language) if language is not None else None
    if not p.exists():
        raise ToolchainError(f"{p}: no such file or directory")
    if p.is_file():
        lang = lang or language_of(p)
        if lang is Language.SCRIPT:
            raise ToolchainError(f"{p}: a build-script program must be a directory")
        return Program(
            language=lang,
            root=p.parent,
            sources=(p.name,),
            entry=p.name,
            interpreter=interpreter,
            name=p.name,
            build_command=tuple(build_command) if build_command else None,
            compile_flags=flags,
        )
    files = _dir_files(p)
    if build_command or (lang in (None, Language.SCRIPT) and (p / "build.sh").is_file()):
        cmd = tuple(build_command) if build_command else ("bash", "build.sh")
        if flags is not None:
            raise ToolchainError(f"{p}: compile flags given for a build-script program")
        return Program(Language.SCRIPT, p, files, build_command=cmd, name=p.name)
    if lang is None:
        lang = _dir_language(p, files)
    units = source_units(lang, files)
    if not units:
        raise ToolchainError(f"{p}: no {lang} sources")
    entry = _dir_entry(p, lang, units)
    # Every file is part of the program (headers, modules, data next to the code); the recipe
    # compiles the units among them.
    sources = files
    return Program(
        lang,
        p,
        sources,
        entry=entry,
        interpreter=interpreter,
        name=p.name,
        compile_flags=flags,
    )


def interpreter_roots(interpreter: str) -> list[str]:
    """The installation a Python interpreter needs: its prefix and, for a virtual
    environment, the base installation it links to."""
    roots = [Path(interpreter).absolute().parent.parent]
    real = Path(os.path.realpath(interpreter))
    roots.append(real.parent.parent)
    return [str(r) for r in dict.fromkeys(roots) if str(r) not in ("/", "/usr")]
