"""A suite of the team's for Lua 5.4: snippets and what they print, from a table of rules.

Each case is one Lua program (a fixture file the test runs as ``./executable FILE``) and the
output the test expects. The expected outputs are worked out here, in Python, from the Lua 5.4
reference manual's rules -- not by running Lua: integers are 64-bit and wrap around (3.4.1),
``//`` and ``%`` round toward minus infinity (3.4.1), a float prints as C's ``%.14g`` with
``.0`` added when that looks like an integer (``lua_Number2str``, ``tostringbuff``),
``string.sub`` clamps its indices (6.4), ``string.format`` follows C's ``printf`` (as Python's
``%`` does for these conversions), ``table.sort`` orders by ``<`` or the comparator given, and
error messages name the chunk, the line and the variable (the manual's 4.4 and lauxlib's
texts). A case whose figure this code gets wrong fails on the reference and shows up as an
invalid test, so the bench prints V.

Categories: ``arith`` (integer operators, wraparound), ``floats`` (division, powers, mixed
arithmetic, coercions, formatting), ``strings`` (the string library), ``format``
(``string.format``), ``tables`` (the table library, ``#``, varargs), ``sort``
(``table.sort``), ``closures`` (upvalues, recursion, loops), ``errors`` (``pcall``, ``error``,
messages, exit status).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

MAXINT = 2**63 - 1
WORDS = ["lua", "hello world", "Banana", "x", "mutation", "ProgramBench", "a,b,c", "tab\tsep"]


@dataclass(frozen=True)
class Case:
    category: str
    name: str  # e.g. arith_0007: the fixture is eval/fixtures/arith_0007.lua
    source: str
    stdout: str  # exactly, with the final newline
    returncode: int = 0
    stderr_has: str = ""  # for a program that stops on an error
    # the fixture files (name, text) and the program's arguments; by default the Lua file alone
    files: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()

    def fixtures(self) -> tuple[tuple[str, str], ...]:
        return self.files or ((f"{self.name}.lua", self.source),)

    def argv(self) -> tuple[str, ...]:
        return self.args or (f"eval/fixtures/{self.name}.lua",)


def wrap(v: int) -> int:
    """A 64-bit two's-complement integer, as Lua's integer arithmetic wraps (3.4.1)."""
    return (v + 2**63) % 2**64 - 2**63


def num(x: int | float) -> str:
    """How ``print``/``tostring`` writes a number: integers in full, floats as ``%.14g`` with
    ``.0`` appended when the result looks like an integer."""
    if isinstance(x, int):
        return str(x)
    s = f"{x:.14g}"
    return s + ".0" if all(c in "-0123456789" for c in s) else s


def lua_str(s: str) -> str:
    """A Lua string literal for an ASCII string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


def sub(s: str, i: int, j: int) -> str:
    """``string.sub`` (lstrlib.c's posrelatI and getendpos)."""
    n = len(s)
    start = i if i > 0 else 1 if i == 0 or i < -n else n + i + 1
    end = n if j > n else j if j >= 0 else 0 if j < -n else n + j + 1
    return s[start - 1 : end] if start <= end else ""


def arith(r: random.Random) -> tuple[str, str]:
    a = r.choice([r.randint(-100, 100), r.randint(-(10**6), 10**6), MAXINT - r.randint(0, 5)])
    b = r.choice([r.randint(1, 9), -r.randint(1, 9), r.randint(10, 1000)])
    op = r.choice(["+", "-", "*", "//", "%"])
    value = {
        "+": a + b,
        "-": a - b,
        "*": a * b,
        "//": a // b,  # Python's // and % floor, as Lua's do
        "%": a % b,
    }[op]
    return f"print(({a}) {op} ({b}))", num(wrap(value))


