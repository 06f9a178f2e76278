"""Tree programs: a source tree plus a recipe, built in the sandbox into the build cache.

The second kind of program beside :class:`~suitebench.run.program.Program` (a solution's
sources and its language's recipe): a whole source tree (:class:`TreeProgram`), an optional
build script run in the sandbox in a copy of it, and the product the build must leave: an
executable ``./executable``, or a Python package, "built" by compiling it module by module (a
module with a syntax error does not build; each clean one gets its bytecode). Suite mode's
programs -- a reference, every mutant, a candidate implementation, the coverage build -- are
all of this kind.

A tree is built in place at its cache entry (``cache_dir/<program_id>/tree``: a build script
may bake absolute paths into what it writes, as ``gcc --coverage`` does), under the entry's
lock, with the record written last (:mod:`suitebench.run.buildcache`, shared with
:mod:`suitebench.run.toolchain`). Its identity is a content hash of the tree, the recipe and
product, whatever the caller adds (an interpreter's version) and the versions of the
toolchains the tree needs.

A build script sees the system's directories, its own tree and, read-only, the toolchains the
tree needs that live elsewhere: a Rust tree (``*.rs``, ``Cargo.toml``, or a script calling
``cargo``/``rustc``) gets the rustup toolchain's own directory (its ``bin/`` holds the real
``rustc`` and ``cargo``, first on ``PATH``), a Go tree its Go installation -- never the rest of
the home directory they sit in (``~/.cargo``'s registry and credentials stay hidden). Their
caches (``CARGO_HOME``, ``GOCACHE``) live in a scratch directory removed after the build, but
for a build that keeps them (``keep_caches``: the reference's recorded build, from which
mutants are built incrementally): its ``GOCACHE`` moves beside its tree, in its cache entry,
with what ``go list`` says it compiled (:mod:`suitebench.run.toolrecords`), and a later build
starts from a copy of it (``seed_caches``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import re
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from suitebench.run import sandbox, toolrecords
from suitebench.run.buildcache import (
    SCRATCH,
    entry_lock,
    load_cached,
    recall,
    remember,
    verdict,
    write_record,
)
from suitebench.run.limits import TREE_BUILD
from suitebench.run.outcome import Backend, Limits, Status
from suitebench.run.program import EXECUTABLE, Built, Language
from suitebench.run.pycompile import COMPILE_CHECK, compile_check
from suitebench.run.recipes import compiler, toolchain_binds, toolchain_version
from suitebench.run.store import job_key

__all__ = [
    "IGNORED",
    "Toolchain",
    "TreeProgram",
    "build_tree",
    "find_built",
    "needed_toolchains",
    "seal",
    "staged_copy",
    "toolchains_for",
    "tree_hash",
    "tree_program_id",
]

IGNORED = {".git", "__pycache__", ".pytest_cache", ".mypy_cache"}
TREE = "tree"  # the built tree's place in its cache entry (the record sits beside it)
_LOG_TAIL = 4000  # characters of a failed build's output kept in its message

# What says a tree is built with a toolchain: its files, or the build script's words.
_TOOLCHAIN_FILES: dict[Language, tuple[tuple[str, ...], tuple[str, ...]]] = {
    Language.RUST: ((".rs",), ("Cargo.toml",)),
    Language.GO: ((".go",), ("go.mod",)),
}
_TOOLCHAIN_WORDS: dict[Language, re.Pattern[str]] = {
    Language.RUST: re.compile(r"(?<![\w.-])(cargo|rustc)(?![\w.-])"),
    Language.GO: re.compile(r"(?<![\w.-])go\s+(build|run|install)\b"),
}


@dataclass(frozen=True)
class TreeProgram:
    """A source tree and how to build it.

    ``build`` is the build script: a file of the tree (run with ``bash``) or a command line
    (``bash -c``); None: nothing to run. ``package`` makes the product a Python package (the
    directory relative to the tree, ``""`` for the tree itself) compiled module by module:
    here when ``compile_here`` and the package is small, else in the sandbox by ``python``
    (shown ``python_binds``); without ``package`` the build must leave ``./executable``.
    ``path`` is the ``PATH`` the build sees, ``path_prefix`` a directory put first on it and
    shown read-only (compiler wrappers). ``identity`` adds the caller's words to the program
    id (an interpreter's version, the kind of tree), ``tag`` a variant of the same tree (a
    build with other wrappers)."""

    root: Path
    build: str | None = None
    package: str | None = None
    python: str = ""
    python_binds: tuple[str, ...] = ()
    compile_here: bool = True
    path: str = "/usr/local/bin:/usr/bin:/bin"
    path_prefix: str | None = None
    identity: tuple[str, ...] = ()
    tag: str = ""
    # Toolchain caches kept beside the built tree (its cache entry), and a kept one copied in
    # first (a cache entry's directory): see the module.
    keep_caches: bool = False
    seed_caches: str | None = None

    @property
    def product(self) -> str:
        return "./" + EXECUTABLE if self.package is None else f"package:{self.package}"


def publish_by_hash(staging: Path, home: Path) -> tuple[Path, str]:
    """Move a staged tree to ``home/<its tree hash>`` (kept as it is when that tree is there
    already: the same bytes, staged before by this process or another); the path and the
    hash."""
    digest = tree_hash(staging)
    final = home / digest
    try:
        staging.rename(final)
    except OSError:  # staged before (by this score or another): the same bytes
        shutil.rmtree(staging, ignore_errors=True)
    return final, digest


def tree_hash(root: Path, files: list[str] | None = None) -> str:
    """sha256 over relative paths' bytes, executable bits, symlink targets and file bytes;
    ``files``: the tree's files as :func:`_files` lists them (walked here when None)."""
    h = hashlib.sha256()
    base = os.fspath(root)
    for rel in sorted(_files(base) if files is None else files):
        path = os.path.join(base, rel)
        # By the name's bytes (a name that is not UTF-8 is a name all the same; for every
        # UTF-8 name these are the bytes ``str.encode`` gives, so no hash changes).
        h.update(os.fsencode(rel) + b"\0")
        if os.path.islink(path):
            h.update(b"L" + os.fsencode(os.readlink(path)) + b"\0")
        else:
            h.update(b"X" if os.access(path, os.X_OK) else b"F")
            with open(path, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def not_utf8(root: Path, suffix: str = "") -> list[str]:
    """The files of a tree (ending in ``suffix``) whose relative path is not UTF-8, each shown
    with its odd bytes escaped (``caf\\xe9.py``): what cannot become a name in a JSON or CSV
    record.  Such a file is still hashed and copied by its bytes (:func:`tree_hash`)."""
    return [
        os.fsencode(rel).decode("utf-8", "backslashreplace")
        for rel in _files(os.fspath(root))
        if rel.endswith(suffix) and not _is_utf8(rel)
    ]


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a byte the file system gave that UTF-8 does not decode
        return False
    return True


def walk(root: Path) -> list[Path]:
    """The files of a tree, but for version control's and caches' directories."""
    return [root / rel for rel in _files(os.fspath(root))]


def _files(root: str) -> list[str]:
    """:func:`walk`'s files as POSIX paths relative to ``root`` (strings: a mutant's build
    walks its tree twice, and paths as objects cost more than the walk)."""
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED)
        rel = os.path.relpath(dirpath, root)
        files.extend(f if rel == "." else f"{rel}/{f}" for f in filenames)
    return files


