"""What a sandboxed program sees: its layout, never the problem, other programs, the store or
the user's files (a contestant's program that reads the expected answers is the oldest trick)."""

from __future__ import annotations

import errno
import os
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from suitebench.run import sandbox
from suitebench.run.outcome import Backend, Limits, Status
from suitebench.run.store import Store
from suitebench.run.toolchain import Built, build, program_from_path

# Both submissions read one path per line and print "<errno> <path>" (0: opened it).
PEEK_C = textwrap.dedent(
    """\
    #include <errno.h>
    #include <fcntl.h>
    #include <stdio.h>
    #include <string.h>
    #include <unistd.h>
    int main(void) {
        char path[4096];
        while (fgets(path, sizeof path, stdin)) {
            path[strcspn(path, "\\n")] = 0;
            int fd = open(path, O_RDONLY);
            printf("%d %s\\n", fd < 0 ? errno : 0, path);
            if (fd >= 0) close(fd);
        }
        return 0;
    }
    """
)
PEEK_PY = textwrap.dedent(
    """\
    import os, sys
    for line in sys.stdin:
        path = line.rstrip("\\n")
        try:
            os.close(os.open(path, os.O_RDONLY))
            print(0, path)
        except OSError as e:
            print(e.errno, path)
    """
)
# The problem's reference: the sum of a list (what the submissions are judged against).
REF_C = (
    "#include <stdio.h>\n"
    'int main(void){long s=0,x;while(scanf("%ld",&x)==1)s+=x;printf("%ld\\n",s);}\n'
)


def _backends() -> list[object]:
    available = sandbox.available_backends()
    return [
        pytest.param(
            b,
            id=str(b),
            marks=[] if available[b] is None else [pytest.mark.skip(reason=str(available[b]))],
        )
        for b in Backend
    ]


@dataclass
class World:
    """A user's world: a problem with tests and refs, a build cache with several programs, a
    store, a secret in $HOME, and this working tree."""

    problem: Path
    secrets: dict[str, Path]
    c: Built
    py: Built
    work: Path
    cache: Path


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    problem = tmp_path / "problem"
    (problem / "tests").mkdir(parents=True)
    (problem / "refs").mkdir()
    (problem / "submissions").mkdir()
    (problem / "tests" / "01.in").write_text("3\n1 2 3\n")
    (problem / "tests" / "01.ans").write_text("6\n")
    (problem / "refs" / "ref.c").write_text(REF_C)
    (problem / "submissions" / "peek.c").write_text(PEEK_C)
    (problem / "submissions" / "peek.py").write_text(PEEK_PY)
    cache = tmp_path / "cache"
    c = build(program_from_path(problem / "submissions" / "peek.c"), cache_dir=cache)
    py = build(program_from_path(problem / "submissions" / "peek.py"), cache_dir=cache)
    ref = build(program_from_path(problem / "refs" / "ref.c"), cache_dir=cache)
    assert c.ok and py.ok and ref.ok, (c.message, py.message, ref.message)
    store_path = tmp_path / "store" / "runs.sqlite"
    store_path.parent.mkdir()
    with Store(store_path) as store:
        store.put("run:1", {"stdout": "6\n"}, kind="run")
    home_secret = Path.home() / f".suitebench-secret-{uuid.uuid4().hex}"
    home_secret.write_text("token")
    # Readable by everybody, so that only the layout (not file modes) can keep a program out.
    for p in (tmp_path, *[q for q in tmp_path.rglob("*")]):
        p.chmod(p.stat().st_mode | 0o005)
    home_secret.chmod(0o644)
    work = tmp_path / "work"
    work.mkdir()
    secrets = {
        "problem tests": problem / "tests" / "01.ans",
        "problem refs": problem / "refs" / "ref.c",
        "problem dir": problem,
        "another submission": problem / "submissions" / "peek.c",
        "another program's build": ref.artifact,
        "another program's build dir": ref.workdir,
        "the store": store_path,
        "$HOME": home_secret,
        "the working tree": Path(__file__).resolve(),
        "the working tree's root": Path(__file__).resolve().parent.parent.parent / "pyproject.toml",
    }
    try:
        yield World(problem, secrets, c, py, work, cache)
    finally:
        home_secret.unlink()


def _peek(built: Built, world: World, backend: Backend, paths: list[Path]) -> dict[Path, int]:
    stdin = "".join(f"{p}\n" for p in paths).encode()
    out = sandbox.run(
        built.argv,
        cwd=world.work,
        stdin=stdin,
        backend=backend,
        ro_binds=built.ro_binds,
        limits=Limits(wall_time=20.0),
    )
    assert out.status is Status.OK, (out, out.stderr_text())
    seen: dict[Path, int] = {}
    for line in out.stdout.decode().splitlines():
        code, path = line.split(" ", 1)
        seen[Path(path)] = int(code)
    return seen


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("language", ["c", "python"])
def test_a_submission_sees_nothing_it_should_not(
    world: World, backend: Backend, language: str
) -> None:
    built = world.c if language == "c" else world.py
    own = [built.artifact if language == "c" else built.workdir / "peek.py", world.work]
    seen = _peek(built, world, backend, [*own, *world.secrets.values()])
    # Normal runs still work: the program opens its own build and its work dir.
    assert all(seen[p] == 0 for p in own), seen
    if sandbox.hides_files(backend):
        # Not "permission denied": these paths do not exist inside the sandbox.
        hidden = {name: seen[p] for name, p in world.secrets.items()}
        assert hidden == dict.fromkeys(world.secrets, errno.ENOENT), hidden
    else:
        # plain hides nothing (documented; `suitebench doctor` says so): the same program
        # reads the expected answers.
        assert seen[world.secrets["problem tests"]] == 0


