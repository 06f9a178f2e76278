"""The store: one SQLite file that caches outcomes by job key.

Everything suitebench runs is a job on content-addressed inputs; the store keeps each job's
result under its key so that a run killed halfway resumes where it stopped and a re-run with one
more arm or one more mutant runs only what is new. The file is WAL-mode SQLite (readers never
block the writer), its schema carries a version (``PRAGMA user_version``) and a ``meta`` table
naming the application, so pointing ``--store`` at someone else's database, or at a file that
is not a database at all, fails loudly with the file's name instead of corrupting it.

Large results do not go into rows: program outputs are *blobs*, kept once by their sha256,
compressed (zlib, from the standard library), in parts of at most 1 MiB (:meth:`Store.put_blobs`,
:meth:`Store.get_blob`); a row refers to a blob by its hash. Identical outputs -- the same
``YES`` printed until the output limit on 40 inputs -- are stored once.

One writer: only the coordinator of a batch writes; workers return results as plain data.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import struct
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

APPLICATION = "suitebench"
SCHEMA_VERSION = 2
#: Row kinds that schema 1 wrote and schema 2 no longer reads (whole outputs inside rows):
#: dropped when a schema-1 store is migrated, so their runs are simply run again.
_V1_KINDS = ("audit-chunk", "audit-run")
BLOB_PART = 1 << 20  # bytes of compressed data per blob part row
_RAW_BELOW = 64  # outputs this short are kept as they are (compressing costs more)
_SQLITE_MAGIC = b"SQLite format 3\x00"
# SQLite's default limit on host parameters is 999 on old builds; stay well below it.
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outcomes (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL DEFAULT '',
    value TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS outcomes_kind ON outcomes(kind);
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY,
    codec TEXT NOT NULL,
    size INTEGER NOT NULL,
    parts INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_parts (
    sha256 TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (sha256, seq)
) WITHOUT ROWID;
"""


def encode_blob(data: bytes) -> tuple[str, str, bytes]:
    """``(sha256, codec, payload)`` of ``data``: zlib-compressed (``z``), or ``raw`` if tiny.

    Workers call this on each output as it comes, so only the compressed form travels to the
    coordinator and into the store.
    """
    sha = hashlib.sha256(data).hexdigest()
    if len(data) < _RAW_BELOW:
        return sha, "raw", bytes(data)
    # level 1 on big outputs: a program printing 70 MB/s must not make compressing the bottleneck
    return sha, "z", zlib.compress(data, 6 if len(data) <= BLOB_PART else 1)


def decode_blob(codec: str, payload: bytes) -> bytes:
    if codec == "raw":
        return payload
    if codec == "z":
        return zlib.decompress(payload)
    raise StoreError(f"unknown blob codec {codec!r}")


class StoreError(Exception):
    """The store file cannot be used: corrupt, foreign, or from a newer suitebench."""


def job_key(*parts: object) -> str:
    """A sha256 over the parts that determine a job's result.

    Each part is tagged with its type and length-prefixed, so ``("ab", "c")`` and
    ``("a", "bc")`` differ, as do ``1`` and ``"1"``. Bytes are hashed as-is, strings as UTF-8;
    ``None``, numbers and booleans by their JSON form; anything else (lists, dicts) by its
    canonical JSON (sorted keys), or by its ``key()`` method if it has one (``Limits``).
    """
    h = hashlib.sha256()
    for part in parts:
        tag, data = _encode_part(part)
        h.update(tag)
        h.update(struct.pack(">Q", len(data)))
        h.update(data)
    return h.hexdigest()


