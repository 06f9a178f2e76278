"""Input-mode problems: ``problem.toml`` plus the files it names.

A problem is what the auditors paper certifies kills against: a statement, time and memory
limits, a checker, a legality validator, the accepted reference solutions whose agreement is the
consensus_oracle, brute-force solutions that settle disputes, an optional input generator, the
submission pools to audit and the official and sample tests (which are arms like any other).

Loading is strict: an unknown key, a missing file, a glob that matches nothing where something is
required, an empty reference list or a bad limit raises :class:`ProblemError` naming the file,
the field and what was expected -- a silently half-read problem would certify kills nobody can
trace.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import math
import re
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from suitebench.model.errors import ID_RE, FormatError

__all__ = [
    "BUILTIN_CHECKERS",
    "COMPILE_LANGUAGES",
    "DEFAULT_DEFINES",
    "INTERACTOR_CONVENTIONS",
    "LANGUAGES",
    "CheckerKind",
    "CheckerSpec",
    "ExitStatus",
    "OracleConfig",
    "OracleRule",
    "Problem",
    "ProblemError",
    "declared_defines",
    "declared_language",
    "load_problem",
    "parse_checker",
    "parse_icpc_flags",
    "split_language",
]

PROBLEM_FILE = "problem.toml"


class ProblemError(FormatError):
    """A malformed problem: names the file, the field and what was expected."""


class OracleRule(StrEnum):
    """How the references' outputs become the gold (the consensus_oracle's agreement rule).

    ``all_agree`` is the paper's CF-fresh rule: every successful reference run agrees and at
    least ``min_success`` succeed. ``majority`` takes the output a strict majority of all the
    references produce.
    """

    ALL_AGREE = "all_agree"
    MAJORITY = "majority"


class ExitStatus(StrEnum):
    """What a non-zero exit status means: ``judge`` (a runtime error, RE) or ``ignore`` (only
    the output is judged, as old course and contest judges did). A signal is always RE."""

    JUDGE = "judge"
    IGNORE = "ignore"


#: Languages whose compile flags ``[compile]`` may replace (the compiled ones).
COMPILE_LANGUAGES = ("c", "cpp", "rust", "go")
#: Macros every C and C++ program of an input-mode problem is compiled with (``-DNAME``), as
#: DOMjudge's and Codeforces' compilers define them: contestants' templates read ``input.txt``
#: unless ``ONLINE_JUDGE`` is defined. ``[compile] defines = [...]`` replaces them.
DEFAULT_DEFINES = ("ONLINE_JUDGE",)
_DEFINE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(=[^\s]*)?")
#: Language names a ``[languages]`` table may give a program (``suitebench.run.program.Language``
#: but for ``script``, a directory with a build.sh). There is no Python 2 here.
LANGUAGES = ("c", "cpp", "go", "java", "pypy3", "python", "rust", "shell")
DEFAULT_OUTPUT_LIMIT = 64  # MiB
#: Language standards a ``[languages]`` entry may name after the language (``cpp:gnu++20``,
#: ``c:c11``, ``java:8``): the value gcc's ``-std=`` takes, replacing the default standard of
#: that program, or the Java release javac's ``--release`` holds it to.
STANDARDS = {
    "c": re.compile(r"(c|gnu)(89|90|99|11|17|18|2x|23)|iso9899:(1990|1999|2011|2017)"),
    "cpp": re.compile(r"(c|gnu)\+\+(98|03|0x|11|1y|14|1z|17|2a|20|2b|23)"),
    # a Java release (``java:8``, ``java:21``): javac's ``--release``
    "java": re.compile(r"[1-9]\d?"),
}


def split_language(name: str) -> tuple[str, str | None]:
    """A ``[languages]`` value as (language, standard or None): ``cpp:gnu++20`` ->
    ``("cpp", "gnu++20")``."""
    lang, _, std = name.partition(":")
    return lang, std or None


#: How an interactor is called (``suitebench.run.interact.Convention``; the model does not
#: import the run layer).
INTERACTOR_CONVENTIONS = ("testlib", "kattis")


class CheckerKind(StrEnum):
    """Output comparison: the testlib-style built-ins, or a custom checker program."""

    EXACT = "exact"
    LINES = "lines"
    TOKENS = "tokens"
    FLOAT = "float"
    ICPC = "icpc"
    PROGRAM = "program"


BUILTIN_CHECKERS = ("exact", "lines", "tokens", "float:EPS", "icpc[:FLAGS]")
#: The words of ``icpc:FLAGS``: the problem package format's ``validator_flags`` (the default
#: output validator's arguments); the three tolerances take a number after them.
ICPC_FLAGS = ("case_sensitive", "space_change_sensitive")
ICPC_TOLERANCES = ("float_tolerance", "float_absolute_tolerance", "float_relative_tolerance")


class CheckerSpec(BaseModel):
    """A parsed ``checker`` field: a kind, the tolerance of ``float:EPS``, or a program path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: CheckerKind
    eps: float | None = None
    program: Path | None = None
    # icpc: the default output validator's flags (None: that tolerance is not given)
    case_sensitive: bool = False
    space_change_sensitive: bool = False
    float_absolute_tolerance: float | None = None
    float_relative_tolerance: float | None = None

    def label(self) -> str:
        if self.kind is CheckerKind.FLOAT:
            return f"float:{self.eps:g}"
        if self.kind is CheckerKind.ICPC:
            words = [f for f in ICPC_FLAGS if getattr(self, f)]
            for name in ("float_absolute_tolerance", "float_relative_tolerance"):
                value = getattr(self, name)
                if value is not None:
                    words.append(f"{name} {value:g}")
            return "icpc" + (":" + " ".join(words) if words else "")
        if self.kind is CheckerKind.PROGRAM:
            return f"program:{self.program.name if self.program else '?'}"
        return str(self.kind)


