"""Toolchains: turn a program's sources into something the sandbox can run.

A program's identity is a hash of its sources, its recipe (the build command) and the version
of the toolchain that builds it; builds are cached under that hash, so the hundreds of mutants
and submissions of a benchmark are compiled once and a second ``build`` is a dictionary look-up
and a ``stat``. Compilers read untrusted input too, so every build runs sandboxed. A program that
does not compile is an outcome (``build_error`` with the compiler's message), never an exception
that stops a batch.

Python programs run with one fixed interpreter by absolute path (by default the one running
suitebench) with ``-E -s``: environment variables and the user's site directory cannot change
what a program does, but the script's own directory stays importable (``-I`` would drop it and
break multi-file programs) and installed packages remain available.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from suitebench.run.outcome import Limits, Status

RECIPE_VERSION = "1"  # bump when a recipe changes in a way the command line does not show

BUILD_LIMITS = Limits(
    wall_time=60.0,
    memory_mb=2048,
    output_bytes=1024 * 1024,
    file_size_bytes=512 * 1024 * 1024,
    processes=64,
    network=False,
)


class Language(StrEnum):
    C = "c"
    CPP = "cpp"
    PYTHON = "python"
    SHELL = "shell"
    RUST = "rust"
    GO = "go"
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
}

EXECUTABLE = "executable"

# The languages whose recipe runs a compiler, so that compile flags mean something.
COMPILED = (Language.C, Language.CPP, Language.RUST, Language.GO)


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
    -std=gnu17``/``-std=gnu++17 -pipe``; Rust: ``-O --edition 2021``; Go: none), e.g.
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
        if self.compile_flags is not None and self.language not in COMPILED:
            raise ToolchainError(
                f"{self.root}: compile flags given for a {self.language} program "
                f"(only {', '.join(map(str, COMPILED))} take compile flags)"
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
        backend hides /tmp, where a cache may live) and, for Python, the interpreter's own
        installation (which may sit in a home directory the sandbox user cannot enter)."""
        binds = [str(self.workdir)]
        if self.language is Language.PYTHON and self.argv:
            binds.extend(_interpreter_roots(self.argv[0]))
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


def _units(language: Language, sources: Sequence[str]) -> tuple[str, ...]:
    """The files a recipe hands to the compiler (C/C++ translation units, Go files of the top
    directory without tests, Python modules, ...)."""
    exts = {e for e, lg in EXTENSIONS.items() if lg is language}
    units = tuple(s for s in sources if Path(s).suffix.lower() in exts)
    if not units and len(sources) == 1:
        units = tuple(sources)  # one file whose language was given explicitly
    if language is Language.GO:
        units = tuple(s for s in units if "/" not in s and not s.endswith("_test.go"))
    return units


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
        langs = {EXTENSIONS[Path(f).suffix.lower()] for f in files if Path(f).suffix in EXTENSIONS}
        if len(langs) != 1:
            raise ToolchainError(
                f"{p}: cannot tell the language (found {sorted(map(str, langs)) or 'none'}); "
                "pass language= or add a build.sh"
            )
        lang = langs.pop()
    units = _units(lang, files)
    if not units:
        raise ToolchainError(f"{p}: no {lang} sources")
    entry: str | None = None
    if lang is Language.PYTHON:
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


# -- toolchain versions (part of a program's identity) -----------------------------------------


@functools.cache
def _first_line(*argv: str) -> str:
    try:
        cp = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (cp.stdout or cp.stderr).decode("utf-8", "replace").strip()
    return text.splitlines()[0] if cp.returncode == 0 and text else ""


def default_interpreter() -> str:
    """The Python that runs Python programs: this one, by absolute path (not resolved, so a
    virtual environment's packages stay visible)."""
    return os.path.abspath(sys.executable)


