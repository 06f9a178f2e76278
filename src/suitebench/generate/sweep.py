"""Generator programs swept over seeds, sandboxed: the problem's own and model-written C++.

A generator reads one integer seed on stdin and prints one input (the problem format's and the
Auditors paper's contract). Every run is an audit engine job (sandboxed, cached in the store by
program id, seed and limits), so a sweep repeated with the same seed costs nothing and gives
the same bytes. A run that fails is a marked candidate (``generator_failed``), not a gap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from suitebench.audit.arms import generator_failure, generator_runs
from suitebench.audit.runs import AuditEngine
from suitebench.generate.records import Candidate
from suitebench.run.outcome import Limits, MiB
from suitebench.run.toolchain import Built, Language, Program, build

__all__ = ["CXX_COMMAND", "GENERATOR_LIMITS", "compile_cpp", "first_error", "sweep"]

GENERATOR_LIMITS = Limits(wall_time=10.0, memory_mb=1024, output_bytes=64 * MiB)
SWEEP_CHUNK = 32
# The Auditors paper compiles model-written generators with "cxx -O2 -std=std" (g++, C++17).
CXX_COMMAND = ("g++", "-O2", "-std=c++17", "-pipe")


def compile_cpp(engine: AuditEngine, source: str, directory: Path, name: str) -> Built:
    """Write ``name``.cpp into ``directory`` and build it sandboxed (cached by content)."""
    directory.mkdir(parents=True, exist_ok=True)
    file = f"{name}.cpp"
    (directory / file).write_text(source, encoding="utf-8")
    program = Program(
        Language.CPP,
        directory.resolve(),
        (file,),
        build_command=(*CXX_COMMAND, "-o", "executable", file),
        name=name,
    )
    return build(program, cache_dir=engine.cache_dir)


def first_error(message: str) -> str:
    """The line of a failed build that names its cause: the compiler's first ``error:`` line,
    else the linker's (``undefined reference``), else the build's own summary.

    The last line of g++'s output is usually a caret, a note or ``collect2: error: ld returned
    1 exit status`` -- true of every failure and the cause of none, so a log must not show it.
    """
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    if not lines:
        return "the build failed"
    body = lines[1:] if lines[0].startswith("build ") else lines
    tests = (
        lambda ln: "error:" in ln and not ln.startswith("collect2"),
        lambda ln: "undefined reference" in ln,
        lambda ln: "error" in ln.lower(),
    )
    for test in tests:
        for ln in body:
            if test(ln):
                return ln[:200]
    return lines[0][:200]


def sweep(
    engine: AuditEngine, built: Built, seeds: Iterable[int], origin: str
) -> Iterator[Candidate]:
    """One candidate per seed, in seed order; runs go to the sandbox in chunks."""
    it = iter(seeds)
    while True:
        chunk = list(islice(it, SWEEP_CHUNK))
        if not chunk:
            return
        outs = engine.run(generator_runs(built, chunk, (), GENERATOR_LIMITS))
        for s, oc in zip(chunk, outs, strict=True):
            where = f"{origin} seed {s}"
            if oc.ok and not oc.stdout_truncated:
                text = oc.read_stdout()
                if text.strip():
                    yield Candidate(where, text)
                else:
                    yield Candidate(where, drop="empty", detail="the generator printed nothing")
            else:
                yield Candidate(where, drop="generator_failed", detail=generator_failure(oc))
