"""Run untrusted programs under limits and return an :class:`Outcome` for every run.

Every submission, mutant, agent-written test, generator and validator runs here, so the figures
(validity, mutation_score, cov_at_k, the ledger) are only as trustworthy as this module. Three
backends, chosen best-first and recorded in every outcome:

``bwrap``
    bubblewrap: the program sees only its layout (below), only the work dir is writable, new
    network, pid, ipc and uts namespaces. Run by root, the program itself runs as the
    unprivileged uid/gid 65534 (``nobody``) with no capabilities, so file permissions and
    ``RLIMIT_NPROC`` bite; the work dir is made world-writable (mode ``o+rwx``) so ``nobody``
    can write there, and the caller, root, can read everything the program writes. Run by an
    unprivileged user, bwrap uses a user namespace and the program keeps the caller's uid.
``unshare``
    util-linux ``unshare``: new network, pid, mount, ipc and uts namespaces plus rlimits; the
    same layout as bwrap, built by ``_mount.py`` in the new mount namespace; as root, the
    program runs as ``nobody`` too.
``plain``
    rlimits only, no isolation and nothing hidden; the first plain session of a process logs a
    warning through :mod:`logging` (later ones log at debug level), and every outcome says
    ``plain``. It runs only when asked for by name (``backend=Backend.PLAIN``,
    ``$SUITEBENCH_BACKEND=plain``, the command line's ``--backend plain`` or
    ``--allow-unsandboxed``): where neither bwrap nor unshare works, a run that names no backend
    is a ``sandbox_error`` saying what to install (:func:`choose_backend` decides).

Limits (``Limits`` in :mod:`suitebench.run.outcome`):

* memory by a cgroup (v1 ``memory.limit_in_bytes`` + ``memsw``, v2 ``memory.max``) where one is
  writable; a run is ``memory`` only when the kernel's ``oom_kill`` counter of its group rose --
  never guessed from exit code 137. Without a writable cgroup, ``RLIMIT_AS`` is set instead and
  the run is reported honestly as whatever the program did when an allocation failed (usually
  ``runtime_error`` or ``signaled``); the outcome's message says that the limit was
  ``RLIMIT_AS`` only. ``peak_memory_kb`` is the group's peak above the sandbox's own baseline on
  cgroup v1, else the largest ``ru_maxrss`` of the run's processes.
* processes by a pids cgroup (``pids.max``) where writable, else ``RLIMIT_NPROC`` (which counts
  every process of the uid on the host and which the kernel does not apply to root).
* CPU by ``RLIMIT_CPU`` with soft < hard: SIGXCPU, the hard-limit SIGKILL, or a CPU time over
  the limit at exit are ``timeout`` with ``timeout_kind="cpu"``; the wall-clock watchdog kills
  the run's whole process tree at the wall limit (``timeout_kind="wall"``).
* output: stdout and stderr are each capped at ``output_bytes`` *while reading*; a stream over
  its cap is cut at the cap, flagged truncated, and the run is killed as ``output_limit``;
  ``RLIMIT_FSIZE`` (SIGXFSZ) is ``output_limit`` too. Output stays bytes, exactly.
* stack unlimited by default (judge semantics).

No state the kernel keeps outlives a run either (:mod:`suitebench.run.syscalls`): every
program starts under a seccomp filter built with libseccomp (no keyring, no page-cache probes),
in a new IPC namespace of its own (bwrap, unshare), and the pages it brought into the page cache
are dropped after its run (its session's memory cgroup is reclaimed), so no later run can time
a read to learn what it read. The runner is pid 1 of its sandbox and blanks its command line.

Nothing outlives a run: the in-sandbox runner is the child subreaper and kills and reaps every
process a run leaves behind (a double-forked ``setsid`` daemon included) before it reports; the
namespace teardown (bwrap, unshare) and the cgroup sweep at session end are further nets.

Speed: a :class:`Session` (:mod:`suitebench.run.session`, what :func:`run_batch` uses) starts
the sandbox and a small runner (:mod:`suitebench.run.protocol`) inside it once -- ``_runner.c``,
compiled once per machine into ``~/.cache/suitebench`` (or ``$XDG_CACHE_HOME``), else
``_runner.py`` on the same interpreter with ``-I -S``; set ``SUITEBENCH_RUNNER=python`` to force
the latter -- and the runner forks each run with its own limits, so a run costs about what a
bare ``subprocess.run`` costs. The memory and pids cgroups are per session; the coordinator
reads and resets their counters between the session's runs, which are sequential.

What the program sees under bwrap and unshare (:mod:`suitebench.run.layout`): the system's
read-only directories (``/usr``, ``/bin``, ``/sbin``, ``/lib*``), a minimal ``/etc``, a fresh
``/dev`` and ``/proc``, a private ``/tmp``, the work dir, and read-only the runner, the
interpreter's installation, the program (``argv[0]``, its installation when it sits in a
``bin/``, absolute paths named in ``argv``) and ``ro_binds``: a caller passes every path a
program needs. Nothing else exists inside: not the user's home or working tree, the problem's
directory, other programs' builds, or the store. ``/tmp`` is a tmpfs of at most half the
memory limit (its files are memory, charged to the run), emptied of the program's files after
every run so each run of a session starts from the same empty ``/tmp``. When the program runs
as ``nobody``, ``ro_binds`` themselves are made ``o+r`` (``o+x`` for directories): their
contents must be readable by others (a file created with mode 0600 is not). A version
manager's shim on the program's ``PATH`` (pyenv's ``python3``) is replaced by the installation
it would pick, shown read-only (the manager itself lives in a hidden home directory).

Harness failures are outcomes, not exceptions: an unknown or unavailable backend, a program
that cannot be executed, ``require_isolation=True`` without a backend that isolates the network,
or a runner that died all give ``Status.SANDBOX_ERROR`` with the reason in ``message``.

``env=None`` gives the program a small clean environment (``PATH``, ``HOME`` = the work dir,
``TMPDIR``, ``LANG``/``LC_ALL`` = ``C.UTF-8``), not the coordinator's: untrusted code never sees
the caller's secrets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from suitebench.run.environment import Tool, describe_environment, file_view
from suitebench.run.layout import (
    BACKEND_ENV,
    SandboxUnavailable,
    available_backends,
    choose_backend,
    detect_backend,
    hides_files,
    isolates_network,
    probe,
)
from suitebench.run.outcome import Backend, Limits, Outcome, Status
from suitebench.run.protocol import c_runner, runner_starts
from suitebench.run.session import SandboxError, Session

__all__ = [
    "BACKEND_ENV",
    "Backend",
    "Limits",
    "Outcome",
    "Progress",
    "SandboxError",
    "SandboxUnavailable",
    "Session",
    "Status",
    "Tool",
    "available_backends",
    "choose_backend",
    "describe_environment",
    "detect_backend",
    "file_view",
    "hides_files",
    "isolates_network",
    "run",
    "run_batch",
]

Progress = Callable[[int, int], None]

# Earlier private names, kept for code that clears their caches.
_probe = probe
_c_runner = c_runner
_runner_starts = runner_starts


def run(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    ro_binds: Sequence[str | Path] = (),
    require_isolation: bool = False,
) -> Outcome:
    """One sandboxed run of ``argv`` in ``cwd`` (the only writable directory).

    ``ro_binds`` are extra paths made visible read-only (paths under /tmp are hidden by the
    bubblewrap backend's private /tmp otherwise). ``require_isolation=True`` refuses to run
    without network isolation: the outcome is ``sandbox_error`` and nothing runs.
    """
    (outcome,) = run_batch(
        argv,
        [stdin],
        cwd=cwd,
        env=env,
        limits=limits,
        backend=backend,
        ro_binds=ro_binds,
        require_isolation=require_isolation,
    )
    return outcome


def run_batch(
    argv: Sequence[str],
    stdins: Sequence[bytes],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    limits: Limits = Limits(),
    backend: Backend | None = None,
    ro_binds: Sequence[str | Path] = (),
    require_isolation: bool = False,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Many runs of one program, one per stdin, in one sandbox: equal, run by run, to :func:`run`.

    The sandbox start-up (namespaces, cgroup, runner) is paid once per batch; each run still gets
    a fresh process, its own limits, and a clean slate (everything it left is killed first).
    Each run but the first starts from the work dir the batch started with: what an earlier run
    added (a marker file, a directory, a link; ``$HOME`` is the work dir by default) is removed
    first, so a verdict never depends on what ran before it. The last run's files stay.
    """
    outcomes: list[Outcome] = []
    with Session(
        argv,
        cwd=cwd,
        env=env,
        limits=limits,
        backend=backend,
        ro_binds=ro_binds,
        require_isolation=require_isolation,
    ) as session:
        for i, data in enumerate(stdins):
            outcomes.append(session.run(data))
            if progress is not None:
                progress(i + 1, len(stdins))
    return outcomes
