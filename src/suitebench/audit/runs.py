"""Every run of the audit is a job in the store.

A run's key is a hash of what determines its result: the program id, the input's sha256, the
limits, the isolation backend (and a salt for deliberate re-runs such as the determinism
re-judges). Runs of one program are grouped into chunks that execute in one ``run_batch`` (one
sandbox start-up per chunk, the throughput lever); a chunk is one ``run_cached`` job, and once
the chunk's results are committed every run in it gets a small pointer record of its own. So
an audit killed halfway and restarted reruns nothing already stored (the same missing runs
regroup into the same chunk keys), and adding an arm runs only the inputs not seen before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.run import sandbox
from suitebench.run.executor import Executor, run_cached
from suitebench.run.outcome import Backend, Limits, Outcome, Status, sha256_bytes
from suitebench.run.store import Store, job_key
from suitebench.run.toolchain import (
    Built,
    Language,
    Program,
    build,
    build_many,
    program_from_path,
)

__all__ = ["CheckSpec", "Engine", "RunSpec", "chunk_job", "file_sha256"]

Progress = Callable[[int, int], None]

CHUNK_RUNS = 48
KIND_CHUNK = "audit-chunk"
KIND_RUN = "audit-run"


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


def file_sha256(path: Path) -> str:
    """sha256 of a source file, or of a directory's files (names and contents)."""
    if path.is_file():
        return sha256_bytes(path.read_bytes())
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f.relative_to(path).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def chunk_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one chunk (top level and plain data, so local pools and Dask run it alike).

    ``mode == "stdin"``: ``run_batch`` of one program over many stdins. ``mode == "checker"``:
    one checker call per item with ``input``, ``output`` and ``answer`` files in a fresh
    working directory.
    """
    limits = Limits.from_dict(payload["limits"])
    argv = list(payload["argv"])
    ro = tuple(payload.get("ro_binds", ()))
    with tempfile.TemporaryDirectory(prefix="suitebench-audit-") as scratch:
        os.chmod(scratch, 0o777)
        if payload["mode"] == "stdin":
            outs = sandbox.run_batch(
                argv, payload["stdins"], cwd=scratch, limits=limits, ro_binds=ro
            )
        else:
            outs = []
            for n, (inp, out, ans) in enumerate(payload["items"]):
                work = Path(scratch) / str(n)
                work.mkdir()
                os.chmod(work, 0o777)
                for name, data in (("input", inp), ("output", out), ("answer", ans)):
                    (work / name).write_bytes(data)
                    os.chmod(work / name, 0o644)
                outs.append(
                    sandbox.run(
                        [*argv, "input", "output", "answer"], cwd=work, limits=limits, ro_binds=ro
                    )
                )
    return {"outcomes": [o.to_dict() for o in outs]}


@dataclass
class Engine:
    """The store, the executor and the build cache one audit runs on, plus run counters."""

    store: Store
    executor: Executor
    cache_dir: Path
    backend: Backend = field(default_factory=sandbox.detect_backend)
    progress: Progress | None = None
    executed_runs: int = 0
    cached_runs: int = 0
    planned: int = 0
    finished: int = 0
    executed_stdins: set[str] = field(default_factory=set)  # sha256 of stdins actually run
    _builds: dict[Path, Built] = field(default_factory=dict)

    # -- building ------------------------------------------------------------------------------

    def _program(self, path: Path) -> Program:
        """A C or C++ file brings the headers beside it (``*.h``, ``*.hpp``) into its build, so
        testlib validators and checkers (``#include "testlib.h"``) compile as they are."""
        program = program_from_path(path)
        if path.is_file() and program.language in (Language.C, Language.CPP):
            headers = sorted(h.name for h in path.parent.iterdir() if h.suffix in (".h", ".hpp"))
            program = dataclasses.replace(program, sources=(path.name, *headers))
        return program

    def build(self, path: Path) -> Built:
        """Build a source file or build.sh directory (cached by content hash in ``cache_dir``)."""
        hit = self._builds.get(path)
        if hit is None:
            hit = build(self._program(path), cache_dir=self.cache_dir)
            self._builds[path] = hit
        return hit

    def build_all(self, paths: Sequence[Path]) -> None:
        """Build many programs in parallel on the executor (compiling dominates start-up)."""
        todo = list(dict.fromkeys(p for p in paths if p not in self._builds))
        if todo:
            done = build_many(
                [self._program(p) for p in todo], cache_dir=self.cache_dir, executor=self.executor
            )
            self._builds.update(zip(todo, done, strict=True))

    # -- running -------------------------------------------------------------------------------

    def run(self, specs: Sequence[RunSpec]) -> list[Outcome]:
        """Outcomes of ``specs`` in order; only runs missing from the store execute."""
        keyed: list[tuple[str, tuple[str, ...], Any]] = []
        for s in specs:
            key = job_key(
                "audit-run",
                s.built.program_id,
                sha256_bytes(s.stdin),
                s.limits,
                self.backend,
                s.salt,
            )
            group = ("stdin", s.built.program_id, s.limits.key(), s.salt)
            keyed.append((key, group, s))
        return self._execute(keyed)

    def run_grid(
        self, programs: Sequence[tuple[str, Built]], inputs: Mapping[str, bytes], limits: Limits
    ) -> dict[tuple[str, str], Outcome]:
        """Every built program on every input, keyed by (program name, input key).

        Programs that did not build are left out: the caller decides what their absence means.
        """
        ok = [(n, b) for n, b in programs if b.ok]
        keys = list(inputs)
        outs = self.run([RunSpec(b, inputs[k], limits) for _, b in ok for k in keys])
        it = iter(outs)
        return {(n, k): next(it) for n, _ in ok for k in keys}

    def check(self, specs: Sequence[CheckSpec]) -> list[Outcome]:
        """Outcomes of checker-program calls in order (cached like runs)."""
        keyed: list[tuple[str, tuple[str, ...], Any]] = []
        for s in specs:
            key = job_key(
                "audit-check",
                s.built.program_id,
                sha256_bytes(s.input),
                sha256_bytes(s.output),
                sha256_bytes(s.answer),
                s.limits,
                self.backend,
            )
            keyed.append((key, ("checker", s.built.program_id, s.limits.key(), ""), s))
        return self._execute(keyed)

    def _execute(self, keyed: list[tuple[str, tuple[str, ...], Any]]) -> list[Outcome]:
        uniq: dict[str, tuple[tuple[str, ...], Any]] = {}
        for key, group, spec in keyed:
            uniq.setdefault(key, (group, spec))
        self.planned += len(uniq)
        pointers = self.store.get_many(uniq) if uniq else {}
        missing = sorted(k for k in uniq if k not in pointers)
        self.cached_runs += len(uniq) - len(missing)
        self.finished += len(uniq) - len(missing)
        self._report()

        # Group the missing runs by program (and limits, salt) into deterministic chunks.
        groups: dict[tuple[str, ...], list[str]] = {}
        for k in missing:
            groups.setdefault(uniq[k][0], []).append(k)
        jobs: list[tuple[str, dict[str, Any]]] = []
        members: dict[str, list[str]] = {}
        for group, keys in sorted(groups.items()):
            for i in range(0, len(keys), CHUNK_RUNS):
                part = keys[i : i + CHUNK_RUNS]
                ck = job_key("audit-chunk", *part)
                members[ck] = part
                jobs.append((ck, self._payload(group[0], [uniq[k][1] for k in part])))
        if jobs:
            base = self.finished

            def chunk_progress(done: int, total: int) -> None:
                self.finished = base + (len(missing) * done) // max(1, total)
                self._report()

            results = run_cached(
                chunk_job,
                jobs,
                store=self.store,
                executor=self.executor,
                kind=KIND_CHUNK,
                progress=chunk_progress,
                commit_every=4,
            )
            self.finished = base + len(missing)
            self.executed_runs += len(missing)
            for k in missing:
                spec = uniq[k][1]
                if isinstance(spec, RunSpec):
                    self.executed_stdins.add(sha256_bytes(spec.stdin))
            new_ptrs = [
                (k, {"chunk": ck, "i": i})
                for ck, part in members.items()
                for i, k in enumerate(part)
            ]
            self.store.put_many(new_ptrs, kind=KIND_RUN)
            for k, v in new_ptrs:
                pointers[k] = v
            chunks = results
        else:
            chunks = {}
        need = {p["chunk"] for p in pointers.values()} - set(chunks)
        if need:
            chunks.update(self.store.get_many(need))
        self._report()
        out: list[Outcome] = []
        for key, _, _ in keyed:
            ptr = pointers[key]
            chunk = chunks.get(ptr["chunk"])
            if chunk is None:  # pragma: no cover - a store edited by hand
                out.append(Outcome(Status.SANDBOX_ERROR, message="stored chunk missing"))
                continue
            out.append(Outcome.from_dict(chunk["outcomes"][ptr["i"]]))
        return out

    def _payload(self, mode: str, specs: list[Any]) -> dict[str, Any]:
        first = specs[0]
        ro = sorted(set(first.built.ro_binds))
        payload: dict[str, Any] = {
            "mode": mode,
            "argv": list(first.built.argv),
            "limits": first.limits.to_dict(),
            "ro_binds": ro,
        }
        if mode == "stdin":
            payload["stdins"] = [s.stdin for s in specs]
        else:
            payload["items"] = [(s.input, s.output, s.answer) for s in specs]
        return payload

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.finished, self.planned)
