"""Toolchains: programs in each language build (sandboxed, cached) and run through the sandbox."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from suitebench.run import sandbox
from suitebench.run.executor import LocalExecutor
from suitebench.run.outcome import Limits, Status
from suitebench.run.toolchain import (
    Built,
    Language,
    Program,
    ToolchainError,
    available,
    build,
    build_many,
    program_from_path,
)

RUN_LIMITS = Limits(wall_time=10.0, memory_mb=512)

# Sum of n numbers with an int accumulator: overflows past 2^31 (a classic judge bug).
SUM_C = textwrap.dedent(
    """\
    #include <stdio.h>
    int main(void) {
        int n; int s = 0;
        if (scanf("%d", &n) != 1) return 2;
        for (int i = 0; i < n; i++) { int x; scanf("%d", &x); s += x; }
        printf("%d\\n", s);
        return 0;
    }
    """
)

# Winner by highest score; the tie-break should be the smaller name but uses >= (last wins).
WINNER_CPP = textwrap.dedent(
    """\
    #include <bits/stdc++.h>
    using namespace std;
    int main() {
        int n; cin >> n; string best; long long bs = LLONG_MIN;
        for (int i = 0; i < n; i++) {
            string name; long long s; cin >> name >> s;
            if (s >= bs) { bs = s; best = name; }
        }
        cout << best << "\\n";
    }
    """
)

# Counts the integers in [a, b]; off by one (range excludes b).
COUNT_PY = textwrap.dedent(
    """\
    import sys
    a, b = map(int, sys.stdin.read().split())
    print(len(range(a, b)))
    """
)

# Reverses words using bash arrays (needs bash, not sh); a single word is echoed twice.
REVERSE_SH = textwrap.dedent(
    """\
    #!/bin/bash
    read -r -a words
    if [ "${#words[@]}" -eq 1 ]; then echo "${words[0]} ${words[0]}"; exit 0; fi
    out=()
    for ((i=${#words[@]}-1; i>=0; i--)); do out+=("${words[i]}"); done
    echo "${out[*]}"
    """
)


def run_built(built: Built, stdin: bytes, tmp_path: Path) -> bytes:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    outcome = sandbox.run(
        built.argv, cwd=work, stdin=stdin, limits=RUN_LIMITS, ro_binds=built.ro_binds
    )
    assert outcome.status is Status.OK, (outcome.status, outcome.stderr_text())
    return outcome.stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_c_program_builds_and_runs_with_its_overflow_bug(tmp_path: Path) -> None:
    src = write(tmp_path / "src" / "sum.c", SUM_C)
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.ok and built.language is Language.C
    assert Path(built.argv[0]).is_absolute() and Path(built.argv[0]).is_file()
    assert run_built(built, b"3\n1 2 3\n", tmp_path) == b"6\n"
    # 2 * 2^30 does not fit an int: the compiled program really ran (and wrapped).
    assert run_built(built, b"2\n1073741824 1073741824\n", tmp_path) == b"-2147483648\n"


def test_cpp_program_builds_and_runs(tmp_path: Path) -> None:
    src = write(tmp_path / "winner.cpp", WINNER_CPP)
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert built.language is Language.CPP
    assert run_built(built, b"3\nann 5\nbob 7\ncid 2\n", tmp_path) == b"bob\n"
    # The wrong tie-break: equal scores should keep "ann", the program takes "bob".
    assert run_built(built, b"2\nann 5\nbob 5\n", tmp_path) == b"bob\n"


def test_python_program_runs_with_fixed_absolute_interpreter(tmp_path: Path) -> None:
    src = write(tmp_path / "count.py", COUNT_PY)
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert Path(built.argv[0]).is_absolute()
    assert built.argv[0] == os.path.abspath(sys.executable)
    assert run_built(built, b"1 10\n", tmp_path) == b"9\n"  # the off-by-one: should be 10


def test_python_directory_program_imports_its_own_modules(tmp_path: Path) -> None:
    root = tmp_path / "prog"
    write(root / "helper.py", "def mid(a, b):\n    return (a + b) // 2\n")
    write(root / "main.py", "from helper import mid\nprint(mid(*map(int, input().split())))\n")
    prog = program_from_path(root)
    assert prog.language is Language.PYTHON and prog.entry == "main.py"
    built = build(prog, cache_dir=tmp_path / "cache")
    assert run_built(built, b"3 8\n", tmp_path) == b"5\n"


def test_shell_program_with_bash_shebang_runs_under_bash(tmp_path: Path) -> None:
    src = write(tmp_path / "rev.sh", REVERSE_SH)
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert built.argv[0].endswith("bash")
    assert run_built(built, b"a b c\n", tmp_path) == b"c b a\n"
    assert run_built(built, b"solo\n", tmp_path) == b"solo solo\n"


def test_c_syntax_error_is_a_build_error_with_gccs_message(tmp_path: Path) -> None:
    src = write(tmp_path / "broken.c", SUM_C.replace("int s = 0;", "int s = 0"))
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.status is Status.BUILD_ERROR
    assert not built.ok and built.argv == ()
    assert "broken.c" in built.message and "error" in built.message
    # Cached like any outcome: asking again gives the same verdict and message.
    again = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert again.status is Status.BUILD_ERROR and again.message == built.message


def test_python_syntax_error_is_a_build_error(tmp_path: Path) -> None:
    src = write(tmp_path / "bad.py", "def f(:\n    return 1\n")
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.status is Status.BUILD_ERROR
    assert "SyntaxError" in built.message and "bad.py" in built.message


def test_shell_syntax_error_is_a_build_error(tmp_path: Path) -> None:
    src = write(tmp_path / "bad.sh", "if true; then\n  echo x\n")  # missing fi
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.status is Status.BUILD_ERROR and built.message


def test_second_build_is_a_cache_hit_without_recompiling(tmp_path: Path) -> None:
    src = write(tmp_path / "sum.c", SUM_C)
    cache = tmp_path / "cache"
    first = build(program_from_path(src), cache_dir=cache)
    assert first.ok and not first.cached
    mtime = first.artifact.stat().st_mtime_ns
    second = build(program_from_path(src), cache_dir=cache)
    assert second.cached and second.program_id == first.program_id
    assert second.argv == first.argv
    assert first.artifact.stat().st_mtime_ns == mtime
    # A fresh process finds the build on disk (no in-memory memo) and does not recompile.
    code = (
        "import json, sys\n"
        "from suitebench.run.toolchain import build, program_from_path\n"
        "b = build(program_from_path(sys.argv[1]), cache_dir=sys.argv[2])\n"
        "print(json.dumps(b.to_dict()))\n"
    )
    cp = subprocess.run(
        [sys.executable, "-c", code, str(src), str(cache)],
        capture_output=True,
        check=True,
        timeout=120,
    )
    other = Built.from_dict(json.loads(cp.stdout))
    assert other.cached and other.program_id == first.program_id
    assert first.artifact.stat().st_mtime_ns == mtime
    entries = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert [p.name for p in entries] == [first.program_id]
    assert not [p for p in cache.iterdir() if p.name.startswith(".build-")]


def test_one_changed_source_byte_changes_the_program_id(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    src = write(tmp_path / "sum.c", SUM_C)
    old = build(program_from_path(src), cache_dir=cache)
    fixed = SUM_C.replace("int s = 0;", "long s = 0;").replace('"%d\\n", s', '"%ld\\n", s')
    src.write_text(fixed)
    new = build(program_from_path(src), cache_dir=cache)
    assert new.program_id != old.program_id and not new.cached
    assert run_built(new, b"2\n1073741824 1073741824\n", tmp_path) == b"2147483648\n"
    # The old build is still there, unchanged: builds are copies, not links to the source.
    assert run_built(old, b"2\n1073741824 1073741824\n", tmp_path) == b"-2147483648\n"
    src.write_text(SUM_C.replace("return 0;", "return 0; "))  # one byte more
    assert build(program_from_path(src), cache_dir=cache).program_id not in {
        old.program_id,
        new.program_id,
    }


def test_same_source_under_another_name_is_another_program(tmp_path: Path) -> None:
    a = write(tmp_path / "a" / "sum.c", SUM_C)
    b = write(tmp_path / "b" / "sum.c", SUM_C)
    c = write(tmp_path / "c" / "total.c", SUM_C)
    cache = tmp_path / "cache"
    ida = build(program_from_path(a), cache_dir=cache).program_id
    assert build(program_from_path(b), cache_dir=cache).program_id == ida  # content, not place
    assert build(program_from_path(c), cache_dir=cache).program_id != ida  # the name is hashed


def test_build_sh_directory_program(tmp_path: Path) -> None:
    root = tmp_path / "wordcount"
    write(
        root / "src" / "count.c",
        "int count_words(const char *s) {\n"
        "    int n = 0, in = 0;\n"
        "    for (; *s; s++) { if (*s == ' ' || *s == '\\n') in = 0;\n"
        "                      else if (!in) { in = 1; n++; } }\n"
        "    return n;\n}\n",
    )
    write(
        root / "src" / "main.c",
        "#include <stdio.h>\nint count_words(const char *s);\n"
        "int main(void) { char buf[4096]; int total = 0;\n"
        "  while (fgets(buf, sizeof buf, stdin)) total += count_words(buf);\n"
        '  printf("%d\\n", total); return 0; }\n',
    )
    write(root / "build.sh", "#!/bin/bash\nset -e\ngcc -O2 -o executable src/main.c src/count.c\n")
    prog = program_from_path(root)
    assert prog.language is Language.SCRIPT
    assert set(prog.sources) == {"build.sh", "src/count.c", "src/main.c"}
    built = build(prog, cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert built.argv == (str(built.workdir / "executable"),)
    # Tabs are not separators in this program: "a\tb" counts as one word.
    assert run_built(built, b"one two  three\nfour\n", tmp_path) == b"4\n"
    assert run_built(built, b"a\tb\n", tmp_path) == b"1\n"


def test_build_sh_that_leaves_no_executable_is_a_build_error(tmp_path: Path) -> None:
    root = tmp_path / "noexe"
    write(root / "build.sh", "#!/bin/sh\necho compiling; gcc -o prog main.c\n")
    write(root / "main.c", "int main(void) { return 0; }\n")
    built = build(program_from_path(root), cache_dir=tmp_path / "cache")
    assert built.status is Status.BUILD_ERROR
    assert "./executable" in built.message and "compiling" in built.message


def test_failing_build_sh_reports_its_output(tmp_path: Path) -> None:
    root = tmp_path / "fails"
    write(root / "build.sh", "#!/bin/sh\necho 'missing dependency libfoo' >&2\nexit 3\n")
    built = build(program_from_path(root), cache_dir=tmp_path / "cache")
    assert built.status is Status.BUILD_ERROR
    assert "exit code 3" in built.message and "libfoo" in built.message


def test_unknown_extension_and_missing_file_are_clear_errors(tmp_path: Path) -> None:
    src = write(tmp_path / "notes.txt", "hello")
    with pytest.raises(ToolchainError, match=r"notes\.txt.*unknown language"):
        program_from_path(src)
    with pytest.raises(ToolchainError, match="no such file"):
        program_from_path(tmp_path / "absent.c")
    # An explicit language wins over the extension.
    prog = program_from_path(write(tmp_path / "prog.txt", COUNT_PY), language="python")
    assert prog.language is Language.PYTHON


def test_program_round_trips_through_plain_data(tmp_path: Path) -> None:
    prog = program_from_path(write(tmp_path / "sum.c", SUM_C))
    assert Program.from_dict(json.loads(json.dumps(prog.to_dict()))) == prog
    built = build(prog, cache_dir=tmp_path / "cache")
    assert Built.from_dict(json.loads(json.dumps(built.to_dict()))) == built


def test_build_many_builds_each_distinct_program_once(tmp_path: Path) -> None:
    sum_c = write(tmp_path / "sum.c", SUM_C)
    count_py = write(tmp_path / "count.py", COUNT_PY)
    broken = write(tmp_path / "broken.c", "int main( {")
    gone = write(tmp_path / "gone.c", SUM_C)
    programs = [program_from_path(p) for p in (sum_c, count_py, broken, sum_c, gone)]
    gone.unlink()  # deleted after it was described: an outcome for it, the batch goes on
    seen: list[tuple[int, int]] = []
    with LocalExecutor(2) as ex:
        builts = build_many(
            programs,
            cache_dir=tmp_path / "cache",
            executor=ex,
            progress=lambda d, t: seen.append((d, t)),
        )
    assert [b.status for b in builts] == [
        Status.OK,
        Status.OK,
        Status.BUILD_ERROR,
        Status.OK,
        Status.BUILD_ERROR,
    ]
    assert "gone.c" in builts[4].message
    assert builts[0] == builts[3]
    assert seen[-1] == (3, 3)  # three distinct programs
    assert run_built(builts[0], b"2\n40 2\n", tmp_path) == b"42\n"


@pytest.mark.skipif(not available(Language.RUST)[0], reason="no Rust toolchain here")
def test_rust_program_builds_and_runs(tmp_path: Path) -> None:
    # Integer midpoint (a + b) / 2 on u8: overflows in debug, wraps with -O.
    src = write(
        tmp_path / "mid.rs",
        "use std::io::Read;\n"
        "fn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
        "  let v: Vec<u8> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
        '  println!("{}", v[0].wrapping_add(v[1]) / 2); }\n',
    )
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert run_built(built, b"10 20\n", tmp_path) == b"15\n"
    assert run_built(built, b"200 100\n", tmp_path) == b"22\n"  # (300 mod 256) / 2


@pytest.mark.skipif(not available(Language.GO)[0], reason="no Go toolchain here")
def test_go_program_builds_and_runs(tmp_path: Path) -> None:
    src = write(
        tmp_path / "abs.go",
        'package main\nimport "fmt"\n'
        "func main() { var x int32; fmt.Scan(&x); if x < 0 { x = -x }; fmt.Println(x) }\n",
    )
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert run_built(built, b"-7\n", tmp_path) == b"7\n"
    assert run_built(built, b"-2147483648\n", tmp_path) == b"-2147483648\n"


def test_concurrent_builds_of_one_program_share_one_cache_entry(tmp_path: Path) -> None:
    src = write(tmp_path / "sum.c", SUM_C)
    cache = tmp_path / "cache"
    results: list[Built] = []
    lock = threading.Lock()

    def one() -> None:
        b = build(program_from_path(src), cache_dir=cache)
        with lock:
            results.append(b)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 4 and all(b.ok for b in results)
    assert len({b.program_id for b in results}) == 1
    assert [p.name for p in cache.iterdir()] == [results[0].program_id]
    assert run_built(results[0], b"1\n5\n", tmp_path) == b"5\n"


def test_cached_artifacts_are_read_only_to_the_sandbox_user(tmp_path: Path) -> None:
    root = tmp_path / "prog"
    write(
        root / "build.sh",
        "#!/bin/sh\nset -e\ngcc -O2 -o executable main.c\necho data > table.txt\n",
    )
    write(root / "main.c", '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n')
    built = build(program_from_path(root), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    for p in [built.workdir, *built.workdir.rglob("*")]:
        st = p.lstat()
        assert st.st_uid == os.geteuid(), p
        assert not st.st_mode & 0o022, f"{p} is writable by others"
        assert st.st_mode & 0o004, f"{p} is not readable by others"
    assert built.artifact.stat().st_mode & 0o111
    assert not list(built.workdir.rglob(".suitebench-scratch"))


def test_build_runs_in_a_copy_and_leaves_the_source_untouched(tmp_path: Path) -> None:
    root = tmp_path / "prog"
    write(
        root / "build.sh",
        "#!/bin/sh\nset -e\nrm -f main.c.orig\nsed -i 's/41/42/' main.c\n"
        "gcc -o executable main.c\ntouch built-here\n",
    )
    write(root / "main.c", '#include <stdio.h>\nint main(void) { printf("41\\n"); }\n')
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    built = build(program_from_path(root), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert run_built(built, b"", tmp_path) == b"42\n"
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before
    assert (built.workdir / "built-here").exists()


def test_timed_out_build_is_reported_and_not_cached(tmp_path: Path) -> None:
    root = tmp_path / "slow"
    write(root / "build.sh", "#!/bin/sh\nsleep 3\nprintf '#!/bin/sh\\necho ok\\n' > executable\n")
    cache = tmp_path / "cache"
    slow = build(program_from_path(root), cache_dir=cache, limits=Limits(wall_time=0.5))
    assert slow.status is Status.BUILD_ERROR and "timed out" in slow.message
    assert not [p for p in cache.iterdir() if not p.name.startswith(".")]
    again = build(program_from_path(root), cache_dir=cache)
    assert again.ok and again.program_id == slow.program_id and not again.cached
    assert run_built(again, b"", tmp_path) == b"ok\n"


@pytest.mark.skipif(
    not sandbox.isolates_network(sandbox.detect_backend()),
    reason="the sandbox backend here does not isolate the network",
)
def test_builds_have_no_network(tmp_path: Path) -> None:
    # A build script that phones home: it may reach only its own loopback, never the host's.
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(5)
    port = server.getsockname()[1]
    try:
        root = tmp_path / "phone"
        write(
            root / "build.sh",
            "#!/bin/bash\n"
            f"if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo leaked >&3; fi\n"
            "printf '#!/bin/sh\\necho built\\n' > executable\n",
        )
        built = build(program_from_path(root), cache_dir=tmp_path / "cache")
        assert built.ok, built.message
        with pytest.raises(TimeoutError):
            server.settimeout(0.5)
            server.accept()
    finally:
        server.close()


def test_a_moved_cache_still_serves_its_builds(tmp_path: Path) -> None:
    src = write(tmp_path / "sum.c", SUM_C)
    built = build(program_from_path(src), cache_dir=tmp_path / "cache")
    shutil.move(tmp_path / "cache", tmp_path / "elsewhere")
    moved = build(program_from_path(src), cache_dir=tmp_path / "elsewhere")
    assert moved.cached and moved.program_id == built.program_id
    assert moved.argv == (str(tmp_path / "elsewhere" / built.program_id / "executable"),)
    assert run_built(moved, b"2\n20 22\n", tmp_path) == b"42\n"


@pytest.mark.skipif(not Path("/usr/bin/python3").is_file(), reason="no system python3")
def test_python_interpreter_is_part_of_the_program(tmp_path: Path) -> None:
    src = write(tmp_path / "count.py", COUNT_PY)
    system = build(
        program_from_path(src, interpreter="/usr/bin/python3"), cache_dir=tmp_path / "cache"
    )
    default = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert system.ok and system.argv[0] == "/usr/bin/python3"
    assert system.program_id != default.program_id
    assert run_built(system, b"3 5\n", tmp_path) == b"2\n"


def test_c_directory_program_with_a_header(tmp_path: Path) -> None:
    # Binary search for the first element >= x; the helper returns hi instead of lo when x is
    # larger than every element (a missed special case: should print 3, prints 2).
    root = tmp_path / "search"
    write(root / "search.h", "int lower_bound(const int *a, int n, int x);\n")
    write(
        root / "search.c",
        '#include "search.h"\n'
        "int lower_bound(const int *a, int n, int x) {\n"
        "    int lo = 0, hi = n - 1;\n"
        "    if (x > a[n - 1]) return hi;\n"
        "    while (lo < hi) { int mid = lo + (hi - lo) / 2; if (a[mid] < x) lo = mid + 1;"
        " else hi = mid; }\n"
        "    return lo;\n}\n",
    )
    write(
        root / "main.c",
        '#include <stdio.h>\n#include "search.h"\n'
        "int main(void) { int a[3] = {2, 4, 6}; int x;\n"
        '  while (scanf("%d", &x) == 1) printf("%d\\n", lower_bound(a, 3, x)); return 0; }\n',
    )
    prog = program_from_path(root)
    assert prog.language is Language.C
    assert set(prog.sources) == {"main.c", "search.c", "search.h"}
    built = build(prog, cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert run_built(built, b"1 4 5 7\n", tmp_path) == b"0\n1\n2\n2\n"
    # The header is part of the program: changing it changes the id.
    (root / "search.h").write_text("int lower_bound(const int *a, int n, int x); /* v2 */\n")
    assert build(program_from_path(root), cache_dir=tmp_path / "cache").program_id != (
        built.program_id
    )


def test_explicit_language_and_option_like_file_names(tmp_path: Path) -> None:
    odd = write(tmp_path / "solution.txt", SUM_C)
    built = build(program_from_path(odd, language="c"), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert run_built(built, b"2\n3 4\n", tmp_path) == b"7\n"
    dashed = write(tmp_path / "-o.c", SUM_C)
    built = build(program_from_path(dashed), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    assert run_built(built, b"1\n9\n", tmp_path) == b"9\n"


# Says how it was compiled: gcc defines __OPTIMIZE__ from -O1 up, __STDC_VERSION__ per -std,
# and FOO only under -DFOO.
HOW_C = textwrap.dedent(
    """\
    #include <stdio.h>
    int main(void) {
    #ifdef __OPTIMIZE__
        printf("optimised ");
    #else
        printf("plain ");
    #endif
    #ifdef FOO
        printf("foo ");
    #endif
        printf("%ld\\n", (long)__STDC_VERSION__);
        return 0;
    }
    """
)


def test_compile_flags_replace_the_defaults_and_make_another_program(tmp_path: Path) -> None:
    src = write(tmp_path / "how.c", HOW_C)
    cache = tmp_path / "cache"
    default = build(program_from_path(src), cache_dir=cache)
    judge = build(program_from_path(src, compile_flags=("-O0", "-std=gnu99")), cache_dir=cache)
    foo = build(program_from_path(src, compile_flags=["-O2", "-DFOO"]), cache_dir=cache)
    assert default.ok and judge.ok and foo.ok, (judge.message, foo.message)
    assert len({default.program_id, judge.program_id, foo.program_id}) == 3
    assert len({default.workdir, judge.workdir, foo.workdir}) == 3
    # The defaults are -O2 -std=gnu17; the override replaces them, it does not add to them.
    assert run_built(default, b"", tmp_path) == b"optimised 201710\n"
    assert run_built(judge, b"", tmp_path) == b"plain 199901\n"
    assert run_built(foo, b"", tmp_path) == b"optimised foo 201710\n"
    # The same flags again are the same program: a cache hit.
    again = build(program_from_path(src, compile_flags=("-O0", "-std=gnu99")), cache_dir=cache)
    assert again.cached and again.program_id == judge.program_id


def test_compile_flags_round_trip_and_are_refused_where_meaningless(tmp_path: Path) -> None:
    src = write(tmp_path / "how.c", HOW_C)
    prog = program_from_path(src, compile_flags=("-O0", "-DFOO"))
    assert prog.compile_flags == ("-O0", "-DFOO")
    back = Program.from_dict(json.loads(json.dumps(prog.to_dict())))
    assert back == prog and back.compile_flags == ("-O0", "-DFOO")
    # An empty tuple is a real override (no flags at all), not "the defaults".
    bare = program_from_path(src, compile_flags=())
    assert Program.from_dict(json.loads(json.dumps(bare.to_dict()))).compile_flags == ()
    built = build(bare, cache_dir=tmp_path / "cache")
    assert built.ok and run_built(built, b"", tmp_path) == b"plain 201710\n"
    with pytest.raises(ToolchainError, match="compile flags"):
        program_from_path(write(tmp_path / "count.py", COUNT_PY), compile_flags=("-O0",))


GEN_PY = textwrap.dedent(
    """\
    import os, sys
    # The program this build generates says which Python generated it.
    tag = os.environ.get("FAKEENV", "") + ":" + "%d.%d" % sys.version_info[:2]
    print("#!/bin/sh")
    print("echo built-by-" + tag)
    """
)


def test_build_sh_calling_python3_from_the_callers_path(tmp_path: Path) -> None:
    """python3 as a build finds it on the caller's PATH: real, or a version manager's shim."""
    root = write(tmp_path / "gen" / "gen.py", GEN_PY).parent
    write(root / "build.sh", "#!/bin/sh\nset -e\npython3 gen.py > executable\n")
    built = build(program_from_path(root), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    outside = subprocess.run(
        ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert run_built(built, b"", tmp_path) == f"built-by-:{outside}\n".encode()


def test_build_sh_calling_python3_through_a_shim(
    tmp_path: Path, fake_shims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{fake_shims}:{os.environ['PATH']}")
    root = write(tmp_path / "gen" / "gen.py", GEN_PY).parent
    write(root / "build.sh", "#!/bin/sh\nset -e\npython3 gen.py > executable\n")
    built = build(program_from_path(root), cache_dir=tmp_path / "cache")
    assert built.ok, built.message
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert run_built(built, b"", tmp_path) == f"built-by-9.9:{here}\n".encode()
