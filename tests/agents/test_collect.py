"""The collector on trees built by hand: every way a workspace can point outside itself (a
symbolic link to a file or a directory, anywhere on the output's path, a hard link, a fifo) is
refused and recorded, nothing from outside is copied, and the caps hold."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from suitebench.agents.collect import Collection, collect_tree, take_file

SECRET = b"int main(void) { return 42; } /* the reference source */\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Held-out material beside the workspace, on the same file system (so hard links work)."""
    d = tmp_path / "held-out"
    d.mkdir()
    (d / "rpn.c").write_bytes(SECRET)
    (d / "c01.diff").write_bytes(b"--- a/rpn.c\n+++ b/rpn.c\n" + SECRET)
    return d


def contents(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def refused(collection: Collection) -> set[tuple[str, str]]:
    return {(r.path, r.reason) for r in collection.refused}


def test_links_of_every_kind_are_refused_and_only_the_agents_own_files_copied(
    tmp_path: Path, outside: Path
) -> None:
    ws = tmp_path / "workspace"
    tests = ws / "tests"
    (tests / "sub").mkdir(parents=True)
    (tests / "__pycache__").mkdir()
    (tests / "__pycache__" / "x.pyc").write_bytes(b"ignored")
    (tests / "test_a.py").write_text("def test_a():\n    assert True\n")
    (tests / "sub" / "helper.py").write_text("X = 1\n")
    (tests / "ref.c").symlink_to(outside / "rpn.c")
    (tests / "rel.c").symlink_to(os.path.relpath(outside / "rpn.c", tests))
    (tests / "mutants").symlink_to(outside)
    (tests / "dangling").symlink_to(tmp_path / "nowhere")
    os.link(outside / "rpn.c", tests / "hard.c")
    (ws / "spec.md").write_text("the spec, given to the agent\n")
    os.link(ws / "spec.md", tests / "spec_link.md")  # its other link is outside tests/
    (tests / "pair1.txt").write_text("the agent's own data\n")
    os.link(tests / "pair1.txt", tests / "sub" / "pair2.txt")  # both links inside tests/
    os.mkfifo(tests / "pipe")
    build = tests / "build.sh"
    build.write_text("#!/bin/sh\n")
    build.chmod(0o755)

    dest = tmp_path / "run" / "tests"
    got = collect_tree(ws, "tests", dest, ignore=frozenset({"__pycache__"}))

    assert contents(dest) == {
        "build.sh": b"#!/bin/sh\n",
        "pair1.txt": b"the agent's own data\n",
        "sub/helper.py": b"X = 1\n",
        "sub/pair2.txt": b"the agent's own data\n",
        "test_a.py": b"def test_a():\n    assert True\n",
    }
    assert not any(p.is_symlink() for p in dest.rglob("*"))
    assert (dest / "build.sh").stat().st_mode & 0o111  # still executable
    assert refused(got) == {
        ("tests/ref.c", "symbolic link"),
        ("tests/rel.c", "symbolic link"),
        ("tests/mutants", "symbolic link"),
        ("tests/dangling", "symbolic link"),
        ("tests/hard.c", "hard link"),
        ("tests/spec_link.md", "hard link"),
        ("tests/pipe", "special file"),
    }
    targets = {r["path"]: r.get("target") for r in got.to_dict()["refused"]}
    assert targets["tests/ref.c"] == str(outside / "rpn.c")  # kept for the leak audit
    assert got.to_dict()["files"] == 5 and got.to_dict()["refused_total"] == 7
    assert got.bytes == sum(len(b) for b in contents(dest).values())


def test_a_symlinked_output_directory_or_path_component_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "tests").symlink_to(outside)
    dest = tmp_path / "run" / "tests"
    got = collect_tree(ws, "tests", dest)
    assert list(dest.iterdir()) == []
    assert [(r.path, r.reason, r.target) for r in got.refused] == [
        ("tests", "symbolic link", str(outside))
    ]

    ws2 = tmp_path / "workspace2"
    ws2.mkdir()
    (outside / "final").mkdir()
    (outside / "final" / "01.txt").write_bytes(SECRET)
    (ws2 / "workspace").symlink_to(outside)  # workspace/final reached through a link
    got = collect_tree(ws2, "workspace/final", tmp_path / "run2" / "final")
    assert list((tmp_path / "run2" / "final").iterdir()) == []
    assert [(r.path, r.reason) for r in got.refused] == [("workspace", "symbolic link")]

    missing = collect_tree(ws2, "nothing/here", tmp_path / "run3")
    assert missing.refused == [] and missing.files == []