# -- toolchains ------------------------------------------------------------------------------


def needed_toolchains(
    tree: Path, build: str | None, files: list[str] | None = None
) -> list[Language]:
    """The compiled languages whose toolchain a build of ``tree`` may call, besides the
    system's: by the tree's files (``*.rs``, ``Cargo.toml``; ``*.go``, ``go.mod``) or by the
    build script's words (``cargo``, ``rustc``; ``go build``)."""
    script = ""
    if build:
        path = tree / build
        script = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else build
    names = [posixpath.basename(f) for f in (_files(os.fspath(tree)) if files is None else files)]
    found: list[Language] = []
    for language, (suffixes, marks) in _TOOLCHAIN_FILES.items():
        if _TOOLCHAIN_WORDS[language].search(script) or any(
            n.endswith(suffixes) or n in marks for n in names
        ):
            found.append(language)
    return found


@dataclass(frozen=True)
class Toolchain:
    """A toolchain as a sandboxed build sees it: its tools' directory (first on ``PATH``), the
    directories shown read-only (empty when it is a system one) and its version."""

    language: Language
    bin_dir: str
    binds: tuple[str, ...]
    version: str


def toolchains_for(
    tree: Path, build: str | None, files: list[str] | None = None
) -> list[Toolchain]:
    """The toolchains found here that a build of ``tree`` needs (a missing one is left out:
    the build fails as it would anywhere without it, an outcome)."""
    out: list[Toolchain] = []
    for language in needed_toolchains(tree, build, files):
        tool = compiler(language)
        if tool is None:
            continue
        out.append(
            Toolchain(
                language=language,
                bin_dir=str(Path(os.path.realpath(tool)).parent),
                binds=tuple(toolchain_binds(language)),
                version=toolchain_version(language),
            )
        )
    return out


