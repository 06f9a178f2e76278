"""Problem packages the team wrote, in the Kattis / ICPC format and Polygon's, as files.

``evensum``: is the sum of n integers even? The accepted programs print the answer in three
letter cases (C++20 with std::ranges ``YES``, Python ``yes``, C ``Yes``), as jury programs do;
the package's default output validator compares case-insensitively. ``wrong_answer/mod.c``
tests ``sum % 2 == 1``, false for a negative odd sum (C's ``-3 % 2`` is ``-1``). The package
gives a time limit (``.timelimit``) and no memory limit.

``circle``: the area of a circle of radius r, real-valued (``validator_flags:
float_tolerance 1e-6``); the references print 9 decimals (C++) and Python's repr;
``wrong_answer/pi314.py`` uses pi = 3.14.
"""

from __future__ import annotations

from pathlib import Path

EVENSUM_CPP20 = """#include <algorithm>
#include <iostream>
#include <ranges>
#include <vector>
int main() {
    int n;
    std::cin >> n;
    std::vector<long long> a(n);
    for (auto& x : a) std::cin >> x;
    // std::ranges (C++20): the odd values decide the parity of the sum
    auto odd = std::ranges::count_if(a, [](long long x) { return x % 2 != 0; });
    std::cout << (odd % 2 == 0 ? "YES" : "NO") << "\\n";
}
"""
EVENSUM_PY = """n = int(input())
s = sum(map(int, input().split()))
print("yes" if s % 2 == 0 else "no")
"""
EVENSUM_C = """#include <stdio.h>
int main(void) {
    int n; long long s = 0, x;
    scanf("%d", &n);
    for (int i = 0; i < n; i++) { scanf("%lld", &x); s += x; }
    puts(s % 2 == 0 ? "Yes" : "No");
    return 0;
}
"""
# the bug: C's % keeps the sign, so a negative odd sum has s % 2 == -1, not 1
EVENSUM_MOD = """#include <stdio.h>
int main(void) {
    int n; long long s = 0, x;
    scanf("%d", &n);
    for (int i = 0; i < n; i++) { scanf("%lld", &x); s += x; }
    puts(s % 2 == 1 ? "NO" : "YES");
    return 0;
}
"""
# exit 42: legal; 43: not (1 <= n <= 10, n integers in [-100, 100] on the second line)
EVENSUM_VALIDATOR = """import sys
lines = sys.stdin.read().split("\\n")
try:
    n = int(lines[0])
    xs = [int(t) for t in lines[1].split()]
    ok = 1 <= n <= 10 and len(xs) == n and all(-100 <= x <= 100 for x in xs)
    ok = ok and lines[2:] == [""]
except (ValueError, IndexError):
    ok = False
sys.exit(42 if ok else 43)
"""

CIRCLE_CPP = """#include <cstdio>
#include <cmath>
int main() { double r; std::scanf("%lf", &r); std::printf("%.9f\\n", M_PI * r * r); }
"""
CIRCLE_PY = """import math
r = float(input())
print(math.pi * r * r)
"""
CIRCLE_WRONG = """r = float(input())
print("%.9f" % (3.14 * r * r))
"""


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def evensum(root: Path, *, wrong_answer_file: bool = False) -> Path:
    """The evensum package; ``wrong_answer_file`` ships secret/2.ans as ``NO`` where the
    sum (4) is even: the package's own answer is wrong."""
    return write_tree(
        root,
        {
            "problem.yaml": "name: Even Sum\nsource: suitebench tests\nlicense: cc0\n",
            ".timelimit": "1\n",
            "problem_statement/problem.en.tex": "Is the sum of the $n$ integers even?\n",
            "data/sample/1.in": "3\n1 2 3\n",
            "data/sample/1.ans": "YES\n",
            "data/secret/1.in": "2\n-1 -2\n",
            "data/secret/1.ans": "NO\n",
            "data/secret/2.in": "1\n4\n",
            "data/secret/2.ans": "NO\n" if wrong_answer_file else "YES\n",
            "data/secret/3.in": "3\n-5 2 7\n",
            "data/secret/3.ans": "YES\n",
            "input_validators/validate.py": EVENSUM_VALIDATOR,
            "submissions/accepted/ranges.cpp": EVENSUM_CPP20,
            "submissions/accepted/lower.py": EVENSUM_PY,
            "submissions/accepted/mixed.c": EVENSUM_C,
            "submissions/wrong_answer/mod.c": EVENSUM_MOD,
        },
    )


def circle(root: Path) -> Path:
    return write_tree(
        root,
        {
            "problem.yaml": (
                "name: Circle\nvalidator_flags: float_tolerance 1e-6\n"
                "limits:\n  memory: 512\n  time_limit: 2\n"
            ),
            "data/sample/1.in": "1\n",
            "data/sample/1.ans": "3.141592654\n",
            "data/secret/1.in": "2\n",
            "data/secret/1.ans": "12.566370614\n",
            "data/secret/2.in": "0.5\n",
            "data/secret/2.ans": "0.785398163\n",
            "submissions/accepted/area.cpp": CIRCLE_CPP,
            "submissions/accepted/area.py": CIRCLE_PY,
            "submissions/wrong_answer/pi314.py": CIRCLE_WRONG,
        },
    )


