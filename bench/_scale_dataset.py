"""A generated dataset in the CodeContests schema, for ``audit_at_scale.py``.

Problems come from five templates (sum of big values, maximum subarray, pairs with a sum
divisible by K, k-th smallest with its index, gcd of a list), each parametrised by its seed:
the constants (an added constant C, the modulus K), the I/O shape (one case or T cases per
input, values on one line or one a line) and the tests. Every problem's submissions are written
from one source template per language (C++, Python 3, Java) with placeholders; a correct
submission fills them in one way, a wrong one another way:

* logic bugs, each of which only some inputs expose: ``overflow`` (a 32-bit accumulator),
  ``offbyone``, ``tiebreak`` (k-th smallest), ``special`` (a missed special case: the
  NEGATIVE answer, an all-negative array, a zero in a gcd), ``slow`` (pairs in O(n^2): times
  out on the large tests only);
* faults triggered when a case's n is R mod P (P, R drawn per submission): ``crash`` and, in
  C++, ``uninit`` (reads an uninitialised stack array and prints what it found when that is
  odd), P in 5-9, a few in every 20 submissions; ``loop`` (an infinite loop: a time-out, in
  every second problem) and ``forever`` (prints until the output limit, every fourth), P in
  13-19, since each such run costs a second or more.

Languages are drawn 60% C++, 30% Python 3, 10% Java (a JVM run costs 20-40 times a C++ one).

Each submission starts with a comment naming it, so no two are the same program (as in a real
dataset, every one is built and run on its own). The expected outputs are computed here by a
Python model of each template.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from math import gcd
from typing import Any

CPP, PYTHON3, JAVA = 2, 3, 4  # CodeContests' language class labels
LANGS = {CPP: "cpp", PYTHON3: "python3", JAVA: "java"}
LOGIC_BUGS = ("overflow", "offbyone", "tiebreak", "special", "slow")
FAULTS = ("crash", "loop", "forever", "uninit")
_LONG = {CPP: "ll", JAVA: "long"}  # a 64-bit integer's type

# -- the skeletons: read T cases (or one), each starting with n; the fault goes before solve --

CPP_SKELETON = """// @HEADER@
#include <bits/stdc++.h>
using namespace std;
typedef long long ll;
static ll rd() { ll x; if (!(cin >> x)) exit(0); return x; }
@BODY@
int main() {
    ios::sync_with_stdio(false); cin.tie(nullptr);
    ll t = @MULTI@ ? rd() : 1;
    while (t-- > 0) { ll n = rd(); @FAULT@ solve(n); }
    return 0;
}
"""

PY_SKELETON = """# @HEADER@
import sys
data = sys.stdin.buffer.read().split()
pos = 0
out = []


def rd():
    global pos
    pos += 1
    return int(data[pos - 1])


@BODY@

t = rd() if @MULTI@ else 1
for _ in range(t):
    n = rd()
    @FAULT@
    solve(n)
sys.stdout.write("\\n".join(out) + "\\n")
"""

JAVA_SKELETON = """// @HEADER@
import java.io.*;
import java.util.*;

public class Main {
    static DataInputStream in;
    static StringBuilder out = new StringBuilder();

    static long rd() throws IOException {
        int c = in.read();
        while (c != '-' && (c < '0' || c > '9')) {
            if (c == -1) throw new EOFException();
            c = in.read();
        }
        boolean neg = c == '-';
        if (neg) c = in.read();
        long x = 0;
        while (c >= '0' && c <= '9') { x = x * 10 + (c - '0'); c = in.read(); }
        return neg ? -x : x;
    }

@BODY@

