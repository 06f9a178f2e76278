"""Java on the judge: where the JDK is, which class a source runs, and how one JVM run is
bounded.

A JVM is not a C program: it reserves gigabytes of address space it never touches (so
``RLIMIT_AS`` kills it at start-up), starts a dozen threads of its own (each counted by the
pids cgroup), and reports running out of heap as an exception, not as an allocation the kernel
refused. So a Java run gets, as judges do, a heap bound (``-Xmx``) derived from the run's
memory limit, below the memory cgroup by the JVM's own overhead; a fixed set of flags that
make its threads and memory the same on every machine; room for its threads in the process
limit; and its ``OutOfMemoryError`` read as the memory verdict. The build is independent of
the limits (the heap flags are added per run), so one compiled class serves every limit.

Why ``-XX:+ExitOnOutOfMemoryError`` rather than reading an uncaught exception off stderr: the
first ``OutOfMemoryError`` ends the JVM at once, with exit status 3 and the JVM's own line
``Terminating due to java.lang.OutOfMemoryError: <kind>`` as the last line of stderr
(``-XX:+DisplayVMOutputToStderr`` keeps it out of the judged stdout) -- whatever the program
does with the error: a ``catch (Throwable)`` that goes on half-broken, or another live thread
that would keep the JVM alive into a time-out once ``main`` died, would otherwise turn the same
memory overrun into WA, RE or TLE depending on how the program was written. Both facts (the
status and the line) are checked: a program that merely calls ``System.exit(3)`` prints no such
line.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "JVM_FLAGS",
    "JVM_THREADS",
    "MainClass",
    "config_dirs",
    "find_main_class",
    "heap_flags",
    "heap_mb",
    "is_jvm_run",
    "java_home",
    "java_tool",
    "out_of_memory",
    "stack_mb",
    "with_heap",
]

# Flags of every judged JVM (the heap and stack flags come per run, from the memory limit):
#   -XX:+UseSerialGC          one GC thread, no concurrent collector: the least memory and CPU
#                             beside the program, and the same on every machine;
#   -Xshare:auto              the JDK's class-data archive when it maps (a faster start);
#   -XX:CICompilerCount=2     the fewest JIT threads tiered compilation allows, on any core count;
#   -XX:-UsePerfData          no hsperfdata file in /tmp;
#   -XX:+ExitOnOutOfMemoryError, -XX:+DisplayVMOutputToStderr: see the module docstring;
#   -Dfile.encoding=UTF-8     the same bytes out whatever locale the run is given.
MARKER = "-XX:+ExitOnOutOfMemoryError"
JVM_FLAGS: tuple[str, ...] = (
    "-XX:+UseSerialGC",
    "-Xshare:auto",
    "-XX:CICompilerCount=2",
    "-XX:-UsePerfData",
    MARKER,
    "-XX:+DisplayVMOutputToStderr",
    "-Dfile.encoding=UTF-8",
)

# The JVM's own threads (main, VM thread, JIT compilers, reference handler, finalizer, signal
# dispatcher, service, sweeper, cleaner, ...: 14 measured with the flags above) plus headroom:
# added to a Java run's process limit, so the program keeps the processes the limit gives it.
JVM_THREADS = 32

# The JVM's memory beside the heap (metaspace, code cache, thread stacks in use, GC tables,
# the class-data archive): a heap of the whole limit would be killed by the memory cgroup
# before a collection could run, turning a program with a small live set into MLE.
_OVERHEAD_MB = 64
_STACK_MB = 64
_INITIAL_MB = 64  # -Xms: the same starting heap on every machine (the default is 1/64 of RAM)

_OOM_LINE = b"Terminating due to java.lang.OutOfMemoryError: "
# Kinds of OutOfMemoryError that are memory: not "unable to create native thread" (a process
# limit, a runtime error like any other refused fork).
_MEMORY_KINDS = (
    b"Java heap space",
    b"GC overhead limit exceeded",
    b"Requested array size exceeds VM limit",
    b"Metaspace",
    b"Compressed class space",
)
_EXIT_ON_OOM = 3  # the JVM's exit status under -XX:+ExitOnOutOfMemoryError


def heap_mb(memory_mb: int) -> int:
    """The heap bound (-Xmx, MiB) of a run limited to ``memory_mb``: the limit less the JVM's
    overhead (64 MiB, or a quarter of a smaller limit)."""
    return max(1, memory_mb - min(_OVERHEAD_MB, memory_mb // 4))


def stack_mb(memory_mb: int | None) -> int:
    """The thread stack (-Xss, MiB): 64 MiB as judges give it for deep recursion, or an eighth
    of a limit under 512 MiB. Unwinding a stack overflow costs the JVM up to five times its
    stack in native memory (measured on JDK 17: 64 MiB of C2-compiled frames, 360 MB RSS), so a
    64 MiB stack under a 256 MiB limit made the same overflow RE on one run and MLE on the
    next, as JIT timing decided."""
    if memory_mb is None:
        return _STACK_MB
    return max(1, min(_STACK_MB, memory_mb // 8))


def heap_flags(memory_mb: int | None) -> list[str]:
    """``-Xmx``/``-Xms`` (none without a limit) and ``-Xss`` for a run limited to
    ``memory_mb``."""
    stack = [f"-Xss{stack_mb(memory_mb)}m"]
    if memory_mb is None:
        return stack
    heap = heap_mb(memory_mb)
    return [f"-Xmx{heap}m", f"-Xms{min(heap, _INITIAL_MB)}m", *stack]


def is_jvm_run(argv: Sequence[str]) -> bool:
    """Whether ``argv`` runs a JVM with the judge's flags (a built Java program's argv)."""
    return bool(argv) and os.path.basename(argv[0]) == "java" and MARKER in argv


def with_heap(argv: Sequence[str], memory_mb: int | None) -> list[str]:
    """``argv`` with the heap and stack flags of ``memory_mb`` right after the ``java``
    binary, but for those the command names itself."""
    out = list(argv)
    own = [f for f in heap_flags(memory_mb) if not any(a.startswith(f[:4]) for a in out[1:])]
    return [out[0], *own, *out[1:]]


def out_of_memory(exit_code: int | None, stderr: bytes) -> str | None:
    """The JVM's word that the run ran out of memory (``Java heap space``, ...), or None."""
    if exit_code != _EXIT_ON_OOM:
        return None
    lines = stderr.rstrip().rsplit(b"\n", 1)
    last = lines[-1].strip() if lines else b""
    if not last.startswith(_OOM_LINE):
        return None
    kind = last[len(_OOM_LINE) :]
    if not kind.startswith(_MEMORY_KINDS):
        return None
    return "java.lang.OutOfMemoryError: " + kind.decode("utf-8", "replace")


