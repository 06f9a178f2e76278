"""Executors: the same batch gives the same results on the local pool and on Dask."""

from __future__ import annotations

import base64
import math
import os
import socket
import textwrap
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from suitebench.run.executor import (
    DaskExecutor,
    Executor,
    ExecutorError,
    LocalExecutor,
    make_executor,
    run_all,
    run_cached,
    sandbox_job,
)
from suitebench.run.outcome import Limits, Outcome, Status
from suitebench.run.store import Store, job_key
from suitebench.run.toolchain import Built, build, program_from_path

# Average of n numbers: divides by n without checking n == 0 (SIGFPE), sums in int (overflow),
# and exits 3 on a negative count.
AVERAGE_C = textwrap.dedent(
    """\
    #include <stdio.h>
    int main(void) {
        int n; if (scanf("%d", &n) != 1) return 2;
        if (n < 0) { fprintf(stderr, "negative count\\n"); return 3; }
        int s = 0;
        for (int i = 0; i < n; i++) { int x; scanf("%d", &x); s += x; }
        volatile int d = n;
        printf("%d\\n", s / d);
        return 0;
    }
    """
)


@pytest.fixture(scope="module")
def average(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("average")
    src = root / "average.c"
    src.write_text(AVERAGE_C)
    built = build(program_from_path(src), cache_dir=root / "cache")
    assert built.ok, built.message
    return built


def batch(built: Built) -> list[dict[str, Any]]:
    """30 runs: ordinary averages, an overflow, n = 0 (crash) and a negative count."""
    inputs = []
    for i in range(30):
        if i == 7:
            text = "0\n"
        elif i == 11:
            text = "-1\n"
        elif i == 13:
            text = "2\n2000000000 2000000000\n"
        else:
            text = f"{i + 1}\n" + " ".join(str(i * k) for k in range(i + 1)) + "\n"
        inputs.append(
            {
                "argv": list(built.argv),
                "stdin_b64": base64.b64encode(text.encode()).decode(),
                "limits": Limits(wall_time=10, memory_mb=256).to_dict(),
                "ro_binds": list(built.ro_binds),
            }
        )
    return inputs


def essence(d: dict[str, Any]) -> tuple[str, int | None, int | None, bytes, bytes]:
    o = Outcome.from_dict(d)
    return (str(o.status), o.exit_code, o.signal, o.stdout, o.stderr)


def collect(ex: Executor, payloads: list[dict[str, Any]]) -> list[Any]:
    got: dict[int, Any] = {}
    for i, r in ex.map_unordered(sandbox_job, payloads):
        assert i not in got, "each index is yielded once"
        got[i] = essence(r)
    assert sorted(got) == list(range(len(payloads)))
    return [got[i] for i in range(len(payloads))]


def check_expected(results: list[Any]) -> None:
    assert results[0] == ("ok", 0, None, b"0\n", b"")
    assert results[4] == ("ok", 0, None, b"8\n", b"")  # 4 * (0+1+2+3+4) / 5
    assert results[7][0] == "signaled" and results[7][2] == 8  # SIGFPE on n = 0
    assert results[11] == ("runtime_error", 3, None, b"", b"negative count\n")
    assert results[13] == ("ok", 0, None, b"-147483648\n", b"")  # the int overflow


def test_local_pool_runs_the_batch(average: Built) -> None:
    with LocalExecutor(2) as ex:
        results = collect(ex, batch(average))
    check_expected(results)


@pytest.mark.dask
def test_dask_local_cluster_gives_the_same_results_as_the_local_pool(average: Built) -> None:
    payloads = batch(average)
    with LocalExecutor(2) as ex:
        local = collect(ex, payloads)
    with DaskExecutor("local", jobs=2) as ex:
        assert ex.jobs == 2
        on_dask = collect(ex, payloads)
        # A job that fails on a worker fails the batch there too, with the worker's exception.
        with pytest.raises(KeyError, match="argv"):
            list(ex.map_unordered(sandbox_job, [{"stdin": "1\n"}]))
    assert on_dask == local
    check_expected(on_dask)


@pytest.mark.dask
def test_dask_scheduler_address_and_run_cached(average: Built, tmp_path: Path) -> None:
    from distributed import LocalCluster

    payloads = batch(average)
    jobs = [(job_key("average", i), p) for i, p in enumerate(payloads)]
    with Store(tmp_path / "local.sqlite") as store, LocalExecutor(2) as ex:
        local = run_cached(sandbox_job, jobs, store=store, executor=ex)
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
    )
    try:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        with (
            Store(tmp_path / "dask.sqlite") as store,
            make_executor(jobs=2, dask=address) as ex,
        ):
            assert isinstance(ex, DaskExecutor)
            on_dask = run_cached(sandbox_job, jobs, store=store, executor=ex)
            assert len(store) == 30
    finally:
        cluster.close()
    assert {k: essence(v) for k, v in on_dask.items()} == {k: essence(v) for k, v in local.items()}


