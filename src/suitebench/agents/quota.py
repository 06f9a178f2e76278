"""A total disk quota for an agent's workspace.

As root (the usual case: the sandbox then runs the agent as ``nobody``), the workspace is a
**size-capped tmpfs** mounted for the whole run, every round included: the kernel refuses a
write past the cap (``ENOSPC``), whatever the agent does -- files deleted but held open, sparse
files, hard links, many small files (the inodes are capped too, one per 4 KiB of the quota). When
the run ends, its contents are copied onto the disk (``cp -a``: links stay links, hard links
stay shared, holes stay holes, so the copy is no larger than the cap) in place of the mount.

Without root there is no mount: the workspace's size is **polled** (every file's allocated
blocks, each inode once). That is a soft limit: a burst between two polls, or a file deleted
while still open, is not seen.

In both cases the launcher inside the sandbox watches the workspace (``disk`` in its config)
and ends the run when it is full, and the harness checks it itself after every round
(:meth:`WorkspaceQuota.full`): the run's record says ``disk_limit``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from suitebench.run.outcome import MiB

DEFAULT_MB = 1024
INODE_BYTES = 4096  # one inode per this many bytes of quota
SLACK = 64 * 1024  # a tmpfs with less than this free is full (its last pages are the agent's)
DISK_EXIT = 86  # the launcher's exit status when it stopped the agent at the quota


class QuotaError(RuntimeError):
    """The workspace's quota could not be set up (names the path and why)."""


def used_bytes(root: Path) -> int:
    """Disk space the files under ``root`` take (allocated blocks; each inode once; links not
    followed)."""
    seen: set[int] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                if st.st_ino not in seen:
                    seen.add(st.st_ino)
                    total += st.st_blocks * 512
    return total


class WorkspaceQuota:
    """``limit_mb`` MiB for everything under ``root``, for as long as the context lasts."""

    def __init__(self, root: Path, limit_mb: int, *, mount: bool | None = None) -> None:
        self.root = root
        self.limit = limit_mb * MiB
        self.limit_mb = limit_mb
        self.mechanism = "tmpfs" if (os.geteuid() == 0 if mount is None else mount) else "poll"
        self.mounted = False

    def __enter__(self) -> WorkspaceQuota:
        if self.root.exists() and any(self.root.iterdir()):
            raise QuotaError(f"{self.root}: the workspace directory exists and is not empty")
        self.root.mkdir(parents=True, exist_ok=True)
        if self.mechanism == "tmpfs":
            inodes = max(1024, self.limit // INODE_BYTES)
            opts = f"size={self.limit},nr_inodes={inodes},mode=0755"
            res = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", opts, "suitebench-workspace", str(self.root)],
                capture_output=True,
                text=True,
            )
            if res.returncode != 0:
                raise QuotaError(
                    f"{self.root}: cannot mount the workspace's tmpfs ({res.stderr.strip()}); "
                    "run as root, or give --disk-limit 0 to run without a quota"
                )
            self.mounted = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def launcher_config(self) -> dict[str, Any]:
        """What the launcher inside the sandbox watches (``statvfs`` of a tmpfs is exact and
        cheap; otherwise it walks the workspace)."""
        return {"limit": self.limit, "slack": SLACK, "exit": DISK_EXIT, "tmpfs": self.mounted}

    def used(self) -> int:
        if self.mounted:
            st = os.statvfs(self.root)
            return (st.f_blocks - st.f_bfree) * st.f_frsize
        return used_bytes(self.root)

    def full(self) -> bool:
        """Whether the workspace reached its quota (no inode left counts as full too)."""
        if self.mounted:
            st = os.statvfs(self.root)
            return st.f_bavail * st.f_frsize < SLACK or st.f_favail == 0
        return self.used() >= self.limit

    def record(self) -> dict[str, Any]:
        return {
            "limit_mb": self.limit_mb,
            "used_mb": round(self.used() / MiB, 1),
            "mechanism": self.mechanism,
        }

    def release(self) -> None:
        """Put the workspace's contents on the disk in place of the tmpfs, and unmount it."""
        if not self.mounted:
            return
        staging = self.root.with_name(self.root.name + ".on-disk")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        copied = subprocess.run(
            ["cp", "-a", "--", f"{self.root}/.", str(staging)], capture_output=True, text=True
        )
        res = subprocess.run(["umount", str(self.root)], capture_output=True)
        if res.returncode != 0:  # something still holds it open: detach it all the same
            subprocess.run(["umount", "-l", str(self.root)], capture_output=True)
        self.mounted = False
        if copied.returncode != 0:
            (staging / "COPY-ERRORS.txt").write_text(copied.stderr[-4000:], encoding="utf-8")
        os.chmod(staging, 0o777)
        self.root.rmdir()
        staging.rename(self.root)
