"""Toolchains per language family: which compiler or interpreter builds a language here, its
version (part of a program's identity), what a sandboxed build must see of it, and the recipe
(build command and run command) of each language.

Judge flags: optimised, a fixed language standard, dynamic linking; a program's
``compile_flags`` replace a compiled language's defaults.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from suitebench.run import jvm
from suitebench.run.program import (
    COMPILED,
    EXECUTABLE,
    Language,
    Program,
    ToolchainError,
    interpreter_roots,
    source_units,
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
def real_rustc() -> str | None:
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
        return real_rustc()
    if language is Language.GO:
        return shutil.which("go")
    if language is Language.SHELL:
        return "/bin/sh"
    if language is Language.PYTHON:
        return default_interpreter()
    if language is Language.PYPY3:
        found = shutil.which("pypy3")
        return None if found is None else os.path.realpath(found)
    if language is Language.JAVA:
        javac, java = jvm.java_tool("javac"), jvm.java_tool("java")
        return javac if javac and java and os.path.isfile(java) else None
    return shutil.which("bash")


def toolchain_binds(language: Language, interpreter: str | None = None) -> list[str]:
    """Directories a sandboxed build must see read-only: the toolchain's installation when
    it is not a system one (rustup and Go live in home directories, a gcc may live in /opt;
    the sandbox shows only the system's directories; gcc in /usr needs nothing)."""
    if language is Language.PYTHON:
        return interpreter_roots(interpreter or default_interpreter())
    if language is Language.PYPY3:
        tool = interpreter or compiler(language)
        return [] if tool is None else interpreter_roots(tool)
    if language is Language.JAVA:
        home = jvm.java_home()
        if home is None:
            return []
        own = [] if Path("/usr") in home.parents else [str(home)]
        return [*own, *jvm.config_dirs()]
    tool = compiler(language)
    if tool is None or language not in COMPILED:
        return []
    root = Path(os.path.realpath(tool)).parent.parent
    return [] if root == Path("/") or Path("/usr") in (root, *root.parents) else [str(root)]


def toolchain_version(language: Language, interpreter: str | None = None) -> str:
    """First line of the toolchain's version output ('' if the toolchain is missing)."""
    python = (Language.PYTHON, Language.PYPY3)
    tool = interpreter if language in python and interpreter else compiler(language)
    if tool is None:
        return ""
    if language is Language.JAVA:
        java = jvm.java_tool("java") or ""
        return f"{_first_line(tool, '-version')}; {_first_line(java, '-version')}"
    if language is Language.PYPY3:
        return _first_line(tool, "--version")
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
        return False, f"no {lang} toolchain found on PATH ({_INSTALL.get(lang, 'install one')})"
    return True, toolchain_version(lang) or tool


_INSTALL = {
    Language.JAVA: "apt-get install openjdk-17-jdk-headless",
    Language.PYPY3: "apt-get install pypy3",
}


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


def standard_flags(
    language: Language, standard: str, own: tuple[str, ...] | None
) -> tuple[str, ...]:
    """A C or C++ program's compiler flags with its language standard set to ``standard`` (a
    gcc ``-std=`` value): ``own`` flags (a problem's ``[compile]``) or the judge's defaults,
    any ``-std=`` among them replaced."""
    flags = _CC[language][1] if own is None else own
    return (*(f for f in flags if not f.startswith("-std=")), f"-std={standard}")


def with_defines(
    language: Language, own: tuple[str, ...] | None, defines: tuple[str, ...]
) -> tuple[str, ...]:
    """A C or C++ program's compiler flags (``own``, or the judge's defaults) with ``-DNAME``
    for each of ``defines`` in front, so a ``-U`` among the flags still wins (gcc reads -D and
    -U in order). Input mode defines ``ONLINE_JUDGE`` as DOMjudge and Codeforces do; suite
    mode never calls this (a task builds with its own script)."""
    flags = _CC[language][1] if own is None else own
    return (*(f"-D{d}" for d in defines), *flags)


def recipe(program: Program) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(build_argv, run_argv_relative)``: the build command (relative paths, run in the build
    directory) and how to run the result ('{dir}' = build dir)."""
    lang = program.language
    srcs = list(program.sources)
    # "./" keeps a file named like an option ("-o.c") from being read as one.
    units = ["./" + u for u in source_units(lang, srcs)]
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
    if lang is Language.JAVA:
        return _java_recipe(program, units)
    if lang in (Language.PYTHON, Language.PYPY3):
        interp = program.interpreter or (
            default_interpreter() if lang is Language.PYTHON else compiler(lang) or "pypy3"
        )
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


# javac itself is a JVM: the fewest threads and a class-data archive, as for the runs, and
# reservations that fit the build's RLIMIT_AS where no memory cgroup bounds it (by default the
# JVM reserves a gigabyte of class space and a quarter of the machine's RAM as heap).
_JAVAC_FLAGS = (
    "-encoding",
    "UTF-8",
    "-J-XX:+UseSerialGC",
    "-J-Xshare:auto",
    "-J-Xmx512m",
    "-J-XX:CompressedClassSpaceSize=128m",
    "-J-XX:ReservedCodeCacheSize=64m",
    "-d",
    ".",
)
# Stage a source under the name its public class demands (javac refuses ``sol.java`` holding
# ``public class Solution``), then compile it: $1 javac, $2 the source, $3 the staged name.
_STAGE_JAVA = (
    'javac="$1" src="$2" dst="$3"; shift 3; mkdir -p .java-src && cp "$src" ".java-src/$dst" '
    '&& exec "$javac" "$@" ".java-src/$dst"'
)


_NO_MAIN = (
    '"$@" || exit; echo "no class declares public static void main(String[]): nothing to run" >&2;'
    " exit 1"
)


@functools.lru_cache(maxsize=4096)
def _main_class_of(path: str, size: int, mtime_ns: int) -> jvm.MainClass:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return jvm.MainClass(None, None, None)
    return jvm.find_main_class(text)


def main_class(path: Path) -> jvm.MainClass:
    """The public class and the class with ``main`` of a Java source (remembered by size and
    modification time: a program's identity asks for it on every build)."""
    try:
        st = path.stat()
    except OSError:
        return jvm.MainClass(None, None, None)
    return _main_class_of(str(path), st.st_size, st.st_mtime_ns)


def _java_recipe(program: Program, units: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``javac`` once (classes into the build directory), then ``java`` on the class whose
    ``static void main`` the sources declare. One file is staged under its public class's
    name; the files of a directory already carry theirs. Sources that compile but declare no
    ``main`` are a build error, as on a judge (javac's own errors come first)."""
    javac = compiler(Language.JAVA) or "javac"
    java = jvm.java_tool("java") or "java"
    decls = [(u, main_class(program.root / u[2:])) for u in units]
    found = [d for d in decls if d[1].main is not None]
    unit, decl = next(
        (d for d in found if d[1].public == d[1].main), found[0] if found else decls[0]
    )
    flags = (*_JAVAC_FLAGS, *(program.compile_flags or ()))  # a release (--release N)
    build: tuple[str, ...] = (javac, *flags, *units)
    if len(units) == 1:
        name = Path(unit).name
        if decl.public is not None:
            staged = f"{decl.public}.java"
        elif name.endswith(".java"):
            staged = name  # without a public class, javac takes any file name
        else:
            staged = f"{(decl.main or 'Main').split('$')[0]}.java"
        if name != staged:
            build = ("/bin/sh", "-c", _STAGE_JAVA, "sh", javac, unit, staged, *flags)
    if decl.run_name is None:
        return ("/bin/sh", "-c", _NO_MAIN, "sh", *build), (java,)
    return build, (java, *jvm.JVM_FLAGS, "-cp", "{dir}", decl.run_name)
