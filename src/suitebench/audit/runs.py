"""Every run of the audit is a job in the store.

A run's key is a hash of what determines its result: the program id, the input's sha256, the
limits, the isolation backend (and a salt for deliberate re-runs such as the determinism
re-judges). Runs of one program are grouped into chunks that execute in one sandbox session
(one start-up per chunk, the throughput lever); each run is stored as a small record of its
own as soon as its chunk returns, so an audit killed halfway and restarted reruns nothing
already stored, and adding an arm runs only the inputs not seen before.

Output is bounded in memory: a chunk digests each run as the session returns it -- the output's
sha256 and its compressed form (one blob per distinct output, see
:meth:`~suitebench.run.store.Store.put_blobs`) -- so a record never holds the output, and a
chunk stops early (handing its remaining runs back to the queue) once its compressed outputs
pass a budget. A chunk also hands its remaining runs back after a time-out, or once its runs
have taken more than ``CHUNK_SECONDS`` of wall time between them (a program that prints until
the output limit, or one that is merely slow), split in two, so one program's slow runs spread
over the workers instead of holding one of them while the rest of the audit waits.

All chunks of every problem and stage go through one :class:`~suitebench.run.executor.JobQueue`
(the engine's ``queue``): a worker is idle only when no run of any problem is ready.

A run the wall-clock watchdog stopped while its CPU time was still under its CPU limit (the
limit before the allowance) has not shown that the program is too slow: it was waiting, or the
machine was loaded, and such a time-out came and went between cold audits. :meth:`AuditEngine.run`
runs it once more (a fresh run: a salted key) and returns that run, with the first run's wall
and CPU seconds in ``RunResult.tle_first``; a program that really sleeps or blocks times out
again.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.audit.chunks import CHUNK_BUDGET, CHUNK_SECONDS, chunk_job
from suitebench.audit.interactive import (
    WithInteractor,
    interaction_payload,
)
from suitebench.model.problem import declared_defines, declared_language, split_language
from suitebench.run import jvm, sandbox
from suitebench.run.executor import Executor, JobQueue
from suitebench.run.outcome import Backend, Limits, MiB, Outcome, Status, sha256_bytes
from suitebench.run.store import Store, job_key
from suitebench.run.toolchain import (
    Built,
    Language,
    Program,
    ToolchainError,
    build,
    build_many,
    program_from_path,
    standard_flags,
    with_defines,
)

__all__ = [
    "AuditEngine",
    "CheckSpec",
    "RunResult",
    "RunSpec",
    "chunk_job",
    "file_sha256",
    "wall_clock_artefact",
]

Progress = Callable[[int, int], None]
CompileFlags = Mapping[str, Sequence[str]] | None  # language -> flags replacing its defaults

CHUNK_RUNS = 96  # runs of one program in one sandbox session, at most
MIN_CHUNK = 12  # ... and at least, unless the program has fewer runs to do
KIND_RUN = "audit-run"
_RUN_TAG = "audit-run/2"  # records without outputs inside (store schema 2)
EMPTY_SHA256 = sha256_bytes(b"")
_OUTPUT_CACHE = 32 * MiB  # outputs read back from the store, kept for re-use


@dataclass(frozen=True)
class RunSpec:
    """One run of a built program on one stdin."""

    built: Built
    stdin: bytes
    limits: Limits
    salt: str = ""


@dataclass(frozen=True)
class CheckSpec:
    """One call of a checker program: ``checker input output answer`` (testlib convention)."""

    built: Built
    input: bytes
    output: bytes
    answer: bytes
    limits: Limits


def wall_clock_artefact(outcome: Outcome, limits: Limits) -> bool:
    """A time-out by the wall-clock watchdog with CPU time under the CPU limit (before the
    allowance): not yet shown to be too slow (see the module's docstring)."""
    cpu_limit = limits.cpu_time if limits.cpu_time is not None else limits.wall_time
    return (
        outcome.status is Status.TIMEOUT
        and outcome.timeout_kind != "cpu"
        and outcome.cpu_time < cpu_limit
    )


def file_sha256(path: Path) -> str:
    """sha256 of a source file, or of a directory's files (names and contents)."""
    if path.is_file():
        return sha256_bytes(path.read_bytes())
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f.relative_to(path).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


@dataclass(frozen=True)
class RunResult:
    """One run as the audit keeps it: the outcome without its output, plus the output's sha256.

    ``outcome.stdout`` is empty; :meth:`read_stdout` reads the output back from the store when a
    stage needs it (one at a time, so memory stays bounded). ``outcome.stderr`` holds at most
    the first and the last ``STDERR_KEEP`` bytes of what the program wrote there.
    """

    outcome: Outcome
    stdout_sha256: str
    stdout_size: int
    engine: AuditEngine | None = field(default=None, compare=False, repr=False)
    tle_first: tuple[float, float] | None = None  # (wall, CPU) of a first run rerun (module doc)
    interactor_verdict: str | None = None  # an interactive run's interactor's word (interactive.py)
    interactor_message: str = ""
    interactor_first: bool = False  # the interactor ended first: its WA or PE came first

    @property
    def status(self) -> Status:
        return self.outcome.status

    @property
    def ok(self) -> bool:
        return self.outcome.ok and self.interactor_verdict in (None, "ok")

    @property
    def exit_code(self) -> int | None:
        return self.outcome.exit_code

    @property
    def message(self) -> str:
        if self.interactor_verdict not in (None, "ok"):
            return self.interactor_message
        return self.outcome.message

    @property
    def stdout_truncated(self) -> bool:
        return self.outcome.stdout_truncated

    def stderr_text(self) -> str:
        return self.outcome.stderr_text()

    def read_stdout(self) -> bytes:
        if self.stdout_sha256 == EMPTY_SHA256:
            return b""
        if self.engine is None:  # pragma: no cover - results always come from an engine
            raise ValueError("a run result without its engine cannot read its output")
        return self.engine.output(self.stdout_sha256)


Keyed = tuple[str, tuple[str, ...], Any]


_FRESH = "fresh-sandbox"  # a salted run's marker in its key and its chunk's group


def _retry_salt(salt: str) -> str:
    """The key salt of the second run of a wall-clock time-out."""
    return f"{salt}/tle-rerun" if salt else "tle-rerun"


@functools.lru_cache(maxsize=256)
def _limits_key(limits: Limits) -> str:
    """``Limits.key()``, computed once per distinct limits (it is asked for on every run)."""
    return limits.key()


@dataclass
class AuditEngine:
    """The store, the job queue and the build cache one audit runs on, plus run counters.

    Safe to use from several threads at once (one per problem of an audit): every run they ask
    for goes through the one ``queue``.
    """

    store: Store
    executor: Executor
    cache_dir: Path
    # Never plain unless asked for by name: without bwrap or unshare, an engine that names no
    # backend raises SandboxUnavailable (saying what to install) before anything runs.
    backend: Backend = field(default_factory=sandbox.choose_backend)
    progress: Progress | None = None
    executed_runs: int = 0
    cached_runs: int = 0
    planned: int = 0
    finished: int = 0
    executed_stdins: set[str] = field(default_factory=set)  # sha256 of stdins actually run
    chunk_runs: int = CHUNK_RUNS
    chunk_budget: int = CHUNK_BUDGET
    chunk_seconds: float = CHUNK_SECONDS
    _builds: dict[tuple[Path, str], Built] = field(default_factory=dict)
    queue: JobQueue = field(init=False, repr=False)
    _lock: threading.RLock = field(init=False, repr=False, default_factory=threading.RLock)
    _outputs: OrderedDict[str, bytes] = field(init=False, repr=False, default_factory=OrderedDict)

    def __post_init__(self) -> None:
        self.queue = JobQueue(self.executor)

    # -- building ------------------------------------------------------------------------------

    def _program(self, path: Path, flags: CompileFlags = None) -> Program:
        """A C or C++ file brings the headers beside it (``*.h``, ``*.hpp``) into its build, so
        testlib validators and checkers (``#include "testlib.h"``) compile as they are.
        ``flags`` (a problem's ``[compile]`` table) replaces the language's default flags; the
        ``[languages]`` table of the problem holding ``path`` names its language, if it does,
        and its ``[compile] defines`` the macros a C or C++ program gets (``ONLINE_JUDGE``)."""
        declared = declared_language(path)
        lang, standard = split_language(declared) if declared else (None, None)
        program = program_from_path(path, lang)
        if path.is_file() and program.language in (Language.C, Language.CPP):
            headers = sorted(h.name for h in path.parent.iterdir() if h.suffix in (".h", ".hpp"))
            program = dataclasses.replace(program, sources=(path.name, *headers))
        own = (flags or {}).get(str(program.language))
        if standard is not None and program.language in (Language.C, Language.CPP):
            own = standard_flags(program.language, standard, None if own is None else tuple(own))
        elif standard is not None and program.language is Language.JAVA:
            own = (*(own or ()), *jvm.release_flags(standard))
        if program.language in (Language.C, Language.CPP):  # -DONLINE_JUDGE, as judges build
            own = with_defines(
                program.language, None if own is None else tuple(own), declared_defines(path)
            )
        if own is not None:
            program = dataclasses.replace(program, compile_flags=tuple(own))
        return program

    @staticmethod
    def _build_key(path: Path, flags: CompileFlags) -> tuple[Path, str]:
        return path, repr(sorted((k, tuple(v)) for k, v in (flags or {}).items()))

    def build(self, path: Path, flags: CompileFlags = None) -> Built:
        """Build a source file or build.sh directory (cached by content hash in ``cache_dir``),
        with ``flags`` per language replacing the defaults (part of the build's identity)."""
        key = self._build_key(path, flags)
        with self._lock:
            hit = self._builds.get(key)
        if hit is None:
            try:
                hit = build(self._program(path, flags), cache_dir=self.cache_dir)
            except ToolchainError as exc:
                hit = _unbuildable(path, exc)
            with self._lock:
                self._builds[key] = hit
        return hit

    def build_all(self, paths: Sequence[Path], flags: CompileFlags = None) -> None:
        """Build many programs in parallel through the job queue (compiling dominates start-up)."""
        with self._lock:
            todo = list(
                dict.fromkeys(p for p in paths if self._build_key(p, flags) not in self._builds)
            )
        programs: dict[Path, Program] = {}
        failed: dict[Path, Built] = {}
        for p in todo:
            try:
                programs[p] = self._program(p, flags)
            except ToolchainError as exc:  # no language here: it fails as a build does
                failed[p] = _unbuildable(p, exc)
        if programs:
            done = build_many(
                list(programs.values()), cache_dir=self.cache_dir, executor=self.queue
            )
            failed.update(zip(programs, done, strict=True))
        with self._lock:
            for p, b in failed.items():
                self._builds[self._build_key(p, flags)] = b

    # -- outputs -------------------------------------------------------------------------------

    def output(self, sha256: str) -> bytes:
        """A run's output by its sha256, read back from the store (recent ones are cached)."""
        if sha256 == EMPTY_SHA256:
            return b""
        with self._lock:
            hit = self._outputs.get(sha256)
            if hit is not None:
                self._outputs.move_to_end(sha256)
                return hit
        data = self.store.get_blob(sha256)
        if data is None:  # pragma: no cover - a store edited by hand
            raise KeyError(f"output {sha256[:12]} is not in the store {self.store.path}")
        if len(data) <= _OUTPUT_CACHE // 8:
            with self._lock:
                self._outputs[sha256] = data
                total = sum(len(v) for v in self._outputs.values())
                while total > _OUTPUT_CACHE and self._outputs:
                    total -= len(self._outputs.popitem(last=False)[1])
        return data

    # -- running -------------------------------------------------------------------------------

    def run(self, specs: Sequence[RunSpec]) -> list[RunResult]:
        """Results of ``specs`` in order; only runs missing from the store execute.

        First verdicts of one program under the same limits share sandbox sessions; a salted
        run (a re-judge is a fresh run of the same program) is the first run of a sandbox of
        its own. A wall-clock time-out with little CPU is run once more (see the module's
        docstring).
        """
        results = self._execute([self._keyed(s) for s in specs])
        again = [
            i for i, r in enumerate(results) if wall_clock_artefact(r.outcome, specs[i].limits)
        ]
        if again:
            retry = [dataclasses.replace(specs[i], salt=_retry_salt(specs[i].salt)) for i in again]
            for i, rerun in zip(again, self._execute([self._keyed(s) for s in retry]), strict=True):
                first = (results[i].outcome.wall_time, results[i].outcome.cpu_time)
                results[i] = dataclasses.replace(rerun, tle_first=first)
        return results

    def _keyed(self, s: RunSpec) -> Keyed:
        """A salted run (a re-judge, a re-check, a time-out's second run) is a fresh run: the
        first of its own sandbox, grouped and keyed apart from the first verdicts."""
        lk = _limits_key(s.limits)
        salt = f"{s.salt}/{_FRESH}" if s.salt else ""
        key = job_key(_RUN_TAG, s.built.program_id, sha256_bytes(s.stdin), lk, self.backend, salt)
        mode = "interact" if isinstance(s.built, WithInteractor) else "stdin"
        return key, (mode, s.built.program_id, lk, _FRESH if s.salt else ""), s

    def run_grid(
        self, programs: Sequence[tuple[str, Built]], inputs: Mapping[str, bytes], limits: Limits
    ) -> dict[tuple[str, str], RunResult]:
        """Every built program on every input, keyed by (program name, input key).

        Programs that did not build are left out: the caller decides what their absence means.
        """
        ok = [(n, b) for n, b in programs if b.ok]
        keys = list(inputs)
        outs = self.run([RunSpec(b, inputs[k], limits) for _, b in ok for k in keys])
        it = iter(outs)
        return {(n, k): next(it) for n, _ in ok for k in keys}

    def check(self, specs: Sequence[CheckSpec]) -> list[RunResult]:
        """Results of checker-program calls in order (cached like runs)."""
        keyed: list[Keyed] = []
        for s in specs:
            lk = _limits_key(s.limits)
            key = job_key(
                "audit-check/2",
                s.built.program_id,
                sha256_bytes(s.input),
                sha256_bytes(s.output),
                sha256_bytes(s.answer),
                lk,
                self.backend,
            )
            keyed.append((key, ("checker", s.built.program_id, lk), s))
        return self._execute(keyed)

    def _submit(self, group: tuple[str, ...], keys: list[str], specs: dict[str, Any]) -> Any:
        payload = self._payload(group[0], [specs[k] for k in keys])
        payload["fresh"] = group[-1] == _FRESH
        payload["budget"] = self.chunk_budget
        payload["seconds"] = self.chunk_seconds
        return self.queue.submit(chunk_job, payload)

    def _execute(self, keyed: list[Keyed]) -> list[RunResult]:
        uniq: dict[str, tuple[tuple[str, ...], Any]] = {}
        for key, group, spec in keyed:
            uniq.setdefault(key, (group, spec))
        records = self.store.get_many(uniq) if uniq else {}
        missing = sorted(k for k in uniq if k not in records)
        with self._lock:
            self.planned += len(uniq)
            self.cached_runs += len(uniq) - len(missing)
            self.finished += len(uniq) - len(missing)
        self._report()

        # Group the missing runs by program (and limits, salt) into deterministic chunks.
        groups: dict[tuple[str, ...], list[str]] = {}
        for k in missing:
            groups.setdefault(uniq[k][0], []).append(k)
        specs = {k: uniq[k][1] for k in missing}
        pending: dict[Any, tuple[tuple[str, ...], list[str]]] = {}
        try:
            # Chunks as long as ``chunk_runs``, shorter when a call has too few runs to feed
            # every worker twice (a session start costs tens of runs).
            size = max(
                MIN_CHUNK, min(self.chunk_runs, math.ceil(len(missing) / (2 * self.queue.jobs)))
            )
            for group, keys in sorted(groups.items()):
                for i in range(0, len(keys), size):
                    part = keys[i : i + size]
                    pending[self._submit(group, part, specs)] = (group, part)
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    group, part = pending.pop(fut)
                    res = fut.result()
                    outs = res["outcomes"]
                    ran = part[: len(outs)]
                    # blobs first: a record never points at an output that is not stored
                    self.store.put_blobs(res["blobs"])
                    self.store.put_many(list(zip(ran, outs, strict=True)), kind=KIND_RUN)
                    records.update(zip(ran, outs, strict=True))
                    del res, outs
                    rest = part[len(ran) :]
                    if rest:  # handed back: split so that both halves can run at once
                        half = (len(rest) + 1) // 2
                        for piece in (rest[:half], rest[half:]):
                            if piece:
                                pending[self._submit(group, piece, specs)] = (group, piece)
                    with self._lock:
                        self.finished += len(ran)
                        self.executed_runs += len(ran)
                        for k in ran:
                            spec = specs[k]
                            if isinstance(spec, RunSpec):
                                self.executed_stdins.add(sha256_bytes(spec.stdin))
                    self._report()
        finally:
            for fut in pending:
                fut.cancel()
        return [self._result(records[key], spec.limits) for key, _, spec in keyed]

    def _result(self, record: dict[str, Any], limits: Limits) -> RunResult:
        ia = record.get("interactor") or {}
        return RunResult(
            dataclasses.replace(Outcome.from_dict(record), limits=limits),
            record.get("stdout_sha256", EMPTY_SHA256),
            int(record.get("stdout_size", 0)),
            self,
            interactor_verdict=ia.get("verdict"),
            interactor_message=ia.get("message", ""),
            interactor_first=bool(ia.get("first")),
        )

    def _payload(self, mode: str, specs: list[Any]) -> dict[str, Any]:
        first = specs[0]
        ro = sorted(set(first.built.ro_binds))
        payload: dict[str, Any] = {
            "mode": mode,
            "argv": list(first.built.argv),
            "limits": first.limits.to_dict(),
            "ro_binds": ro,
            "backend": str(self.backend),
        }
        if mode == "checker":
            payload["items"] = [(s.input, s.output, s.answer) for s in specs]
            return payload
        payload["stdins"] = [s.stdin for s in specs]
        if isinstance(first.built, WithInteractor):
            payload.update(interaction_payload(first.built))
        return payload

    def _report(self) -> None:
        if self.progress is not None:
            with self._lock:
                self.progress(self.finished, self.planned)


def _unbuildable(path: Path, exc: ToolchainError) -> Built:
    """A program in no language this judge knows (``x.hs``, ``x.kt``): a build that failed
    with the reason, so a pool member leaves its pool named (and a reference is a harness
    error), as one that does not compile does -- not a traceback that ends the audit."""
    return Built(
        program_id=path.name,
        status=Status.BUILD_ERROR,
        argv=(),
        workdir=path.parent,
        message=str(exc).replace(f"{path}: ", "", 1),
        language=Language.SCRIPT,  # none applies; a failed build is never run
    )
