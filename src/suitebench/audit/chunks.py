"""A chunk of an audit's runs: the worker's side (:mod:`suitebench.audit.runs` is the
coordinator's).

One job runs one program over many stdins in one sandbox session (or each in a fresh one), a
submission against its interactor, or a checker over many items, and hands back plain data:
each outcome's record (without its output) and each distinct output once, as a compressed
blob. It is a top-level function of plain data in and out, so a local pool and Dask workers
run it alike.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

from suitebench.audit.interactive import interaction_record, run_interactions
from suitebench.run import sandbox
from suitebench.run.outcome import Backend, Limits, MiB, Outcome, Status
from suitebench.run.store import encode_blob

__all__ = ["CHUNK_BUDGET", "CHUNK_SECONDS", "STDERR_KEEP", "chunk_job"]

CHUNK_BUDGET = 32 * MiB  # compressed output a chunk returns before handing the rest back
CHUNK_SECONDS = 1.0  # wall time of a chunk's runs (summed) before it hands the rest back
STDERR_KEEP = 1024  # bytes of a run's stderr kept from its start and from its end


class _StreamedOutput:
    """A session's ``stdout_sink``: digests a long output as it arrives (sha256 and the blob
    :func:`~suitebench.run.store.encode_blob` makes of an output that long: zlib level 1), so
    a worker never holds an output that ran to the output limit, let alone twice while it is
    joined (two workers each holding two 64 MiB copies raised the audit's peak RSS by 100 MiB).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.sha = hashlib.sha256()
        self.zip = zlib.compressobj(1)
        self.parts: list[bytes] = []
        self.size = 0

    def __call__(self, piece: bytes) -> None:
        self.sha.update(piece)
        self.parts.append(self.zip.compress(piece))
        self.size += len(piece)

    def take(self) -> tuple[str, str, int, bytes] | None:
        """The streamed output's blob ``(sha256, codec, size, payload)``, or None if the last
        run's output was short (and so is in its outcome); ready for the next run."""
        if self.size == 0:
            return None
        blob = (self.sha.hexdigest(), "z", self.size, b"".join([*self.parts, self.zip.flush()]))
        self._reset()
        return blob


def _digest(
    o: Outcome,
    blobs: dict[str, tuple[str, str, int, bytes]],
    streamed: tuple[str, str, int, bytes] | None = None,
) -> dict[str, Any]:
    """The record of one outcome: ``Outcome.to_dict`` without the output and the limits (the
    run's key holds those); its output goes to ``blobs`` (once per distinct output).
    ``streamed`` is the output's blob when the session streamed it (``o.stdout`` is empty)."""
    if streamed is None:
        sha, codec, payload = encode_blob(o.stdout)
        size = len(o.stdout)
    else:
        sha, codec, size, payload = streamed
    if sha not in blobs:
        blobs[sha] = (sha, codec, size, payload)
    err = o.stderr
    if len(err) > 2 * STDERR_KEEP:
        err = err[:STDERR_KEEP] + err[-STDERR_KEEP:]
    return {
        "status": str(o.status),
        "exit_code": o.exit_code,
        "signal": o.signal,
        "wall_time": round(o.wall_time, 6),
        "cpu_time": round(o.cpu_time, 6),
        "peak_memory_kb": o.peak_memory_kb,
        "stdout_truncated": o.stdout_truncated,
        "stderr_truncated": o.stderr_truncated,
        "backend": str(o.backend),
        "timeout_kind": o.timeout_kind,
        "message": o.message,
        "stdout_sha256": sha,
        "stdout_size": size,
        "stderr_b64": base64.b64encode(err).decode(),
        "stderr_size": len(o.stderr),
    }


def chunk_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one chunk (top level and plain data, so local pools and Dask run it alike).

    ``mode == "stdin"``: one sandbox session of one program over many stdins. ``mode ==
    "checker"``: one checker call per item with ``input``, ``output`` and ``answer`` files in a
    fresh working directory. Each outcome is digested as it comes (see :func:`_digest`). With
    ``handback`` (the default), the chunk returns early after a time-out or once its compressed
    outputs pass ``budget`` bytes, or once its runs' wall times add up to more than ``seconds``
    (the session's start is not counted); the caller runs the rest as new chunks. Returns
    ``outcomes`` (records, in order, possibly fewer than asked) and ``blobs`` (``(sha256,
    codec, size, payload)``).
    """
    limits = Limits.from_dict(payload["limits"])
    argv = list(payload["argv"])
    ro = tuple(payload.get("ro_binds", ()))
    backend = Backend(payload["backend"]) if payload.get("backend") else None
    budget = int(payload.get("budget", CHUNK_BUDGET))
    seconds = float(payload.get("seconds", CHUNK_SECONDS))
    handback = bool(payload.get("handback", True))
    records: list[dict[str, Any]] = []
    blobs: dict[str, tuple[str, str, int, bytes]] = {}
    kept, ran, distinct = 0, 0.0, 0  # compressed bytes kept, wall seconds run, blobs seen

    def stop(o: Outcome, total: int) -> bool:
        nonlocal kept, ran, distinct
        if len(blobs) > distinct:  # the run's output was new: the newest blob is its
            distinct = len(blobs)
            kept += len(next(reversed(blobs.values()))[3])
        ran += o.wall_time
        if not handback or len(records) >= total:
            return False
        return o.status is Status.TIMEOUT or kept > budget or ran > seconds

    with tempfile.TemporaryDirectory(prefix="suitebench-audit-") as scratch:
        os.chmod(scratch, 0o777)
        if payload["mode"] == "stdin":
            stdins = payload["stdins"]
            sink = _StreamedOutput()
            # A fresh chunk (re-judges, re-checks) starts a new sandbox for every run, so each
            # is the first run of its sandbox: nothing an earlier run did (its pids included)
            # can reach it. Otherwise the runs share one session, each still in a new IPC
            # namespace and work dir (run/syscalls.py).
            fresh = bool(payload.get("fresh"))
            session: sandbox.Session | None = None
            try:
                for n, data in enumerate(stdins):
                    if session is None or fresh:
                        if session is not None:
                            session.close()
                        work = Path(scratch) / f"run{n}" if fresh else Path(scratch)
                        work.mkdir(exist_ok=True)
                        os.chmod(work, 0o777)
                        session = sandbox.Session(
                            argv, cwd=work, limits=limits, ro_binds=ro, backend=backend
                        )
                    o = session.run(data, stdout_sink=sink)
                    streamed = sink.take()  # a run the sandbox lost has no output of its own
                    ok = o.status is not Status.SANDBOX_ERROR
                    records.append(_digest(o, blobs, streamed if ok else None))
                    if stop(o, len(stdins)):
                        break
            finally:
                if session is not None:
                    session.close()
        elif payload["mode"] == "interact":
            for ia in run_interactions(payload, argv, limits, Path(scratch)):
                o = dataclasses.replace(ia.submission, stdout=ia.output)
                records.append({**_digest(o, blobs), "interactor": interaction_record(ia)})
                if stop(o, len(payload["stdins"])):
                    break
        else:
            items = payload["items"]
            for n, (inp, out, ans) in enumerate(items):
                work = Path(scratch) / str(n)
                work.mkdir()
                os.chmod(work, 0o777)
                for name, data in (("input", inp), ("output", out), ("answer", ans)):
                    (work / name).write_bytes(data)
                    os.chmod(work / name, 0o644)
                o = sandbox.run(
                    [*argv, "input", "output", "answer"],
                    cwd=work,
                    limits=limits,
                    ro_binds=ro,
                    backend=backend,
                )
                records.append(_digest(o, blobs))
                if stop(o, len(items)):
                    break
    return {"outcomes": records, "blobs": list(blobs.values())}