# -- the JDK ---------------------------------------------------------------------------------


@functools.cache
def java_home() -> Path | None:
    """The JDK that ``javac`` on PATH belongs to (its real directory), or None."""
    javac = shutil.which("javac")
    if javac is None:
        return None
    home = Path(os.path.realpath(javac)).parent.parent
    return home if (home / "bin" / "java").is_file() else None


@functools.cache
def jdk_feature() -> int | None:
    """The JDK's feature release (17 for 17.0.15), from its ``release`` file; None unknown."""
    home = java_home()
    try:
        text = (home / "release").read_text(encoding="utf-8") if home else ""
    except OSError:
        return None
    m = re.search(r'^JAVA_VERSION="(?:1\.)?(\d+)', text, re.M)
    return int(m.group(1)) if m else None


def release_flags(release: str) -> tuple[str, ...]:
    """javac's flags for a program written for Java ``release`` (``8``, ``11``, ``21``), as a
    judge running that Java compiles it: ``--release N``, which refuses the language features
    and APIs newer than N.  A release newer than this JDK cannot be held to: no flag (the
    program builds with what this JDK has, and fails only if it needs more)."""
    feature = jdk_feature()
    wanted = int(release)
    if feature is None or wanted > feature:
        return ()
    return ("--release", str(wanted))


