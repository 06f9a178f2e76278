"""Java and PyPy in the engine: the class a Java source runs, javac once per program, the JVM
inside both isolating backends with its heap bound by the run's memory limit, its
OutOfMemoryError as the memory status (and nothing else as it), its threads allowed for, no
RLIMIT_AS for it, no network; PyPy as a language of its own. Every run is a real sandboxed
JVM or PyPy; a missing runtime fails the test, naming the set-up step that installs it."""

from __future__ import annotations

import json
import os
import socket
import textwrap
from pathlib import Path

import pytest

from suitebench.run import cgroups, jvm, sandbox
from suitebench.run.outcome import Backend, Limits, Status
from suitebench.run.toolchain import Built, Language, available, build, program_from_path

from ..cli_helpers import run_suitebench

LIMITS = Limits(wall_time=10.0, cpu_time=5.0, memory_mb=256)


@pytest.fixture(autouse=True)
def _runtimes() -> None:
    """Installed by the test set-up (``SUITEBENCH_TEST_TOOLS=1 bash scripts/bootstrap.sh``);
    a test never installs one, and never skips past a missing one."""
    for lang in ("java", "pypy3"):
        ok, why = available(lang)
        if not ok:
            pytest.fail(f"{why}: `SUITEBENCH_TEST_TOOLS=1 bash scripts/bootstrap.sh` installs it")
    for b in (Backend.BWRAP, Backend.UNSHARE):
        reason = sandbox.available_backends()[b]
        if reason is not None:
            pytest.fail(f"the Java tests run under {b}, which does not work here: {reason}")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _built(tmp_path: Path, name: str, source: str, language: str | None = None) -> Built:
    b = build(
        program_from_path(_write(tmp_path / "src" / name, source), language),
        cache_dir=tmp_path / "cache",
    )
    assert b.ok, b.message
    return b


def _run(b: Built, tmp_path: Path, stdin: bytes = b"", **kw: object) -> sandbox.Outcome:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    limits = kw.pop("limits", LIMITS)
    return sandbox.run(b.argv, cwd=work, stdin=stdin, limits=limits, ro_binds=b.ro_binds, **kw)  # type: ignore[arg-type]


# -- which class runs ------------------------------------------------------------------------


def test_the_class_with_main_is_found_whatever_the_source_calls_it() -> None:
    decoy = """
        // public class Fake { public static void main(String[] a) {} }
        /* class Other { public static void main(String[] a) {} } */
        public final class Solution {
            static String s = "class Nope { public static void main(";
            static char c = '{';
            public static void main(String[] args) { }
        }
        class Helper { void main() { } }
    """
    assert jvm.find_main_class(decoy) == jvm.MainClass("Solution", "Solution", None)
    no_public = "import java.util.*;\nclass A {\n static public void main(String[] a) {}\n}\n"
    assert jvm.find_main_class(no_public).run_name == "A"
    nested = "public class Outer {\n static class In { public static void main(String[] a) {} }\n}"
    assert jvm.find_main_class(nested).run_name == "Outer$In"
    packaged = "package cf.round;\npublic class Main { public static void main(String[] a) {} }"
    assert jvm.find_main_class(packaged).run_name == "cf.round.Main"
    two = (
        "class A { public static void main(String[] a) {} }\n"
        "public class B {\n public static void main(String[] a) {} }"
    )
    assert jvm.find_main_class(two).main == "B"  # the public one
    assert jvm.find_main_class("class A { void run() {} }").main is None


def test_heap_and_stack_follow_the_memory_limit() -> None:
    assert jvm.heap_mb(256) == 192 and jvm.heap_mb(1024) == 960 and jvm.heap_mb(64) == 48
    assert jvm.heap_flags(256) == ["-Xmx192m", "-Xms64m", "-Xss32m"]
    assert jvm.heap_flags(1024)[-1] == "-Xss64m" and jvm.heap_flags(None) == ["-Xss64m"]
    argv = ["/x/bin/java", jvm.MARKER, "-Xmx1g", "-cp", ".", "Main"]
    assert jvm.with_heap(argv, 256) == ["/x/bin/java", "-Xms64m", "-Xss32m", *argv[1:]]


# -- building --------------------------------------------------------------------------------

