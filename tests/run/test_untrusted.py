"""Reading what a sandboxed program left (:mod:`suitebench.run.untrusted`): a link is never
followed, a FIFO never blocks, only a regular file is read."""

from __future__ import annotations

import os
from pathlib import Path

from suitebench.suite.inside import untrusted


def test_a_regular_file_reads_whole(tmp_path: Path) -> None:
    path = tmp_path / "0.events"
    path.write_bytes(b'{"event": "start"}\n' * 70_000)  # more than one read's worth
    assert untrusted.read_bytes(path) == b'{"event": "start"}\n' * 70_000
    assert untrusted.read_text(tmp_path / "missing") is None


def test_a_link_a_fifo_and_a_directory_read_as_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host only\n")
    (tmp_path / "0.log").symlink_to(secret)
    os.mkfifo(tmp_path / "1.log")  # nobody writes it: a blocking open would wait forever
    (tmp_path / "2.log").mkdir()
    assert untrusted.read_bytes(tmp_path / "0.log") is None
    assert untrusted.read_bytes(tmp_path / "1.log") is None
    assert untrusted.read_bytes(tmp_path / "2.log") is None