@pytest.mark.parametrize("backend", _backends())
def test_a_program_sees_only_its_own_build_in_the_cache(world: World, backend: Backend) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} hides no files")
    argv = ["sh", "-c", f"ls -A {world.cache}; ls -A {world.problem} 2>&1 | head -1"]
    out = sandbox.run(argv, cwd=world.work, backend=backend, ro_binds=world.c.ro_binds)
    assert out.status is Status.OK, out
    lines = out.stdout.decode().splitlines()
    assert lines[0] == world.c.program_id and len(lines) == 2, lines
    assert "No such file" in lines[1]


@pytest.mark.parametrize("backend", _backends())
def test_ro_binds_are_visible_read_only_and_only_them(world: World, backend: Backend) -> None:
    """A checker gets what it is handed: the answer file passed in ro_binds, not its siblings."""
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} hides no files")
    answer = world.problem / "tests" / "01.ans"
    script = f"cat {answer}; cat {world.problem}/tests/01.in 2>&1; echo x >> {answer} || echo ro"
    out = sandbox.run(["sh", "-c", script], cwd=world.work, backend=backend, ro_binds=[answer])
    assert out.status is Status.OK, out
    text = out.stdout.decode()
    assert text.startswith("6\n") and "No such file" in text and text.endswith("ro\n"), text
    assert answer.read_text() == "6\n"


@pytest.mark.parametrize("backend", _backends())
def test_system_directories_and_minimal_etc_are_there(world: World, backend: Backend) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} hides no files")
    script = (
        "id -un; test -e /etc/ld.so.cache && echo ldcache; "
        "test -e /etc/shadow || echo no-shadow; test -e /etc/ssl || echo no-ssl; "
        "test -e /var || echo no-var; test -e /home || echo no-home; "
        "touch /newfile 2>/dev/null || echo root-ro; touch /etc/x 2>/dev/null || echo etc-ro; "
        "echo hi > /dev/null && echo devnull; echo t > /tmp/t && cat /tmp/t"
    )
    out = sandbox.run(["sh", "-c", script], cwd=world.work, backend=backend)
    assert out.status is Status.OK, (out, out.stderr_text())
    lines = out.stdout.decode().splitlines()
    want = ["ldcache", "no-shadow", "no-ssl", "no-var", "no-home", "root-ro", "etc-ro", "devnull"]
    assert lines[1:] == [*want, "t"], lines
    if os.geteuid() == 0:
        assert lines[0] == "nobody"


@pytest.mark.parametrize("backend", _backends())
def test_a_read_only_path_inside_the_work_dir_stays_read_only(
    tmp_path: Path, backend: Backend
) -> None:
    if not sandbox.hides_files(backend):
        pytest.skip(f"{backend} hides no files")
    work = tmp_path / "work"
    (work / "given").mkdir(parents=True)
    (work / "given" / "answer").write_text("42\n")
    script = "echo new > mine && cat given/answer && (echo x > given/answer || echo refused)"
    out = sandbox.run(["sh", "-c", script], cwd=work, backend=backend, ro_binds=[work / "given"])
    assert out.status is Status.OK, (out, out.stderr_text())
    assert out.stdout == b"42\nrefused\n"
    assert (work / "mine").read_text() == "new\n" and (
        work / "given" / "answer"
    ).read_text() == "42\n"


@pytest.mark.parametrize("backend", _backends())
def test_the_root_on_a_command_line_shows_nothing_more(tmp_path: Path, backend: Backend) -> None:
    """``ls /`` once failed to start (the root was bound whole, clashing with /bin -> usr/bin),
    and binding it would have shown every file: an absolute path argument is shown, the root
    never is."""
    secret = tmp_path / "outside" / "answers.txt"
    secret.parent.mkdir()
    secret.write_text("42\n")
    work = tmp_path / "work"
    work.mkdir()
    oc = sandbox.run(
        ["sh", "-c", 'ls "$1"; cat "$(cat)" 2>/dev/null || echo hidden', "sh", "/"],
        cwd=work,
        stdin=str(secret).encode(),  # named on stdin, not on the command line: never bound
        backend=backend,
        limits=Limits(wall_time=10),
    )
    assert oc.status is Status.OK, oc.message
    listing = oc.stdout.decode().split()
    assert "usr" in listing and "etc" in listing
    assert listing[-1] == ("hidden" if sandbox.hides_files(backend) else "42")


def test_a_batch_of_many_program_trees_is_laid_out_once_each(tmp_path: Path) -> None:
    """A batch binds every program's build tree (hundreds): each is bound once, a path inside
    a bound tree is not bound again, a path inside the writable work dir is (read-only on top),
    and only the directories leading to the trees are created."""
    from suitebench.run.layout import build_layout

    cache = tmp_path / "store" / "builds"
    trees = [cache / f"{i:03d}" / "tree" for i in range(300)]
    for tree in trees:
        tree.mkdir(parents=True)
    inside = trees[7] / "pkg"
    inside.mkdir()
    work = tmp_path / "work"
    (work / "given").mkdir(parents=True)
    lay = build_layout(work, [inside, *trees, work / "given"], [])
    assert set(lay.ro) == {*trees, work / "given"}
    # parents before children: bwrap mounts them in this order
    assert [len(p.parts) for p in lay.ro] == sorted(len(p.parts) for p in lay.ro)
    assert set(lay.dirs) >= {cache, *(t.parent for t in trees)}
    assert not any(d == t or t in d.parents for d in lay.dirs for t in trees)
    assert work not in lay.dirs and all(
        d in work.parents or d in cache.parents or d == cache or d.parent == cache for d in lay.dirs
    )