def test_a_symlinked_file_among_the_inputs_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    final = ws / "workspace" / "final"
    final.mkdir(parents=True)
    (final / "01.txt").write_text("3\n1 2 3\n")
    (final / "02.txt").symlink_to("/etc/passwd")
    dest = tmp_path / "run" / "final"
    got = collect_tree(ws, "workspace/final", dest)
    assert contents(dest) == {"01.txt": b"3\n1 2 3\n"}
    assert refused(got) == {("workspace/final/02.txt", "symbolic link")}


def test_caps_on_files_bytes_and_depth_are_refusals_not_silence(tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    out = ws / "out"
    deep = out / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("deep\n")
    for name in ("1.txt", "2.txt", "3.txt"):
        (out / name).write_text("x" * 10)
    (out / "big.bin").write_bytes(b"y" * 1000)

    got = collect_tree(ws, "out", tmp_path / "d1", max_files=2)
    assert got.files == ["1.txt", "2.txt"]
    assert ("out/3.txt", "over the file cap") in refused(got)

    got = collect_tree(ws, "out", tmp_path / "d2", max_bytes=25)
    assert sorted(contents(tmp_path / "d2")) == ["1.txt", "2.txt", "a/b/c/deep.txt"]
    cap = "over the size cap"
    assert refused(got) == {("out/big.bin", cap), ("out/3.txt", cap)}

    got = collect_tree(ws, "out", tmp_path / "d3", max_depth=2)
    assert ("out/a/b/c", "too deep") in refused(got)
    assert "a/b/c/deep.txt" not in got.files


def test_a_destination_holding_files_is_never_merged_into(tmp_path: Path) -> None:
    (tmp_path / "ws" / "tests").mkdir(parents=True)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "old.py").write_text("")
    with pytest.raises(FileExistsError):
        collect_tree(tmp_path / "ws", "tests", dest)


def test_take_file_moves_a_regular_file_and_removes_a_link_without_reading_it(
    tmp_path: Path, outside: Path
) -> None:
    ws = tmp_path / "workspace"
    agent = ws / ".agent"
    agent.mkdir(parents=True)
    (agent / "trajectory.json").write_text('{"messages": []}')
    run = tmp_path / "run"
    run.mkdir()
    got = take_file(ws, ".agent/trajectory.json", run / "trajectory.json")
    assert (run / "trajectory.json").read_text() == '{"messages": []}'
    assert got.refused == [] and not (agent / "trajectory.json").exists()

    (agent / "trajectory.json").symlink_to(outside / "rpn.c")
    got = take_file(ws, ".agent/trajectory.json", run / "round2.json")
    assert not (run / "round2.json").exists()
    assert refused(got) == {(".agent/trajectory.json", "symbolic link")}
    assert not (agent / "trajectory.json").is_symlink()
    assert (outside / "rpn.c").read_bytes() == SECRET  # the target is untouched

    os.link(outside / "c01.diff", agent / "actions.jsonl")
    got = take_file(ws, ".agent/actions.jsonl", run / "actions.jsonl")
    assert not (run / "actions.jsonl").exists()
    assert refused(got) == {(".agent/actions.jsonl", "hard link")}
    assert not (agent / "actions.jsonl").exists() and (outside / "c01.diff").exists()