@functools.cache
def _rustc() -> str | None:
    """The real rustc (not the rustup proxy, which needs $HOME inside the sandbox)."""
    exe = shutil.which("rustc")
    if exe is None:
        return None
    try:
        cp = subprocess.run([exe, "--print", "sysroot"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if cp.returncode != 0:
        return None
    real = Path(cp.stdout.decode().strip()) / "bin" / "rustc"
    return str(real) if real.is_file() else exe


def compiler(language: Language) -> str | None:
    """Absolute path of the tool that builds ``language`` here, or None if absent."""
    if language is Language.C:
        return shutil.which("gcc")
    if language is Language.CPP:
        return shutil.which("g++")
    if language is Language.RUST:
        return _rustc()
    if language is Language.GO:
        return shutil.which("go")
    if language is Language.SHELL:
        return "/bin/sh"
    if language is Language.PYTHON:
        return default_interpreter()
    return shutil.which("bash")


def _interpreter_roots(interpreter: str) -> list[str]:
    """The installation a Python interpreter needs: its prefix and, for a virtual
    environment, the base installation it links to."""
    roots = [Path(interpreter).absolute().parent.parent]
    real = Path(os.path.realpath(interpreter))
    roots.append(real.parent.parent)
    return [str(r) for r in dict.fromkeys(roots) if str(r) not in ("/", "/usr")]


def toolchain_binds(language: Language, interpreter: str | None = None) -> list[str]:
    """Directories a sandboxed build must see read-only: the toolchain's installation when
    it is not a system one (rustup and Go live in home directories the sandbox user cannot
    enter; gcc in /usr needs nothing)."""
    if language is Language.PYTHON:
        return _interpreter_roots(interpreter or default_interpreter())
    tool = compiler(language)
    if tool is None or language not in (Language.RUST, Language.GO):
        return []
    root = Path(os.path.realpath(tool)).parent.parent
    return [] if str(root) in ("/", "/usr", "/usr/local") else [str(root)]


def toolchain_version(language: Language, interpreter: str | None = None) -> str:
    """First line of the toolchain's version output ('' if the toolchain is missing)."""
    tool = interpreter if language is Language.PYTHON and interpreter else compiler(language)
    if tool is None:
        return ""
    if language is Language.GO:
        return _first_line(tool, "version")
    if language is Language.SHELL:
        bash = shutil.which("bash")
        return "sh;" + (_first_line(bash, "--version") if bash else "")
    if language is Language.PYTHON:
        return _first_line(tool, "-VV")
    return _first_line(tool, "--version")


def available(language: Language | str) -> tuple[bool, str]:
    """Whether programs in ``language`` can be built here, and if not, why."""
    lang = Language(language)
    tool = compiler(lang)
    if tool is None:
        return False, f"no {lang} toolchain found on PATH"
    return True, toolchain_version(lang) or tool


# -- recipes ---------------------------------------------------------------------------------


def _shell_for(script: Path) -> str:
    try:
        first = script.read_bytes()[:200].split(b"\n", 1)[0]
    except OSError:
        first = b""
    if first.startswith(b"#!") and b"bash" in first:
        return shutil.which("bash") or "/bin/bash"
    return "/bin/sh"


_PY_CHECK = (
    "import sys,traceback\n"
    "bad=0\n"
    "for f in sys.argv[1:]:\n"
    "    try:\n"
    "        compile(open(f,'rb').read(),f,'exec',dont_inherit=True)\n"
    "    except (SyntaxError,ValueError) as e:\n"
    "        bad=1; sys.stderr.write(''.join(traceback.format_exception_only(type(e),e)))\n"
    "sys.exit(bad)\n"
)


# Judge flags: optimised, a fixed language standard, dynamic linking (static buys nothing here).
_CC: dict[Language, tuple[str, tuple[str, ...], str]] = {
    Language.C: ("gcc", ("-O2", "-std=gnu17", "-pipe"), "c"),
    Language.CPP: ("g++", ("-O2", "-std=gnu++17", "-pipe"), "c++"),
}


def recipe(program: Program) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(build_argv, run_argv_relative)``: the build command (relative paths, run in the build
    directory) and how to run the result ('{dir}' = build dir)."""
    lang = program.language
    srcs = list(program.sources)
    # "./" keeps a file named like an option ("-o.c") from being read as one.
    units = ["./" + u for u in _units(lang, srcs)]
    exe = "./" + EXECUTABLE
    run_exe = ("{dir}/" + EXECUTABLE,)
    if lang is Language.SCRIPT or program.build_command:
        if not program.build_command:
            raise ToolchainError(f"{program.root}: a build-script program needs a build command")
        return program.build_command, run_exe
    own = program.compile_flags
    if lang in _CC:
        cc, flags, x = _CC[lang]
        flags = flags if own is None else own
        # -x: a file whose language was given explicitly compiles whatever its extension.
        return ((cc, *flags, "-o", exe, "-x", x, *units, "-x", "none", "-lm"), run_exe)
    if lang is Language.RUST:
        main = "./" + (program.entry or units[0][2:])
        rflags = ("-O", "--edition", "2021") if own is None else own
        return (("rustc", *rflags, "-o", exe, main), run_exe)
    if lang is Language.GO:
        return (("go", "build", *(own or ()), "-o", exe, *units), run_exe)
    if lang is Language.PYTHON:
        interp = program.interpreter or default_interpreter()
        entry = program.entry or units[0][2:]
        return (
            (interp, "-E", "-s", "-c", _PY_CHECK, *units),
            (interp, "-E", "-s", "{dir}/" + entry),
        )
    if lang is Language.SHELL:
        entry = program.entry or srcs[0]
        shell = _shell_for(program.root / entry)
        return ((shell, "-n", "./" + entry), (shell, "{dir}/" + entry))
    raise ToolchainError(f"no recipe for {lang}")  # pragma: no cover


# -- identity --------------------------------------------------------------------------------

_hash_cache: dict[str, tuple[tuple[int, int, int, int], str]] = {}
_hash_lock = threading.Lock()


def _file_sha(path: Path) -> str:
    """sha256 of a file plus its executable bit, remembered by (inode, size, mtime, mode) so a
    re-build only stats. The executable bit is part of a program (a helper script a build.sh
    runs directly), the rest of the mode is not."""
    st = path.stat()
    sig = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
    k = str(path)
    with _hash_lock:
        hit = _hash_cache.get(k)
    if hit is not None and hit[0] == sig:
        return hit[1]
    digest = ("x:" if st.st_mode & 0o111 else "f:") + hashlib.sha256(path.read_bytes()).hexdigest()
    with _hash_lock:
        _hash_cache[k] = (sig, digest)
    return digest


def program_id(program: Program) -> str:
    """sha256 over source bytes (with relative paths), recipe and toolchain version."""
    h = hashlib.sha256()
    build_argv, run_argv = recipe(program)
    meta = {
        "recipe_version": RECIPE_VERSION,
        "language": str(program.language),
        "build": list(build_argv),
        "run": list(run_argv),
        "toolchain": toolchain_version(program.language, program.interpreter),
        "entry": program.entry,
    }
    h.update(json.dumps(meta, sort_keys=True).encode())
    for rel in sorted(program.sources):
        src = program.root / rel
        try:
            digest = _file_sha(src)
        except OSError as exc:
            raise ToolchainError(f"{src}: cannot read source: {exc}") from exc
        h.update(f"\0{rel}\0{digest}".encode())
    return h.hexdigest()


# -- building --------------------------------------------------------------------------------

_built_memo: dict[tuple[str, str], Built] = {}
_memo_lock = threading.Lock()
_META = "built.json"


def _resolve(argv: Sequence[str]) -> list[str]:
    """Absolute paths for the tools of a recipe (the sandbox gets a minimal PATH)."""
    out = list(argv)
    if not out:
        return out
    tool = out[0]
    if tool == "rustc":
        out[0] = _rustc() or tool
    elif not os.path.isabs(tool) and not tool.startswith("./"):
        out[0] = shutil.which(tool) or tool
    return out


_SCRATCH = ".suitebench-scratch"  # compiler temp files, Go caches: removed after the build


def _build_env(builddir: Path) -> dict[str, str]:
    """A fixed, minimal environment: the build must not depend on the caller's shell.

    Temporary files go to a scratch directory inside the build directory: the sandbox's own
    /tmp may be private and not writable by its unprivileged user, and gcc writes its object
    files there before linking.
    """
    scratch = builddir / _SCRATCH
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(scratch),
        "TMPDIR": str(scratch / "tmp"),
        "GOCACHE": str(scratch / "gocache"),
        "GOPATH": str(scratch / "gopath"),
        "GOTMPDIR": str(scratch / "tmp"),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-buildvcs=false",
        "GO111MODULE": "auto",
        "CARGO_NET_OFFLINE": "true",
    }


def _load_cached(final: Path, pid: str) -> Built | None:
    meta = final / _META
    try:
        d = json.loads(meta.read_text())
    except (OSError, ValueError):
        return None
    if d.get("program_id") != pid:
        return None
    built = Built.from_dict(d)
    # The entry may have been built where the cache used to be: paths follow the directory.
    old = d.get("workdir", "")
    argv = tuple(a.replace(old, str(final)) if old else a for a in built.argv)
    return dataclasses.replace(built, workdir=final, cached=True, argv=argv)


def build(
    program: Program,
    *,
    cache_dir: str | os.PathLike[str],
    limits: Limits = BUILD_LIMITS,
    ro_binds: Sequence[str | os.PathLike[str]] = (),
) -> Built:
    """Build ``program`` (sandboxed) into ``cache_dir/<program_id>/``, or return the cached build.

    The build happens in a temporary directory next to the cache entry and is renamed into
    place when complete, so a crash never leaves a half-built entry and two concurrent builds of
    the same program both succeed. Build errors are cached too (compilers are deterministic);
    a timed-out or harness-failed build is not. ``ro_binds`` are extra paths the build must
    see (e.g. a toolchain a ``build.sh`` uses from a home directory); they are not part of the
    program's identity.
    """
    cache = Path(cache_dir).absolute()
    pid = program_id(program)
    memo_key = (str(cache), pid)
    with _memo_lock:
        hit = _built_memo.get(memo_key)
    final = cache / pid
    if hit is not None and (final / _META).exists():
        return hit
    cached = _load_cached(final, pid)
    if cached is not None:
        with _memo_lock:
            _built_memo[memo_key] = cached
        return cached

    ok, why = available(program.language)
    if program.language is not Language.SCRIPT and not program.build_command and not ok:
        return Built(pid, Status.BUILD_ERROR, (), final, why, program.language)

    cache.mkdir(parents=True, exist_ok=True)
    _sweep_stale(cache)
    tmp = Path(tempfile.mkdtemp(prefix=f".build-{pid[:16]}-", dir=cache))
    try:
        binds = [*toolchain_binds(program.language, program.interpreter), *map(str, ro_binds)]
        built, cacheable = _build_into(program, pid, tmp, final, limits, binds)
        if not cacheable:
            return built
        (tmp / _META).write_text(json.dumps(built.to_dict(), sort_keys=True, indent=1))
        try:
            os.rename(tmp, final)
        except OSError:
            # Someone else finished the same build first: theirs is as good as ours.
            again = _load_cached(final, pid)
            if again is None:
                raise
            built = again
        else:
            tmp = final  # nothing to clean up
        built = dataclasses.replace(built, cached=False)
        with _memo_lock:
            _built_memo[memo_key] = dataclasses.replace(built, cached=True)
        return built
    finally:
        if tmp != final:
            shutil.rmtree(tmp, ignore_errors=True)


_swept: set[Path] = set()
STALE_SECONDS = 3600.0


def _sweep_stale(cache: Path) -> None:
    """Remove build directories a killed process left behind (once per cache per process)."""
    with _memo_lock:
        if cache in _swept:
            return
        _swept.add(cache)
    now = time.time()
    for p in cache.glob(".build-*"):
        with contextlib.suppress(OSError):
            if now - p.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(p, ignore_errors=True)


def _build_into(
    program: Program, pid: str, tmp: Path, final: Path, limits: Limits, binds: Sequence[str]
) -> tuple[Built, bool]:
    from suitebench.run import sandbox

    for rel in program.sources:
        dst = tmp / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(program.root / rel, dst)
    build_argv, run_argv = recipe(program)
    t0 = time.monotonic()
    message = ""
    status = Status.OK
    cacheable = True
    if build_argv:
        # The build may run as an unprivileged user: let it write its own directory for now;
        # _seal() takes ownership back afterwards.
        (tmp / _SCRATCH / "tmp").mkdir(parents=True, exist_ok=True)
        for d in (tmp, tmp / _SCRATCH, tmp / _SCRATCH / "tmp"):
            d.chmod(0o777)
        outcome = sandbox.run(
            _resolve(build_argv),
            cwd=tmp,
            env=_build_env(tmp),
            limits=limits,
            stdin=b"",
            ro_binds=binds,
        )
        shutil.rmtree(tmp / _SCRATCH, ignore_errors=True)
        text = (outcome.stderr + outcome.stdout).decode("utf-8", "replace").strip()
        if outcome.status is Status.OK:
            message = text
        elif outcome.status is Status.SANDBOX_ERROR:
            status, cacheable = Status.SANDBOX_ERROR, False
            message = f"build could not run: {outcome.message}\n{text}".strip()
        elif outcome.status is Status.TIMEOUT:
            # Limits are not part of the identity: a build that ran out of time or memory may
            # succeed with more, so it is reported but not cached.
            status, cacheable = Status.BUILD_ERROR, False
            message = f"build timed out after {outcome.wall_time:.1f}s\n{text}".strip()
        elif outcome.status is Status.MEMORY:
            status, cacheable = Status.BUILD_ERROR, False
            message = f"build ran out of memory ({limits.memory_mb} MiB)\n{text}".strip()
        else:
            status = Status.BUILD_ERROR
            how = (
                f"exit code {outcome.exit_code}"
                if outcome.exit_code is not None
                else f"{outcome.status} (signal {outcome.signal})"
            )
            message = f"build failed ({how})\n{text}".strip()
    needs_exe = run_argv[0] == "{dir}/" + EXECUTABLE
    if status is Status.OK and needs_exe:
        exe = tmp / EXECUTABLE
        if not exe.is_file():
            status = Status.BUILD_ERROR
            message = (f"the build did not leave ./{EXECUTABLE}\n" + message).strip()
        elif not os.access(exe, os.X_OK):
            exe.chmod(exe.stat().st_mode | 0o111)
    _seal(tmp)
    argv = tuple(a.replace("{dir}", str(final)) for a in run_argv) if status is Status.OK else ()
    seconds = time.monotonic() - t0
    built = Built(pid, status, argv, final, message, program.language, seconds, False)
    return built, cacheable


def _seal(root: Path) -> None:
    """Make a finished build ours and read-only to everybody else.

    The sandboxed build may have run as an unprivileged user who then owns what it wrote; a
    later untrusted run as that same user must not be able to change a cached artifact. So
    (when we can) ownership returns to us, write permission is ours alone, and everything stays
    readable (and executable where it was) for the sandboxed runs.
    """
    uid, gid = os.geteuid(), os.getegid()
    paths = [root]
    for dirpath, dirnames, filenames in os.walk(root):
        paths.extend(Path(dirpath) / d for d in dirnames)
        paths.extend(Path(dirpath) / f for f in filenames)
    for p in paths:
        with contextlib.suppress(OSError):
            st = p.lstat()
            if st.st_uid != uid and uid == 0:
                os.lchown(p, uid, gid)
            if stat.S_ISLNK(st.st_mode):
                continue
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                p.chmod(0o755)
            else:
                p.chmod((mode & ~0o022 & ~0o7000) | 0o644 | (0o111 if mode & 0o111 else 0))


def _build_error(program: Program, message: str, pid: str = "") -> Built:
    return Built(pid, Status.BUILD_ERROR, (), Path(), message, program.language)


def _build_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """A build as a plain-data job (for executors, including Dask workers)."""
    program = Program.from_dict(payload["program"])
    limits = Limits.from_dict(payload["limits"])
    try:
        built = build(
            program,
            cache_dir=payload["cache_dir"],
            limits=limits,
            ro_binds=payload.get("ro_binds", ()),
        )
    except ToolchainError as exc:
        built = _build_error(program, str(exc))
    return built.to_dict()


def build_many(
    programs: Iterable[Program],
    *,
    cache_dir: str | os.PathLike[str],
    limits: Limits = BUILD_LIMITS,
    ro_binds: Sequence[str | os.PathLike[str]] = (),
    executor: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Built]:
    """Build many programs in parallel (one result per program, in order).

    Identical programs are built once; cached ones cost a stat. A program whose sources
    cannot be read is a ``build_error`` naming the file, not an exception that stops the
    batch. ``executor`` is any :class:`~suitebench.run.executor.Executor` (default: a local
    pool, one worker per core).
    """
    from suitebench.run.executor import LocalExecutor

    progs = list(programs)
    cache = str(Path(cache_dir).absolute())
    ids: list[str | None] = []
    unreadable: dict[int, Built] = {}
    for i, prog in enumerate(progs):
        try:
            ids.append(program_id(prog))
        except ToolchainError as exc:
            ids.append(None)
            unreadable[i] = _build_error(prog, str(exc))
    first: dict[str, int] = {}
    for i, pid in enumerate(ids):
        if pid is not None:
            first.setdefault(pid, i)
    uniq = list(first)
    payloads = [
        {
            "program": progs[first[pid]].to_dict(),
            "cache_dir": cache,
            "limits": limits.to_dict(),
            "ro_binds": [str(b) for b in ro_binds],
        }
        for pid in uniq
    ]
    by_id: dict[str, Built] = {}
    own = executor is None
    ex = LocalExecutor() if own else executor
    try:
        if progress is not None:
            progress(0, len(uniq))
        for n, (i, d) in enumerate(ex.map_unordered(_build_payload, payloads), start=1):
            by_id[uniq[i]] = Built.from_dict(d)
            if progress is not None:
                progress(n, len(uniq))
    finally:
        if own:
            ex.close()
    return [unreadable[i] if pid is None else by_id[pid] for i, pid in enumerate(ids)]