def _encode_part(part: object) -> tuple[bytes, bytes]:
    if isinstance(part, bytes | bytearray | memoryview):
        return b"b", bytes(part)
    if isinstance(part, str):
        return b"s", part.encode("utf-8")
    if part is None or isinstance(part, bool | int):
        return b"n", json.dumps(part).encode()
    if isinstance(part, float):
        if not math.isfinite(part):
            return b"f", repr(part).encode()
        return b"f", float.hex(part).encode()
    if isinstance(part, os.PathLike):
        return b"p", os.fsencode(part)
    key = getattr(part, "key", None)
    if callable(key):
        return b"k", str(key()).encode("utf-8")
    return b"j", json.dumps(part, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _chunks(seq: Sequence[str], size: int = _CHUNK) -> Iterator[Sequence[str]]:
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


class Store:
    """A SQLite cache of job results (JSON values) by job key.

    Safe to share between threads of one process (calls are serialised by a lock); other
    processes may read the same file while this one writes (WAL).
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        # results this process took from the store and wrote to it (what a command reports
        # when it ends or is interrupted: a rerun says how much it reused)
        self.found = 0
        self.written = 0
        self._check_file()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                str(self.path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the store: {exc}") from exc
        try:
            self._init_schema_retrying(timeout)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreError(
                f"{self.path}: not a usable suitebench store (SQLite says: {exc}); "
                "move it away or pass another --store"
            ) from exc
        except StoreError:
            self._conn.close()
            raise

    # -- opening -----------------------------------------------------------------------------

    def _check_file(self) -> None:
        """Refuse a file that is not SQLite before SQLite touches it."""
        if not self.path.exists():
            return
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a directory, expected a suitebench store file")
        with self.path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
        if head and head != _SQLITE_MAGIC:
            raise StoreError(
                f"{self.path}: not a SQLite database (corrupt or some other file); "
                "expected a suitebench store"
            )

    def _init_schema_retrying(self, timeout: float) -> None:
        """Two processes opening a new store at once: the loser waits for the winner's schema
        (switching to WAL takes a lock that SQLite's busy handler does not always wait for)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._init_schema(timeout)
                return
            except sqlite3.OperationalError as exc:
                text = str(exc)
                if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _set_wal(self) -> None:
        c = self._conn
        if str(c.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            c.execute("PRAGMA journal_mode = WAL")

    def _snapshot(self) -> tuple[int, set[str]]:
        """Schema version and table names, read in one transaction (a consistent view while
        another process may be creating the schema)."""
        c = self._conn
        c.execute("BEGIN")
        try:
            version = int(c.execute("PRAGMA user_version").fetchone()[0])
            tables = {
                r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        finally:
            c.execute("COMMIT")
        return version, tables

    def _init_schema(self, timeout: float) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        version, tables = self._snapshot()
        if version == 0 and not tables:
            self._set_wal()
            c.execute("BEGIN IMMEDIATE")
            try:
                # Re-check under the write lock: another process may have created it meanwhile.
                fresh = c.execute("PRAGMA user_version").fetchone()[0] == 0 and not list(
                    c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                )
                if fresh:
                    for stmt in _SCHEMA.strip().split(";"):
                        if stmt.strip():
                            c.execute(stmt)
                    c.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?), (?, ?)",
                        ("application", APPLICATION, "schema_version", str(SCHEMA_VERSION)),
                    )
                    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            version, tables = self._snapshot()
        if "meta" not in tables:
            raise StoreError(
                f"{self.path}: a SQLite database that is not a suitebench store "
                f"(tables: {', '.join(sorted(tables)) or 'none'}); refusing to write to it"
            )
        row = c.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        if row is None or row[0] != APPLICATION:
            raise StoreError(
                f"{self.path}: a SQLite database of another application "
                f"({row[0] if row else 'unknown'!r}), not a suitebench store"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: store schema version {version} is newer than this suitebench "
                f"understands ({SCHEMA_VERSION}); upgrade suitebench"
            )
        if version < 1 or "outcomes" not in tables:
            raise StoreError(f"{self.path}: incomplete suitebench store (schema {version})")
        if version < SCHEMA_VERSION:
            self._migrate(version)
        self._set_wal()
        c.execute("PRAGMA synchronous = NORMAL")

    def _migrate(self, version: int) -> None:
        """Schema 1 -> 2: add the blob tables; drop the audit rows that held whole outputs."""
        c = self._conn
        c.execute("BEGIN IMMEDIATE")
        try:
            if int(c.execute("PRAGMA user_version").fetchone()[0]) < SCHEMA_VERSION:
                for stmt in _SCHEMA.strip().split(";"):
                    if stmt.strip():
                        c.execute(stmt)
                marks = ",".join("?" * len(_V1_KINDS))
                c.execute(f"DELETE FROM outcomes WHERE kind IN ({marks})", _V1_KINDS)
                c.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    ("schema_version", str(SCHEMA_VERSION)),
                )
                c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    # -- blobs -------------------------------------------------------------------------------

    def put_blobs(self, blobs: Iterable[tuple[str, str, int, bytes]]) -> int:
        """Store ``(sha256, codec, size, payload)`` blobs (from :func:`encode_blob`) once each,
        in one transaction, split in parts of at most ``BLOB_PART`` bytes; returns how many
        were new."""
        items = list(blobs)
        if not items:
            return 0
        new = 0
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                for sha, codec, size, payload in items:
                    parts = max(1, math.ceil(len(payload) / BLOB_PART))
                    cur = c.execute(
                        "INSERT OR IGNORE INTO blobs(sha256, codec, size, parts) "
                        "VALUES (?, ?, ?, ?)",
                        (sha, codec, size, parts),
                    )
                    if cur.rowcount != 1:
                        continue
                    new += 1
                    c.executemany(
                        "INSERT OR REPLACE INTO blob_parts(sha256, seq, data) VALUES (?, ?, ?)",
                        [
                            (sha, i, payload[i * BLOB_PART : (i + 1) * BLOB_PART])
                            for i in range(parts)
                        ],
                    )
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        return new

    def has_blobs(self, shas: Iterable[str]) -> set[str]:
        """Those of ``shas`` that are stored."""
        uniq = list(dict.fromkeys(shas))
        out: set[str] = set()
        with self._lock:
            for chunk in _chunks(uniq):
                marks = ",".join("?" * len(chunk))
                out.update(
                    r[0]
                    for r in self._conn.execute(
                        f"SELECT sha256 FROM blobs WHERE sha256 IN ({marks})", tuple(chunk)
                    )
                )
        return out

    def get_blob(self, sha256: str) -> bytes | None:
        """The blob's original bytes, or None if it is not stored."""
        with self._lock:
            head = self._conn.execute(
                "SELECT codec, size, parts FROM blobs WHERE sha256 = ?", (sha256,)
            ).fetchone()
            if head is None:
                return None
            rows = self._conn.execute(
                "SELECT data FROM blob_parts WHERE sha256 = ? ORDER BY seq", (sha256,)
            ).fetchall()
        codec, size, parts = head
        if len(rows) != parts:
            raise StoreError(f"{self.path}: blob {sha256[:12]} is missing parts")
        data = decode_blob(codec, b"".join(r[0] for r in rows))
        if len(data) != size:
            raise StoreError(f"{self.path}: blob {sha256[:12]} has the wrong size")
        return data

    def blob_stats(self) -> dict[str, int]:
        """``blobs`` (count), ``size`` (original bytes) and ``stored`` (compressed bytes)."""
        with self._lock:
            n, size = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM blobs"
            ).fetchone()
            (stored,) = self._conn.execute(
                "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blob_parts"
            ).fetchone()
        return {"blobs": int(n), "size": int(size), "stored": int(stored)}

    # -- reading -----------------------------------------------------------------------------

    def get(self, key: str) -> Any | None:
        """The stored value of ``key``, or None."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM outcomes WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """Stored values of those keys that are present (missing keys are simply absent)."""
        uniq = list(dict.fromkeys(keys))
        out: dict[str, Any] = {}
        with self._lock:
            for chunk in _chunks(uniq):
                marks = ",".join("?" * len(chunk))
                for k, v in self._conn.execute(
                    f"SELECT key, value FROM outcomes WHERE key IN ({marks})", tuple(chunk)
                ):
                    out[k] = json.loads(v)
            self.found += len(out)
        return out

    def keys(self, kind: str | None = None) -> list[str]:
        """All keys, or those of one kind, in insertion order."""
        with self._lock:
            if kind is None:
                rows = self._conn.execute("SELECT key FROM outcomes ORDER BY rowid")
            else:
                rows = self._conn.execute(
                    "SELECT key FROM outcomes WHERE kind = ? ORDER BY rowid", (kind,)
                )
            return [r[0] for r in rows]

    def count(self, kind: str | None = None) -> int:
        with self._lock:
            if kind is None:
                row = self._conn.execute("SELECT COUNT(*) FROM outcomes").fetchone()
            else:
                row = self._conn.execute(
                    "SELECT COUNT(*) FROM outcomes WHERE kind = ?", (kind,)
                ).fetchone()
        return int(row[0])

    def __len__(self) -> int:
        return self.count()

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM outcomes WHERE key = ?", (key,)).fetchone()
        return row is not None

    # -- writing -----------------------------------------------------------------------------

    def put(self, key: str, value: Any, *, kind: str = "") -> None:
        self.put_many([(key, value)], kind=kind)

    def put_many(
        self,
        items: Iterable[tuple[str, Any]] | Mapping[str, Any],
        *,
        kind: str = "",
        replace: bool = True,
    ) -> int:
        """Write ``(key, value)`` pairs in one atomic transaction; returns rows written.

        A key is stored once: ``replace=True`` (default) overwrites an existing value,
        ``replace=False`` keeps the first one. Values must be JSON-serialisable.
        """
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        if not pairs:
            return 0
        now = time.time()
        rows = [
            (k, kind, json.dumps(v, sort_keys=True, separators=(",", ":")), now) for k, v in pairs
        ]
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                cur = c.executemany(
                    f"{verb} INTO outcomes(key, kind, value, created) VALUES (?, ?, ?, ?)", rows
                )
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            self.written += len(rows)
        return cur.rowcount if cur.rowcount >= 0 else len(rows)

    def delete_many(self, keys: Iterable[str]) -> int:
        """Forget results (e.g. to re-measure flakiness); one transaction."""
        uniq = list(dict.fromkeys(keys))
        n = 0
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                for chunk in _chunks(uniq):
                    marks = ",".join("?" * len(chunk))
                    n += c.execute(
                        f"DELETE FROM outcomes WHERE key IN ({marks})", tuple(chunk)
                    ).rowcount
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        return n

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"