def java_tool(name: str) -> str | None:
    """``javac`` or ``java`` of that JDK, by its real path (no /etc/alternatives link)."""
    home = java_home()
    return None if home is None else str(home / "bin" / name)


@functools.cache
def config_dirs() -> tuple[str, ...]:
    """Directories outside the JDK that its files link to: Debian keeps the JDK's
    configuration (``jvm.cfg``, ``java.security``, ...) in ``/etc/java-17-openjdk``, which the
    sandbox's minimal ``/etc`` does not show."""
    home = java_home()
    if home is None:
        return ()
    found: set[str] = set()
    for sub in ("lib", "conf"):
        for dirpath, _dirs, files in os.walk(home / sub):
            for f in files:
                p = Path(dirpath) / f
                if not p.is_symlink():
                    continue
                target = Path(os.path.realpath(p))
                if home in target.parents or not target.exists():
                    continue
                parts = target.parts
                # Only the JDK's own configuration: not /etc/ssl, where cacerts links to.
                if len(parts) >= 3 and parts[1] == "etc" and parts[2].startswith("java"):
                    found.add(str(Path(*parts[:3])))
    return tuple(sorted(found))


# -- which class runs ------------------------------------------------------------------------

_TOKENS = re.compile(
    r'"""[\s\S]*?"""'  # a text block
    r'|"(?:\\.|[^"\\\n])*"'  # a string
    r"|'(?:\\.|[^'\\\n])*'"  # a character
    r"|//[^\n]*|/\*[\s\S]*?\*/"  # comments
    r"|(?P<open>\{)|(?P<close>\})"
    r"|\bpackage\s+(?P<package>[\w.]+)\s*;"
    r"|(?P<mods>(?:\b(?:public|protected|private|abstract|final|static|strictfp|sealed"
    r"|non-sealed)\s+)*)\b(?:class|interface|enum|record)\s+(?P<cls>[A-Za-z_$][\w$]*)"
    r"|(?P<main>(?:\b(?:public|static|final|synchronized|strictfp)\s+)+)void\s+main\s*\("
)


@dataclass(frozen=True)
class MainClass:
    """What a Java source declares: its public top-level class (whose name its file must
    have), the class whose ``static void main`` runs, and its package."""

    public: str | None
    main: str | None
    package: str | None

    @property
    def run_name(self) -> str | None:
        """The name ``java`` is given (``pkg.Outer$Inner``)."""
        if self.main is None:
            return None
        return f"{self.package}.{self.main}" if self.package else self.main


def find_main_class(source: str) -> MainClass:
    """The public class and the class with ``static void main`` of a Java source.

    Codeforces solutions are not always ``Main``: ``public class Solution``, ``class A``
    without ``public``, a main in a nested static class. Comments and literals are skipped, so
    a ``class`` in a string does not count. With several classes with a main, the public one
    wins.
    """
    public: str | None = None
    package: str | None = None
    mains: list[str] = []
    stack: list[tuple[str, int]] = []  # (class name, depth of its body)
    pending: str | None = None
    depth = 0
    for m in _TOKENS.finditer(source):
        if m.group("open"):
            depth += 1
            if pending is not None:
                stack.append((pending, depth))
                pending = None
        elif m.group("close"):
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth = max(0, depth - 1)
        elif m.group("package") and depth == 0:
            package = m.group("package")
        elif m.group("cls"):
            pending = m.group("cls")
            if depth == 0 and public is None and "public" in (m.group("mods") or "").split():
                public = pending
        elif m.group("main") is not None and "static" in m.group("main").split() and stack:
            mains.append("$".join(name for name, _ in stack))
    main = public if public in mains else (mains[0] if mains else None)
    return MainClass(public, main, package)
