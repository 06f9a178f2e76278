"""Submission archives are unpacked safely: inside the target, no link made, sizes bounded.

An archive is written by whoever made the submission; each attack below is one an archive can
carry (zip-slip by ``..`` or an absolute name, a link member pointing anywhere, a bomb), and
each must end in a one-line ArchiveError naming the archive and the member, with nothing
written outside the target.
"""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from suitebench.run import unpack as unpack_module
from suitebench.run.unpack import ArchiveError, is_archive, unpack, unpack_root


def _zip(path: Path, members: dict[str, tuple[bytes, int]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, (data, mode) in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def _tar(path: Path, members: list[tarfile.TarInfo], data: bytes = b"") -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info in members:
            tf.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def _file(name: str, data: bytes = b"x") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info


def test_a_published_submission_unpacks_to_its_directory(tmp_path: Path) -> None:
    archive = _zip(
        tmp_path / "submission.zip",
        {
            "submission/compile.sh": (b"gcc -o executable main.c\n", stat.S_IFREG | 0o755),
            "submission/src/main.c": (b"int main(void){return 0;}\n", stat.S_IFREG | 0o644),
        },
    )
    assert is_archive(archive) and not is_archive(tmp_path)
    with unpack_root(archive, tmp_path / "scratch") as root:
        assert root.name == "submission"
        assert (root / "compile.sh").stat().st_mode & 0o111  # still executable
        assert (root / "src" / "main.c").read_bytes() == b"int main(void){return 0;}\n"
        where = root.parent
    assert not where.exists()  # gone once built


@pytest.mark.parametrize(
    ("name", "words"),
    [("../escaped.c", "leads outside"), ("a/../../escaped.c", "leads outside")],
)
def test_a_zip_member_outside_is_refused(tmp_path: Path, name: str, words: str) -> None:
    archive = _zip(tmp_path / "s.zip", {name: (b"x", stat.S_IFREG | 0o644)})
    target = tmp_path / "in" / "target"
    with pytest.raises(ArchiveError) as info:
        unpack(archive, target)
    assert str(archive) in str(info.value) and name in str(info.value) and words in str(info.value)
    assert "\n" not in str(info.value)
    assert not list(tmp_path.rglob("escaped.c"))


def test_a_zip_link_member_is_refused(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "s.zip", {"compile.sh": (b"/etc/passwd", stat.S_IFLNK | 0o777)})
    with pytest.raises(ArchiveError, match=r"'compile\.sh' is a link"):
        unpack(archive, tmp_path / "t")
    assert not (tmp_path / "t" / "compile.sh").is_symlink()


def test_tar_links_absolute_names_and_devices_are_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("compile.sh")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hard = tarfile.TarInfo("main.c")
    hard.type, hard.linkname = tarfile.LNKTYPE, "/etc/shadow"
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    cases = [
        (link, r"'compile\.sh' is a link"),
        (hard, r"'main\.c' is a link"),
        (_file("/tmp/escaped.c"), "absolute path"),
        (_file("../escaped.c"), "leads outside"),
        (fifo, "'pipe' is not a file"),
    ]
    for index, (member, words) in enumerate(cases):
        archive = _tar(tmp_path / f"s{index}.tar.gz", [member], b"x")
        with pytest.raises(ArchiveError, match=words):
            unpack(archive, tmp_path / f"t{index}")
    assert not (tmp_path / "escaped.c").exists()


def test_the_unpacked_size_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unpack_module, "MAX_BYTES", 1000)
    # 3 members of 400 bytes: the third passes the bound of 1000 (2 x 400 = 800 fit)
    archive = _zip(
        tmp_path / "bomb.zip",
        {f"f{i}": (b"0" * 400, stat.S_IFREG | 0o644) for i in range(3)},
    )
    with pytest.raises(ArchiveError, match="unpacks to more than 1000 bytes"):
        unpack(archive, tmp_path / "t")
    small = _zip(tmp_path / "ok.zip", {f"f{i}": (b"0" * 400, stat.S_IFREG | 0o644) for i in (0, 1)})
    assert sorted(p.name for p in unpack(small, tmp_path / "u").iterdir()) == ["f0", "f1"]


def test_a_file_that_is_no_archive_says_so(tmp_path: Path) -> None:
    fake = tmp_path / "submission.zip"
    fake.write_bytes(b"not a zip at all")
    with pytest.raises(ArchiveError, match="not a readable zip archive"):
        unpack(fake, tmp_path / "t")
    fake_tar = tmp_path / "submission.tar.gz"
    fake_tar.write_bytes(b"not a tarball")
    with pytest.raises(ArchiveError, match="not a readable tar archive"):
        unpack(fake_tar, tmp_path / "u")
