"""The store: outcomes by job key survive restarts and SIGKILL; foreign files are refused."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from suitebench.run.outcome import Limits
from suitebench.run.store import SCHEMA_VERSION, Store, StoreError, job_key
from suitebench.run.toolchain import build, program_from_path


def test_round_trip_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "store.sqlite"  # parent directories are created
    values = {
        job_key("prog", i): {"status": "ok", "stdout": f"{i * i}\n", "ms": [i, i + 0.5]}
        for i in range(10)
    }
    with Store(path) as store:
        assert len(store) == 0 and store.get("missing") is None
        assert store.put_many(values.items(), kind="run") == 10
        store.put("build-key", {"status": "build_error", "message": "é ✓"}, kind="build")
        assert store.get(job_key("prog", 3)) == values[job_key("prog", 3)]
    with Store(path) as store:
        assert len(store) == 11
        assert store.get_many(values) == values
        assert store.get("build-key") == {"status": "build_error", "message": "é ✓"}
        assert set(store.keys(kind="run")) == set(values)
        assert store.keys(kind="build") == ["build-key"]
        assert store.count("run") == 10
        assert "build-key" in store and "nope" not in store


def test_get_many_beyond_one_query_chunk(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        items = [(job_key("k", i), {"i": i}) for i in range(2345)]
        store.put_many(items)
        wanted = [k for k, _ in items[::2]] + ["absent-1", "absent-2"]
        got = store.get_many(wanted)
        assert len(got) == len(items[::2])
        assert all(got[k] == {"i": i} for i, (k, _) in enumerate(items) if i % 2 == 0)


def test_a_key_is_stored_once(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.put_many([("a", {"v": 1}), ("b", {"v": 2}), ("a", {"v": 3})])
        assert len(store) == 2 and store.get("a") == {"v": 3}
        store.put_many([("a", {"v": 4})], replace=False)
        assert store.get("a") == {"v": 3}
        store.put_many([("a", {"v": 5})])
        assert store.get("a") == {"v": 5} and len(store) == 2
        assert store.delete_many(["a", "zzz"]) == 1
        assert store.keys() == ["b"]


def test_a_second_process_reads_while_the_first_holds_the_store(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.put_many([(f"k{i}", {"i": i}) for i in range(5)])
        code = (
            "import sys\nfrom suitebench.run.store import Store\n"
            "with Store(sys.argv[1]) as s: print(len(s), s.get('k4')['i'])\n"
        )
        cp = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, check=True, timeout=60
        )
        assert cp.stdout.split() == [b"5", b"4"]


def test_job_key_separates_parts_and_types() -> None:
    assert job_key("ab", "c") != job_key("a", "bc")
    assert job_key(1) != job_key("1") != job_key(b"1")
    assert job_key(1.0) != job_key(1)
    assert job_key(None) != job_key("") != job_key()
    assert job_key({"b": 1, "a": 2}) == job_key({"a": 2, "b": 1})
    lim = Limits(wall_time=1.0)
    assert job_key("p", lim) == job_key("p", Limits(wall_time=1.0))
    assert job_key("p", lim) != job_key("p", Limits(wall_time=2.0))
    assert len(job_key("x")) == 64 and int(job_key("x"), 16) >= 0


def test_job_key_is_stable_across_processes() -> None:
    code = "from suitebench.run.store import job_key; print(job_key('prog', b'in', 3, None))"
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert cp.stdout.decode().strip() == job_key("prog", b"in", 3, None)


def test_corrupt_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(StoreError, match="not a SQLite database") as info:
        Store(path)
    assert str(path) in str(info.value)
    assert path.stat().st_size == 8192  # untouched


def test_damaged_store_pages_are_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        store.put_many([(f"k{i}", {"pad": "x" * 500}) for i in range(200)])
    # Checkpointed and closed: overwrite everything after the header with random bytes.
    data = bytearray(path.read_bytes())
    data[100:] = os.urandom(len(data) - 100)
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with pytest.raises(StoreError) as info:
        Store(path)
    assert str(path) in str(info.value)


def test_foreign_sqlite_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE outcomes (id INTEGER PRIMARY KEY, verdict TEXT)")
    conn.execute("INSERT INTO outcomes(verdict) VALUES ('AC')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a suitebench store") as info:
        Store(path)
    assert str(path) in str(info.value)
    conn = sqlite3.connect(path)  # and it was not modified
    assert conn.execute("SELECT verdict FROM outcomes").fetchall() == [("AC",)]
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master")} == {"outcomes"}
    conn.close()


def test_other_applications_meta_and_newer_schema_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('application', 'somebench')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="somebench") as info:
        Store(other)
    assert str(other) in str(info.value)

    newer = tmp_path / "newer.sqlite"
    Store(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer") as info:
        Store(newer)
    assert str(newer) in str(info.value)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        Store(tmp_path)


# -- kill -9 and resume ------------------------------------------------------------------------

# Primes below n by trial division, slowed to ~20 ms a run; off by one: counts n itself too.
PRIMES_C = textwrap.dedent(
    """\
    #include <stdio.h>
    #include <time.h>
    int main(void) {
        long n; if (scanf("%ld", &n) != 1) return 2;
        struct timespec ts = {0, 20 * 1000 * 1000}; nanosleep(&ts, NULL);
        long count = 0;
        for (long k = 2; k <= n; k++) {
            int prime = 1;
            for (long d = 2; d * d <= k; d++) if (k % d == 0) { prime = 0; break; }
            count += prime;
        }
        printf("%ld\\n", count);
        return 0;
    }
    """
)

CHILD = textwrap.dedent(
    """\
    import json, os, sys, tempfile, uuid
    from suitebench.run import sandbox
    from suitebench.run.executor import LocalExecutor, run_cached
    from suitebench.run.outcome import Limits
    from suitebench.run.store import Store, job_key

    store_path, argv_json, markers, out = sys.argv[1:5]
    argv = json.loads(argv_json)

    def job(payload):
        # One marker per execution, so the test can count what ran.
        open(os.path.join(markers, payload["name"] + "." + uuid.uuid4().hex), "w").close()
        with tempfile.TemporaryDirectory() as work:
            o = sandbox.run(payload["argv"], cwd=work, stdin=payload["stdin"].encode(),
                            limits=Limits(wall_time=10), ro_binds=payload["ro_binds"])
        return {"status": str(o.status), "exit_code": o.exit_code, "stdout": o.stdout_text()}

    jobs = []
    for n in range(200):
        payload = {"name": f"n{n}", "argv": argv, "stdin": f"{n * 7}\\n",
                   "ro_binds": [os.path.dirname(argv[0])]}
        jobs.append((job_key("primes", n), payload))
    jobs += jobs[:20]  # duplicated keys run once
    with Store(store_path) as store, LocalExecutor(2) as ex:
        results = run_cached(job, jobs, store=store, executor=ex, kind="run",
                             commit_every=5, commit_seconds=0.1)
    with open(out, "w") as fh:
        json.dump(results, fh, sort_keys=True)
    """
)


def _start(
    script: Path, store: Path, argv: list[str], markers: Path, out: Path
) -> subprocess.Popen[bytes]:
    markers.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, str(script), str(store), json.dumps(argv), str(markers), str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _executed(markers: Path) -> list[str]:
    return sorted(p.name.split(".")[0] for p in markers.iterdir())


@pytest.mark.slow
def test_kill_9_halfway_then_resume_recomputes_only_the_missing(tmp_path: Path) -> None:
    built = build(program_from_path(_write(tmp_path / "primes.c", PRIMES_C)), cache_dir=tmp_path)
    assert built.ok, built.message
    script = _write(tmp_path / "child.py", CHILD)
    store_path = tmp_path / "store.sqlite"
    argv = list(built.argv)

    first = _start(script, store_path, argv, tmp_path / "m1", tmp_path / "out1.json")
    deadline = time.monotonic() + 120
    rows = 0
    while time.monotonic() < deadline and first.poll() is None:
        if store_path.exists():
            conn = sqlite3.connect(store_path, timeout=30)
            try:
                rows = conn.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0]
            except sqlite3.OperationalError:
                rows = 0  # schema not created yet
            finally:
                conn.close()
            if rows >= 60:
                break
        time.sleep(0.02)
    assert first.poll() is None, first.communicate()[1].decode()
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    assert not (tmp_path / "out1.json").exists()

    with Store(store_path) as store:
        survived = set(store.keys())
    assert 60 <= len(survived) < 200, "the kill must land halfway for this test to mean anything"
    ran_first = _executed(tmp_path / "m1")
    assert len(ran_first) >= len(survived)

    second = _start(script, store_path, argv, tmp_path / "m2", tmp_path / "out2.json")
    _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err.decode()
    resumed = json.loads((tmp_path / "out2.json").read_text())

    # The restart ran exactly the jobs whose results were not committed, each once.
    all_keys = {job_key("primes", n) for n in range(200)}
    names = {job_key("primes", n): f"n{n}" for n in range(200)}
    ran_second = _executed(tmp_path / "m2")
    assert len(ran_second) == 200 - len(survived)
    assert set(ran_second) == {names[k] for k in all_keys - survived}

    with Store(store_path) as store:
        assert len(store) == 200
        assert set(store.keys()) == all_keys
    conn = sqlite3.connect(store_path)
    assert conn.execute("SELECT COUNT(DISTINCT key), COUNT(*) FROM outcomes").fetchone() == (
        200,
        200,
    )
    conn.close()

    # Same results as a clean, uninterrupted run.
    clean = _start(script, tmp_path / "clean.sqlite", argv, tmp_path / "m3", tmp_path / "out3.json")
    _, err = clean.communicate(timeout=300)
    assert clean.returncode == 0, err.decode()
    reference = json.loads((tmp_path / "out3.json").read_text())
    assert len(_executed(tmp_path / "m3")) == 200
    assert resumed == reference
    assert set(resumed) == all_keys
    # The program's off-by-one is in the results: n = 7 (input "7") counts 4 primes, 2..7.
    assert resumed[job_key("primes", 1)] == {"status": "ok", "exit_code": 0, "stdout": "4\n"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_two_processes_writing_one_store_lose_nothing(tmp_path: Path) -> None:
    # Two commands pointed at the same --store at once: SQLite serialises their batches.
    path = tmp_path / "shared.sqlite"
    code = textwrap.dedent(
        """\
        import sys
        from suitebench.run.store import Store
        name = sys.argv[2]
        with Store(sys.argv[1]) as s:
            for b in range(40):
                s.put_many([(f"{name}-{b}-{i}", {"b": b, "i": i}) for i in range(25)], kind=name)
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(path), name], stderr=subprocess.PIPE)
        for name in ("left", "right")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with Store(path) as store:
        assert store.count("left") == store.count("right") == 1000
        assert store.get("right-39-24") == {"b": 39, "i": 24}