def test_process_pool_for_cpu_bound_python() -> None:
    values = [10**k + 7 for k in range(40)]
    with LocalExecutor(2, processes=True) as ex:
        got = dict(ex.map_unordered(math.isqrt, values))
    assert [got[i] for i in range(len(values))] == [math.isqrt(v) for v in values]


def _niceness_and_parent(_: int) -> tuple[int, int]:
    return os.nice(0), os.getppid()


def test_background_processes_start_afresh_and_yield_the_cores() -> None:
    """Builds beside the reference's runs: worker processes from a fork server (not forks of
    a process whose threads may hold locks), niced by what the pool is told."""
    mine = os.nice(0)
    with LocalExecutor(2, processes=True, start="forkserver", nice=10) as ex:
        got = dict(ex.map_unordered(_niceness_and_parent, range(6)))
    assert {n for n, _ in got.values()} == {min(19, mine + 10)}
    assert os.getpid() not in {p for _, p in got.values()}  # the fork server's children
    with LocalExecutor(2, processes=True) as ex:  # forks of ours, as niced as we are
        got = dict(ex.map_unordered(_niceness_and_parent, range(2)))
    assert {p for _, p in got.values()} == {os.getpid()}
    assert {n for n, _ in got.values()} == {mine}


def test_a_failing_job_raises_from_map_unordered() -> None:
    def job(x: int) -> int:
        if x == 5:
            raise ValueError("bad payload 5")
        return x * 2

    seen = []
    with LocalExecutor(2) as ex, pytest.raises(ValueError, match="bad payload 5"):
        for i, r in ex.map_unordered(job, range(10)):
            seen.append((i, r))
    assert all(r == i * 2 for i, r in seen)


def test_make_executor_and_bad_dask_address() -> None:
    with make_executor(jobs=3) as ex:
        assert isinstance(ex, LocalExecutor) and ex.jobs == 3
    with pytest.raises(ExecutorError, match="scheduler address"):
        make_executor(jobs=1, dask="localhost:8786")


def test_run_cached_runs_each_missing_key_once(tmp_path: Path) -> None:
    calls: Counter[int] = Counter()
    lock = threading.Lock()

    def square(n: int) -> dict[str, Any]:
        with lock:
            calls[n] += 1
        return {"n": n, "square": n * n, "pair": (n, -n)}

    jobs = [(job_key("sq", n), n) for n in range(100)]
    jobs += jobs[:30]  # duplicates
    progress: list[tuple[int, int]] = []
    with Store(tmp_path / "s.sqlite") as store, LocalExecutor(2) as ex:
        first = run_cached(
            square,
            jobs,
            store=store,
            executor=ex,
            kind="square",
            progress=lambda d, t: progress.append((d, t)),
            commit_every=7,
        )
        assert len(first) == 100 and len(store) == 100
        assert set(calls.values()) == {1}
        assert first[job_key("sq", 9)] == {"n": 9, "square": 81, "pair": [9, -9]}
        assert progress[0] == (0, 100) and progress[-1] == (100, 100)
        assert [d for d, _ in progress] == sorted(d for d, _ in progress)

        # Everything cached: nothing runs; two new keys: only they run.
        again = run_cached(square, jobs, store=store, executor=ex)
        assert again == first and sum(calls.values()) == 100
        more = [*jobs, (job_key("sq", 100), 100), (job_key("sq", 101), 101)]
        third = run_cached(square, more, store=store, executor=ex, kind="square")
        assert len(third) == 102 and calls[100] == calls[101] == 1
        assert sum(calls.values()) == 102
        assert store.count("square") == 102