    public static void main(String[] args) throws IOException {
        in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        long t = @MULTI@ ? rd() : 1;
        while (t-- > 0) { long n = rd(); @FAULT@ solve(n); }
        System.out.print(out);
        System.out.flush();
    }
}
"""

SKELETONS = {CPP: CPP_SKELETON, PYTHON3: PY_SKELETON, JAVA: JAVA_SKELETON}

FAULT_CODE = {
    CPP: {
        "crash": "if (@COND@) { volatile int *p = nullptr; *p = 1; }",
        "loop": "if (@COND@) { for (volatile unsigned long i = 0;; i++) {} }",
        "forever": 'if (@COND@) { for (;;) cout << "0\\n"; }',
        "uninit": "if (@COND@) { ll junk[16]; volatile ll v = junk[n & 15];"
        " if (v % 2 != 0) cout << v << '\\n'; }",
    },
    PYTHON3: {
        "crash": "if @COND@:\n        raise RuntimeError('unexpected case')",
        "loop": "while @COND@:\n        pass",
        "forever": "if @COND@:\n        while True:\n            sys.stdout.write('0\\n' * 4096)",
    },
    JAVA: {
        "crash": "if (@COND@) { int[] z = new int[1]; z[(int) n + 1] = 1; }",
        "loop": "if (@COND@) { for (;;) {} }",
        "forever": "if (@COND@) { PrintStream p = new PrintStream("
        'new BufferedOutputStream(System.out, 1 << 16)); while (true) p.print("0\\n"); }',
    },
}


Code = str | dict[int, str]  # one piece of code, or one per language


@dataclass(frozen=True)
class Template:
    """One kind of problem: its statement, tests, model answer and sources per language.

    ``correct`` fills the placeholders of a correct submission; a bug of ``bugs`` replaces some
    of them in the languages it exists in; ``after`` fills placeholders that those values hold.
    """

    name: str
    statement: str
    case: Callable[[random.Random, dict[str, int], bool], list[int]]
    answer: Callable[[list[int], dict[str, int]], str]
    bodies: dict[int, str]
    correct: dict[str, Code]
    bugs: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    after: dict[int, dict[str, str]] = field(default_factory=dict)

    def source(self, lang: int, params: dict[str, int], bug: str | None) -> str:
        src = SKELETONS[lang].replace("@BODY@", self.bodies[lang])
        values = {k: v if isinstance(v, str) else v.get(lang, "") for k, v in self.correct.items()}
        if bug is not None:
            values.update(self.bugs[bug][lang])
        for key, value in [*values.items(), *self.after.get(lang, {}).items()]:
            src = src.replace(key, value)
        for key in ("C", "K"):  # the constants; MULTI is spelled per language by the caller
            src = src.replace(f"@{key}@", str(params[key]))
        return src


# -- sum of big values: S = C + a_1 + ... + a_n, or NEGATIVE when S < 0 ----------------------


def _sum_case(rng: random.Random, p: dict[str, int], big: bool) -> list[int]:
    n = rng.randint(5_000, 20_000) if big else rng.randint(1, 30)
    bound = 10**9 if big or rng.random() < 0.3 else 100
    lo = -bound if rng.random() < 0.4 else 0
    return [n, *(rng.randint(lo, bound) for _ in range(n))]


def _sum_answer(case: list[int], p: dict[str, int]) -> str:
    s = p["C"] + sum(case[1:])
    return "NEGATIVE" if s < 0 else str(s)


SUM = Template(
    name="sum",
    statement="Given n integers, print C + a_1 + ... + a_n (C = {C}), or NEGATIVE if it is "
    "negative. |a_i| <= 10^9, n <= 10^5.",
    case=_sum_case,
    answer=_sum_answer,
    bodies={
        CPP: "static void solve(ll n) { @ACC@ s = @C@; for (ll i = 0; i < n; i++) { ll x = rd();"
        " if (i >= @FROM@) s += x; }"
        " if (@NEG@) cout << \"NEGATIVE\\n\"; else cout << s << '\\n'; }",
        PYTHON3: "def solve(n):\n    s = @C@\n    for i in range(n):\n        x = rd()\n"
        "        if i >= @FROM@:\n            s += x\n"
        '    out.append("NEGATIVE" if @NEG@ else str(s))',
        JAVA: "    static void solve(long n) throws IOException { @ACC@ s = @C@;"
        " for (long i = 0; i < n; i++) { long x = rd(); if (i >= @FROM@) s += x; }"
        " out.append(@NEG@ ? \"NEGATIVE\" : String.valueOf(s)).append('\\n'); }",
    },
    correct={"@ACC@": _LONG, "@FROM@": "0", "@NEG@": "s < 0"},
    bugs={
        "overflow": {CPP: {"@ACC@": "int"}, JAVA: {"@ACC@": "int"}},
        "offbyone": {CPP: {"@FROM@": "1"}, PYTHON3: {"@FROM@": "1"}, JAVA: {"@FROM@": "1"}},
        "special": {CPP: {"@NEG@": "false"}, PYTHON3: {"@NEG@": "False"}, JAVA: {"@NEG@": "false"}},
    },
)

# -- maximum subarray: the largest sum of a non-empty run, plus C -----------------------------


def _max_case(rng: random.Random, p: dict[str, int], big: bool) -> list[int]:
    n = rng.randint(5_000, 20_000) if big else rng.randint(1, 30)
    bound = 10**9 if big or rng.random() < 0.3 else 50
    neg_only = not big and rng.random() < 0.25
    hi = -1 if neg_only else bound
    lo = -bound
    if big:  # mostly positive: the best run is long and its sum passes 2^31
        lo = -bound // 4
    return [n, *(rng.randint(lo, hi) for _ in range(n))]


def _max_answer(case: list[int], p: dict[str, int]) -> str:
    best, cur = None, 0
    for x in case[1:]:
        cur = max(cur + x, x)
        best = cur if best is None else max(best, cur)
    assert best is not None
    return str(best + p["C"])


MAXSUB = Template(
    name="maxsub",
    statement="Given n integers, print C plus the largest sum of a non-empty contiguous run "
    "(C = {C}). |a_i| <= 10^9, n <= 10^5.",
    case=_max_case,
    answer=_max_answer,
    bodies={
        CPP: "static void solve(ll n) { @ACC@ best = 0, cur = 0; for (ll i = 0; i < n; i++) {"
        " ll x = rd(); if (@LAST@) { cur = max<@ACC@>(cur + x, x);"
        " if (@FIRST@cur > best) best = cur; } } cout << best + @C@ << '\\n'; }",
        PYTHON3: "def solve(n):\n    best = cur = 0\n    for i in range(n):\n        x = rd()\n"
        "        if @LAST@:\n            cur = max(cur + x, x)\n"
        "            if @FIRST@cur > best:\n                best = cur\n"
        "    out.append(str(best + @C@))",
        JAVA: "    static void solve(long n) throws IOException { @ACC@ best = 0, cur = 0;"
        " for (long i = 0; i < n; i++) { long x = rd(); if (@LAST@) {"
        " cur = (@ACC@) Math.max(cur + x, x); if (@FIRST@cur > best) best = cur; } }"
        " out.append(best + @C@).append('\\n'); }",
    },
    correct={
        "@ACC@": _LONG,
        "@LAST@": "i >= 0",
        "@FIRST@": {CPP: "i == 0 || ", PYTHON3: "i == 0 or ", JAVA: "i == 0 || "},
    },
    bugs={
        "overflow": {CPP: {"@ACC@": "int"}, JAVA: {"@ACC@": "int"}},
        "offbyone": {
            CPP: {"@LAST@": "i < n - 1 || n == 1"},
            PYTHON3: {"@LAST@": "i < n - 1 or n == 1"},
            JAVA: {"@LAST@": "i < n - 1 || n == 1"},
        },
        "special": {CPP: {"@FIRST@": ""}, PYTHON3: {"@FIRST@": ""}, JAVA: {"@FIRST@": ""}},
    },
)

# -- pairs: how many i < j have (a_i + a_j) divisible by K -----------------------------------


def _pairs_case(rng: random.Random, p: dict[str, int], big: bool) -> list[int]:
    k = p["K"]
    if big:  # all multiples of K: n(n-1)/2 pairs, past 2^31
        n = rng.randint(70_000, 100_000)
        return [n, *(k * rng.randint(0, 9) for _ in range(n))]
    n = rng.randint(1, 40)
    return [n, *(rng.randint(0, 10**9 if rng.random() < 0.3 else 3 * k) for _ in range(n))]


def _pairs_answer(case: list[int], p: dict[str, int]) -> str:
    k = p["K"]
    cnt = [0] * k
    ans = 0
    for x in case[1:]:
        r = x % k
        ans += cnt[(k - r) % k]
        cnt[r] += 1
    return str(ans)


_PAIR_PARTS = {
    CPP: {"@ADD@": "ans += cnt[(@K@ - r) % @K@];", "@INC@": "cnt[r]++;"},
    PYTHON3: {"@ADD@": "ans += cnt[(@K@ - r) % @K@]", "@INC@": "cnt[r] += 1"},
    JAVA: {"@ADD@": "ans += cnt[(int) ((@K@ - r) % @K@)];", "@INC@": "cnt[r]++;"},
}

PAIRS = Template(
    name="pairs",
    statement="Given n integers 0 <= a_i <= 10^9, count the pairs i < j with a_i + a_j "
    "divisible by K = {K}. n <= 10^5.",
    case=_pairs_case,
    answer=_pairs_answer,
    bodies={
        CPP: "static void solve(ll n) { vector<ll> cnt(@K@, 0); vector<ll> seen; @ACC@ ans = 0;"
        " for (ll i = 0; i < n; i++) { ll x = rd(); ll r = x % @K@; @COUNT@ }"
        " cout << ans << '\\n'; }",
        PYTHON3: "def solve(n):\n    cnt = [0] * @K@\n    seen = []\n    ans = 0\n"
        "    for i in range(n):\n        x = rd()\n        r = x % @K@\n        @COUNT@\n"
        "    out.append(str(ans))",
        JAVA: "    static void solve(long n) throws IOException { long[] cnt = new long[@K@];"
        " ArrayList<Long> seen = new ArrayList<>(); @ACC@ ans = 0; for (long i = 0; i < n; i++)"
        " { long x = rd(); int r = (int) (x % @K@); @COUNT@ } out.append(ans).append('\\n'); }",
    },
    correct={
        "@ACC@": _LONG,
        "@COUNT@": {CPP: "@ADD@ @INC@", PYTHON3: "@ADD@\n        @INC@", JAVA: "@ADD@ @INC@"},
    },
    bugs={
        "overflow": {CPP: {"@ACC@": "int"}, JAVA: {"@ACC@": "int"}},
        "offbyone": {
            CPP: {"@COUNT@": "@INC@ @ADD@"},
            PYTHON3: {"@COUNT@": "@INC@\n        @ADD@"},
            JAVA: {"@COUNT@": "@INC@ @ADD@"},
        },
        "slow": {
            CPP: {"@COUNT@": "for (ll y : seen) if ((x + y) % @K@ == 0) ans++; seen.push_back(x);"},
            PYTHON3: {
                "@COUNT@": "ans += sum(1 for y in seen if (x + y) % @K@ == 0)\n"
                "        seen.append(x)"
            },
            JAVA: {"@COUNT@": "for (long y : seen) if ((x + y) % @K@ == 0) ans++; seen.add(x);"},
        },
    },
    after=_PAIR_PARTS,
)

# -- k-th smallest: the value and index of the k-th in order of (value, index) ---------------


def _kth_case(rng: random.Random, p: dict[str, int], big: bool) -> list[int]:
    n = rng.randint(5_000, 20_000) if big else rng.randint(1, 30)
    hi = rng.choice((3, 10, 10**6))  # few distinct values: ties
    k = n if rng.random() < 0.2 else rng.randint(1, n)
    return [n, k, *(rng.randint(0, hi) for _ in range(n))]


def _kth_answer(case: list[int], p: dict[str, int]) -> str:
    n, k = case[0], case[1]
    v = sorted((x, i + 1) for i, x in enumerate(case[2 : 2 + n]))
    return f"{v[k - 1][0]} {v[k - 1][1]}"


KTH = Template(
    name="kth",
    statement="Given n and k, then n integers 0 <= a_i <= 10^6, print the value and the "
    "1-based index of the k-th element in order of value, then index.",
    case=_kth_case,
    answer=_kth_answer,
    bodies={
        CPP: "static void solve(ll n) { ll k = rd(); vector<pair<ll, ll>> v;"
        " for (ll i = 0; i < n; i++) { ll x = rd(); v.push_back({x, @TIE@(i + 1)}); }"
        " sort(v.begin(), v.end()); auto p = v[k - @OFF@];"
        " cout << p.first << ' ' << llabs(p.second) << '\\n'; }",
        PYTHON3: "def solve(n):\n    k = rd()\n    v = []\n    for i in range(n):\n"
        "        v.append((rd(), @TIE@(i + 1)))\n    v.sort()\n    p = v[k - @OFF@]\n"
        '    out.append(f"{p[0]} {abs(p[1])}")',
        JAVA: "    static void solve(long n) throws IOException { int k = (int) rd();"
        " long[] v = new long[(int) n]; for (int i = 0; i < n; i++)"
        " v[i] = rd() * 1000000L + @TIE@; Arrays.sort(v); long p = v[k - @OFF@];"
        " long idx = p % 1000000L; out.append(p / 1000000L).append(' ')"
        ".append(@UNTIE@).append('\\n'); }",
    },
    correct={"@TIE@": {JAVA: "i"}, "@UNTIE@": {JAVA: "idx + 1"}, "@OFF@": "1"},
    bugs={
        "tiebreak": {
            CPP: {"@TIE@": "-"},
            PYTHON3: {"@TIE@": "-"},
            JAVA: {"@TIE@": "(999999 - i)", "@UNTIE@": "999999 - idx + 1"},
        },
        "offbyone": {CPP: {"@OFF@": "0"}, PYTHON3: {"@OFF@": "0"}, JAVA: {"@OFF@": "0"}},
    },
)

# -- gcd of a list, and how many of the values equal it --------------------------------------


def _gcd_case(rng: random.Random, p: dict[str, int], big: bool) -> list[int]:
    n = rng.randint(5_000, 20_000) if big else rng.randint(1, 20)
    g = rng.choice((1, 2, 6, 10**6, 999_983 * 10**6))
    vals = [g * rng.randint(0 if rng.random() < 0.3 else 1, 30) for _ in range(n)]
    return [n, *vals]


def _gcd_answer(case: list[int], p: dict[str, int]) -> str:
    g = 0
    for x in case[1:]:
        g = gcd(g, x)
    return f"{g} {sum(1 for x in case[1:] if x == g)}"


_GCD_OK = {
    CPP: "while (b) { ll t = a % b; a = b; b = t; } return a;",
    PYTHON3: "while b:\n        a, b = b, a % b\n    return a",
    JAVA: "while (b != 0) { long t = a % b; a = b; b = t; } return a;",
}


GCD = Template(
    name="gcd",
    statement="Given n integers 0 <= a_i <= 10^18, print their gcd (0 if all are 0) and how "
    "many of them equal it.",
    case=_gcd_case,
    answer=_gcd_answer,
    bodies={
        CPP: "static ll g2(ll a, ll b) { @GCD@ }\n"
        "static void solve(ll n) { vector<ll> a(n); ll g = 0; for (ll i = 0; i < n; i++) {"
        " @VT@ x = rd(); a[i] = x; g = g2(g, x); } ll c = 0;"
        " for (ll i = @FROM@; i < n; i++) if (a[i] == g) c++; cout << g << ' ' << c << '\\n'; }",
        PYTHON3: "def g2(a, b):\n    @GCD@\n\n\ndef solve(n):\n    a = [rd() for _ in range(n)]\n"
        "    g = 0\n    for x in a:\n        g = g2(g, x)\n"
        "    c = sum(1 for x in a[@FROM@:] if x == g)\n    out.append(f'{g} {c}')",
        JAVA: "    static long g2(long a, long b) { @GCD@ }\n"
        "    static void solve(long n) throws IOException { long[] a = new long[(int) n];"
        " long g = 0; for (int i = 0; i < n; i++) { @VT@ x = @CAST@rd(); a[i] = x; g = g2(g, x); }"
        " long c = 0; for (int i = @FROM@; i < n; i++) if (a[i] == g) c++;"
        " out.append(g).append(' ').append(c).append('\\n'); }",
    },
    correct={"@VT@": _LONG, "@FROM@": "0", "@CAST@": "", "@GCD@": _GCD_OK},
    bugs={
        "overflow": {
            CPP: {"@VT@": "int"},
            JAVA: {"@VT@": "int", "@CAST@": "(int) "},
        },
        "offbyone": {CPP: {"@FROM@": "1"}, PYTHON3: {"@FROM@": "1"}, JAVA: {"@FROM@": "1"}},
        "special": {  # Euclid that divides by the second value first: a zero after the first
            CPP: {"@GCD@": "while (a % b != 0) { ll t = a % b; a = b; b = t; } return b;"},
            PYTHON3: {"@GCD@": "while a % b != 0:\n        a, b = b, a % b\n    return b"},
            JAVA: {"@GCD@": "while (a % b != 0) { long t = a % b; a = b; b = t; } return b;"},
        },
    },
)

TEMPLATES = (SUM, MAXSUB, PAIRS, KTH, GCD)


def bugs_for(t: Template, lang: int) -> list[str]:
    """The logic bugs template ``t`` can have in language ``lang``."""
    return [b for b in LOGIC_BUGS if lang in t.bugs.get(b, {})]


def write_source(
    t: Template, lang: int, params: dict[str, int], kind: str, header: str, rng: random.Random
) -> str:
    """One submission: ``kind`` is ``ok``, a logic bug or a fault."""
    src = t.source(lang, params, kind if kind in LOGIC_BUGS else None)
    fault = ""
    if kind in FAULTS:  # a time-out or 64 MiB of output costs a second or more: rarer
        p = rng.randint(5, 9) if kind in ("crash", "uninit") else rng.randint(13, 19)
        fault = FAULT_CODE[lang][kind].replace("@COND@", f"n % {p} == {rng.randint(0, p - 1)}")
    multi = bool(params["MULTI"])
    truth = str(multi) if lang == PYTHON3 else str(multi).lower()
    return src.replace("@FAULT@", fault).replace("@MULTI@", truth).replace("@HEADER@", header)


# -- rows --------------------------------------------------------------------------------------


def _format_input(cases: list[list[int]], multi: bool, per_line: bool, header: int) -> str:
    """One input: T then the cases, or a single case; a case's first ``header`` numbers on
    their own line, its values on one line or one a line."""
    lines = [str(len(cases))] if multi else []
    for c in cases:
        lines.append(" ".join(map(str, c[:header])))
        vals = c[header:]
        if per_line:
            lines += [str(v) for v in vals]
        else:
            lines.append(" ".join(map(str, vals)))
    return "\n".join(lines) + "\n"


def make_tests(
    t: Template, params: dict[str, int], rng: random.Random, count: int, big: int
) -> list[tuple[str, str]]:
    """``count`` (input, output) pairs, ``big`` of them large single cases."""
    header = 2 if t is KTH else 1
    tests = []
    for i in range(count):
        is_big = i >= count - big
        ncases = 1 if (is_big or not params["MULTI"]) else rng.randint(1, 5)
        cases = [t.case(rng, params, is_big) for _ in range(ncases)]
        text = _format_input(cases, bool(params["MULTI"]), bool(params["PER_LINE"]), header)
        answer = "\n".join(t.answer(c, params) for c in cases) + "\n"
        tests.append((text, answer))
    rng.shuffle(tests)
    return tests


def submission_kinds(n: int, rng: random.Random, loop: bool, forever: bool) -> list[str]:
    """About 30% correct, a crash and an uninitialised read in every 20, an infinite loop if
    ``loop``, one that prints forever if ``forever``; the rest logic bugs."""
    n_ok = max(3, round(n * 0.3))
    per20 = max(1, round(n / 20))
    faults = ["crash"] * per20 + ["uninit"] * per20 + ["loop"] * loop + ["forever"] * forever
    kinds = (["ok"] * n_ok + faults + ["bug"] * n)[:n]
    rng.shuffle(kinds)
    return kinds


def make_row(
    index: int, seed: int, submissions: int, tests_range: tuple[int, int]
) -> dict[str, Any]:
    """Problem ``index`` of the dataset of ``seed``: one CodeContests row."""
    rng = random.Random(seed * 1_000_003 + index)
    t = TEMPLATES[index % len(TEMPLATES)]
    params = {
        "C": rng.choice((0, 0, 1, 7, -3, 1000)),
        "K": rng.randint(2, 12),
        "MULTI": int(rng.random() < 0.5),
        "PER_LINE": int(rng.random() < 0.3),
    }
    count = rng.randint(*tests_range)
    tests = make_tests(t, params, rng, count, big=2 if count >= 20 else 1)
    n_public = 2 if count >= 30 else 1
    n_private = (count - n_public) // 2
    public, private, generated = (
        tests[:n_public],
        tests[n_public : n_public + n_private],
        tests[n_public + n_private :],
    )
    solutions: dict[str, list[Any]] = {"language": [], "solution": []}
    incorrect: dict[str, list[Any]] = {"language": [], "solution": []}
    for j, kind in enumerate(
        submission_kinds(submissions, rng, loop=index % 2 == 0, forever=index % 4 == 0)
    ):
        lang = rng.choices((CPP, PYTHON3, JAVA), weights=(0.6, 0.3, 0.1))[0]
        if kind == "uninit":
            lang = CPP
        if kind in FAULTS and kind not in FAULT_CODE[lang]:
            lang = CPP
        if kind == "bug":
            options = bugs_for(t, lang) or bugs_for(t, CPP)
            if not bugs_for(t, lang):
                lang = CPP
            kind = rng.choice(options)
        header = f"submission {seed}-{index}-{j} ({kind})"
        src = write_source(t, lang, params, kind, header, rng)
        target = solutions if kind == "ok" else incorrect
        target["language"].append(lang)
        target["solution"].append(src)
    name = f"{1000 + index}_{'ABCDE'[index % 5]}. {t.name.capitalize()} {index}"

    def pairs(ts: list[tuple[str, str]]) -> dict[str, list[str]]:
        return {"input": [a for a, _ in ts], "output": [b for _, b in ts]}

    return {
        "name": name,
        "description": t.statement.format(**params)
        + (" The input starts with T, the number of cases." if params["MULTI"] else ""),
        "public_tests": pairs(public),
        "private_tests": pairs(private),
        "generated_tests": pairs(generated),
        "source": 2,
        "difficulty": 7,
        "solutions": solutions,
        "incorrect_solutions": incorrect,
        "cf_contest_id": 1000 + index,
        "cf_index": "ABCDE"[index % 5],
        "cf_points": 500.0,
        "cf_rating": 1200,
        "cf_tags": [t.name],
        "is_description_translated": False,
        "untranslated_description": "",
        "time_limit": {"seconds": 1, "nanos": 0},
        "memory_limit_bytes": 256 * 2**20,
        "input_file": "",
        "output_file": "",
    }


def write_parquet(rows: list[dict[str, Any]], path: Any) -> None:
    """The rows as one parquet shard in the dataset card's schema (pyarrow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tests = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
    sols = pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])
    schema = pa.schema(
        [
            ("name", pa.string()),
            ("description", pa.string()),
            ("public_tests", tests),
            ("private_tests", tests),
            ("generated_tests", tests),
            ("source", pa.int64()),
            ("difficulty", pa.int64()),
            ("solutions", sols),
            ("incorrect_solutions", sols),
            ("cf_contest_id", pa.int64()),
            ("cf_index", pa.string()),
            ("cf_points", pa.float32()),
            ("cf_rating", pa.int32()),
            ("cf_tags", pa.list_(pa.string())),
            ("is_description_translated", pa.bool_()),
            ("untranslated_description", pa.string()),
            ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])),
            ("memory_limit_bytes", pa.int64()),
            ("input_file", pa.string()),
            ("output_file", pa.string()),
        ]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