# -- blobs: outputs kept once, compressed, in bounded parts -----------------------------------


def test_blobs_are_kept_once_compressed_and_in_parts(tmp_path: Path) -> None:
    from suitebench.run.store import BLOB_PART, encode_blob

    yes = b"YES\n" * (8 * 1024 * 1024)  # 32 MiB of a program that prints forever
    noise = os.urandom(3 * BLOB_PART // 2)  # incompressible: more than one part
    with Store(tmp_path / "s.sqlite") as store:
        blobs = [encode_blob(x) for x in (yes, yes, noise, b"", b"42\n")]
        assert (
            store.put_blobs(
                [
                    (s, c, len(x), p)
                    for (s, c, p), x in zip(blobs, (yes, yes, noise, b"", b"42\n"), strict=True)
                ]
            )
            == 4
        )
        assert store.get_blob(blobs[0][0]) == yes
        assert store.get_blob(blobs[2][0]) == noise
        assert store.get_blob(blobs[3][0]) == b"" and store.get_blob(blobs[4][0]) == b"42\n"
        assert store.get_blob("0" * 64) is None
        assert store.has_blobs([blobs[0][0], "0" * 64]) == {blobs[0][0]}
        stats = store.blob_stats()
    assert stats["blobs"] == 4 and stats["size"] == len(yes) + len(noise) + 3
    assert stats["stored"] < len(noise) + len(yes) // 100  # the repeated output compresses
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        (biggest,) = db.execute("SELECT MAX(LENGTH(data)) FROM blob_parts").fetchone()
        (noise_parts,) = db.execute(
            "SELECT parts FROM blobs WHERE sha256 = ?", (blobs[2][0],)
        ).fetchone()
    assert biggest <= BLOB_PART and noise_parts == 2


def test_a_schema_1_store_is_migrated(tmp_path: Path) -> None:
    """A store written by the previous schema opens: blob tables are added, the audit rows that
    held whole outputs are dropped (they run again), every other row is kept."""
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE outcomes (key TEXT PRIMARY KEY, kind TEXT NOT NULL DEFAULT '',
                               value TEXT NOT NULL, created REAL NOT NULL);
        INSERT INTO meta VALUES ('application', 'suitebench'), ('schema_version', '1');
        INSERT INTO outcomes VALUES ('c1', 'audit-chunk', '{"outcomes": []}', 1.0),
                                    ('r1', 'audit-run', '{"chunk": "c1", "i": 0}', 1.0),
                                    ('s1', 'suite-run', '{"passed": 3}', 1.0);
        PRAGMA user_version = 1;
        """
    )
    conn.close()
    with Store(path) as store:
        assert store.keys() == ["s1"] and store.get("s1") == {"passed": 3}
        assert store.blob_stats()["blobs"] == 0
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    conn.close()
