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

Two kinds of program share one build cache (:mod:`suitebench.run.buildcache`): a
:class:`Program` (sources and their language's recipe, built here) and a
:class:`~suitebench.run.tree.TreeProgram` (a source tree, its build script and the product it
must leave, built by :func:`build_tree`), both re-exported here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from suitebench.run import limits as named_limits
from suitebench.run.buildcache import (
    RECORD,
    SCRATCH,
    load_cached,
    recall,
    remember,
    seal,
    sweep_stale,
    verdict,
)
from suitebench.run.outcome import Limits, Status
from suitebench.run.program import (
    COMPILED,
    EXECUTABLE,
    EXTENSIONS,
    Built,
    Language,
    Program,
    ToolchainError,
    language_of,
    program_from_path,
)
from suitebench.run.recipes import (
    available,
    compiler,
    default_interpreter,
    real_rustc,
    recipe,
    standard_flags,
    toolchain_binds,
    toolchain_version,
    with_defines,
)
from suitebench.run.tree import TreeProgram, build_tree, tree_hash, tree_program_id

__all__ = [
    "BUILD_LIMITS",
    "COMPILED",
    "EXECUTABLE",
    "EXTENSIONS",
    "RECIPE_VERSION",
    "Built",
    "Language",
    "Program",
    "ToolchainError",
    "TreeProgram",
    "available",
    "build",
    "build_many",
    "build_tree",
    "compiler",
    "default_interpreter",
    "language_of",
    "program_from_path",
    "program_id",
    "recipe",
    "standard_flags",
    "toolchain_binds",
    "toolchain_version",
    "tree_hash",
    "tree_program_id",
    "with_defines",
]

RECIPE_VERSION = "1"  # bump when a recipe changes in a way the command line does not show

BUILD_LIMITS = named_limits.BUILD  # the table's entry (suitebench.run.limits)


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


def _resolve(argv: Sequence[str]) -> list[str]:
    """Absolute paths for the tools of a recipe (the sandbox gets a minimal PATH)."""
    out = list(argv)
    if not out:
        return out
    tool = out[0]
    if tool == "rustc":
        out[0] = real_rustc() or tool
    elif not os.path.isabs(tool) and not tool.startswith("./"):
        out[0] = shutil.which(tool) or tool
    return out


def _build_env(builddir: Path) -> dict[str, str]:
    """A fixed, minimal environment: the build must not depend on the caller's shell.

    Temporary files go to a scratch directory inside the build directory: the sandbox's own
    /tmp may be private and not writable by its unprivileged user, and gcc writes its object
    files there before linking.
    """
    scratch = builddir / SCRATCH
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
    hit = recall(cache, pid)
    final = cache / pid
    if hit is not None:
        return hit
    cached = load_cached(final, pid)
    if cached is not None:
        remember(cache, pid, cached)
        return cached

    ok, why = available(program.language)
    if program.language is not Language.SCRIPT and not program.build_command and not ok:
        return Built(pid, Status.BUILD_ERROR, (), final, why, program.language)

    cache.mkdir(parents=True, exist_ok=True)
    sweep_stale(cache)
    tmp = Path(tempfile.mkdtemp(prefix=f".build-{pid[:16]}-", dir=cache))
    try:
        binds = [*toolchain_binds(program.language, program.interpreter), *map(str, ro_binds)]
        built, cacheable = _build_into(program, pid, tmp, final, limits, binds)
        if not cacheable:
            return built
        (tmp / RECORD).write_text(json.dumps(built.to_dict(), sort_keys=True, indent=1))
        try:
            os.rename(tmp, final)
        except OSError:
            # Someone else finished the same build first: theirs is as good as ours.
            again = load_cached(final, pid)
            if again is None:
                raise
            built = again
        else:
            tmp = final  # nothing to clean up
        built = dataclasses.replace(built, cached=False)
        remember(cache, pid, built)
        return built
    finally:
        if tmp != final:
            shutil.rmtree(tmp, ignore_errors=True)


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
        # seal() takes ownership back afterwards.
        (tmp / SCRATCH / "tmp").mkdir(parents=True, exist_ok=True)
        for d in (tmp, tmp / SCRATCH, tmp / SCRATCH / "tmp"):
            d.chmod(0o777)
        outcome = sandbox.run(
            _resolve(build_argv),
            cwd=tmp,
            env=_build_env(tmp),
            limits=limits,
            stdin=b"",
            ro_binds=binds,
        )
        shutil.rmtree(tmp / SCRATCH, ignore_errors=True)
        status, message, cacheable = verdict(outcome, limits)
    needs_exe = run_argv[0] == "{dir}/" + EXECUTABLE
    if status is Status.OK and needs_exe:
        exe = tmp / EXECUTABLE
        if not exe.is_file():
            status = Status.BUILD_ERROR
            message = (f"the build did not leave ./{EXECUTABLE}\n" + message).strip()
        elif not os.access(exe, os.X_OK):
            exe.chmod(exe.stat().st_mode | 0o111)
    seal(tmp)
    argv = tuple(a.replace("{dir}", str(final)) for a in run_argv) if status is Status.OK else ()
    seconds = time.monotonic() - t0
    built = Built(pid, status, argv, final, message, program.language, seconds, False)
    return built, cacheable


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