SOLUTION = """\
    import java.io.*;
    import java.util.*;

    public class Solution {
        public static void main(String[] args) throws IOException {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            StringTokenizer st = new StringTokenizer(in.readLine());
            long a = Long.parseLong(st.nextToken()), b = Long.parseLong(st.nextToken());
            System.out.println(a + b);
        }
    }
"""


def test_a_public_class_in_a_file_named_otherwise_builds_once_and_runs(tmp_path: Path) -> None:
    first = _built(tmp_path, "sub-1234.java", SOLUTION)
    assert first.language is Language.JAVA and not first.cached
    assert first.argv[-1] == "Solution" and (first.workdir / "Solution.class").is_file()
    again = build(
        program_from_path(tmp_path / "src" / "sub-1234.java"), cache_dir=tmp_path / "cache"
    )
    assert again.cached and again.program_id == first.program_id
    assert (first.workdir / "Solution.class").stat().st_mtime_ns == (
        again.workdir / "Solution.class"
    ).stat().st_mtime_ns
    for backend in (Backend.BWRAP, Backend.UNSHARE):
        o = _run(first, tmp_path, b"2 40\n", backend=backend)
        assert (o.status, o.stdout, o.backend) == (Status.OK, b"42\n", backend)
    # Named right already: compiled as it is, the same class runs.
    named = _built(tmp_path, "Solution.java", SOLUTION)
    assert named.program_id != first.program_id and named.argv[-1] == "Solution"


def test_a_compile_error_and_a_source_without_main_are_build_errors(tmp_path: Path) -> None:
    src = _write(tmp_path / "bad.java", "public class Bad { int f() { return 1 } }\n")
    bad = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert bad.status is Status.BUILD_ERROR and "';' expected" in bad.message
    src = _write(tmp_path / "lib.java", "class Lib { static int twice(int x) { return 2 * x; } }\n")
    lib = build(program_from_path(src), cache_dir=tmp_path / "cache")
    assert lib.status is Status.BUILD_ERROR and "static void main" in lib.message


# -- running ---------------------------------------------------------------------------------

HOARD = """\
    import java.util.*;

    public class Hoard {
        public static void main(String[] args) {
            List<long[]> blocks = new ArrayList<>();
            try {
                while (true) blocks.add(new long[1 << 17]);  // 1 MiB a block, kept
            } catch (Throwable t) {
                blocks = null;  // a program that catches everything and answers anyway
                System.out.println("0");
            }
        }
    }
"""

EXIT3 = """\
    public class Exit3 {
        public static void main(String[] args) {
            System.err.println("invalid input");
            System.exit(3);
        }
    }
"""


@pytest.mark.parametrize("backend", [Backend.BWRAP, Backend.UNSHARE])
def test_out_of_memory_is_the_memory_status_even_when_caught(
    tmp_path: Path, backend: Backend
) -> None:
    o = _run(_built(tmp_path, "hoard.java", HOARD), tmp_path, backend=backend)
    assert o.status is Status.MEMORY, (o.status, o.stderr_text())
    assert o.stdout == b"" and "Java heap space" in o.message
    # its heap was bounded below the limit: the JVM, not the cgroup, said no
    assert o.peak_memory_kb is not None and o.peak_memory_kb < 256 * 1024


def test_exit_status_3_of_the_program_itself_is_a_runtime_error(tmp_path: Path) -> None:
    o = _run(_built(tmp_path, "exit3.java", EXIT3), tmp_path)
    assert (o.status, o.exit_code, o.stderr) == (Status.RUNTIME_ERROR, 3, b"invalid input\n")


def test_without_a_memory_cgroup_the_jvm_starts_and_its_heap_still_bounds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no memory cgroup is writable the sandbox falls back to RLIMIT_AS, under which a
    JVM cannot even start (it reserves a gigabyte of class space): a Java run goes without
    it, bounded by its heap, and javac reserves what fits the build's limit."""
    with monkeypatch.context() as m:
        m.setitem(cgroups._usable_cache, "memory", None)
        hoard = _built(tmp_path, "hoard.java", HOARD)  # javac too, under the build's RLIMIT_AS
        o = _run(hoard, tmp_path)
        c = _run(
            _built(
                tmp_path, "add.c", "#include <stdlib.h>\nint main(void){return !malloc(1u<<30);}\n"
            ),
            tmp_path,
        )
    assert o.status is Status.MEMORY and "Java heap space" in o.message, o.stderr_text()
    assert c.status is Status.RUNTIME_ERROR and "RLIMIT_AS" in c.message  # C keeps its limit


