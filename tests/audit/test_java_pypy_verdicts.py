"""Java and PyPy submissions judged for real: the next-int problem (print x + 1, or OVERFLOW
at 2147483647) audited with pools of Java and PyPy programs, each carrying a bug a contest
pool holds, under bubblewrap. The expected verdicts are what each program does on each input
(read from its source), never what the code under test said before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.chain import AuditConfig, audit_problem
from suitebench.audit.records import Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import load_problem
from suitebench.run.outcome import Backend, Status
from suitebench.run.sandbox import available_backends
from suitebench.run.toolchain import Language, available

from .problems import write_next_int

TESTS = {"01.in": "5\n", "02.in": "-3\n", "03.in": "2147483647\n", "04.in": "100000000\n"}


def _require(language: str, package: str) -> None:
    """The test set-up installs the runtime (``SUITEBENCH_TEST_TOOLS=1 bash
    scripts/bootstrap.sh``); a test never does, and never skips past a missing one."""
    ok, why = available(language)
    if not ok:
        pytest.fail(
            f"{why}: `SUITEBENCH_TEST_TOOLS=1 bash scripts/bootstrap.sh` installs Debian's "
            f"{package} (as root; scripts/test.sh runs it), or install it yourself"
        )
    reason = available_backends()[Backend.BWRAP]
    if reason is not None:
        pytest.fail(
            f"these verdicts are judged under bubblewrap, which does not work here: {reason}"
        )


# -- Java ------------------------------------------------------------------------------------

#: Right, in a file whose name is not its public class's (Codeforces code is not always Main).
JAVA_SOLUTION = """\
import java.io.*;

public class Solution {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        long x = Long.parseLong(in.readLine().trim());
        System.out.println(x == Integer.MAX_VALUE ? "OVERFLOW" : String.valueOf(x + 1));
    }
}
"""

#: Forgets the OVERFLOW case: int arithmetic wraps to -2147483648.
JAVA_WRAPS = """\
import java.util.Scanner;

class Main {
    public static void main(String[] args) {
        int x = new Scanner(System.in).nextInt();
        System.out.println(x + 1);
    }
}
"""

#: Answers from a table of the first thousand successors: a negative index throws.
JAVA_TABLE = """\
import java.util.Scanner;

public class Table {
    static final int[] NEXT = new int[1000];

    public static void main(String[] args) {
        for (int i = 0; i < NEXT.length; i++) NEXT[i] = i + 1;
        int x = new Scanner(System.in).nextInt();
        if (x == Integer.MAX_VALUE) System.out.println("OVERFLOW");
        else if (x >= 1000) System.out.println(x + 1);
        else System.out.println(NEXT[x]);
    }
}
"""

#: Searches upward for the next integer; past 2147483647 there is none and it never stops.
JAVA_SEARCH = """\
import java.io.*;

public class NextInt {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int x = Integer.parseInt(in.readLine().trim());
        for (int y = x; ; y++) {
            if (y > x) {
                System.out.println(y);
                return;
            }
        }
    }
}
"""

#: Builds the list 0..x, sized up front, and answers its size: a hundred million boxed
#: integers do not fit in 256 MiB (and a negative capacity throws).
JAVA_LIST = """\
import java.util.*;

class Main {
    public static void main(String[] args) {
        int x = new Scanner(System.in).nextInt();
        if (x == Integer.MAX_VALUE) { System.out.println("OVERFLOW"); return; }
        List<Integer> xs = new ArrayList<>(x + 1);
        for (int i = 0; i <= x; i++) xs.add(i);
        System.out.println(xs.size());
    }
}
"""

#: x + 1 by recursion, one frame per unit: StackOverflowError on a hundred million.
JAVA_RECURSE = """\
import java.util.Scanner;

public class Recurse {
    static long up(long x) {
        return x <= 0 ? x + 1 : 1 + up(x - 1);
    }

    public static void main(String[] args) {
        long x = new Scanner(System.in).nextLong();
        System.out.println(x == Integer.MAX_VALUE ? "OVERFLOW" : String.valueOf(up(x)));
    }
}
"""

#: A debugging loop left in: on large inputs it prints forever (fast, buffered output).
JAVA_FOREVER = """\
import java.io.*;
import java.util.Scanner;