def floats(r: random.Random) -> tuple[str, str]:
    kind = r.randrange(7)
    a, b = r.randint(-50, 50), r.choice([1, 2, 3, 4, 5, 8, -2, -4, 7])
    if kind == 0:
        return f"print(({a}) / ({b}))", num(a / b)
    if kind == 1:
        k = r.randint(0, 60)
        return f"print(2^{k})", num(2.0**k)
    if kind == 2:
        x = r.randint(-999, 999) / 4
        return f"print(math.floor({x}), math.ceil({x}))", f"{num(_floor(x))}\t{num(-_floor(-x))}"
    if kind == 3:
        x = a + 0.5
        return f"print(({x}) // ({b}), ({x}) % ({b}))", f"{num(float(x // b))}\t{num(x % b)}"
    if kind == 4:
        return f'print("{a}" + {b}, "{a}.5" * 2)', f"{num(a + b)}\t{num(float(f'{a}.5') * 2)}"
    if kind == 5:
        x = r.choice([a, float(a), a + 0.25])
        kinds = "integer" if isinstance(x, int) else "float"
        return f"print(math.type({x}), {x} == {a})", f"{kinds}\t{'true' if x == a else 'false'}"
    k = r.randint(1, 5)
    return f"print(math.maxinteger + {k}, math.mininteger - {k})", (
        f"{wrap(MAXINT + k)}\t{wrap(-(2**63) - k)}"
    )