def _toolchain_env(scratch: Path, languages: set[Language]) -> dict[str, str]:
    """Where the toolchains keep their caches (in the build's scratch directory: the build
    sees no other writable place) and how they stay offline."""
    env: dict[str, str] = {}
    if Language.RUST in languages:
        env |= {"CARGO_HOME": str(scratch / "cargo"), "CARGO_NET_OFFLINE": "true"}
    if Language.GO in languages:
        env |= {
            "GOCACHE": str(scratch / "gocache"),
            "GOPATH": str(scratch / "gopath"),
            "GOTOOLCHAIN": "local",
            "GOFLAGS": "-buildvcs=false",
            "GOPROXY": "off",
        }
    return env


# -- identity and staging --------------------------------------------------------------------


def tree_program_id(program: TreeProgram, tree: Path | None = None) -> str:
    """The program's identity (the name of its cache entry): ``tree`` (default the program's
    root) with the recipe, product, the caller's identity and the toolchains' versions."""
    return _identity(program, program.root if tree is None else tree)[0]


def _identity(program: TreeProgram, tree: Path) -> tuple[str, list[Toolchain]]:
    """:func:`tree_program_id` and the toolchains the build needs, from one walk of ``tree``."""
    files = _files(os.fspath(tree))
    toolchains = toolchains_for(tree, program.build, files)
    pid = job_key(
        "tree-build/2",
        program.build or "",
        program.product,
        *program.identity,
        tree_hash(tree, files),
        *(f"{t.language}={t.version}" for t in toolchains),
        program.tag,
        *(("keep-caches",) if program.keep_caches else ()),
    )[:32]
    return pid, toolchains