public class Forever {
    public static void main(String[] args) {
        long x = new Scanner(System.in).nextLong();
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
        if (x >= 1000000 && x < Integer.MAX_VALUE) while (true) out.println("YES");
        out.println(x == Integer.MAX_VALUE ? "OVERFLOW" : String.valueOf(x + 1));
        out.flush();
    }
}
"""

#: Does not compile (a missing semicolon).
JAVA_BROKEN = """\
public class Broken {
    public static void main(String[] args) {
        System.out.println("hello")
    }
}
"""

JAVA_POOL = {
    "solution.java": JAVA_SOLUTION,
    "wraps.java": JAVA_WRAPS,
    "table.java": JAVA_TABLE,
    "search.java": JAVA_SEARCH,
    "list.java": JAVA_LIST,
    "recurse.java": JAVA_RECURSE,
    "forever.java": JAVA_FOREVER,
    "broken.java": JAVA_BROKEN,
}

AC, WA, RE, TLE, MLE, OLE = (
    Verdict.AC,
    Verdict.WA,
    Verdict.RE,
    Verdict.TLE,
    Verdict.MLE,
    Verdict.OLE,
)
#: submission -> verdicts on 01 (5), 02 (-3), 03 (2147483647), 04 (100000000)
JAVA_EXPECTED = {
    "solution.java": (AC, AC, AC, AC),
    "wraps.java": (AC, AC, WA, AC),
    "table.java": (AC, RE, AC, AC),
    "search.java": (AC, AC, TLE, AC),
    "list.java": (AC, RE, AC, MLE),
    "recurse.java": (AC, AC, AC, RE),
    "forever.java": (AC, AC, AC, OLE),
}


def _matrix(audit: object, names: list[str]) -> dict[str, tuple[Verdict, ...]]:
    a = audit.arms["official"]  # type: ignore[attr-defined]
    shas = {c.input_id: c.sha256 for c in a.arm.inputs}
    cells = audit.cells  # type: ignore[attr-defined]
    return {
        n: tuple(cells[(f"submissions/{n}", shas[i])].verdict for i in sorted(TESTS)) for n in names
    }


def test_java_submissions_get_the_verdicts_their_bugs_earn(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """AC, WA, RE (an exception, a stack overflow), TLE, MLE (the JVM's OutOfMemoryError),
    OLE and a compile error, with public classes named Solution, Table, NextInt ... in files
    named otherwise."""
    _require("java", "openjdk-17-jdk-headless")
    d = write_next_int(tmp_path / "java", JAVA_POOL, tests=TESTS, extra="output_limit = 1\n")
    problem = load_problem(d)
    engine = make_engine()
    audit = audit_problem(problem, [], AuditConfig(), engine)
    assert _matrix(audit, list(JAVA_EXPECTED)) == JAVA_EXPECTED
    broken = engine.build(d / "submissions" / "broken.java")
    assert broken.status is Status.BUILD_ERROR and broken.language is Language.JAVA
    assert "';' expected" in broken.message
    # a build error of the pool, with javac's message: not judged, and not a crash
    assert "';' expected" in audit.build_errors["submissions/broken.java"]
    assert "submissions/broken.java" not in audit.submissions
    # The memory verdict is the JVM's own word, not a guess from the exit status.
    ok = engine.build(d / "submissions" / "solution.java")
    assert ok.ok and ok.argv[-1] == "Solution" and "-XX:+ExitOnOutOfMemoryError" in ok.argv
    killed = {r.submission_id: r.verdict for r in audit.ledger}
    assert killed == {
        "submissions/wraps.java": "WA",
        "submissions/table.java": "RE",
        "submissions/list.java": "RE",  # its first killing input, -3, throws
        "submissions/recurse.java": "RE",
        "submissions/forever.java": "OLE",
    }


# -- PyPy ------------------------------------------------------------------------------------

PYPY_OK = """\
x = int(input())
print("OVERFLOW" if x == 2**31 - 1 else x + 1)
"""

#: Forgets the OVERFLOW case.
PYPY_NOCHECK = """\
print(int(input()) + 1)
"""

#: Answers from a dict of the first thousand successors: KeyError outside it.
PYPY_TABLE = """\
NEXT = {i: i + 1 for i in range(1000)}
x = int(input())
if x == 2**31 - 1:
    print("OVERFLOW")
elif x >= 1000:
    print(x + 1)
else:
    print(NEXT[x])
"""

#: Steps towards x + 1, but never advances on the largest input.
PYPY_STUCK = """\
x = int(input())
y = x
while y <= x:
    y += 1 if x < 2**31 - 1 else 0
print(y)
"""

#: Builds the list 0..x and answers its length: wrong below zero, and a hundred million ints
#: are 800 MB.
PYPY_RANGE = """\
x = int(input())
if x == 2**31 - 1:
    print("OVERFLOW")
else:
    xs = list(range(x + 1))
    print(len(xs))
"""

PYPY_POOL = {
    "pypy_ok.py": PYPY_OK,
    "pypy_nocheck.py": PYPY_NOCHECK,
    "pypy_table.py": PYPY_TABLE,
    "pypy_stuck.py": PYPY_STUCK,
    "pypy_range.py": PYPY_RANGE,
    "cpython_ok.py": PYPY_OK,
}

PYPY_EXPECTED = {
    "pypy_ok.py": (AC, AC, AC, AC),
    "pypy_nocheck.py": (AC, AC, WA, AC),
    "pypy_table.py": (AC, RE, AC, AC),
    "pypy_stuck.py": (AC, AC, TLE, AC),
    "pypy_range.py": (AC, WA, AC, MLE),
    "cpython_ok.py": (AC, AC, AC, AC),
}

LANGUAGES = '[languages]\n"submissions/pypy_*.py" = "pypy3"\n'


def test_pypy_submissions_named_by_the_languages_table_run_on_pypy(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """A ``[languages]`` glob sends ``pypy_*.py`` to PyPy; ``cpython_ok.py`` keeps its
    extension's language. AC, WA, RE (KeyError), TLE and MLE (the memory cgroup's kill)."""
    _require("pypy3", "pypy3")
    d = write_next_int(tmp_path / "pypy", PYPY_POOL, tests=TESTS, extra=LANGUAGES)
    problem = load_problem(d)
    assert problem.languages == (("submissions/pypy_*.py", "pypy3"),)
    engine = make_engine()
    audit = audit_problem(problem, [], AuditConfig(), engine)
    assert _matrix(audit, list(PYPY_EXPECTED)) == PYPY_EXPECTED
    on_pypy = engine.build(d / "submissions" / "pypy_ok.py")
    on_cpython = engine.build(d / "submissions" / "cpython_ok.py")
    assert on_pypy.language is Language.PYPY3 and "pypy" in Path(on_pypy.argv[0]).name
    assert on_cpython.language is Language.PYTHON and "pypy" not in on_cpython.argv[0]
    assert on_pypy.program_id != on_cpython.program_id  # same source, another language