THREADS = """\
    public class Threads {
        public static void main(String[] args) throws Exception {
            Thread[] pool = new Thread[40];
            long[] sums = new long[pool.length];
            for (int i = 0; i < pool.length; i++) {
                final int k = i;
                pool[i] = new Thread(() -> { for (int j = 0; j <= k; j++) sums[k] += j; });
                pool[i].start();
            }
            long total = 0;
            for (int i = 0; i < pool.length; i++) { pool[i].join(); total += sums[i]; }
            System.out.println(total);
        }
    }
"""


def test_the_jvms_own_threads_do_not_eat_the_programs_process_limit(tmp_path: Path) -> None:
    """40 threads of the program's under a limit of 48 processes: the JVM's dozen threads
    come on top, as the program's own processes are what the limit counts."""
    o = _run(
        _built(tmp_path, "threads.java", THREADS),
        tmp_path,
        limits=Limits(wall_time=10, memory_mb=256, processes=48),
    )
    assert (o.status, o.stdout) == (Status.OK, b"10660\n"), o.stderr_text()


def test_a_java_program_has_no_network(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    phone = f"""\
        import java.net.Socket;

        public class Phone {{
            public static void main(String[] args) throws Exception {{
                try (Socket s = new Socket("127.0.0.1", {port})) {{
                    s.getOutputStream().write("leaked".getBytes());
                }}
                System.out.println("sent");
            }}
        }}
    """
    try:
        o = _run(_built(tmp_path, "phone.java", phone), tmp_path)
        assert o.status is Status.RUNTIME_ERROR and b"Connection refused" in o.stderr
        server.settimeout(0.5)
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


# -- PyPy ------------------------------------------------------------------------------------


def test_pypy_runs_python_files_and_directories_on_pypy(tmp_path: Path) -> None:
    which = (
        "import platform, sys\n"
        "print(platform.python_implementation(), sum(map(int, sys.stdin.read().split())))\n"
    )
    one = _built(tmp_path, "sum.py", which, "pypy3")
    assert one.language is Language.PYPY3
    assert _run(one, tmp_path, b"1 2 3").stdout == b"PyPy 6\n"
    cpython = _built(tmp_path, "sum2.py", which)
    assert _run(cpython, tmp_path, b"1 2 3").stdout == b"CPython 6\n"
    _write(tmp_path / "pkg" / "helper.py", "def twice(x):\n    return 2 * x\n")
    _write(
        tmp_path / "pkg" / "main.py",
        "import helper, platform\nprint(platform.python_implementation(), helper.twice(21))\n",
    )
    d = build(program_from_path(tmp_path / "pkg", "pypy3"), cache_dir=tmp_path / "cache")
    assert d.ok and _run(d, tmp_path).stdout == b"PyPy 42\n"
    bad = build(
        program_from_path(_write(tmp_path / "bad.py", "def f(:\n"), "pypy3"),
        cache_dir=tmp_path / "cache",
    )
    assert bad.status is Status.BUILD_ERROR and "SyntaxError" in bad.message


def _doctor_tools(path: str) -> dict[str, dict[str, object]]:
    env = {**os.environ, "PATH": path}
    cp = run_suitebench("--json", "doctor", timeout=120, module=True, env=env, check=True)
    return {t["name"]: t for t in json.loads(cp.stdout)["tools"]}


def test_doctor_lists_java_and_pypy_or_what_to_install(tmp_path: Path) -> None:
    tools = _doctor_tools(os.environ["PATH"])
    assert str(tools["javac"]["version"]).startswith("javac 17") and tools["java"]["path"]
    assert str(tools["java"]["version"]).startswith("openjdk version")
    assert tools["pypy3"]["path"] and str(tools["pypy3"]["version"]).startswith("Python 3")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    tools = _doctor_tools(str(empty))  # neither is on this PATH
    assert tools["pypy3"] == {
        "name": "pypy3",
        "path": None,
        "version": "missing: apt-get install pypy3",
    }
    for name in ("javac", "java"):
        assert tools[name]["version"] == "missing: apt-get install openjdk-17-jdk-headless"