def test_run_cached_keeps_finished_results_when_a_job_fails(tmp_path: Path) -> None:
    broken = {"on": True}

    def job(n: int) -> dict[str, int]:
        if n == 42 and broken["on"]:
            raise RuntimeError("worker crashed")
        return {"n": n}

    jobs = [(job_key("j", n), n) for n in range(60)]
    with Store(tmp_path / "s.sqlite") as store:
        with LocalExecutor(1) as ex, pytest.raises(RuntimeError, match="worker crashed"):
            run_cached(job, jobs, store=store, executor=ex, commit_every=1000)
        kept = len(store)
        assert 42 <= kept < 60  # one worker, in order: everything before 42 was kept
        assert job_key("j", 42) not in store
        broken["on"] = False
        ran: list[int] = []

        def counted(n: int) -> dict[str, int]:
            ran.append(n)
            return job(n)

        with LocalExecutor(1) as ex:
            out = run_cached(counted, jobs, store=store, executor=ex)
        assert len(out) == 60 and len(ran) == 60 - kept and 42 in ran


def test_run_all_keeps_input_order(average: Built) -> None:
    payloads = batch(average)[:6]
    seen: list[tuple[int, int]] = []
    out = run_all(sandbox_job, payloads, progress=lambda d, t: seen.append((d, t)))
    assert [Outcome.from_dict(o).stdout for o in out] == [
        b"0\n",
        b"0\n",
        b"2\n",
        b"4\n",
        b"8\n",
        b"12\n",
    ]
    assert seen[-1] == (6, 6)
    assert Outcome.from_dict(out[0]).status is Status.OK


@pytest.mark.dask
def test_unreachable_scheduler_is_a_clear_error() -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ExecutorError, match=f"127.0.0.1:{port}"):
        DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout=2)


# -- the job queue: one queue, many callers, priorities ---------------------------------------


def test_job_queue_runs_the_earliest_priority_first() -> None:
    from suitebench.run.executor import JobQueue

    gate = threading.Event()
    order: list[str] = []

    def job(name: str) -> str:
        if name == "blocker":
            gate.wait(10)
        order.append(name)
        return name

    with LocalExecutor(1) as ex:
        q = JobQueue(ex)
        first = q.submit(job, "blocker")  # occupies the only worker
        with q.priority(5):
            late = [q.submit(job, f"late-{i}") for i in range(3)]
        with q.priority(1):
            early = [q.submit(job, f"early-{i}") for i in range(2)]
        gate.set()
        assert [f.result(10) for f in (first, *early, *late)]
        q.close()
    assert order == ["blocker", "early-0", "early-1", "late-0", "late-1", "late-2"]


def test_job_queue_keeps_every_worker_busy_across_callers() -> None:
    """Two callers, one job each, jobs=2: both run at once (each waits for the other)."""
    from suitebench.run.executor import JobQueue

    barrier = threading.Barrier(2, timeout=10)

    def meet(i: int) -> int:
        barrier.wait()
        return i

    with LocalExecutor(2) as ex:
        q = JobQueue(ex)
        results: list[int] = []

        def caller(i: int) -> None:
            with q.priority(i):
                results.extend(r for _, r in q.map_unordered(meet, [i]))

        threads = [threading.Thread(target=caller, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        q.close()
    assert sorted(results) == [0, 1]


def test_job_queue_on_a_process_pool_gives_what_the_pool_gives() -> None:
    from suitebench.run.executor import JobQueue

    with LocalExecutor(2, processes=True) as ex:
        q = JobQueue(ex)
        got = dict(q.map_unordered(math.factorial, [5, 10, 3]))
        with pytest.raises(ValueError):
            list(q.map_unordered(math.factorial, [-1]))
        q.close()
    assert got == {0: 120, 1: 3628800, 2: 6}
