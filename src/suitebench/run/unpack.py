"""Unpack a submission archive (``submission.zip``, ``.tar.gz``, ``.tgz``, ``.tar``) safely.

ProgramBench publishes submissions as ``submission.zip`` archives.  An archive is written by
whoever made the submission, an adversary of the figure it feeds: every member's path must stay
inside the target (no absolute path, no ``..``), no link of any kind is made or followed (a
symbolic or hard link member is refused, as are devices and FIFOs), and the members' count and
unpacked size are bounded (a zip bomb ends with an error, not a full disk).  A refused archive
is a one-line :class:`ArchiveError` naming the archive and the member.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

__all__ = [
    "MAX_BYTES",
    "MAX_MEMBERS",
    "ArchiveError",
    "is_archive",
    "unpack",
    "unpack_root",
]

MAX_BYTES = 512 * 1024 * 1024  # unpacked, all members together
MAX_MEMBERS = 100_000
_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
_CHUNK = 1 << 16


class ArchiveError(ValueError):
    """An archive that cannot be unpacked safely (or at all); the message names it."""


def is_archive(path: Path | str) -> bool:
    """Whether ``path`` is a file named as an archive :func:`unpack` reads."""
    path = Path(path)
    return path.is_file() and path.name.lower().endswith(_SUFFIXES)


def _safe_parts(archive: Path, name: str) -> tuple[str, ...]:
    """A member's path as parts inside the target, or ArchiveError."""
    posix = PurePosixPath(name.replace("\\", "/"))
    parts = tuple(p for p in posix.parts if p not in ("", "."))
    if posix.is_absolute() or (parts and parts[0].endswith(":")):  # /x, C:/x
        raise ArchiveError(f"{archive}: member {name!r} has an absolute path")
    if ".." in parts:
        raise ArchiveError(f"{archive}: member {name!r} leads outside the archive's directory")
    return parts


def _write(src: IO[bytes], target: Path, mode: int, budget: list[int], archive: Path) -> None:
    """Copy a member's bytes to a new file (never through a link), within the size budget."""
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o755 if mode & 0o111 else 0o644)
    with os.fdopen(fd, "wb") as out:
        while chunk := src.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise ArchiveError(f"{archive}: unpacks to more than {MAX_BYTES} bytes")
            out.write(chunk)


def _unpack_zip(archive: Path, target: Path, budget: list[int]) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ArchiveError(f"{archive}: more than {MAX_MEMBERS} members")
            for info in infos:
                parts = _safe_parts(archive, info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise ArchiveError(f"{archive}: member {info.filename!r} is a link")
                if not parts:
                    continue
                path = target.joinpath(*parts)
                if info.is_dir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                with zf.open(info) as src:
                    _write(src, path, mode, budget, archive)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ArchiveError(f"{archive}: not a readable zip archive ({exc})") from exc


def _unpack_tar(archive: Path, target: Path, budget: list[int]) -> None:
    try:
        with tarfile.open(archive) as tf:
            count = 0
            for member in tf:
                count += 1
                if count > MAX_MEMBERS:
                    raise ArchiveError(f"{archive}: more than {MAX_MEMBERS} members")
                parts = _safe_parts(archive, member.name)
                if member.issym() or member.islnk():
                    raise ArchiveError(f"{archive}: member {member.name!r} is a link")
                if not (member.isfile() or member.isdir()):
                    raise ArchiveError(f"{archive}: member {member.name!r} is not a file")
                if not parts:
                    continue
                path = target.joinpath(*parts)
                if member.isdir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                src = tf.extractfile(member)
                if src is None:
                    raise ArchiveError(f"{archive}: member {member.name!r} cannot be read")
                with src:
                    _write(src, path, member.mode, budget, archive)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"{archive}: not a readable tar archive ({exc})") from exc


def unpack(archive: Path | str, target: Path | str) -> Path:
    """Unpack ``archive`` into the new or empty directory ``target``; ``target``.  A member
    that is a link, leads outside, or overruns the bounds is an :class:`ArchiveError`."""
    archive, target = Path(archive), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    budget = [MAX_BYTES]
    if archive.name.lower().endswith(".zip"):
        _unpack_zip(archive, target, budget)
    else:
        _unpack_tar(archive, target, budget)
    return target


@contextmanager
def unpack_root(archive: Path | str, scratch: Path | str) -> Iterator[Path]:
    """``archive`` unpacked under ``scratch`` for as long as the block runs: the directory
    that holds the submission (the archive's one top-level directory when it has nothing
    else, as ``zip -r submission.zip submission/`` makes it; else the unpacked root)."""
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    where = scratch / f"unpacked-{os.getpid()}-{id(archive):x}"
    shutil.rmtree(where, ignore_errors=True)
    try:
        root = unpack(archive, where)
        entries = list(root.iterdir())
        if len(entries) == 1 and entries[0].is_dir():
            root = entries[0]
        yield root
    finally:
        shutil.rmtree(where, ignore_errors=True)