def _floor(x: float) -> int:
    return int(x // 1)


def strings(r: random.Random) -> tuple[str, str]:
    s = r.choice(WORDS)
    kind = r.randrange(8)
    lit = lua_str(s)
    if kind == 0:
        i, j = r.randint(-12, 12), r.randint(-12, 12)
        return f"print(string.sub({lit}, {i}, {j}) .. '|')", sub(s, i, j) + "|"
    if kind == 1:
        return f"print(string.upper({lit}), string.lower({lit}))", f"{s.upper()}\t{s.lower()}"
    if kind == 2:
        return f"print(#{lit}, string.reverse({lit}))", f"{len(s)}\t{s[::-1]}"
    if kind == 3:
        n, sep = r.randint(-1, 4), r.choice(["", "-", ", "])
        out = sep.join([s] * n) if n > 0 else ""
        return f"print(string.rep({lit}, {n}, {lua_str(sep)}) .. '|')", out + "|"
    if kind == 4:
        needle = r.choice([s[1:3], "o", "zz", s[-1:], ""])
        at = s.find(needle)
        want = "nil" if at < 0 else f"{at + 1}\t{at + len(needle)}"
        return f"print(string.find({lit}, {lua_str(needle)}, 1, true))", want
    if kind == 5:
        letter, by = r.choice("aol"), r.choice(["0", "", "<>"])
        return (
            f"print(string.gsub({lit}, {lua_str(letter)}, {lua_str(by)}))",
            f"{s.replace(letter, by)}\t{s.count(letter)}",
        )
    if kind == 6:
        i = r.randint(1, len(s))
        return f"print(string.byte({lit}, {i}), string.char(72, 105))", f"{ord(s[i - 1])}\tHi"
    return f"print(({lit}):len() + {len(WORDS)}, tostring({len(s)}) .. 'x')", (
        f"{len(s) + len(WORDS)}\t{len(s)}x"
    )


FORMATS_INT = ["%d", "%5d", "%-5d|", "%05d", "%x", "%X", "%o", "%+d", "%i"]
FORMATS_FLOAT = ["%5.2f", "%.3f", "%e", "%.2e", "%g", "%10.4f|", "%-8.1f|", "%.0f"]


def format_(r: random.Random) -> tuple[str, str]:
    kind = r.randrange(4)
    if kind == 0:
        f, v = r.choice(FORMATS_INT), r.randint(-5000, 70000)
        if f in ("%x", "%X", "%o"):
            v = abs(v)
        return f'print(string.format("{f}", {v}))', f % v
    if kind == 1:
        f, v = r.choice(FORMATS_FLOAT), r.randint(-99999, 99999) / 64
        return f'print(string.format("{f}", {v}))', f % v
    if kind == 2:
        s, width = r.choice(WORDS[:6]), r.choice(["%s", "%10s|", "%-10s|", "%.3s"])
        return f'print(string.format("{width}", {lua_str(s)}))', width % s
    v = r.choice([r.randint(-99, 99), r.randint(-99, 99) + 0.5])
    return f'print(string.format("%s and %%", {v}))', f"{num(v)} and %"


def tables(r: random.Random) -> tuple[str, str]:
    xs = [r.randint(-20, 99) for _ in range(r.randint(1, 8))]
    t = "{" + ", ".join(map(str, xs)) + "}"
    kind = r.randrange(6)
    if kind == 0:
        return f'local t = {t} print(#t, table.concat(t, ","))', f"{len(xs)}\t" + ",".join(
            map(str, xs)
        )
    if kind == 1:
        pos, v = r.randint(1, len(xs) + 1), r.randint(100, 200)
        ys = [*xs[: pos - 1], v, *xs[pos - 1 :]]
        return f'local t = {t} table.insert(t, {pos}, {v}) print(table.concat(t, " "))', " ".join(
            map(str, ys)
        )
    if kind == 2:
        return f"local t = {t} local x = table.remove(t, 1) print(x, #t)", f"{xs[0]}\t{len(xs) - 1}"
    if kind == 3:
        src = f"local t = {t} local s = 0 for i, v in ipairs(t) do s = s + i * v end print(s)"
        return src, str(sum(i * v for i, v in enumerate(xs, 1)))
    if kind == 4:
        return f"print(select('#', table.unpack({t})), (select(-1, table.unpack({t}))))", (
            f"{len(xs)}\t{xs[-1]}"
        )
    i = r.randint(1, len(xs))
    return f'local t = {t} print(table.concat(t, ", ", {i}, {len(xs)}))', ", ".join(
        map(str, xs[i - 1 :])
    )


def sort(r: random.Random) -> tuple[str, str]:
    xs = r.sample(range(-500, 500), r.randint(2, 12))  # distinct: no tie to break
    t = "{" + ", ".join(map(str, xs)) + "}"
    kind = r.randrange(4)
    if kind == 0:
        return f'local t = {t} table.sort(t) print(table.concat(t, " "))', " ".join(
            map(str, sorted(xs))
        )
    if kind == 1:
        src = (
            f"local t = {t} table.sort(t, function(a, b) return a > b end) "
            'print(table.concat(t, " "))'
        )
        return src, " ".join(map(str, sorted(xs, reverse=True)))
    if kind == 2:
        ws = r.sample(["pear", "Apple", "fig", "banana", "Cherry", "date", "kiwi", "lime"], 5)
        lits = ", ".join(lua_str(w) for w in ws)
        return f'local t = {{{lits}}} table.sort(t) print(table.concat(t, " "))', " ".join(
            sorted(ws)
        )
    recs = ", ".join(f"{{k = {x}, v = {i}}}" for i, x in enumerate(xs))
    src = (
        f"local t = {{{recs}}} table.sort(t, function(a, b) return a.k < b.k end) "
        'local o = {} for _, e in ipairs(t) do o[#o + 1] = e.v end print(table.concat(o, " "))'
    )
    order = [i for _, i in sorted((x, i) for i, x in enumerate(xs))]
    return src, " ".join(map(str, order))


def closures(r: random.Random) -> tuple[str, str]:
    kind = r.randrange(5)
    a, b, c = r.randint(-50, 50), r.randint(-50, 50), r.randint(-50, 50)
    if kind == 0:
        src = (
            "local function counter(n) local c = n return function(k) c = c + k return c end end "
            f"local f = counter({a}) f({b}) local g = counter(0) g(1) print(f({c}), g(1))"
        )
        return src, f"{a + b + c}\t2"
    if kind == 1:
        n = r.randint(1, 25)
        fact = 1
        for i in range(2, n + 1):
            fact = wrap(fact * i)
        src = (
            "local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end "
            f"print(fact({n}))"
        )
        return src, str(fact)
    if kind == 2:
        lo, hi, step = r.randint(-10, 10), r.randint(-10, 30), r.choice([1, 2, 3, -1, -2])
        total = sum(range(lo, hi + (1 if step > 0 else -1), step))
        return f"local s = 0 for i = {lo}, {hi}, {step} do s = s + i end print(s)", str(total)
    if kind == 3:
        n = r.randint(0, 25)
        x, y = 0, 1
        for _ in range(n):
            x, y = y, x + y
        src = (
            "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) "
            f"end print(fib({n}))"
        )
        return src, str(x)
    args = [str(a), "nil", str(b)][: r.randint(1, 3)]
    src = f"local function f(...) return select('#', ...), ... end print(f({', '.join(args)}))"
    return src, "\t".join([str(len(args)), *args])


# Each with {chunk} for the fixture's path as the test passes it (the chunk name).
ERRORS: list[tuple[str, str, int, str]] = [
    ('print(pcall(error, "boom"))', "false\tboom", 0, ""),
    ('print(pcall(error, "boom", 0))', "false\tboom", 0, ""),
    ('print(pcall(function() error("deep") end))', "false\t{chunk}:1: deep", 0, ""),
    ('print(pcall(function() error("lvl0", 0) end))', "false\tlvl0", 0, ""),
    ("local ok, e = pcall(error, {code = 42}) print(ok, e.code)", "false\t42", 0, ""),
    (
        "local ok, e = pcall(function() local x; return x.y end) print(e)",
        "{chunk}:1: attempt to index a nil value (local 'x')",
        0,
        "",
    ),
    (
        "local ok, e = pcall(function() return nofunc() end) print(e)",
        "{chunk}:1: attempt to call a nil value (global 'nofunc')",
        0,
        "",
    ),
    (
        "local ok, e = pcall(function() return undefinedvar + 1 end) print(e)",
        "{chunk}:1: attempt to perform arithmetic on a nil value (global 'undefinedvar')",
        0,
        "",
    ),
    (
        "local ok, e = pcall(function() return 1 // 0 end) print(e)",
        "{chunk}:1: attempt to divide by zero",  # 5.4's luaV_idiv (5.3 said 'n//0')
        0,
        "",
    ),
    (
        "local ok, e = pcall(function() return 1 % 0 end) print(e)",
        "{chunk}:1: attempt to perform 'n%0'",  # lvm.c's "'n%%0'" is a printf format
        0,
        "",
    ),
    (
        'local ok, e = pcall(function() return 1 < "2" end) print(e)',
        "{chunk}:1: attempt to compare number with string",
        0,
        "",
    ),
    (
        "local ok, e = pcall(function() local t = {} return t .. 'x' end) print(e)",
        "{chunk}:1: attempt to concatenate a table value (local 't')",
        0,
        "",
    ),
    # called from Lua code (not by pcall, not a tail call): the function is named by its field,
    # and luaL_error's position (level 1) is the line that called it
    (
        'print(pcall(function() local s = string.rep("x", "a") return s end))',
        "false\t{chunk}:1: bad argument #2 to 'rep' (number expected, got string)",
        0,
        "",
    ),
    (
        'print(pcall(function() local s = string.format("%d", 3.5) return s end))',
        "false\t{chunk}:1: bad argument #2 to 'format' (number has no integer representation)",
        0,
        "",
    ),
    (
        'print(tonumber("0x10"), tonumber("z", 36), tonumber("10", 2), tonumber("abc"))',
        "16\t35\t2\tnil",
        0,
        "",
    ),
    ("print(1 / 0, -1 / 0, math.huge == 1 / 0)", "inf\t-inf\ttrue", 0, ""),
    ('print(tostring(nil), tostring(true), 10 == "10", #"")', "nil\ttrue\tfalse\t0", 0, ""),
    ('print("start") error("stopped here")', "start", 1, "{chunk}:1: stopped here"),
    ('io.write("no newline") os.exit(3)', "no newline", 3, ""),
    ("print(select(2, pcall(error)))", "nil", 0, ""),
]

GENERATORS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "arith": arith,
    "floats": floats,
    "strings": strings,
    "format": format_,
    "tables": tables,
    "sort": sort,
    "closures": closures,
}


def cases(count: int, seed: int = 0) -> list[Case]:
    """``count`` cases, the categories taken in turn (the error cases while they last), each
    drawn from its own seeded generator: the same count and seed give the same suite."""
    out: list[Case] = []
    streams = {c: random.Random(f"{seed}:{c}") for c in GENERATORS}
    numbers = dict.fromkeys([*GENERATORS, "errors"], 0)
    errors: Iterator[tuple[str, str, int, str]] = iter(ERRORS)
    while len(out) < count:
        for category in [*GENERATORS, "errors"]:
            if len(out) == count:
                break
            if category == "errors":
                nxt = next(errors, None)
                if nxt is None:
                    continue
                src, want, code, err = nxt
            else:
                src, want = GENERATORS[category](streams[category])
                code, err = 0, ""
            numbers[category] += 1
            name = f"{category}_{numbers[category]:04d}"
            chunk = f"eval/fixtures/{name}.lua"
            out.append(
                Case(
                    category,
                    name,
                    src + "\n",
                    want.replace("{chunk}", chunk) + ("\n" if code in (0, 1) else ""),
                    code,
                    err.replace("{chunk}", chunk),
                )
            )
    return out
