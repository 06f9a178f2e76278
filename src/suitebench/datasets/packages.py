"""What the problem-package readers share (:mod:`.kattis`, :mod:`.polygon`): a package is a
directory of files, not rows of a table, so its programs keep their names, its tests their
answers, and its validators their own calling conventions.

A Kattis validator speaks another protocol than the judge here (input validators exit 42 to
accept and 43 to reject; output validators are called ``validator input answer feedback_dir <
output`` and exit 42 / 43): :func:`kattis_wrapper` writes it as a build-script program (a
directory with ``build.sh``) whose ``executable`` calls the package's program and translates,
so the audit runs it as it runs any validator (exit 0 legal) or checker (``checker input output
answer``, exit 0 ok, 1 WA, anything else a failure of the checker).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from suitebench.datasets.languages import Dialect, Lang, LanguageDrop
from suitebench.datasets.options import ImportOptions
from suitebench.datasets.source import DatasetError
from suitebench.datasets.writer import Dropped, Program, TestCase

__all__ = [
    "KATTIS_CPP",
    "escape",
    "language_by_extension",
    "package_dirs",
    "pool_name",
    "program_name",
    "read_text",
    "relative_inside",
    "tests_from_dir",
]

#: The standards problemtools (the format's own tool, ``languages.yaml``) compiles with.
KATTIS_C, KATTIS_CPP = "gnu17", "gnu++23"
_CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")
_PY2_SHEBANG = re.compile(r"^#!.*python2\b")


def escape(root: Path) -> str | None:
    """The first symbolic link under ``root`` that leads outside it, or None. A package is
    read as files; one that links out (``data/secret/1.in -> ~/.ssh/id_rsa``) would copy what
    it points at into the problem, to be fed to untrusted programs: it is skipped."""
    base = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            p = Path(dirpath) / name
            if p.is_symlink() and not p.resolve().is_relative_to(base):
                return p.relative_to(root).as_posix()
    return None


def relative_inside(rel: str) -> bool:
    """Whether a path a package names (``problem.xml``'s ``source path``, a test pattern)
    stays inside it: relative, no ``..``."""
    p = Path(rel)
    return bool(rel) and not p.is_absolute() and ".." not in p.parts


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def package_dirs(path: Path, marker: str) -> list[Path]:
    """The problem directories ``path`` stands for: itself when it holds ``marker``
    (``problem.yaml``, ``problem.xml``), else its sub-directories that do (a contest)."""
    if not path.is_dir():
        raise DatasetError(f"{path}: not a directory (a problem package is one)")
    if (path / marker).is_file():
        return [path]
    found = sorted(d for d in path.iterdir() if d.is_dir() and (d / marker).is_file())
    if not found:
        raise DatasetError(f"{path}: no {marker} in it or in its sub-directories")
    return found


def language_by_extension(path: Path, text: str) -> Lang | Dialect | LanguageDrop:
    """A Kattis program's language as problemtools reads it: by extension, C and C++ with
    the standards problemtools compiles with, Python 3 under PyPy (Python 2 by a ``.py2``
    suffix or a ``python2`` shebang)."""
    suffix = path.suffix if path.suffix == ".C" else path.suffix.lower()
    if suffix in _CPP_SUFFIXES:
        return Dialect(Lang.CPP, KATTIS_CPP)
    if suffix == ".c":
        return Dialect(Lang.C, KATTIS_C)
    if suffix == ".java":
        return Lang.JAVA
    if suffix == ".py2" or (suffix == ".py" and _PY2_SHEBANG.match(text)):
        return LanguageDrop("python2: no interpreter")
    if suffix in (".py", ".py3"):
        return Lang.PYPY3
    return LanguageDrop(f"language of {suffix or 'a file without extension'}: not imported")


def pool_name(name: str) -> str:
    """A verdict folder or solution tag as a pool name (letters, digits, ``_``, ``-``, ``.``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "pool"


def program_name(path: Path, taken: set[str]) -> str:
    """A file-name-safe stem for a package's program, unique among ``taken`` (added)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.stem).strip("._") or "program"
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}_{n}", n + 1
    taken.add(name)
    return name


def programs_from_files(
    files: Sequence[Path],
    root: Path,
    resolve: Sequence[Lang | Dialect | LanguageDrop],
    options: ImportOptions,
    dropped: list[Dropped],
) -> tuple[Program, ...]:
    """Programs from package files with their resolved languages, keeping their names."""
    out: list[Program] = []
    taken: set[str] = set()
    for f, found in zip(files, resolve, strict=True):
        origin = f.relative_to(root).as_posix()
        if isinstance(found, LanguageDrop):
            dropped.append(Dropped(origin, found.reason))
            continue
        lang, standard = (
            (found.lang, found.standard) if isinstance(found, Dialect) else (found, None)
        )
        if lang not in options.languages:
            dropped.append(Dropped(origin, f"language {lang} not selected (--languages)"))
            continue
        text = read_text(f)
        if not text.strip():
            dropped.append(Dropped(origin, "empty source"))
            continue
        out.append(Program(program_name(f, taken), lang, text, origin, standard))
    return tuple(out)


def tests_from_dir(
    root: Path, sub: str, dropped: list[Dropped], *, suffix: str = ".ans"
) -> tuple[TestCase, ...]:
    """Every ``*.in`` under ``root/sub`` (groups included, sorted by path) with its answer
    ``X.ans`` where there is one."""
    base = root / sub
    if not base.is_dir():
        return ()
    out = []
    for f in sorted(base.rglob("*.in")):
        ans = f.with_suffix(suffix)
        origin = f.relative_to(root).as_posix()
        if not ans.is_file():
            dropped.append(Dropped(origin, f"no {suffix} beside it: no official answer", "test"))
        out.append(TestCase(read_text(f), read_text(ans) if ans.is_file() else None, origin))
    return tuple(out)


def _compile_lines(sources: Sequence[str], out: str) -> str | None:
    """The build.sh lines that compile a validator's sources into ``out`` (None: a language
    the wrapper does not build)."""
    cpp = [s for s in sources if Path(s).suffix in _CPP_SUFFIXES]
    c = [s for s in sources if Path(s).suffix == ".c"]
    py = [s for s in sources if Path(s).suffix == ".py"]
    if cpp:
        files = " ".join(f"'{s}'" for s in cpp)
        return f"g++ -O2 -std={KATTIS_CPP} -o {out} {files}"
    if c:
        files = " ".join(f"'{s}'" for s in c)
        return f"gcc -O2 -std={KATTIS_C} -o {out} {files} -lm"
    if py:
        main = next((s for s in py if Path(s).stem.lower() == "main"), py[0])
        return (
            f"python3 -m py_compile {' '.join(repr(s) for s in py)}\n"
            f'printf \'#!/bin/sh\\nexec python3 "$(dirname "$0")/{main}" "$@"\\n\' > {out}\n'
            f"chmod +x {out}"
        )
    return None


_INPUT_CALL = '"$here/validator.bin" "$@"'
_OUTPUT_CALL = (
    'fb=$(mktemp -d) || exit 3\n"$here/validator.bin" "$1" "$3" "$fb"{flags} < "$2"\n'
    's=$?\nrm -rf "$fb"\n(exit $s)'
)


def kattis_wrapper(sources: dict[str, str], role: str, flags: str = "") -> dict[str, str] | None:
    """The files of a build-script program that runs a Kattis validator with this judge's
    protocol: ``role`` ``input`` (exit 42 -> 0 legal, 43 -> 1 illegal) or ``output`` (called
    ``executable input output answer``; 42 -> 0 accepted, 43 -> 1 wrong answer, anything else
    -> 3, the checker failed). ``sources`` are the validator's files by name; None if their
    language cannot be built here."""
    compile_line = _compile_lines(sorted(sources), "validator.bin")
    if compile_line is None:
        return None
    call = (
        _INPUT_CALL if role == "input" else _OUTPUT_CALL.format(flags=f" {flags}" if flags else "")
    )
    run = (
        "#!/bin/sh\n"
        'here=$(dirname "$0")\n'
        f"{call}\n"
        "case $? in 42) exit 0;; 43) exit 1;; *) exit 3;; esac\n"
    )
    build = (
        "#!/bin/sh\n"
        f"# The package's {role} validator, its exit codes 42 / 43 read the testlib way.\n"
        "set -e\n"
        f"{compile_line}\n"
        "cp run.sh executable\n"
        "chmod +x executable\n"
    )
    return {**sources, "build.sh": build, "run.sh": run}


def walk_files(root: Path) -> Iterator[Path]:
    """The files under ``root``, sorted, hidden ones left out."""
    for f in sorted(root.rglob("*")):
        if f.is_file() and not any(p.startswith(".") for p in f.relative_to(root).parts):
            yield f
