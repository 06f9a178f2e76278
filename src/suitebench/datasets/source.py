"""Reading a dataset as it was downloaded: parquet shards, a directory of shards, JSON lines.

Every row comes with where it was found (:class:`SourceRow`: the file and the row's index in
it), because every problem an import writes names the row it came from. Nothing is fetched:
the rows are the files on disk, read in sorted file order and row order. Parquet needs pyarrow
(the ``datasets`` extra); JSON lines (``.jsonl``, ``.ndjson``, or ``.json`` holding one object
a line or one array of objects) need nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PARQUET_HINT", "DatasetError", "SourceRow", "dataset_files", "read_rows"]

PARQUET_SUFFIXES = (".parquet",)
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
PARQUET_HINT = "reading parquet needs pyarrow: pip install 'suitebench[datasets]'"
_BATCH_ROWS = 64  # rows held at a time per shard: CodeContests rows carry many solutions


class DatasetError(ValueError):
    """The dataset cannot be read at all (no such path, no rows file, parquet without
    pyarrow, a line that is not JSON): the import stops, naming the file."""


@dataclass(frozen=True)
class SourceRow:
    """One row of the dataset and where it was read: ``file`` and its 0-based ``index``."""

    file: Path
    index: int
    data: dict[str, Any]


def dataset_files(path: Path) -> list[Path]:
    """The files a path stands for: itself, or a directory's parquet and JSON files (at any
    depth, sorted), so a downloaded tree of shards is read as it is."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DatasetError(f"{path}: no such file or directory")
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and p.suffix.lower() in (*PARQUET_SUFFIXES, *JSON_SUFFIXES)
    )
    if not files:
        raise DatasetError(f"{path}: no .parquet, .jsonl, .ndjson or .json file in it")
    return files


def _parquet_rows(file: Path) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError(f"{file}: {PARQUET_HINT}") from None
    try:
        shard = pq.ParquetFile(file)
        for batch in shard.iter_batches(batch_size=_BATCH_ROWS):
            yield from batch.to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DatasetError(f"{file}: not a readable parquet file: {exc}") from None


def _json_rows(file: Path) -> Iterator[dict[str, Any]]:
    with file.open(encoding="utf-8") as fh:
        head = fh.read(1)
        while head and head.isspace():
            head = fh.read(1)
        fh.seek(0)
        if head == "[":
            try:
                rows = json.load(fh)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{file}: not a JSON array: {exc}") from None
            for i, row in enumerate(rows):
                if not isinstance(row, dict):
                    raise DatasetError(f"{file}: element {i} is not a JSON object")
                yield row
            return
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{file}:{lineno}: not a JSON object: {exc}") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{file}:{lineno}: not a JSON object")
            yield row


def read_rows(path: Path) -> Iterator[SourceRow]:
    """Every row of the dataset at ``path`` (a file or a directory of shards), in order."""
    for file in dataset_files(path):
        rows = _parquet_rows(file) if file.suffix.lower() in PARQUET_SUFFIXES else _json_rows(file)
        for i, data in enumerate(rows):
            yield SourceRow(file, i, data)