class OracleConfig(BaseModel):
    """``[oracle]``: the consensus_oracle's agreement rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: OracleRule = OracleRule.ALL_AGREE
    min_success: int = Field(default=2, ge=1)


class _TestsToml(BaseModel):
    model_config = ConfigDict(extra="forbid")

    official: str | list[str] | None = None
    samples: str | list[str] | None = None


class _ProblemToml(BaseModel):
    """The file as written; paths are still relative strings and globs."""

    model_config = ConfigDict(extra="forbid")

    id: str
    statement: str | None = None
    time_limit: float
    memory_limit: int
    checker: str = "tokens"
    validator: str | None = None
    references: str | list[str]
    brute: str | list[str] = Field(default_factory=list)
    brute_time_limit: float | None = None
    generator: str | None = None
    interactor: str | None = None
    interactor_convention: str = "testlib"
    allowance: float = 0.5
    tolerance: float = 1e-6
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    exit_status: str = "judge"
    compile: dict[str, Any] = Field(default_factory=dict)
    languages: dict[str, Any] = Field(default_factory=dict)
    pools: dict[str, str | list[str]] = Field(default_factory=dict)
    tests: _TestsToml = Field(default_factory=_TestsToml)
    oracle: OracleConfig = Field(default_factory=OracleConfig)

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not ID_RE.match(value):
            raise ValueError("letters, digits, '_', '-', '.' (used in file names)")
        return value


class Problem(BaseModel):
    """A loaded problem with every path resolved to existing absolute files.

    ``pools`` maps a pool name (``accepted``, ``rejected``, any other) to its submission files;
    ``official`` and ``samples`` are the official and sample test inputs in name order.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    root: Path
    toml_path: Path
    statement: Path | None
    time_limit: float
    memory_limit: int
    checker: CheckerSpec
    validator: Path | None
    references: tuple[Path, ...]
    brute: tuple[Path, ...]
    brute_time_limit: float
    generator: Path | None
    allowance: float
    tolerance: float
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    exit_status: ExitStatus = ExitStatus.JUDGE
    compile: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    defines: tuple[str, ...] = DEFAULT_DEFINES  # ``[compile] defines``: -D of C and C++ builds
    languages: tuple[tuple[str, str], ...] = ()
    pools: dict[str, tuple[Path, ...]]
    official: tuple[Path, ...]
    samples: tuple[Path, ...]
    oracle: OracleConfig
    #: An interactive problem's interactor (a program path) and how it is called:
    #: ``testlib`` (``interactor input output answer``, exit 0 OK / 1 WA / 2 PE / 3 FAIL) or
    #: ``kattis`` (``validator input answer feedback_dir``, exit 42 accept / 43 reject).
    interactor: Path | None = None
    interactor_convention: str = "testlib"

    def language_of(self, path: Path) -> str | None:
        """The language ``[languages]`` gives ``path`` (the first glob that matches it), with
        its standard where one is named (``cpp:gnu++20``, :func:`split_language`), or None:
        its extension decides."""
        return _language_in(self.languages, self.root, path)

    def rel(self, path: Path) -> str:
        """A path as written relative to the problem root (the stable id of a program)."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def parse_icpc_flags(text: str) -> dict[str, Any]:
    """The problem package format's ``validator_flags`` (``case_sensitive float_tolerance
    1e-6``, space-separated as in ``problem.yaml``) as :class:`CheckerSpec` fields; a word the
    default output validator does not take, or a tolerance without a number >= 0, raises
    ``ValueError`` naming it. ``float_tolerance X`` sets both tolerances, as the format says."""
    out: dict[str, Any] = {}
    words = text.replace(",", " ").split()
    i = 0
    while i < len(words):
        w = words[i]
        if w in ICPC_FLAGS:
            out[w] = True
        elif w in ICPC_TOLERANCES:
            try:
                eps = float(words[i + 1])
            except (IndexError, ValueError):
                eps = math.nan
            if not math.isfinite(eps) or eps < 0:
                raise ValueError(f"{w} needs a number >= 0 after it")
            i += 1
            if w != "float_relative_tolerance":
                out["float_absolute_tolerance"] = eps
            if w != "float_absolute_tolerance":
                out["float_relative_tolerance"] = eps
        else:
            known = ", ".join((*ICPC_FLAGS, *ICPC_TOLERANCES))
            raise ValueError(f"unknown flag {w!r} (flags: {known})")
        i += 1
    return out


def parse_checker(value: str, root: Path, file: Path) -> CheckerSpec:
    """``exact | lines | tokens | float:EPS | icpc[:FLAGS]`` or the path of a checker
    program."""
    v = value.strip()
    if v in ("exact", "lines", "tokens"):
        return CheckerSpec(kind=CheckerKind(v))
    if v == "icpc" or v.startswith("icpc:"):
        try:
            flags = parse_icpc_flags(v.partition(":")[2])
        except ValueError as exc:
            raise ProblemError(file, "checker", f"icpc:FLAGS with {exc}; got {v!r}") from None
        return CheckerSpec(kind=CheckerKind.ICPC, **flags)
    if v.startswith("float:"):
        try:
            eps = float(v.split(":", 1)[1])
        except ValueError:
            eps = math.nan
        if not math.isfinite(eps) or eps < 0:
            raise ProblemError(file, "checker", f"float:EPS with EPS a number >= 0, got {v!r}")
        return CheckerSpec(kind=CheckerKind.FLOAT, eps=eps)
    path = (root / v).resolve()
    if not (path.is_file() or (path / "build.sh").is_file()):
        raise ProblemError(
            file,
            "checker",
            f"one of {', '.join(BUILTIN_CHECKERS)} or an existing checker program (a source "
            "file, or a directory with a build.sh); "
            f"{path} does not exist",
        )
    return CheckerSpec(kind=CheckerKind.PROGRAM, program=path)


def _globs(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _expand(
    patterns: list[str], root: Path, file: Path, field: str, *, required: bool
) -> tuple[Path, ...]:
    """Resolve globs to sorted unique files; each pattern must match when ``required``."""
    out: list[Path] = []
    for pat in patterns:
        hits = sorted(Path(p).resolve() for p in glob.glob(str(root / pat), recursive=True))
        hits = [h for h in hits if h.is_file() or (h.is_dir() and (h / "build.sh").is_file())]
        if not hits and required:
            raise ProblemError(file, field, f"glob {pat!r} matches no file under {root}")
        out.extend(hits)
    return tuple(dict.fromkeys(out))


def _file(value: str | None, root: Path, file: Path, field: str) -> Path | None:
    if value is None:
        return None
    path = (root / value).resolve()
    if not path.exists():
        raise ProblemError(file, field, f"an existing file; {path} does not exist")
    return path


def _compile_flags(table: dict[str, Any], file: Path) -> dict[str, tuple[str, ...]]:
    """``[compile]``: one key per compiled language, each a list of flags (strings); the
    ``defines`` key (:func:`_defines`) is not a language and is left out."""
    out: dict[str, tuple[str, ...]] = {}
    for lang, flags in table.items():
        if lang == "defines":
            _defines(table, file)
            continue
        if lang not in COMPILE_LANGUAGES:
            raise ProblemError(
                file,
                f"compile.{lang}",
                f"a compiled language ({', '.join(COMPILE_LANGUAGES)}) or defines",
            )
        if not isinstance(flags, list) or not all(isinstance(f, str) and f for f in flags):
            raise ProblemError(
                file,
                f"compile.{lang}",
                f'a list of compiler flags, e.g. ["-O0", "-std=gnu99"]; got {flags!r}',
            )
        out[lang] = tuple(flags)
    return out


def _defines(table: dict[str, Any], file: Path) -> tuple[str, ...]:
    """``[compile] defines``: the macros (``NAME`` or ``NAME=VALUE``) C and C++ programs are
    compiled with, default :data:`DEFAULT_DEFINES`; ``[]`` defines none."""
    raw = table.get("defines", list(DEFAULT_DEFINES))
    if not isinstance(raw, list) or not all(
        isinstance(d, str) and _DEFINE_RE.fullmatch(d) for d in raw
    ):
        raise ProblemError(
            file,
            "compile.defines",
            f'a list of macro names (NAME or NAME=VALUE), e.g. ["ONLINE_JUDGE"]; got {raw!r}',
        )
    return tuple(raw)


def _languages(table: dict[str, Any], root: Path, file: Path) -> tuple[tuple[str, str], ...]:
    """``[languages]``: glob (relative to the problem) -> language name, in the file's order;
    each glob must match a file or a build.sh directory."""
    out: list[tuple[str, str]] = []
    for pattern, lang in table.items():
        field = f'languages."{pattern}"'
        if not pattern or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ProblemError(
                file, field, "a glob relative to the problem directory (not absolute, no '..')"
            )
        base, _, std = lang.partition(":") if isinstance(lang, str) else ("", "", "")
        if std and base in STANDARDS:
            if not STANDARDS[base].fullmatch(std):
                what = "a Java release (8, 11, 17, 21)" if base == "java" else "a gcc -std value"
                raise ProblemError(file, field, f"{base}:STANDARD with {what}; got {lang!r}")
            lang = base
        if not isinstance(lang, str) or lang not in LANGUAGES:
            hint = ""
            if isinstance(lang, str) and lang.startswith("python2"):
                hint = "; there is no Python 2 interpreter: leave such programs out"
            raise ProblemError(
                file, field, f"a language name, one of {', '.join(LANGUAGES)}; got {lang!r}{hint}"
            )
        _expand([pattern], root, file, field, required=True)
        out.append((pattern, f"{lang}:{std}" if std else lang))
    return tuple(out)


def _glob_matches(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether a relative path (its parts) is one ``glob.glob(pattern, recursive=True)`` would
    list: ``*``, ``?`` and ``[...]`` within one part, ``**`` for any number of parts, and no
    wildcard matching a leading dot. Matching the path beats expanding the glob once per
    program (a pool of a thousand files asked a thousand times)."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(
            _glob_matches(rest, parts[k:])
            for k in range(len(parts) + 1)
            if not any(p.startswith(".") for p in parts[:k])
        )
    if not parts:
        return False
    if parts[0].startswith(".") and not head.startswith("."):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and _glob_matches(rest, parts[1:])


def _language_in(table: tuple[tuple[str, str], ...], root: Path, path: Path) -> str | None:
    target = Path(path).absolute()
    rels = []
    for t in dict.fromkeys((target, target.resolve())):
        with contextlib.suppress(ValueError):
            rels.append(t.relative_to(root).parts)
    for pattern, lang in table:
        parts = tuple(p for p in Path(pattern).parts if p != ".")
        if any(_glob_matches(parts, rel) for rel in rels):
            return lang
    return None


_declared: dict[tuple[str, int, int], tuple[tuple[tuple[str, str], ...], tuple[str, ...]]] = {}


def _holding(path: str | Path) -> tuple[Path, tuple[tuple[str, str], ...], tuple[str, ...]] | None:
    """The problem directory nearest above ``path`` with its ``[languages]`` table and its
    ``[compile] defines``, read once per version of its ``problem.toml`` (None: no problem)."""
    target = Path(path).absolute()
    for parent in target.parents:
        file = parent / PROBLEM_FILE
        try:
            st = file.stat()
        except OSError:
            continue
        key = (str(file), st.st_mtime_ns, st.st_size)
        tables = _declared.get(key)
        if tables is None:
            try:
                data = tomllib.loads(file.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ProblemError(file, "(syntax)", f"valid TOML: {exc}") from None
            raw = data.get("languages", {})
            if not isinstance(raw, dict):
                raise ProblemError(file, "languages", 'a table of glob = "language" entries')
            comp = data.get("compile", {})
            if not isinstance(comp, dict):
                raise ProblemError(file, "compile", "a table of language = [flags] entries")
            tables = _declared[key] = (_languages(raw, parent, file), _defines(comp, file))
        return parent, *tables
    return None


def declared_language(path: str | Path) -> str | None:
    """The language the ``[languages]`` table of the problem holding ``path`` gives it, or
    None (its extension decides).

    The problem holding a program is the nearest directory above it with a ``problem.toml``:
    the engine builds programs by path, and a table's globs are relative to that directory.
    The table is read once per version of the file; a malformed one raises ``ProblemError``.
    """
    held = _holding(path)
    return None if held is None else _language_in(held[1], held[0], Path(path).absolute())


def declared_defines(path: str | Path) -> tuple[str, ...]:
    """The macros a C or C++ program at ``path`` is compiled with: the ``[compile] defines``
    of the problem holding it, :data:`DEFAULT_DEFINES` where it gives none or no problem holds
    the program (a tool or a solution given by path is built as a judge builds it)."""
    held = _holding(path)
    return DEFAULT_DEFINES if held is None else held[2]


def _pydantic_error(file: Path, exc: ValidationError) -> ProblemError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "(root)"
    if err["type"] == "extra_forbidden":
        return ProblemError(file, field, "unknown key (not part of problem.toml)")
    if err["type"] == "missing":
        return ProblemError(file, field, "required but missing")
    return ProblemError(file, field, f"{err['msg']} (got {err.get('input')!r})")


def load_problem(path: str | Path) -> Problem:
    """Load and check a problem from its directory or its ``problem.toml``."""
    p = Path(path)
    file = p / PROBLEM_FILE if p.is_dir() else p
    file = file.absolute()
    if not file.is_file():
        raise ProblemError(file, "(file)", "a problem directory containing problem.toml")
    root = file.parent
    try:
        data: dict[str, Any] = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProblemError(file, "(syntax)", f"valid TOML: {exc}") from None
    try:
        raw = _ProblemToml.model_validate(data)
    except ValidationError as exc:
        raise _pydantic_error(file, exc) from None

    if not (math.isfinite(raw.time_limit) and 0 < raw.time_limit <= 600):
        raise ProblemError(file, "time_limit", f"seconds in (0, 600], got {raw.time_limit}")
    if not 1 <= raw.memory_limit <= 65536:
        raise ProblemError(file, "memory_limit", f"MiB in [1, 65536], got {raw.memory_limit}")
    if not (math.isfinite(raw.allowance) and 0 <= raw.allowance <= 60):
        raise ProblemError(file, "allowance", f"seconds in [0, 60], got {raw.allowance}")
    if not (math.isfinite(raw.tolerance) and raw.tolerance >= 0):
        raise ProblemError(file, "tolerance", f"a number >= 0, got {raw.tolerance}")
    brute_tl = raw.brute_time_limit if raw.brute_time_limit is not None else 10 * raw.time_limit
    if not (math.isfinite(brute_tl) and 0 < brute_tl <= 3600):
        raise ProblemError(file, "brute_time_limit", f"seconds in (0, 3600], got {brute_tl}")

    if not 1 <= raw.output_limit <= 4096:
        raise ProblemError(file, "output_limit", f"MiB in [1, 4096], got {raw.output_limit}")
    try:
        exit_status = ExitStatus(raw.exit_status)
    except ValueError:
        raise ProblemError(
            file, "exit_status", f'"judge" or "ignore", got {raw.exit_status!r}'
        ) from None
    if raw.interactor_convention not in INTERACTOR_CONVENTIONS:
        raise ProblemError(
            file,
            "interactor_convention",
            f"one of {', '.join(INTERACTOR_CONVENTIONS)}, got {raw.interactor_convention!r}",
        )
    compile_flags = _compile_flags(raw.compile, file)
    languages = _languages(raw.languages, root, file)

    refs_globs = _globs(raw.references)
    if not refs_globs:
        raise ProblemError(file, "references", "at least one reference solution (glob)")
    references = _expand(refs_globs, root, file, "references", required=True)
    pools: dict[str, tuple[Path, ...]] = {}
    for name, pats in raw.pools.items():
        if not ID_RE.match(name):
            raise ProblemError(file, f"pools.{name}", "a pool name of letters, digits, '_-.'")
        pools[name] = _expand(_globs(pats), root, file, f"pools.{name}", required=True)
    official = _expand(_globs(raw.tests.official), root, file, "tests.official", required=True)
    samples = _expand(_globs(raw.tests.samples), root, file, "tests.samples", required=True)
    return Problem(
        id=raw.id,
        root=root,
        toml_path=file,
        statement=_file(raw.statement, root, file, "statement"),
        time_limit=raw.time_limit,
        memory_limit=raw.memory_limit,
        checker=parse_checker(raw.checker, root, file),
        validator=_file(raw.validator, root, file, "validator"),
        references=references,
        brute=_expand(_globs(raw.brute), root, file, "brute", required=True),
        brute_time_limit=brute_tl,
        generator=_file(raw.generator, root, file, "generator"),
        allowance=raw.allowance,
        tolerance=raw.tolerance,
        output_limit=raw.output_limit,
        exit_status=exit_status,
        compile=compile_flags,
        defines=_defines(raw.compile, file),
        languages=languages,
        pools=pools,
        official=official,
        samples=samples,
        oracle=raw.oracle,
        interactor=_file(raw.interactor, root, file, "interactor"),
        interactor_convention=raw.interactor_convention,
    )