# -- Polygon ------------------------------------------------------------------------------------
# maxpair: the largest a_i + a_j over i != j. wrong-answer/twice.cpp doubles the maximum (the
# same element twice): right when the maximum appears twice, wrong otherwise.
MAXPAIR_MAIN = """#include <bits/stdc++.h>
int main() {
    int n; std::cin >> n; std::vector<long long> a(n);
    for (auto& x : a) std::cin >> x;
    std::ranges::sort(a, std::greater<>());
    std::cout << a[0] + a[1] << "\\n";
}
"""
MAXPAIR_PY = """n = int(input())
a = sorted(map(int, input().split()))
print(a[-1] + a[-2])
"""
MAXPAIR_TWICE = """#include <bits/stdc++.h>
int main() {
    int n; std::cin >> n; long long m = LLONG_MIN, x;
    for (int i = 0; i < n; i++) { std::cin >> x; m = std::max(m, x); }
    std::cout << 2 * m << "\\n";
}
"""
# testlib's calling convention without testlib: checker input output answer, exit 0 ok, 1 WA
MAXPAIR_CHECK = """#include <fstream>
int main(int argc, char** argv) {
    std::ifstream out(argv[2]), ans(argv[3]);
    long long o, a;
    if (!(out >> o)) return 2;
    ans >> a;
    return o == a ? 0 : 1;
}
"""
MAXPAIR_VALIDATOR = """import sys
lines = sys.stdin.read().split("\\n")
n = int(lines[0])
a = [int(t) for t in lines[1].split()]
assert 2 <= n <= 100 and len(a) == n and lines[2:] == [""]
"""
MAXPAIR_XML = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<problem revision="7" short-name="maxpair" url="https://polygon.codeforces.com/p/x/maxpair">
  <names><name language="english" value="Max Pair"/></names>
  <judging cpu-name="Intel" cpu-speed="3600" input-file="" output-file="">
    <testset name="tests">
      <time-limit>2000</time-limit>
      <memory-limit>268435456</memory-limit>
      <test-count>3</test-count>
      <input-path-pattern>tests/%02d</input-path-pattern>
      <answer-path-pattern>tests/%02d.a</answer-path-pattern>
      <tests>
        <test method="manual" sample="true"/>
        <test method="manual"/>
        <test cmd="gen 3" method="generated"/>
      </tests>
    </testset>
  </judging>
  <assets>
    <checker type="testlib">
      <source path="files/check.cpp" type="cpp.g++17"/>
    </checker>
    <validators>
      <validator><source path="files/val.py" type="python.3"/></validator>
    </validators>
    <solutions>
      <solution tag="wrong-answer"><source path="solutions/twice.cpp" type="cpp.g++17"/></solution>
      <solution tag="main">
        <source path="solutions/main.cpp" type="cpp.gcc13-64-winlibs-g++20"/>
      </solution>
      <solution tag="accepted"><source path="solutions/sorted.py" type="python.3"/></solution>
      <solution tag="accepted"><source path="solutions/old.py" type="python.2"/></solution>
    </solutions>
  </assets>
</problem>
"""


def maxpair(root: Path) -> Path:
    """A Polygon package; test 3 is generated and not in it (a package without its tests)."""
    return write_tree(
        root,
        {
            "problem.xml": MAXPAIR_XML,
            "tests/01": "3\n1 5 2\n",
            "tests/01.a": "7\n",
            "tests/02": "4\n9 -1 9 3\n",
            "tests/02.a": "18\n",
            "files/check.cpp": MAXPAIR_CHECK,
            "files/val.py": MAXPAIR_VALIDATOR,
            "solutions/main.cpp": MAXPAIR_MAIN,
            "solutions/sorted.py": MAXPAIR_PY,
            "solutions/twice.cpp": MAXPAIR_TWICE,
            "solutions/old.py": "print 1\n",
        },
    )


# pairsum: print positive a and b with a + b = n, any such pair. The package's own output
# validator (Python, the format's protocol: argv input answer feedback_dir, the output on
# stdin, exit 42 / 43) accepts any; the references print (1, n - 1) and (n - 1, 1).
# wrong_answer/zero.py prints (0, n): 0 is not positive.
PAIRSUM_VALIDATOR = """import sys
n = int(open(sys.argv[1]).read())
open(sys.argv[3] + "/judgemessage.txt", "w").write("checked\\n")
try:
    a, b = map(int, sys.stdin.read().split())
except ValueError:
    sys.exit(43)
sys.exit(42 if a > 0 and b > 0 and a + b == n else 43)
"""


def pairsum(root: Path) -> Path:
    return write_tree(
        root,
        {
            "problem.yaml": "name: Pair Sum\nvalidation: custom\n",
            ".timelimit": "2\n",
            "data/secret/1.in": "5\n",
            "data/secret/1.ans": "2 3\n",
            "data/secret/2.in": "2\n",
            "data/secret/2.ans": "1 1\n",
            "output_validators/pairs/validate.py": PAIRSUM_VALIDATOR,
            "submissions/accepted/low.py": "n = int(input())\nprint(1, n - 1)\n",
            "submissions/accepted/high.py": "n = int(input())\nprint(n - 1, 1)\n",
            "submissions/wrong_answer/zero.py": "n = int(input())\nprint(0, n)\n",
        },
    )