@contextlib.contextmanager
def staged_copy(source: Path, cache_dir: Path) -> Iterator[Path]:
    """``source`` copied to a fresh directory beside the build cache's entries, so that a
    build moves it into place by a rename (a copy through a temporary directory elsewhere
    cost a directory made and removed per mutant, and a second copy across file systems);
    what is left of it (the build was found cached) is removed on leaving."""
    staging = Path(cache_dir) / ".staging"
    staging.mkdir(parents=True, exist_ok=True)
    tree = staging / uuid.uuid4().hex
    try:
        shutil.copytree(source, tree, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
        yield tree
    finally:
        if os.path.lexists(tree):
            shutil.rmtree(tree, ignore_errors=True)


def _open_up(root: Path) -> None:
    """Let the build write its whole tree: the sandbox may run it as an unprivileged uid.
    The sandbox side keeps its own (``suite/inside/workdir.open_up``): it imports nothing of
    ``run/``, and ``run/`` nothing of ``suite/``."""
    me = os.geteuid()
    for dirpath, _dirnames, filenames in os.walk(root):
        if os.stat(dirpath).st_uid == me:
            os.chmod(dirpath, 0o777)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            st = os.stat(path)
            if st.st_uid == me:
                extra = 0o666 | (0o111 if st.st_mode & 0o100 else 0)
                os.chmod(path, (st.st_mode & 0o777) | extra)


# -- sealing ---------------------------------------------------------------------------------

# The time every file and directory of a sealed tree carries (2000-01-01 00:00:00 UTC).
SEALED_TIME_NS = 946_684_800 * 1_000_000_000
_ELF = b"\x7fELF"


def seal(tree: Path, product: Path | None = None) -> None:
    """Leave nothing in a built tree's metadata that its history decides, so that a test cannot
    tell a mutant's tree from the reference's but by what the program does: every file and
    directory gets the same access and modification time (:data:`SEALED_TIME_NS`), in one pass
    in sorted order, so their change times follow the same pattern in every tree; files are
    never hard links of another tree's (each tree is a copy: :func:`staged_copy`), so link
    counts are the tree's own.  Without this a suite could kill every mutant by asking which
    file is newer than the others (the one its patch wrote) or shared with fewer trees.

    ``product``: the built ``./executable``; when it is a native (ELF) program and we are root
    it becomes execute-only to others (root's, mode 0711): the sandboxed tests, which run as
    another uid, can run it but not read it, so a test cannot compare its bytes with the
    reference's (an agent given the executable knows them).  A script must stay readable: its
    interpreter reads it."""
    _seal_dir(tree)
    if product is None or os.geteuid() != 0 or product.is_symlink() or not product.is_file():
        return
    with open(product, "rb") as fh:
        if fh.read(4) != _ELF:
            return
    os.chown(product, 0, 0)
    os.chmod(product, 0o711)  # (its times stay the sealed ones: chmod changes only ctime)


def _seal_dir(path: Path) -> None:
    times = (SEALED_TIME_NS, SEALED_TIME_NS)
    with os.scandir(path) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _seal_dir(Path(entry.path))
        else:
            os.utime(entry.path, ns=times, follow_symlinks=False)
    os.utime(path, ns=times)


# -- building --------------------------------------------------------------------------------


def build_tree(
    program: TreeProgram,
    *,
    cache_dir: str | os.PathLike[str],
    limits: Limits = TREE_BUILD,
    backend: Backend | None = None,
    staged: bool = False,
) -> Built:
    """Build ``program`` into ``cache_dir/<program_id>/tree``, or return its cached build.

    ``staged``: the program's root is a copy of :func:`staged_copy`'s, moved into place (else
    the root is copied first and left as it was). Every outcome is cached but one the harness
    failed (``sandbox_error``): a tree's limits are the table's, so a build that ran out of
    them does so again. The built tree is sealed (:func:`seal`) once its build succeeds."""
    cache = Path(cache_dir).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    if not staged:
        with staged_copy(program.root, cache) as tree:
            return _build_staged(program, tree, cache, limits, backend)
    return _build_staged(program, program.root, cache, limits, backend)


def find_built(cache_dir: str | os.PathLike[str], pid: str) -> Built | None:
    """The cached build of the tree program ``pid``, or None when it is not (or no longer) in
    the cache."""
    cache = Path(cache_dir).resolve()
    final = cache / pid
    return recall(cache, pid) or load_cached(final, pid, final / TREE)


def _build_staged(
    program: TreeProgram, tree: Path, cache: Path, limits: Limits, backend: Backend | None
) -> Built:
    pid, toolchains = _identity(program, tree)
    final = cache / pid
    found = find_built(cache, pid)
    if found is not None:
        remember(cache, pid, found)
        return found
    with entry_lock(cache, pid):
        found = load_cached(final, pid, final / TREE)  # built while we waited
        if found is not None:
            remember(cache, pid, found)
            return found
        shutil.rmtree(final, ignore_errors=True)  # a build that died halfway
        final.mkdir()
        built_tree = final / TREE
        shutil.move(str(tree), built_tree)
        built = _run_build(program, pid, built_tree, limits, backend, toolchains)
        if built.status is not Status.SANDBOX_ERROR:
            write_record(final, built)
            remember(cache, pid, built)
        return built


def _run_build(
    program: TreeProgram,
    pid: str,
    tree: Path,
    limits: Limits,
    backend: Backend | None,
    toolchains: list[Toolchain],
) -> Built:
    language = Language.SCRIPT if program.package is None else Language.PYTHON

    def fail(message: str, status: Status = Status.BUILD_ERROR) -> Built:
        return Built(pid, status, (), tree, message, language)

    # A system toolchain is on PATH already (putting /usr/bin first would change python3).
    extra = dict.fromkeys(t.bin_dir for t in toolchains if t.binds)
    path = os.pathsep.join([*extra, program.path])
    prefix = () if program.path_prefix is None else (program.path_prefix,)
    env = {
        "PATH": os.pathsep.join([*prefix, path]),
        "HOME": str(tree),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    binds = [b for t in toolchains for b in t.binds]
    scratch = tree / SCRATCH
    if toolchains:
        env.update(_toolchain_env(scratch, {t.language for t in toolchains}))
        scratch.mkdir(exist_ok=True)
        if program.seed_caches:
            _seed_caches(Path(program.seed_caches), scratch)
    recipe = _recipe(tree, program.build)
    if recipe:
        _open_up(tree)  # the build may run as an unprivileged uid
        outcome = sandbox.run(
            recipe, cwd=tree, env=env, limits=limits, backend=backend, ro_binds=(*binds, *prefix)
        )
        status, message, _cacheable = verdict(outcome, limits, tail=_LOG_TAIL)
        if status is Status.OK and program.keep_caches:
            go = next((t for t in toolchains if t.language is Language.GO), None)
            if go is not None:
                _record_go(tree, go, env, limits, backend, binds)
        shutil.rmtree(scratch, ignore_errors=True)
        if status is not Status.OK:
            return fail(message, status)
    if program.package is not None:
        seal(tree)  # first: a module's bytecode records its source's (sealed) time
        package = tree / program.package
        # Too large to compile here, or for another Python: in the sandbox, as a build.
        errors = compile_check(package) if program.compile_here else None
        if errors is None:
            _open_up(tree)  # compiled in the sandbox, as an unprivileged uid
            outcome = sandbox.run(
                [program.python, "-I", "-c", COMPILE_CHECK, str(package)],
                cwd=tree,
                env=env,
                limits=limits,
                backend=backend,
                ro_binds=program.python_binds,
            )
            errors = "" if outcome.status is Status.OK else outcome.stderr_text()
        if errors:
            return fail("package does not compile:\n" + errors[-_LOG_TAIL:])
        seal(tree)
        return Built(pid, Status.OK, (), tree, "", language)
    executable = tree / EXECUTABLE
    if not executable.is_file() or not os.access(executable, os.X_OK):
        return fail(f"the build left no executable ./{EXECUTABLE}")
    seal(tree, executable)
    return Built(pid, Status.OK, (str(executable),), tree, "", language)


KEPT_CACHES = "caches"  # a cache entry's kept toolchain caches (``gocache/``), beside its tree


def _seed_caches(entry: Path, scratch: Path) -> None:
    """The toolchain caches a recorded build kept, copied into this build's scratch directory
    (a copy: the build writes its own entries into it; Go keys each by its inputs' content,
    so an entry found there is what this build would have made)."""
    kept = entry / KEPT_CACHES / "gocache"
    if kept.is_dir():
        shutil.copytree(kept, scratch / "gocache", symlinks=True, dirs_exist_ok=True)


def _record_go(
    tree: Path,
    go: Toolchain,
    env: dict[str, str],
    limits: Limits,
    backend: Backend | None,
    binds: list[str],
) -> None:
    """Keep a Go build's ``GOCACHE`` beside its tree, and what ``go list`` says the program
    was compiled from (``toolrecords.GO_RECORD``; nothing when ``./executable`` is not a Go
    program with build information)."""
    entry = tree.parent
    tool = os.path.join(go.bin_dir, "go")

    def run(argv: list[str], cwd: Path, extra: dict[str, str]) -> str | None:
        # (in the tree, the writable directory; the module's own directory may lie below it)
        argv = ["bash", "-c", 'cd "$1" && shift && exec "$@"', "bash", str(cwd), *argv]
        outcome = sandbox.run(
            argv, cwd=tree, env={**env, **extra}, limits=limits, backend=backend, ro_binds=binds
        )
        return outcome.stdout_text() if outcome.status is Status.OK else None

    version_m = run([tool, "version", "-m", EXECUTABLE], tree, {})
    found = toolrecords.go_build_settings(version_m or "")
    if found is not None:
        main, settings = found
        module_dir = toolrecords.go_module_dir(tree, toolrecords.go_main_module(version_m or ""))
        argv, extra = toolrecords.go_list_argv(tool, main, settings)
        listed = run(argv, module_dir, extra)
        if listed is not None:
            files = toolrecords.go_listed_files(listed, tree)
            (entry / toolrecords.GO_RECORD).write_text(
                json.dumps({"main": main, "settings": settings, "files": files})
            )
    cache = Path(env["GOCACHE"])
    if cache.is_dir():
        (entry / KEPT_CACHES).mkdir(exist_ok=True)
        shutil.rmtree(entry / KEPT_CACHES / "gocache", ignore_errors=True)
        shutil.move(str(cache), entry / KEPT_CACHES / "gocache")


def _recipe(tree: Path, build: str | None) -> list[str]:
    if build is None:
        return []
    if (tree / build).is_file():
        return ["bash", build]
    return ["bash", "-c", build]
